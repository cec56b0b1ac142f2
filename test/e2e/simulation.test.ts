// Simulation before approval (docs/policies.md "Simulation before approval", docs/broadcasting.md
// "Simulation"): bob's Ethereum signatures wait for a second approval; while they wait, the
// activity's decodedView.simulation says what the transaction does (read through @turnkey/sdk-server),
// and once root approves it is mined on a real anvil node and viem's own reading of the chain must
// agree: ERC-20 balances and allowances, ERC-721 owners and operators, native value moved by an
// internal call, the contract a deployment creates, a revert and its reason. The contracts are real
// bytecode installed on anvil (test/helpers/evm-contracts.ts). A policy on simulation.outflows
// denies a token outflow hidden behind a proxy's delegatecall that a calldata policy (eth.tx.to)
// allows; a chain without an RPC is NOT_SIMULATED, and a policy reading simulation.* then refuses.
// A second Sigil asks the node with debug_traceCall instead of eth_simulateV1 and must agree.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createTestClient, encodeFunctionData, getAddress, getContractAddress, http, parseAbi, parseEther, serializeTransaction, type Hex } from 'viem';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { httpClient, newKey, sdkServerClient, waitingSdkServerClient, type KeyPair } from '../helpers/clients.js';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { execSql } from '../helpers/db-snapshot.js';
import { ERC20_RUNTIME, ERC721_RUNTIME, MODULE_RUNTIME, PROXY_RUNTIME, deployCode } from '../helpers/evm-contracts.js';

const TKN = getAddress('0x000000000000000000000000000000000000a020');
const NFT = getAddress('0x000000000000000000000000000000000000a721');
const PROXY = getAddress('0x000000000000000000000000000000000000ba5e');
const MODULE = getAddress('0x000000000000000000000000000000000000b0d1');
const ALICE = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as Hex;
const CAROL = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC' as Hex;
const EVIL = getAddress('0x00000000000000000000000000000000000e0111');
const E18 = 10n ** 18n;

const ERC20 = parseAbi([
  'function transfer(address to, uint256 amount) returns (bool)',
  'function transferFrom(address from, address to, uint256 amount) returns (bool)',
  'function approve(address spender, uint256 amount) returns (bool)',
  'function balanceOf(address) view returns (uint256)',
  'function allowance(address, address) view returns (uint256)',
  'function mint(address to, uint256 amount)',
]);
const ERC721 = parseAbi([
  'function mint(address to, uint256 id)',
  'function transferFrom(address from, address to, uint256 id)',
  'function ownerOf(uint256 id) view returns (address)',
  'function setApprovalForAll(address operator, bool approved)',
  'function isApprovedForAll(address owner, address operator) view returns (bool)',
]);
const PROXY_ABI = parseAbi(['function execute(address target, bytes data)']);
const MODULE_ABI = parseAbi(['function pull(address token, address from, address to, uint256 amount)', 'function forward(address to) payable']);

let anvil: Anvil;
let sigil: SigilInstance;
let from: Hex;
let bobKey: KeyPair;
let chain: ReturnType<typeof createPublicClient>;
let nonce = 0;
/** A "node" that accepts connections and never answers: its chain's simulations time out. */
let silent: Server;
const SILENT_CHAIN = 8453;

beforeAll(async () => {
  anvil = await startAnvil();
  silent = createServer(() => undefined);
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  sigil = await startSigil({
    [`SIGIL_EVM_RPC_${anvil.chainId}`]: anvil.url,
    [`SIGIL_EVM_RPC_${SILENT_CHAIN}`]: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`,
    SIGIL_EVM_SIMULATION_TIMEOUT_MS: '2000',
  });
  chain = createPublicClient({ transport: http(anvil.url) });
  const root = sdkServerClient(sigil);
  const w = await root.createWallet({
    walletName: 'simulated',
    accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }],
  });
  from = w.addresses[0] as Hex;
  bobKey = newKey();
  await root.createUsers({ users: [{ userName: 'bob', apiKeys: [{ apiKeyName: 'bob', publicKey: bobKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }] });
  // bob's signatures wait for a second approval (root's), so each is read while it waits.
  await root.createPolicy({ policyName: 'bob signs with a second approval', effect: 'EFFECT_ALLOW', condition: "activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN'", consensus: 'approvers.count() >= 2', notes: '' });
  const test = createTestClient({ mode: 'anvil', transport: http(anvil.url) });
  await test.setBalance({ address: from, value: parseEther('100') });
  await test.setCode({ address: TKN, bytecode: ERC20_RUNTIME });
  await test.setCode({ address: NFT, bytecode: ERC721_RUNTIME });
  await test.setCode({ address: PROXY, bytecode: PROXY_RUNTIME });
  await test.setCode({ address: MODULE, bytecode: MODULE_RUNTIME });
  // Minted by whoever: the contracts' mint is open.
  await test.impersonateAccount({ address: ALICE });
  await test.setBalance({ address: ALICE, value: parseEther('10') });
  const asAlice = async (to: Hex, data: Hex) => {
    const hash = await test.request({ method: 'eth_sendTransaction', params: [{ from: ALICE, to, data }] } as never);
    await chain.waitForTransactionReceipt({ hash: hash as Hex });
  };
  await asAlice(TKN, encodeFunctionData({ abi: ERC20, functionName: 'mint', args: [from, 100_000n * E18] }));
  await asAlice(NFT, encodeFunctionData({ abi: ERC721, functionName: 'mint', args: [from, 7n] }));
}, 120_000);

afterAll(async () => {
  await sigil?.stop();
  await anvil?.stop();
  silent?.closeAllConnections();
  await new Promise((r) => silent?.close(r));
});

/** An unsigned EIP-1559 transaction from the wallet, on anvil's chain unless told. */
function unsigned(tx: { to?: Hex; data?: Hex; value?: bigint; chainId?: number }): string {
  return serializeTransaction({ type: 'eip1559', chainId: tx.chainId ?? anvil.chainId, nonce: nonce++, to: tx.to, data: tx.data, value: tx.value, gas: 1_000_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n }).slice(2);
}

/** bob signs: the activity waits for root's approval; its record as get_activity returns it. */
async function submitAsBob(unsignedTransaction: string, client = waitingSdkServerClient(sigil, bobKey)) {
  const r = await client.signTransaction({ signWith: from, unsignedTransaction, type: 'TRANSACTION_TYPE_ETHEREUM' });
  expect(r.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
  const { activity } = (await sdkServerClient(sigil).getActivity({ activityId: r.activity.id })) as { activity: any };
  return activity;
}

/** Root approves; the signed transaction is sent to anvil and mined; its receipt. */
async function approveAndMine(activity: any, s: SigilInstance = sigil) {
  await sdkServerClient(s).approveActivity({ fingerprint: activity.fingerprint });
  const { activity: done } = (await sdkServerClient(s).getActivity({ activityId: activity.id })) as { activity: any };
  expect(done.status).toBe('ACTIVITY_STATUS_COMPLETED');
  const signed = done.result.signTransactionResult.signedTransaction as string;
  const hash = await chain.sendRawTransaction({ serializedTransaction: (signed.startsWith('0x') ? signed : `0x${signed}`) as Hex });
  return chain.waitForTransactionReceipt({ hash });
}

const tokenBalance = (who: Hex) => chain.readContract({ address: TKN, abi: ERC20, functionName: 'balanceOf', args: [who] });
const tkn = { kind: 'erc20', contract: TKN, symbol: 'TKN', decimals: 18 };

describe('simulation before approval, checked against the mined transaction', () => {
  it('an ERC-20 transfer: the transfer, the net change and the summary match the balances after mining', async () => {
    const activity = await submitAsBob(unsigned({ to: TKN, data: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [ALICE, 1200n * E18] }) }));
    const sim = activity.decodedView.simulation;
    expect(sim).toMatchObject({ status: 'SIMULATED', chain: 'ethereum', network: String(anvil.chainId), reverted: false });
    expect(Number(sim.block)).toBeGreaterThanOrEqual(0);
    expect(Date.parse(sim.simulatedAt)).not.toBeNaN();
    expect(sim.transfers).toEqual([{ asset: tkn, from, to: ALICE, amount: (1200n * E18).toString() }]);
    expect(sim.balanceChanges).toEqual([{ address: from, asset: tkn, delta: (-1200n * E18).toString() }]);
    const section = activity.decodedView.sections.find((s: any) => s.title === 'Simulation');
    expect(section.rows.find((r: any) => r.label === 'summary').value).toMatch(/^sends 1,200 TKN from 0x\w{4}…\w{4} to 0x7099…79C8$/);

    const [fromBefore, aliceBefore] = [await tokenBalance(from), await tokenBalance(ALICE)];
    const receipt = await approveAndMine(activity);
    expect(receipt.status).toBe('success');
    expect((await tokenBalance(from)) - fromBefore).toBe(BigInt(sim.balanceChanges[0].delta));
    expect((await tokenBalance(ALICE)) - aliceBefore).toBe(BigInt(sim.transfers[0].amount));
  });

  it('an ERC-721 transfer and an approval for all: owners and operators as viem reads them after mining', async () => {
    const nft = await submitAsBob(unsigned({ to: NFT, data: encodeFunctionData({ abi: ERC721, functionName: 'transferFrom', args: [from, CAROL, 7n] }) }));
    expect(nft.decodedView.simulation.transfers).toEqual([{ asset: { kind: 'erc721', contract: NFT, tokenId: '7' }, from, to: CAROL, amount: '1' }]);
    await approveAndMine(nft);
    expect(await chain.readContract({ address: NFT, abi: ERC721, functionName: 'ownerOf', args: [7n] })).toBe(CAROL);

    const all = await submitAsBob(unsigned({ to: NFT, data: encodeFunctionData({ abi: ERC721, functionName: 'setApprovalForAll', args: [EVIL, true] }) }));
    expect(all.decodedView.simulation.approvals).toEqual([{ asset: { kind: 'erc721', contract: NFT }, owner: from, spender: EVIL, amount: 'unlimited', revoked: false, via: 'setApprovalForAll' }]);
    await approveAndMine(all);
    expect(await chain.readContract({ address: NFT, abi: ERC721, functionName: 'isApprovedForAll', args: [from, EVIL] })).toBe(true);
  });

  it('an approval, then a contract that pulls the approved tokens (transferFrom): allowance and balances agree', async () => {
    const approve = await submitAsBob(unsigned({ to: TKN, data: encodeFunctionData({ abi: ERC20, functionName: 'approve', args: [MODULE, 3000n * E18] }) }));
    expect(approve.decodedView.simulation.approvals).toEqual([{ asset: tkn, owner: from, spender: MODULE, amount: (3000n * E18).toString(), revoked: false, via: 'approve' }]);
    await approveAndMine(approve);
    expect(await chain.readContract({ address: TKN, abi: ERC20, functionName: 'allowance', args: [from, MODULE] })).toBe(3000n * E18);

    // The wallet calls the module, which moves the wallet's tokens to carol: nothing in the call's
    // own `to` or value says so.
    const pull = await submitAsBob(unsigned({ to: MODULE, data: encodeFunctionData({ abi: MODULE_ABI, functionName: 'pull', args: [TKN, from, CAROL, 2500n * E18] }) }));
    const sim = pull.decodedView.simulation;
    expect(sim.transfers).toEqual([{ asset: tkn, from, to: CAROL, amount: (2500n * E18).toString() }]);
    const carolBefore = await tokenBalance(CAROL);
    await approveAndMine(pull);
    expect((await tokenBalance(CAROL)) - carolBefore).toBe(2500n * E18);
    expect(await chain.readContract({ address: TKN, abi: ERC20, functionName: 'allowance', args: [from, MODULE] })).toBe(500n * E18);
  });

  it('native value passed on by an internal call, and a contract deployment', async () => {
    const forward = await submitAsBob(unsigned({ to: MODULE, value: parseEther('1.5'), data: encodeFunctionData({ abi: MODULE_ABI, functionName: 'forward', args: [CAROL] }) }));
    const sim = forward.decodedView.simulation;
    const eth = { kind: 'native', symbol: 'ETH', decimals: 18 };
    expect(sim.transfers).toEqual([
      { asset: eth, from, to: MODULE, amount: parseEther('1.5').toString() },
      { asset: eth, from: MODULE, to: CAROL, amount: parseEther('1.5').toString() },
    ]);
    expect(sim.balanceChanges).toEqual([{ address: from, asset: eth, delta: (-parseEther('1.5')).toString() }]);
    const carolBefore = await chain.getBalance({ address: CAROL });
    await approveAndMine(forward);
    expect((await chain.getBalance({ address: CAROL })) - carolBefore).toBe(parseEther('1.5'));

    const deployNonce = nonce;
    const deploy = await submitAsBob(unsigned({ data: deployCode(ERC20_RUNTIME) }));
    const expected = getContractAddress({ from, nonce: BigInt(deployNonce) });
    expect(deploy.decodedView.simulation.deployments).toEqual([expected]);
    const receipt = await approveAndMine(deploy);
    expect(receipt.contractAddress?.toLowerCase()).toBe(expected.toLowerCase());
    expect(await chain.getCode({ address: expected })).toBe(ERC20_RUNTIME);
  });

  it('a waiting eth_send_transaction is simulated and its simulation recorded with it', async () => {
    const bob = waitingSdkServerClient(sigil, bobKey);
    const data = encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [CAROL, 42n * E18] });
    const sent = await bob.ethSendTransaction({ from, caip2: `eip155:${anvil.chainId}`, calls: [{ to: TKN, data }] } as never);
    const { activity } = (await sdkServerClient(sigil).getActivity({ activityId: (sent as any).activity.id })) as { activity: any };
    expect(activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    // A send's intent names calls, not a transaction: no decoded view yet, the record holds the simulation.
    const [row] = await execSql(sigil, `select simulation from activities where id = '${activity.id}'`);
    expect(JSON.parse(String(row.simulation)).transfers).toEqual([{ asset: tkn, from, to: CAROL, amount: (42n * E18).toString() }]);
    // Rejected: it never takes a nonce, so the next transactions' stay in order.
    await sdkServerClient(sigil).rejectActivity({ fingerprint: activity.fingerprint });
  });

  it('a revert, with the reason Error(string) gives, as the mined transaction reverts', async () => {
    const activity = await submitAsBob(unsigned({ to: TKN, data: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [ALICE, 10n ** 30n] }) }));
    const sim = activity.decodedView.simulation;
    expect(sim).toMatchObject({ status: 'SIMULATED', reverted: true, revertReason: 'insufficient balance', transfers: [], balanceChanges: [] });
    expect(activity.decodedView.sections.find((s: any) => s.title === 'Simulation').rows.find((r: any) => r.label === 'summary').value).toBe('reverts: insufficient balance');
    const receipt = await approveAndMine(activity);
    expect(receipt.status).toBe('reverted');
  });
});

describe('policies on the simulation', () => {
  const disguised = (amount: bigint) =>
    unsigned({ to: PROXY, data: encodeFunctionData({ abi: PROXY_ABI, functionName: 'execute', args: [MODULE, encodeFunctionData({ abi: MODULE_ABI, functionName: 'pull', args: [TKN, from, EVIL, amount] })] }) });

  it('denies a token outflow hidden behind a delegatecall that a calldata policy allows', async () => {
    const root = sdkServerClient(sigil);
    // The wallet once approved the proxy (a Safe-like account it uses).
    const approve = await submitAsBob(unsigned({ to: TKN, data: encodeFunctionData({ abi: ERC20, functionName: 'approve', args: [PROXY, 50_000n * E18] }) }));
    await approveAndMine(approve);
    const calldata = await root.createPolicy({ policyName: 'bob may call the proxy', effect: 'EFFECT_ALLOW', condition: `eth.tx.to == '${PROXY}'`, notes: '' });
    const bob = sdkServerClient(sigil, bobKey);
    // The calldata policy alone lets it through: the call names the proxy, nothing else.
    const allowed = await bob.signTransaction({ signWith: from, unsignedTransaction: disguised(5000n * E18), type: 'TRANSACTION_TYPE_ETHEREUM' });
    expect(allowed.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const { activity: record } = (await root.getActivity({ activityId: allowed.activity.id })) as { activity: any };
    expect(record.decodedView.simulation.transfers).toEqual([{ asset: tkn, from, to: EVIL, amount: (5000n * E18).toString() }]);

    const deny = await root.createPolicy({
      policyName: 'no more than 1,000 TKN out',
      effect: 'EFFECT_DENY',
      condition: `simulation.outflows.any(o, o.asset.symbol == 'TKN' && o.amount > ${1000n * E18})`,
      notes: '',
    });
    await expect(bob.signTransaction({ signWith: from, unsignedTransaction: disguised(5000n * E18), type: 'TRANSACTION_TYPE_ETHEREUM' })).rejects.toThrow(/denied/);
    // Under the limit it still passes.
    const small = await bob.signTransaction({ signWith: from, unsignedTransaction: disguised(500n * E18), type: 'TRANSACTION_TYPE_ETHEREUM' });
    expect(small.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');

    // A chain with no RPC: not simulated, said so, and the policy reading simulation.* refuses.
    const elsewhere = unsigned({ to: TKN, chainId: 1, data: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [ALICE, 1n] }) });
    await expect(bob.signTransaction({ signWith: from, unsignedTransaction: elsewhere, type: 'TRANSACTION_TYPE_ETHEREUM' })).rejects.toThrow(/reads simulation.\*, and this transaction.s simulation is NOT_SIMULATED: no RPC is configured for eip155:1 \(SIGIL_EVM_RPC_1/);
    // A node that does not answer in time: FAILED, and the policy refuses the same way.
    const stalled = unsigned({ to: TKN, chainId: SILENT_CHAIN, data: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [ALICE, 1n] }) });
    await expect(bob.signTransaction({ signWith: from, unsignedTransaction: stalled, type: 'TRANSACTION_TYPE_ETHEREUM' })).rejects.toThrow(/simulation is FAILED: the simulation on eip155:8453 failed: the chain's node did not answer the simulation within 2000 ms/);
    await root.deletePolicy({ policyId: deny.policyId });
    await root.deletePolicy({ policyId: calldata.policyId });
    const unsimulated = await submitAsBob(unsigned({ to: TKN, chainId: 1, data: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [ALICE, 1n] }) }));
    expect(unsimulated.decodedView.simulation).toMatchObject({ status: 'NOT_SIMULATED', reason: expect.stringMatching(/no RPC/) });
    // Without a policy on it, a failed simulation is recorded and shown; the activity waits as any other.
    const failed = await submitAsBob(unsigned({ to: TKN, chainId: SILENT_CHAIN, data: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [ALICE, 1n] }) }));
    expect(failed.decodedView.simulation).toMatchObject({ status: 'FAILED', chain: 'ethereum', network: String(SILENT_CHAIN), reason: expect.stringMatching(/did not answer the simulation within 2000 ms/) });
  });

  it('a velocity control on the token counts the outflow the simulation shows, whatever the calldata says', async () => {
    const root = sdkServerClient(sigil);
    const calldata = await root.createPolicy({ policyName: 'bob may call the proxy', effect: 'EFFECT_ALLOW', condition: `eth.tx.to == '${PROXY}'`, notes: '' });
    const control = await httpClient(sigil).createVelocityControl({
      type: 'ACTIVITY_TYPE_CREATE_VELOCITY_CONTROL',
      timestampMs: String(Date.now()),
      organizationId: sigil.root.organizationId,
      parameters: {
        name: 'tkn',
        identifier: 'tkn',
        dataSource: { chainAssetTransfer: { definition: [{ caip19: `eip155:${anvil.chainId}/erc20:${TKN}`, decimals: '18' }] } },
        aggregation: { method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM', operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL', threshold: '1000', window: { infinite: {} }, groupBy: { wallet: {} } },
      },
    } as never);
    const limit = await root.createPolicy({ policyName: 'at most 1,000 TKN', effect: 'EFFECT_DENY', condition: '!controls.tkn', notes: '' });
    const bob = sdkServerClient(sigil, bobKey);
    try {
      // 600 fits; 600 more would not: the calldata names only the proxy, the simulation the token.
      const first = await bob.signTransaction({ signWith: from, unsignedTransaction: disguised(600n * E18), type: 'TRANSACTION_TYPE_ETHEREUM' });
      expect(first.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
      await expect(bob.signTransaction({ signWith: from, unsignedTransaction: disguised(600n * E18), type: 'TRANSACTION_TYPE_ETHEREUM' })).rejects.toThrow(/denied/);
    } finally {
      await root.deletePolicy({ policyId: limit.policyId });
      await root.deletePolicy({ policyId: calldata.policyId });
      const velocityControlId = (control.activity.result as any).createVelocityControlResult.velocityControlId;
      await httpClient(sigil).deleteVelocityControl({ type: 'ACTIVITY_TYPE_DELETE_VELOCITY_CONTROL', timestampMs: String(Date.now()), organizationId: sigil.root.organizationId, parameters: { velocityControlId } } as never);
    }
  });

  it('a node asked with debug_traceCall (callTracer) sees the same delegatecalled outflow', async () => {
    const traced = await startSigil({ [`SIGIL_EVM_RPC_${anvil.chainId}`]: anvil.url, SIGIL_EVM_SIMULATION_METHOD: 'debug_traceCall' });
    try {
      const root = sdkServerClient(traced);
      const w = await root.createWallet({ walletName: 'w', accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] });
      const owner = w.addresses[0] as Hex;
      const test = createTestClient({ mode: 'anvil', transport: http(anvil.url) });
      await test.setBalance({ address: owner, value: parseEther('1') });
      const data = encodeFunctionData({ abi: PROXY_ABI, functionName: 'execute', args: [MODULE, encodeFunctionData({ abi: MODULE_ABI, functionName: 'forward', args: [CAROL] })] });
      const tx = serializeTransaction({ type: 'eip1559', chainId: anvil.chainId, nonce: 0, to: PROXY, data, value: parseEther('0.25'), gas: 500_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n }).slice(2);
      const signed = await root.signTransaction({ signWith: owner, unsignedTransaction: tx, type: 'TRANSACTION_TYPE_ETHEREUM' });
      const { activity } = (await root.getActivity({ activityId: signed.activity.id })) as { activity: any };
      const eth = { kind: 'native', symbol: 'ETH', decimals: 18 };
      // The delegatecall runs the module in the proxy's context: the proxy passes the value on.
      expect(activity.decodedView.simulation).toMatchObject({ status: 'SIMULATED', reverted: false });
      expect(activity.decodedView.simulation.transfers).toEqual([
        { asset: eth, from: owner, to: PROXY, amount: parseEther('0.25').toString() },
        { asset: eth, from: PROXY, to: CAROL, amount: parseEther('0.25').toString() },
      ]);
      const carolBefore = await chain.getBalance({ address: CAROL });
      const hash = await chain.sendRawTransaction({ serializedTransaction: `0x${signed.signedTransaction.replace(/^0x/, '')}` as Hex });
      await chain.waitForTransactionReceipt({ hash });
      expect((await chain.getBalance({ address: CAROL })) - carolBefore).toBe(parseEther('0.25'));
    } finally {
      await traced.stop();
    }
  });
});
