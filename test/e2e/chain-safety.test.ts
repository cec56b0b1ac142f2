// The chain flaws (docs/broadcasting.md "What the node is trusted with"), each driven through the
// official clients (@turnkey/sdk-server, @turnkey/http, @turnkey/viem) against a real anvil node, the
// outcome read back from the chain with viem. A small JSON-RPC proxy in front of anvil plays a
// misbehaving node: it can answer a huge priority fee, a pending nonce lower than the one Sigil
// allocated, or an oversized answer.
// - flaw 5: the operator's fee caps (per gas, and gas × fee per chain) refuse a send naming the cap,
//   and nothing is signed or sent; the nonce Sigil allocates is never lowered by the node; an answer
//   over SIGIL_EVM_RPC_MAX_RESPONSE_BYTES fails the send; an http RPC URL needs its host listed.
// - flaw 7: a velocity control counting a wallet's transfers refuses raw signing with that wallet's
//   keys (naming the control) unless a policy explicitly allows it; EIP-2612 permits and
//   increaseAllowance count as the approve they are.
// - smaller defects: get_nonces answers only the organization's own addresses; a send is judged with
//   `activity.params.type` as sign_transaction is, and an older type value meets the DENYs written for
//   its current type.
// - flaw 3: 500 raw sends of one organization that never settle (a nonce gap keeps them in the node's
//   pool) do not stop another organization's sends from being tracked to INCLUDED, including one
//   completed by an approval; a raw send never mined expires to FAILED (SIGIL_EVM_RAW_SEND_TTL_SECONDS).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '@turnkey/viem';
import {
  createPublicClient,
  createTestClient,
  encodeFunctionData,
  erc20Abi,
  http,
  keccak256,
  parseEther,
  parseUnits,
  serializeTransaction,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { runSigil, startSigil, type SigilInstance } from '../helpers/sigil.js';
import { httpClient, newKey, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { startAnvil, type Anvil } from '../helpers/anvil.js';

const CAIP2 = 'eip155:11155111';
/** The chain-specific cap on gas × maxFeePerGas this deployment runs with: 0.001 ether. */
const MAX_TX_FEE = 10n ** 15n;

let anvil: Anvil;
let proxy: Server;
let proxyUrl: string;
let sigil: SigilInstance;
let orgId: string;
let from: Hex;
let publicClient: ReturnType<typeof createPublicClient>;
let bob: { id: string; key: KeyPair };

/** How the proxy misbehaves; nothing set: it forwards every call to anvil unchanged. */
const tamper: { priorityFee?: bigint; pendingNonce?: bigint; padBytes?: number } = {};

const recipient = (n: number) => `0x${n.toString(16).padStart(40, '0')}` as Hex;
const hex = (n: bigint) => `0x${n.toString(16)}`;

function startProxy(target: string): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const call = JSON.parse(text);
      const answer = (result: unknown) => res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result }));
      res.setHeader('content-type', 'application/json');
      if (call.method === 'eth_maxPriorityFeePerGas' && tamper.priorityFee !== undefined) return answer(hex(tamper.priorityFee));
      if (call.method === 'eth_getTransactionCount' && call.params?.[1] === 'pending' && tamper.pendingNonce !== undefined) return answer(hex(tamper.pendingNonce));
      const forwarded = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text });
      const body = await forwarded.text();
      if (tamper.padBytes && call.method === 'eth_getBlockByNumber') {
        // The same answer with a member no client reads, making it as large as asked.
        return res.end(body.replace(/^\{/, `{"padding":"${'x'.repeat(tamper.padBytes)}",`));
      }
      res.end(body);
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

async function included(sendTransactionStatusId: string, organizationId = orgId, key: KeyPair = sigil.root) {
  await sdkServerClient(sigil, key, organizationId).pollTransactionStatus({ sendTransactionStatusId, pollingIntervalMs: 100, timeoutMs: 120_000 });
  return httpClient(sigil, key).getSendTransactionStatus({ organizationId, sendTransactionStatusId });
}

async function newUser(name: string, policyCondition?: string) {
  const key = newKey();
  const api = sdkServerClient(sigil);
  const { userIds } = await api.createUsers({
    users: [{ userName: name, apiKeys: [{ apiKeyName: 'k', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
  });
  if (policyCondition) {
    await api.createPolicy({ policyName: `${name} signs`, effect: 'EFFECT_ALLOW', condition: policyCondition, consensus: `approvers.any(user, user.id == '${userIds[0]}')`, notes: '' });
  }
  return { id: userIds[0], key };
}

function send(key: KeyPair, parameters: Record<string, unknown>, type = 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2') {
  return httpClient(sigil, key).ethSendTransaction({ type, timestampMs: String(Date.now()), organizationId: orgId, parameters } as never);
}

beforeAll(async () => {
  anvil = await startAnvil();
  proxy = await startProxy(anvil.url);
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  sigil = await startSigil({
    [`SIGIL_EVM_RPC_${anvil.chainId}`]: proxyUrl,
    [`SIGIL_EVM_MAX_TX_FEE_${anvil.chainId}`]: String(MAX_TX_FEE),
    SIGIL_EVM_POLL_INTERVAL_MS: '100',
  });
  orgId = sigil.root.organizationId;
  publicClient = createPublicClient({ transport: http(anvil.url) });
  const w = await sdkServerClient(sigil).createWallet({
    walletName: 'chain safety',
    accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }],
  });
  from = w.addresses[0] as Hex;
  await createTestClient({ mode: 'anvil', transport: http(anvil.url) }).setBalance({ address: from, value: parseEther('1000') });
  // A user under policies (the root quorum bypasses them): may sign and send ether of at most 1 wei.
  bob = await newUser('bob', "activity.action == 'SIGN' && eth.tx.value <= 1");
}, 120_000);

afterAll(async () => {
  await sigil?.stop();
  await anvil?.stop();
  proxy?.closeAllConnections();
  await new Promise((r) => proxy?.close(r));
});

describe('flaw 5: what the node is trusted with', () => {
  it('a huge priority fee from the node is refused by the fee cap, naming it; nothing is signed or sent', async () => {
    const nonce = await publicClient.getTransactionCount({ address: from, blockTag: 'pending' });
    // ~1,028 ether of fees for a send of 1 wei, which bob's policy allows (value <= 1).
    tamper.priorityFee = 49n * 10n ** 15n;
    try {
      await expect(send(bob.key, { from, caip2: CAIP2, calls: [{ to: recipient(0xfee), value: '1' }] })).rejects.toThrow(
        /maxFeePerGas \d+ wei is above this deployment's cap of 1000000000000 wei per gas on eip155:11155111 \(SIGIL_EVM_MAX_FEE_PER_GAS/,
      );
    } finally {
      tamper.priorityFee = undefined;
    }
    expect(await publicClient.getTransactionCount({ address: from, blockTag: 'pending' })).toBe(nonce);
    expect(await publicClient.getBalance({ address: recipient(0xfee) })).toBe(0n);
    // The same send with the node's honest fee goes out, and the fees a policy saw are the ones signed.
    const sent = await send(bob.key, { from, caip2: CAIP2, calls: [{ to: recipient(0xfee), value: '1' }] });
    const status = await included((sent.activity.result as any).ethSendTransactionResultV2.sendTransactionStatusId, orgId, bob.key);
    const tx = await publicClient.getTransaction({ hash: status.eth!.txHash as Hex });
    expect(tx.maxFeePerGas! * tx.gas).toBeLessThanOrEqual(MAX_TX_FEE);
  });

  it('gas limit × max fee above the chain cap is refused naming SIGIL_EVM_MAX_TX_FEE_<chain id>, the caller\'s own fees too', async () => {
    const nonce = await publicClient.getTransactionCount({ address: from, blockTag: 'pending' });
    await expect(send(bob.key, { from, caip2: CAIP2, gasLimit: '30000000', calls: [{ to: recipient(0xfee1), value: '1' }] })).rejects.toThrow(
      /could cost up to \d+ wei in fees \(gas limit 30000000 × maxFeePerGas \d+\), above this deployment's cap of 1000000000000000 wei per transaction on eip155:11155111 \(SIGIL_EVM_MAX_TX_FEE_11155111\)/,
    );
    await expect(
      send(bob.key, { from, caip2: CAIP2, maxFeePerGas: String(10n ** 13n), maxPriorityFeePerGas: '1', calls: [{ to: recipient(0xfee1), value: '1' }] }),
    ).rejects.toThrow(/SIGIL_EVM_MAX_FEE_PER_GAS/);
    expect(await publicClient.getTransactionCount({ address: from, blockTag: 'pending' })).toBe(nonce);
  });

  it('the nonce Sigil allocated is never lowered by the node', async () => {
    const api = sdkServerClient(sigil);
    const first = await api.ethSendTransaction({ from, caip2: CAIP2, calls: [{ to: recipient(0x70a), value: '1' }] } as never);
    const a = await publicClient.getTransaction({ hash: (await included(first.sendTransactionStatusId)).eth!.txHash as Hex });
    // The node now claims the address's next nonce is the one Sigil just used.
    tamper.pendingNonce = BigInt(a.nonce);
    try {
      const second = await api.ethSendTransaction({ from, caip2: CAIP2, calls: [{ to: recipient(0x70b), value: '1' }] } as never);
      const b = await publicClient.getTransaction({ hash: (await included(second.sendTransactionStatusId)).eth!.txHash as Hex });
      expect(b.nonce).toBe(a.nonce + 1);
      expect((await api.getNonces({ address: from, caip2: CAIP2, nonce: true } as never)).nonce).toBe(String(a.nonce + 2));
    } finally {
      tamper.pendingNonce = undefined;
    }
    expect(await publicClient.getBalance({ address: recipient(0x70b) })).toBe(1n);
  });

  it('an answer larger than SIGIL_EVM_RPC_MAX_RESPONSE_BYTES fails the send; nothing is sent', async () => {
    const nonce = await publicClient.getTransactionCount({ address: from, blockTag: 'pending' });
    tamper.padBytes = 5 * 1024 * 1024;
    try {
      await expect(sdkServerClient(sigil).ethSendTransaction({ from, caip2: CAIP2, calls: [{ to: recipient(0xb16), value: '1' }] } as never)).rejects.toThrow(
        /answered more than 4194304 bytes \(SIGIL_EVM_RPC_MAX_RESPONSE_BYTES\)/,
      );
    } finally {
      tamper.padBytes = undefined;
    }
    expect(await publicClient.getTransactionCount({ address: from, blockTag: 'pending' })).toBe(nonce);
  });

  it('an http RPC URL is refused unless its host is listed (loopback by default); https is always accepted', () => {
    const config = (env: Record<string, string>) => runSigil(['config', '--data-dir', sigil.dataDir], { ...sigil.env, ...env });
    const plain = config({ SIGIL_EVM_RPC_1: 'http://rpc.example.com/v1' });
    expect(plain.status).toBe(1);
    expect(plain.stderr).toMatch(/SIGIL_EVM_RPC_1 must be an https URL \(plain http only for hosts listed in SIGIL_EVM_RPC_HTTP_HOSTS/);
    const inJson = config({ SIGIL_EVM_RPC_URLS: '{"eip155:8453":"http://10.0.0.5:8545"}' });
    expect(inJson.status).toBe(1);
    expect(inJson.stderr).toMatch(/SIGIL_EVM_RPC_URLS\["eip155:8453"\] must be an https URL/);
    expect(config({ SIGIL_EVM_RPC_1: 'http://rpc.example.com/v1', SIGIL_EVM_RPC_HTTP_HOSTS: 'rpc.example.com,loopback' }).status).toBe(0);
    expect(config({ SIGIL_EVM_RPC_1: 'https://rpc.example.com/v1' }).status).toBe(0);
    // Loopback is listed by default (a node on the same machine); an empty list requires https everywhere.
    expect(config({ SIGIL_EVM_RPC_1: 'http://127.0.0.1:8545' }).status).toBe(0);
    const none = config({ SIGIL_EVM_RPC_1: 'http://127.0.0.1:8545', SIGIL_EVM_RPC_HTTP_HOSTS: '' });
    expect(none.status).toBe(1);
    expect(none.stderr).toMatch(/SIGIL_EVM_RPC_\d+ must be an https URL/);
    const shown = JSON.parse(config({}).stdout);
    expect(shown).toMatchObject({
      evmRpcHttpHosts: ['loopback'],
      evmRpcMaxResponseBytes: 4194304,
      evmFeeCaps: { default: { maxFeePerGas: '1000000000000', maxTxFee: '100000000000000000' }, chains: { [CAIP2]: { maxTxFee: String(MAX_TX_FEE) } } },
      evmRawSendTtlSeconds: 86400,
    });
  });
});

describe('smaller defects', () => {
  it('get_nonces answers only for an address of the organization\'s own keys', async () => {
    const subKey = newKey();
    const { subOrganizationId } = await sdkServerClient(sigil).createSubOrganization({
      subOrganizationName: 'nonce reader',
      rootUsers: [{ userName: 'reader', apiKeys: [{ apiKeyName: 'k', publicKey: subKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
    });
    const other = httpClient(sigil, subKey);
    await expect(other.getNonces({ organizationId: subOrganizationId, address: from, caip2: CAIP2, nonce: true })).rejects.toThrow(
      /is not an Ethereum address of a wallet account or private key of this organization/,
    );
    await expect(other.getNonces({ organizationId: subOrganizationId, address: recipient(0xd00d), caip2: CAIP2, nonce: true })).rejects.toThrow(/not an Ethereum address/);
    // The owner still reads it.
    expect((await httpClient(sigil).getNonces({ organizationId: orgId, address: from, caip2: CAIP2, nonce: true })).nonce).toBe(
      String(await publicClient.getTransactionCount({ address: from, blockTag: 'pending' })),
    );
  });

  it('a DENY on activity.params.type stops the send as it stops sign_transaction; an older type value meets DENYs for its current type', async () => {
    const api = sdkServerClient(sigil);
    const blocked = recipient(0xb10c2);
    const v2Only = recipient(0xb10c3);
    const byParams = await api.createPolicy({
      policyName: 'no ethereum transactions to the blocked address',
      effect: 'EFFECT_DENY',
      condition: `activity.params.type == 'TRANSACTION_TYPE_ETHEREUM' && eth.tx.to == '${blocked}'`,
      notes: '',
    });
    const byType = await api.createPolicy({
      policyName: 'no V2 sends to v2Only',
      effect: 'EFFECT_DENY',
      condition: `activity.type == 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2' && eth.tx.to == '${v2Only}'`,
      notes: '',
    });
    try {
      const nonce = await publicClient.getTransactionCount({ address: from, blockTag: 'pending' });
      const unsigned = serializeTransaction({ type: 'eip1559', chainId: anvil.chainId, nonce: 0, to: blocked, value: 1n, gas: 21000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n });
      await expect(
        httpClient(sigil, bob.key).signTransaction({
          type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
          timestampMs: String(Date.now()),
          organizationId: orgId,
          parameters: { signWith: from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned },
        }),
      ).rejects.toThrow(/policy engine denied request explicitly/);
      await expect(send(bob.key, { from, caip2: CAIP2, calls: [{ to: blocked, value: '1' }] })).rejects.toThrow(/policy engine denied request explicitly/);
      await expect(send(bob.key, { from, caip2: CAIP2, to: blocked, value: '1' }, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION')).rejects.toThrow(/policy engine denied request explicitly/);
      // Written for the current type, met by the older one too.
      await expect(send(bob.key, { from, caip2: CAIP2, calls: [{ to: v2Only, value: '1' }] })).rejects.toThrow(/policy engine denied request explicitly/);
      await expect(send(bob.key, { from, caip2: CAIP2, to: v2Only, value: '1' }, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION')).rejects.toThrow(/policy engine denied request explicitly/);
      expect(await publicClient.getTransactionCount({ address: from, blockTag: 'pending' })).toBe(nonce);
    } finally {
      await api.deletePolicy({ policyId: byParams.policyId });
      await api.deletePolicy({ policyId: byType.policyId });
    }
  });
});

describe('flaw 7: velocity controls and raw signing', () => {
  const TOKEN = '0x5fbdb2315678afecb367f032d93f642f64180aa3';
  const SPENDER = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';

  async function control(identifier: string, caip19: string, threshold: string) {
    const r = await httpClient(sigil).createVelocityControl({
      type: 'ACTIVITY_TYPE_CREATE_VELOCITY_CONTROL',
      timestampMs: String(Date.now()),
      organizationId: orgId,
      parameters: {
        name: identifier,
        identifier,
        dataSource: { chainAssetTransfer: { definition: [{ caip19, decimals: '18' }] } },
        aggregation: {
          method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM',
          operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL',
          threshold,
          window: { rolling: { duration: '86400' } },
          groupBy: { wallet: {} },
        },
      } as never,
    });
    return r.activity.result.createVelocityControlResult!.velocityControlId;
  }

  it('raw signing with a key whose transfers a control counts is refused naming it, unless a policy explicitly allows it; permits and increaseAllowance count as approve', async () => {
    const api = sdkServerClient(sigil);
    const w = await api.createWallet({
      walletName: 'limited',
      accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }],
    });
    const limited = w.addresses[0] as Hex;
    const carol = await newUser('carol', "activity.action == 'SIGN'");
    const controls = [await control('eth_daily', `${CAIP2}/slip44:60`, '1'), await control('token_daily', `${CAIP2}/erc20:${TOKEN}`, '100')];
    const deny = await api.createPolicy({ policyName: 'daily limits', effect: 'EFFECT_DENY', condition: '!controls.eth_daily || !controls.token_daily', notes: '' });
    const policies = [deny.policyId];
    try {
      const client = httpClient(sigil, carol.key);
      const tx = (value: bigint, data?: Hex, to: Hex = recipient(0x5e1)) =>
        serializeTransaction({ type: 'eip1559', chainId: anvil.chainId, nonce: 0, to, value, data, gas: 100_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n });
      const signTx = (unsignedTransaction: string) =>
        client.signTransaction({
          type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
          timestampMs: String(Date.now()),
          organizationId: orgId,
          parameters: { signWith: limited, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction },
        });
      const signHash = (payload: Hex) =>
        client.signRawPayload({
          type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
          timestampMs: String(Date.now()),
          organizationId: orgId,
          parameters: { signWith: limited, payload, encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' },
        });
      // 5 ether is over the 1 ether a day: signing the transaction is denied...
      await expect(signTx(tx(parseEther('5')))).rejects.toThrow(/policy engine denied request explicitly/);
      // ...and so is signing its hash as a raw payload, with an error naming the control.
      await expect(signHash(keccak256(tx(parseEther('5'))))).rejects.toThrow(/raw signing with this key is refused: velocity control 'eth_daily' counts its transfers/);
      const account = await createAccount({ client, organizationId: orgId, signWith: limited });
      await expect(account.signMessage({ message: 'hello' })).rejects.toThrow(/velocity control 'eth_daily'/);

      // EIP-2612 permits, signed as typed data by @turnkey/viem, count as the approve they are.
      const permit = (value: bigint) =>
        account.signTypedData({
          domain: { name: 'Token', version: '1', chainId: anvil.chainId, verifyingContract: TOKEN },
          // EIP712Domain listed, as dapps give it: viem's serializeTypedData leaves out a domain whose type is not.
          types: {
            EIP712Domain: [
              { name: 'name', type: 'string' },
              { name: 'version', type: 'string' },
              { name: 'chainId', type: 'uint256' },
              { name: 'verifyingContract', type: 'address' },
            ],
            Permit: [
              { name: 'owner', type: 'address' },
              { name: 'spender', type: 'address' },
              { name: 'value', type: 'uint256' },
              { name: 'nonce', type: 'uint256' },
              { name: 'deadline', type: 'uint256' },
            ],
          },
          primaryType: 'Permit',
          message: { owner: limited, spender: SPENDER, value, nonce: 0n, deadline: 2n ** 40n },
        });
      await expect(permit(parseUnits('500', 18))).rejects.toThrow(/policy engine denied request explicitly/);
      expect(await permit(parseUnits('60', 18))).toMatch(/^0x[0-9a-f]{130}$/);
      // 60 permitted + 50 approved > 100: the approve is denied; increaseAllowance is an approve too.
      const approve = (amount: bigint) => tx(0n, encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [SPENDER, amount] }), TOKEN);
      await expect(signTx(approve(parseUnits('50', 18)))).rejects.toThrow(/policy engine denied request explicitly/);
      const increase = tx(
        0n,
        encodeFunctionData({
          abi: [{ type: 'function', name: 'increaseAllowance', stateMutability: 'nonpayable', inputs: [{ name: 'spender', type: 'address' }, { name: 'addedValue', type: 'uint256' }], outputs: [{ type: 'bool' }] }],
          functionName: 'increaseAllowance',
          args: [SPENDER, parseUnits('50', 18)],
        }),
        TOKEN,
      );
      await expect(signTx(increase)).rejects.toThrow(/policy engine denied request explicitly/);
      expect((await signTx(approve(parseUnits('40', 18)))).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');

      // A policy that explicitly allows raw signing for both controls lifts the refusal.
      const allow = await api.createPolicy({
        policyName: 'carol may sign raw payloads',
        effect: 'EFFECT_ALLOW',
        condition: "activity.kind == 'SIGN_RAW_PAYLOAD' && controls.eth_daily && controls.token_daily",
        consensus: `approvers.any(user, user.id == '${carol.id}')`,
        notes: '',
      });
      policies.push(allow.policyId);
      expect((await signHash(keccak256(tx(parseEther('5'))))).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    } finally {
      for (const policyId of policies) await api.deletePolicy({ policyId });
      for (const velocityControlId of controls) {
        await httpClient(sigil).deleteVelocityControl({ type: 'ACTIVITY_TYPE_DELETE_VELOCITY_CONTROL', timestampMs: String(Date.now()), organizationId: orgId, parameters: { velocityControlId } });
      }
    }
  });
});

describe('flaw 3: tracking', () => {
  it("500 raw sends of one organization that never settle do not hold back another organization's sends, one completed by an approval among them", async () => {
    // The noisy organization: a sub-organization broadcasting 500 transactions after a nonce gap.
    const noisyKey = newKey();
    const { subOrganizationId: noisy } = await sdkServerClient(sigil).createSubOrganization({
      subOrganizationName: 'noisy',
      rootUsers: [{ userName: 'noisy', apiKeys: [{ apiKeyName: 'k', publicKey: noisyKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
    });
    const sender = privateKeyToAccount(generatePrivateKey());
    await createTestClient({ mode: 'anvil', transport: http(anvil.url) }).setBalance({ address: sender.address, value: parseEther('10') });
    const signed = await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        sender.signTransaction({ type: 'eip1559', chainId: anvil.chainId, nonce: i + 1, to: recipient(0x9a9), value: 1n, gas: 21000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n }),
      ),
    );
    const noisyClient = httpClient(sigil, noisyKey);
    for (let i = 0; i < signed.length; i += 10) {
      await Promise.all(
        signed.slice(i, i + 10).map((signedTransaction) =>
          noisyClient.ethSendRawTransaction({
            type: 'ACTIVITY_TYPE_ETH_SEND_RAW_TRANSACTION',
            timestampMs: String(Date.now()),
            organizationId: noisy,
            parameters: { signedTransaction, caip2: CAIP2 },
          } as never),
        ),
      );
    }
    // The other organization: a plain send, and one that waits for two approvals.
    const api = sdkServerClient(sigil);
    const alice = await newUser('tracking alice');
    const dave = await newUser('tracking dave');
    const policy = await api.createPolicy({
      policyName: 'tracked sends need alice and dave',
      effect: 'EFFECT_ALLOW',
      condition: `activity.type == 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2' && eth.tx.to == '${recipient(0xa99)}'`,
      consensus: `approvers.filter(u, u.id == '${alice.id}' || u.id == '${dave.id}').count() >= 2`,
      notes: '',
    });
    try {
      const plain = await api.ethSendTransaction({ from, caip2: CAIP2, calls: [{ to: recipient(0x7a7), value: '5' }] } as never);
      const waiting = await send(alice.key, { from, caip2: CAIP2, calls: [{ to: recipient(0xa99), value: '6' }] });
      expect(waiting.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
      await httpClient(sigil, dave.key).approveActivity({
        type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY',
        timestampMs: String(Date.now()),
        organizationId: orgId,
        parameters: { fingerprint: waiting.activity.fingerprint },
      });
      const { activity } = await httpClient(sigil).getActivity({ organizationId: orgId, activityId: waiting.activity.id });
      expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
      const approved = (activity.result as any).ethSendTransactionResultV2.sendTransactionStatusId;
      expect((await included(plain.sendTransactionStatusId)).txStatus).toBe('INCLUDED');
      expect((await included(approved)).txStatus).toBe('INCLUDED');
      expect(await publicClient.getBalance({ address: recipient(0x7a7) })).toBe(5n);
      expect(await publicClient.getBalance({ address: recipient(0xa99) })).toBe(6n);
      // The noisy organization's sends are all still waiting in the node's pool, tracked.
      expect(await publicClient.getBalance({ address: recipient(0x9a9) })).toBe(0n);
    } finally {
      await api.deletePolicy({ policyId: policy.policyId });
    }
  }, 600_000);
});

describe('flaw 3: raw sends expire', () => {
  let short: SigilInstance;
  let receiver: Server;
  /** SEND_TRANSACTION_STATUS_UPDATES events delivered to the receiver: how a raw send's status is followed. */
  const events: any[] = [];
  beforeAll(async () => {
    short = await startSigil({
      [`SIGIL_EVM_RPC_${anvil.chainId}`]: anvil.url,
      SIGIL_EVM_POLL_INTERVAL_MS: '100',
      SIGIL_EVM_RAW_SEND_TTL_SECONDS: '2',
      SIGIL_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      SIGIL_WEBHOOK_POLL_MS: '50',
    });
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.headers['x-turnkey-event-type'] === 'SEND_TRANSACTION_STATUS_UPDATES') events.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    await httpClient(short).createWebhookEndpoint({
      type: 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT',
      timestampMs: String(Date.now()),
      organizationId: short.root.organizationId,
      parameters: { name: 'raw', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/tx`, subscriptions: [{ eventType: 'SEND_TRANSACTION_STATUS_UPDATES' }] },
    } as never);
  }, 60_000);
  afterAll(async () => {
    await short?.stop();
    receiver?.closeAllConnections();
    await new Promise((r) => receiver?.close(r));
  });

  it('a raw send not mined within SIGIL_EVM_RAW_SEND_TTL_SECONDS is FAILED as expired', async () => {
    const sender = privateKeyToAccount(generatePrivateKey());
    await createTestClient({ mode: 'anvil', transport: http(anvil.url) }).setBalance({ address: sender.address, value: parseEther('1') });
    // Nonce 3 of a fresh account: the node keeps it in its pool, waiting for nonces 0 to 2.
    const gap = await sender.signTransaction({ type: 'eip1559', chainId: anvil.chainId, nonce: 3, to: recipient(0xe1), value: 1n, gas: 21000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n });
    const res = await httpClient(short).ethSendRawTransaction({
      type: 'ACTIVITY_TYPE_ETH_SEND_RAW_TRANSACTION',
      timestampMs: String(Date.now()),
      organizationId: short.root.organizationId,
      parameters: { signedTransaction: gap, caip2: CAIP2 },
    } as never);
    const hash = ((res.activity.result as any).ethSendRawTransactionResult.transactionHash as string).toLowerCase();
    let failed: any;
    while (!(failed = events.find((e) => e.msg.eth.txHash === hash && e.msg.txStatus === 'FAILED'))) await new Promise((r) => setTimeout(r, 100));
    expect(failed.msg.previousTxStatus).toBe('BROADCASTING');
    expect(failed.msg.txError).toMatch(/^expired: not included within 2 s of its broadcast \(SIGIL_EVM_RAW_SEND_TTL_SECONDS\)/);
    const status = await httpClient(short).getSendTransactionStatus({ organizationId: short.root.organizationId, sendTransactionStatusId: failed.msg.sendTransactionStatusId });
    expect(status.txStatus).toBe('FAILED');
  }, 120_000);
});
