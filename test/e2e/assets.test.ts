// Assets, balances and EIP-7702 undelegation (docs/broadcasting.md "Assets and balances",
// "Undelegating an EIP-7702 account"): list_supported_assets, get_wallet_address_balances and
// eth_undelegate_7702 through @turnkey/sdk-server and @turnkey/http's TurnkeyClient, against real
// anvil nodes (one with an operator-listed ERC-20, one without), every on-chain outcome read back
// with viem. The delegation that eth_undelegate_7702 clears is made by a type-4 transaction Sigil
// signs (sign_transaction, and the authorization through sign_raw_payload via @turnkey/viem) and
// broadcasts (eth_send_raw_transaction).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createTestClient, http, parseEther, type Hex } from 'viem';
import { createAccount } from '@turnkey/viem';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, httpClient, newKey, rawPost, sdkServerClient } from '../helpers/clients.js';
import { dbSnapshot, expectRefusedUnchanged } from '../helpers/db-snapshot.js';
import { startAnvil, type Anvil } from '../helpers/anvil.js';

const CAIP2 = 'eip155:11155111';
/** The second node, configured with no listed token. */
const BARE_CAIP2 = 'eip155:84532';

/**
 * A minimal token, hand-assembled: balanceOf(address) (0x70a08231) answers the storage slot keyed by
 * the holder's word; any other call is mint(address,uint256), adding its amount to that slot.
 *   PUSH1 4 CALLDATALOAD  PUSH1 0 CALLDATALOAD PUSH1 0xe0 SHR  PUSH4 0x70a08231 EQ  PUSH1 0x1b JUMPI
 *   PUSH1 0x24 CALLDATALOAD DUP2 SLOAD ADD SWAP1 SSTORE STOP
 *   0x1b: JUMPDEST SLOAD PUSH1 0 MSTORE PUSH1 0x20 PUSH1 0 RETURN
 */
const TOKEN_CODE = '0x60043560003560e01c6370a0823114601b57602435815401905500' + '5b5460005260206000f3';
const TOKEN = '0x00000000000000000000000000000000000070C3' as Hex;
/** A second listed token nobody holds: its zero balance is left out. */
const OTHER_TOKEN = '0x00000000000000000000000000000000000070C4' as Hex;
/** The contract the account delegates to before it is undelegated (any address will do for 7702). */
const DELEGATE = '0x00000000000000000000000000000000000de1e6' as Hex;

let anvil: Anvil;
let bare: Anvil;
let sigil: SigilInstance;
let orgId: string;
let account: Hex;
let fresh: Hex;
let keyAddress: Hex;
let chain: ReturnType<typeof createPublicClient>;
let test: ReturnType<typeof createTestClient>;

beforeAll(async () => {
  [anvil, bare] = await Promise.all([startAnvil(), startAnvil(84532)]);
  sigil = await startSigil({
    [`SIGIL_EVM_RPC_${anvil.chainId}`]: anvil.url,
    SIGIL_EVM_RPC_URLS: JSON.stringify({ [BARE_CAIP2]: bare.url }),
    SIGIL_EVM_POLL_INTERVAL_MS: '100',
    SIGIL_EVM_ASSETS: JSON.stringify({
      [CAIP2]: [
        { address: TOKEN, symbol: 'TST', decimals: 6, name: 'Test Dollar', stable: true },
        { address: OTHER_TOKEN, symbol: 'OTH', decimals: 18, name: 'Other Token' },
      ],
    }),
  });
  orgId = sigil.root.organizationId;
  chain = createPublicClient({ transport: http(anvil.url) });
  test = createTestClient({ mode: 'anvil', transport: http(anvil.url) });
  const api = sdkServerClient(sigil);
  const w = await api.createWallet({
    walletName: 'assets',
    accounts: [0, 1].map((i) => ({ curve: 'CURVE_SECP256K1' as const, pathFormat: 'PATH_FORMAT_BIP32' as const, path: `m/44'/60'/0'/0/${i}`, addressFormat: 'ADDRESS_FORMAT_ETHEREUM' as const })),
  });
  [account, fresh] = w.addresses as Hex[];
  const pk = await api.createPrivateKeys({ privateKeys: [{ privateKeyName: 'assets key', curve: 'CURVE_SECP256K1', addressFormats: ['ADDRESS_FORMAT_ETHEREUM'], privateKeyTags: [] }] });
  keyAddress = pk.privateKeys[0].addresses![0].address as Hex;
  await test.setCode({ address: TOKEN, bytecode: TOKEN_CODE as Hex });
  await test.setCode({ address: OTHER_TOKEN, bytecode: TOKEN_CODE as Hex });
}, 120_000);

afterAll(async () => {
  await sigil?.stop();
  await anvil?.stop();
  await bare?.stop();
});

describe('list_supported_assets', () => {
  it("answers the chain's native asset and the listed ERC-20 tokens", async () => {
    const { assets } = await sdkServerClient(sigil).listSupportedAssets({ caip2: CAIP2 } as never);
    expect(assets).toEqual([
      { caip19: 'eip155:11155111/slip44:60', symbol: 'ETH', decimals: 18, name: 'Sepolia Ether', stable: false },
      { caip19: `eip155:11155111/erc20:${TOKEN.toLowerCase()}`, symbol: 'TST', decimals: 6, name: 'Test Dollar', stable: true },
      { caip19: `eip155:11155111/erc20:${OTHER_TOKEN.toLowerCase()}`, symbol: 'OTH', decimals: 18, name: 'Other Token', stable: false },
    ]);
  });

  it('answers only the native asset on a chain with no listed token', async () => {
    const res = await httpClient(sigil).listSupportedAssets({ organizationId: orgId, caip2: BARE_CAIP2 } as never);
    expect(res.assets).toEqual([{ caip19: 'eip155:84532/slip44:60', symbol: 'ETH', decimals: 18, name: 'Sepolia Ether', stable: false }]);
  });

  it('refuses a chain without an RPC (naming the setting) and Solana, changing nothing', async () => {
    const before = await dbSnapshot(sigil);
    const ask = (caip2: string) => rawPost(`${sigil.url}/public/v1/query/list_supported_assets`, { organizationId: orgId, caip2 }, { key: sigil.root });
    await expectRefusedUnchanged(sigil, before, await ask('eip155:1'), 400, 9, 'REQUEST_INVALID', /eip155:1 is not configured.*SIGIL_EVM_RPC_1\b/);
    await expectRefusedUnchanged(sigil, before, await ask('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp'), 404, 12, 'UNIMPLEMENTED', /Solana .* not supported by this deployment/);
  });
});

describe('get_wallet_address_balances', () => {
  const balances = (address: string, caip2 = CAIP2) => httpClient(sigil).getWalletAddressBalances({ organizationId: orgId, address, caip2 } as never);

  it('answers nothing for an account holding nothing (zero balances are left out)', async () => {
    expect((await balances(fresh)).balances).toEqual([]);
  });

  it('answers the native balance and the ERC-20 balance read from the node, in base units', async () => {
    await test.setBalance({ address: account, value: parseEther('1.5') });
    expect((await sdkServerClient(sigil).getWalletAddressBalances({ address: account, caip2: CAIP2 } as never)).balances).toEqual([
      { caip19: 'eip155:11155111/slip44:60', symbol: 'ETH', balance: '1500000000000000000', decimals: 18, name: 'Sepolia Ether', display: { crypto: '1.5' } },
    ]);
    // Mint 12.345678 TST to the account from anvil's first development account.
    const [minter] = await test.request({ method: 'eth_accounts' } as never) as Hex[];
    const hash = await test.request({
      method: 'eth_sendTransaction',
      params: [{ from: minter, to: TOKEN, data: `0x40c10f19${account.slice(2).toLowerCase().padStart(64, '0')}${(12_345_678n).toString(16).padStart(64, '0')}` }],
    } as never) as Hex;
    expect((await chain.waitForTransactionReceipt({ hash, pollingInterval: 100 })).status).toBe('success');
    const after = (await balances(account.toLowerCase())).balances;
    expect(after).toEqual([
      { caip19: 'eip155:11155111/slip44:60', symbol: 'ETH', balance: '1500000000000000000', decimals: 18, name: 'Sepolia Ether', display: { crypto: '1.5' } },
      { caip19: `eip155:11155111/erc20:${TOKEN.toLowerCase()}`, symbol: 'TST', balance: '12345678', decimals: 6, name: 'Test Dollar', display: { crypto: '12.345678' } },
    ]);
    // The other node knows nothing of it.
    expect((await balances(account, BARE_CAIP2)).balances).toEqual([]);
  });

  it('refuses a private key address, an unknown address, an unconfigured chain and Solana, changing nothing', async () => {
    await test.setBalance({ address: keyAddress, value: parseEther('2') });
    const before = await dbSnapshot(sigil);
    const ask = (address: string, caip2 = CAIP2) => rawPost(`${sigil.url}/public/v1/query/get_wallet_address_balances`, { organizationId: orgId, address, caip2 }, { key: sigil.root });
    await expectRefusedUnchanged(sigil, before, await ask(keyAddress), 400, 3, 'REQUEST_INVALID', /private key address.*wallet account addresses only/);
    await expectRefusedUnchanged(sigil, before, await ask('0x000000000000000000000000000000000000beef'), 404, 5, 'NOT_FOUND', /not an Ethereum address of a wallet account of this organization/);
    await expectRefusedUnchanged(sigil, before, await ask('nonsense'), 400, 3, 'REQUEST_INVALID', /address must be the 0x-prefixed 20-byte hex address/);
    await expectRefusedUnchanged(sigil, before, await ask(account, 'eip155:1'), 400, 9, 'REQUEST_INVALID', /eip155:1 is not configured.*SIGIL_EVM_RPC_1\b/);
    await expectRefusedUnchanged(sigil, before, await ask(account, 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp'), 404, 12, 'UNIMPLEMENTED', /Solana .* not supported by this deployment/);
  });
});

describe('eth_undelegate_7702', () => {
  it('clears a delegation made by a type-4 transaction Sigil signed, tracked to INCLUDED like any send', async () => {
    await test.setBalance({ address: account, value: parseEther('10') });
    // Delegate: the authorization (nonce + 1: the sender is its own authority) and the type-4
    // transaction are both signed by Sigil, and broadcast through eth_send_raw_transaction.
    const signer = await createAccount({ client: httpClient(sigil), organizationId: orgId, signWith: account });
    const nonce = await chain.getTransactionCount({ address: account, blockTag: 'pending' });
    const authorization = await signer.signAuthorization!({ contractAddress: DELEGATE, chainId: anvil.chainId, nonce: nonce + 1 });
    const signed = await signer.signTransaction({
      type: 'eip7702',
      chainId: anvil.chainId,
      nonce,
      to: account,
      gas: 100_000n,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 10n ** 9n,
      authorizationList: [authorization],
    });
    const raw = await httpClient(sigil).ethSendRawTransaction({
      type: 'ACTIVITY_TYPE_ETH_SEND_RAW_TRANSACTION',
      timestampMs: String(Date.now()),
      organizationId: orgId,
      parameters: { signedTransaction: signed, caip2: CAIP2 },
    } as never);
    const delegation = (raw.activity.result as any).ethSendRawTransactionResult.transactionHash as Hex;
    expect((await chain.waitForTransactionReceipt({ hash: delegation, pollingInterval: 100 })).status).toBe('success');
    expect(await chain.getCode({ address: account })).toBe(`0xef0100${DELEGATE.slice(2).toLowerCase()}`);

    // Undelegate.
    // Blocks are mined by hand meanwhile, so the undelegation is in the node's pool (in flight) when
    // the next nonce is asked for: it is the one after the undelegation's two (its authorization
    // uses the second), where the node's pending count says only one.
    await test.setAutomine(false);
    let sendTransactionStatusId: string;
    try {
      ({ sendTransactionStatusId } = await sdkServerClient(sigil).ethUndelegate7702({ from: account, caip2: CAIP2 } as never));
      expect(await chain.getTransactionCount({ address: account, blockTag: 'pending' })).toBe(nonce + 3);
      expect((await sdkServerClient(sigil).getNonces({ address: account, caip2: CAIP2, nonce: true } as never)).nonce).toBe(String(nonce + 4));
      await test.mine({ blocks: 1 });
    } finally {
      await test.setAutomine(true);
    }
    await sdkServerClient(sigil).pollTransactionStatus({ sendTransactionStatusId, pollingIntervalMs: 100, timeoutMs: 120_000 });
    const next = await sdkServerClient(sigil).ethSendTransaction({ from: account, caip2: CAIP2, calls: [{ to: '0x000000000000000000000000000000000000a5a5', value: '3' }] } as never);
    await sdkServerClient(sigil).pollTransactionStatus({ sendTransactionStatusId: next.sendTransactionStatusId, pollingIntervalMs: 100, timeoutMs: 120_000 });
    expect(await chain.getBalance({ address: '0x000000000000000000000000000000000000a5a5' })).toBe(3n);
    const status = await httpClient(sigil).getSendTransactionStatus({ organizationId: orgId, sendTransactionStatusId });
    expect(status.txStatus).toBe('INCLUDED');
    // Submitted by the SDK as ACTIVITY_TYPE_ETH_UNDELEGATE7702, recorded under the swagger's type.
    const { activities } = await sdkServerClient(sigil).getActivities({ filterByType: ['ACTIVITY_TYPE_ETH_UNDELEGATE_7702'] } as never);
    expect(activities.map((a: any) => a.result?.ethUndelegate7702Result?.sendTransactionStatusId)).toContain(sendTransactionStatusId);
    expect(await chain.getCode({ address: account })).toBeUndefined();
    const tx = await chain.getTransaction({ hash: status.eth!.txHash as Hex });
    expect(tx.type).toBe('eip7702');
    expect(tx.from.toLowerCase()).toBe(account.toLowerCase());
    expect(tx.to!.toLowerCase()).toBe(account.toLowerCase());
    // The delegation used nonce and nonce + 1 (its authorization); the undelegation takes the next
    // two, its authorization carrying the transaction's nonce + 1.
    expect(tx.nonce).toBe(nonce + 2);
    expect(tx.authorizationList).toHaveLength(1);
    expect(tx.authorizationList![0].address.toLowerCase()).toBe('0x0000000000000000000000000000000000000000');
    expect(tx.authorizationList![0].nonce).toBe(nonce + 3);
    expect(tx.authorizationList![0].chainId).toBe(anvil.chainId);
    expect(await chain.getTransactionCount({ address: account })).toBe(nonce + 5);
  });

  it('a policy that denies signing the transaction denies the undelegation, and nothing goes out', async () => {
    const api = sdkServerClient(sigil);
    const bobKey = newKey();
    const { userIds } = await api.createUsers({
      users: [{ userName: 'undelegating bob', apiKeys: [{ apiKeyName: 'k', publicKey: bobKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    const allow = await api.createPolicy({ policyName: 'bob signs', effect: 'EFFECT_ALLOW', condition: "activity.action == 'SIGN'", consensus: `approvers.any(user, user.id == '${userIds[0]}')`, notes: '' });
    const deny = await api.createPolicy({ policyName: 'no type-4 to itself', effect: 'EFFECT_DENY', condition: `activity.type == 'ACTIVITY_TYPE_ETH_UNDELEGATE_7702' && eth.tx.type == 'TYPE_4' && eth.tx.to == '${account.toLowerCase()}'`, notes: '' });
    try {
      const nonce = await chain.getTransactionCount({ address: account, blockTag: 'pending' });
      const undelegate = () =>
        httpClient(sigil, bobKey).ethUndelegate7702({
          type: 'ACTIVITY_TYPE_ETH_UNDELEGATE_7702',
          timestampMs: String(Date.now()),
          organizationId: orgId,
          parameters: { from: account, caip2: CAIP2 },
        } as never);
      await expect(undelegate()).rejects.toThrow(/denied/i);
      // The SDK's own spelling of the type is judged as the real type: the deny holds there too.
      await expect(sdkServerClient(sigil, bobKey).ethUndelegate7702({ from: account, caip2: CAIP2 } as never)).rejects.toThrow(/denied/i);
      expect(await chain.getTransactionCount({ address: account, blockTag: 'pending' })).toBe(nonce);
      // Without the deny, bob's undelegation (of an account with no delegation: still valid) goes out.
      await api.deletePolicy({ policyId: deny.policyId });
      const done = await undelegate();
      const id = (done.activity.result as any).ethUndelegate7702Result.sendTransactionStatusId as string;
      await sdkServerClient(sigil).pollTransactionStatus({ sendTransactionStatusId: id, pollingIntervalMs: 100, timeoutMs: 120_000 });
      expect(await chain.getTransactionCount({ address: account })).toBe(nonce + 2);
    } finally {
      await api.deletePolicy({ policyId: deny.policyId }).catch(() => undefined);
      await api.deletePolicy({ policyId: allow.policyId });
    }
  });

  it('refuses bad input, an unknown sender and an unconfigured chain, changing nothing', async () => {
    const nonce = await chain.getTransactionCount({ address: account, blockTag: 'pending' });
    const before = await dbSnapshot(sigil);
    const submit = (parameters: unknown) => rawPost(`${sigil.url}/public/v1/submit/eth_undelegate_7702`, activityBody(orgId, 'ACTIVITY_TYPE_ETH_UNDELEGATE_7702', parameters), { key: sigil.root });
    await expectRefusedUnchanged(sigil, before, await submit({ from: account, caip2: 'eip155:1' }), 400, 9, 'REQUEST_INVALID', /eip155:1 is not configured.*SIGIL_EVM_RPC_1\b/);
    await expectRefusedUnchanged(sigil, before, await submit({ from: 'nonsense', caip2: CAIP2 }), 400, 3, 'REQUEST_INVALID', /from must be a 0x-prefixed 20-byte hex address/);
    await expectRefusedUnchanged(sigil, before, await submit({ from: account, caip2: CAIP2, gasLimit: '-1' }), 400, 3, 'REQUEST_INVALID', /gasLimit must be a non-negative decimal integer/);
    await expectRefusedUnchanged(sigil, before, await submit({ from: '0x000000000000000000000000000000000000beef', caip2: CAIP2 }), 404, 5, 'NOT_FOUND', /Could not find any resource to sign with/);
    expect(await chain.getTransactionCount({ address: account, blockTag: 'pending' })).toBe(nonce);
  });
});
