// The pure reading of a simulation (src/chains/ethereum/simulation.ts, docs/policies.md "Simulation
// before approval"): node answers built here with viem's own encoders become transfers, approvals
// (permit included), ERC-1155 batches, deployments, EIP-7702 delegations and revert reasons, checked
// against what viem computes for the same data; and the policy keyword reads them as documented,
// failing closed when no simulation ran.
import { describe, expect, it } from 'vitest';
import { encodeAbiParameters, encodeErrorResult, encodeEventTopics, getAddress, getContractAddress, parseAbi, toHex, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  balanceChangesOf,
  createdAddress,
  decodeDecimals,
  decodeRevertReason,
  decodeSymbol,
  delegationsOf,
  executionFromCallTrace,
  executionFromSimulateV1,
  movementsOf,
  nameAssets,
  type CallFrame,
} from '../../../src/chains/ethereum/simulation.js';
import { simulationKeyword, simulationSummary } from '../../../src/domain/keys/simulation.js';
import { compilePolicyExpression, evaluatePolicyExpression } from '../../../src/policy/index.js';
import type { AssetChanges } from '../../../src/chains/simulation.js';

const EVENTS = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 value)',
  'event Approval(address indexed owner, address indexed spender, uint256 value)',
  'event ApprovalForAll(address indexed owner, address indexed operator, bool approved)',
  'event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)',
  'event TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values)',
]);
const NFT_TRANSFER = parseAbi(['event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)']);
const A = getAddress('0x00000000000000000000000000000000000000aa');
const B = getAddress('0x00000000000000000000000000000000000000bb');
const TOKEN = getAddress('0x000000000000000000000000000000000000c0de');
const OP = getAddress('0x00000000000000000000000000000000000000ff');
const low = (a: string) => a.toLowerCase();
const uint = (v: bigint) => encodeAbiParameters([{ type: 'uint256' }], [v]);

const erc20Transfer = (from: Hex, to: Hex, v: bigint) => ({ address: TOKEN, topics: encodeEventTopics({ abi: EVENTS, eventName: 'Transfer', args: { from, to } }) as string[], data: uint(v) });
const tx = { from: low(A), to: low(TOKEN), nonce: 0n, value: 0n, data: '0x' };

describe('reading an eth_simulateV1 answer', () => {
  it('ERC-20 transfers, native transfers of the 0xeeee… pseudo-token, and the net change of the addresses held', () => {
    const native = { address: '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE', topics: encodeEventTopics({ abi: EVENTS, eventName: 'Transfer', args: { from: A, to: B } }) as string[], data: uint(5n) };
    const exec = executionFromSimulateV1({ status: '0x1', logs: [erc20Transfer(A, B, 100n), erc20Transfer(B, A, 30n), native] }, tx);
    const moved = nameAssets(movementsOf(exec), new Map([[TOKEN, { symbol: 'TKN', decimals: 6 }]]), { symbol: 'ETH', decimals: 18 });
    expect(moved.transfers).toEqual([
      { asset: { kind: 'native', symbol: 'ETH', decimals: 18 }, from: A, to: B, amount: '5' },
      { asset: { kind: 'erc20', contract: TOKEN, symbol: 'TKN', decimals: 6 }, from: A, to: B, amount: '100' },
      { asset: { kind: 'erc20', contract: TOKEN, symbol: 'TKN', decimals: 6 }, from: B, to: A, amount: '30' },
    ]);
    const changes = balanceChangesOf(moved.transfers, (a) => a === A);
    expect(changes.map((c) => [c.asset.kind, c.delta])).toEqual([['native', '-5'], ['erc20', '-70']]);
  });

  it('a permit is an Approval whose transaction calls permit(); the maximum is unlimited and 0 revokes', () => {
    const approval = (v: bigint) => ({ address: TOKEN, topics: encodeEventTopics({ abi: EVENTS, eventName: 'Approval', args: { owner: A, spender: B } }) as string[], data: uint(v) });
    const permitTx = { ...tx, data: '0xd505accf' + '00'.repeat(224) };
    const viaPermit = movementsOf(executionFromSimulateV1({ status: '0x1', logs: [approval((1n << 256n) - 1n)] }, permitTx));
    expect(viaPermit.approvals).toEqual([{ asset: { kind: 'erc20', contract: TOKEN }, owner: A, spender: B, amount: 'unlimited', revoked: false, via: 'permit' }]);
    const revoke = movementsOf(executionFromSimulateV1({ status: '0x1', logs: [approval(0n)] }, tx));
    expect(revoke.approvals[0]).toMatchObject({ amount: '0', revoked: true, via: 'approve' });
  });

  it('ERC-721 transfers, ERC-1155 single and batch transfers, and approval for all of a multi-token contract', () => {
    const logs = [
      { address: TOKEN, topics: encodeEventTopics({ abi: NFT_TRANSFER, eventName: 'Transfer', args: { from: A, to: B, tokenId: 9n } }) as string[], data: '0x' },
      { address: OP, topics: encodeEventTopics({ abi: EVENTS, eventName: 'TransferSingle', args: { operator: A, from: A, to: B } }) as string[], data: encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }], [3n, 40n]) },
      { address: OP, topics: encodeEventTopics({ abi: EVENTS, eventName: 'TransferBatch', args: { operator: A, from: A, to: B } }) as string[], data: encodeAbiParameters([{ type: 'uint256[]' }, { type: 'uint256[]' }], [[1n, 2n], [10n, 20n]]) },
      { address: OP, topics: encodeEventTopics({ abi: EVENTS, eventName: 'ApprovalForAll', args: { owner: A, operator: B } }) as string[], data: encodeAbiParameters([{ type: 'bool' }], [true]) },
    ];
    const m = movementsOf(executionFromSimulateV1({ status: '0x1', logs }, tx));
    expect(m.transfers).toEqual([
      { asset: { kind: 'erc721', contract: TOKEN, tokenId: '9' }, from: A, to: B, amount: '1' },
      { asset: { kind: 'erc1155', contract: OP, tokenId: '3' }, from: A, to: B, amount: '40' },
      { asset: { kind: 'erc1155', contract: OP, tokenId: '1' }, from: A, to: B, amount: '10' },
      { asset: { kind: 'erc1155', contract: OP, tokenId: '2' }, from: A, to: B, amount: '20' },
    ]);
    expect(m.approvals).toEqual([{ asset: { kind: 'erc1155', contract: OP }, owner: A, spender: B, amount: 'unlimited', revoked: false, via: 'setApprovalForAll' }]);
  });

  it('a contract creation is deployed at the address viem computes; a revert moves nothing', () => {
    expect(createdAddress(low(A), 0n)).toBe(low(getContractAddress({ from: A, nonce: 0n })));
    expect(createdAddress(low(A), 300n)).toBe(low(getContractAddress({ from: A, nonce: 300n })));
    expect(executionFromSimulateV1({ status: '0x1', logs: [] }, { ...tx, to: null, nonce: 7n }).deployments).toEqual([low(getContractAddress({ from: A, nonce: 7n }))]);
    const reverted = executionFromSimulateV1({ status: '0x0', returnData: '0x', logs: [erc20Transfer(A, B, 1n)], error: { message: 'execution reverted', data: encodeErrorResult({ abi: parseAbi(['error Error(string)']), errorName: 'Error', args: ['no'] }) } }, tx);
    expect(reverted.reverted).toBe(true);
    expect(movementsOf(reverted)).toEqual({ transfers: [], approvals: [] });
    expect(decodeRevertReason(reverted.revertData)).toBe('no');
  });
});

describe('reading a callTracer tree (debug_traceCall)', () => {
  it('internal value transfers and creations count; a failed sub-call leaves nothing; delegatecall moves no value of its own', () => {
    const root: CallFrame = {
      type: 'CALL', from: low(A), to: low(OP), value: '0x64', input: '0x',
      calls: [
        { type: 'CALL', from: low(OP), to: low(B), value: '0x0a' },
        { type: 'DELEGATECALL', from: low(OP), to: low(TOKEN), value: '0x64', logs: [erc20Transfer(OP, B, 7n)] },
        { type: 'CALL', from: low(OP), to: low(B), value: '0x05', error: 'execution reverted', logs: [erc20Transfer(OP, B, 99n)] },
        { type: 'CREATE2', from: low(OP), to: '0x00000000000000000000000000000000000000c2', value: '0x0' },
      ],
    };
    const exec = executionFromCallTrace(root);
    expect(exec.nativeTransfers).toEqual([{ from: low(A), to: low(OP), value: 100n }, { from: low(OP), to: low(B), value: 10n }]);
    expect(exec.logs).toHaveLength(1);
    expect(exec.deployments).toEqual(['0x00000000000000000000000000000000000000c2']);
    const top = executionFromCallTrace({ type: 'CALL', from: low(A), to: low(OP), error: 'execution reverted', output: encodeErrorResult({ abi: parseAbi(['error Panic(uint256)']), errorName: 'Panic', args: [0x11n] }) });
    expect(top.reverted).toBe(true);
    expect(decodeRevertReason(top.revertData, top.revertMessage)).toBe('panic 0x11 (arithmetic overflow or underflow)');
  });
});

describe('names, reasons and delegations', () => {
  it('symbol() as a string or bytes32, decimals() as a uint8; anything else is no answer', () => {
    expect(decodeSymbol(encodeAbiParameters([{ type: 'string' }], ['USDC']))).toBe('USDC');
    expect(decodeSymbol(toHex('MKR', { size: 32 }).replace(/^(0x)(.*)$/, (_m, p, h) => p + Buffer.from('MKR').toString('hex').padEnd(64, '0')))).toBe('MKR');
    expect(decodeSymbol(encodeAbiParameters([{ type: 'string' }], ['\u0007bell']))).toBeUndefined();
    expect(decodeSymbol('0x')).toBeUndefined();
    expect(decodeDecimals(uint(6n))).toBe(6);
    expect(decodeDecimals(uint(300n))).toBeUndefined();
    expect(decodeRevertReason('0xdeadbeef00')).toBe('execution reverted with custom error 0xdeadbeef');
    expect(decodeRevertReason(undefined, 'out of gas')).toBe('out of gas');
  });

  it('an EIP-7702 authorization delegates its signer, recovered from its signature', async () => {
    const account = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
    const auth = await account.signAuthorization({ chainId: 1, contractAddress: B, nonce: 3 });
    const delegations = delegationsOf([{ chainId: 1n, address: low(B), nonce: 3n, yParity: BigInt(auth.yParity!), r: BigInt(auth.r), s: BigInt(auth.s) }]);
    expect(delegations).toEqual([{ authority: account.address, delegate: B }]);
  });
});

describe('the simulation keyword', () => {
  const simulated: AssetChanges = {
    status: 'SIMULATED', chain: 'ethereum', network: '1', block: '10', reverted: false,
    transfers: [{ asset: { kind: 'erc20', contract: TOKEN, symbol: 'USDC', decimals: 6 }, from: A, to: B, amount: '1200000000' }],
    approvals: [{ asset: { kind: 'erc20', contract: TOKEN, symbol: 'USDC', decimals: 6 }, owner: A, spender: B, amount: 'unlimited', revoked: false, via: 'approve' }],
    balanceChanges: [{ address: A, asset: { kind: 'erc20', contract: TOKEN, symbol: 'USDC', decimals: 6 }, delta: '-1200000000' }],
    deployments: [], delegations: [],
  };
  const evaluate = (source: string, c: AssetChanges) => {
    const r = compilePolicyExpression(source, 'condition');
    if (!r.ok) throw new Error(r.error.message);
    return evaluatePolicyExpression(r.expression, { simulation: simulationKeyword(c, A) });
  };

  it('reads outflows, approvals and balance changes as integers; addresses ignore case', () => {
    expect(evaluate("simulation.outflows.any(o, o.asset.symbol == 'USDC' && o.amount > 1000000000)", simulated)).toMatchObject({ ok: true, value: true });
    expect(evaluate(`simulation.approvals.any(a, a.unlimited && a.spender == '${low(B)}')`, simulated)).toMatchObject({ ok: true, value: true });
    expect(evaluate('simulation.balance_changes.all(b, b.delta > 0)', simulated)).toMatchObject({ ok: true, value: false });
    expect(simulationSummary(simulated)).toBe(`sends 1,200 USDC from ${A.slice(0, 6)}…${A.slice(-4)} to ${B.slice(0, 6)}…${B.slice(-4)}; grants unlimited approval to ${B.slice(0, 6)}…${B.slice(-4)}`);
  });

  it('without a simulation, status reads and every other field is an evaluation error (fails closed)', () => {
    const none: AssetChanges = { status: 'NOT_SIMULATED', reason: 'no RPC', chain: 'ethereum', network: '1', reverted: false, transfers: [], approvals: [], balanceChanges: [], deployments: [], delegations: [] };
    expect(evaluate("simulation.status == 'NOT_SIMULATED'", none)).toMatchObject({ ok: true, value: true });
    const r = evaluate('simulation.outflows.count() == 0', none);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(/NOT_SIMULATED: no RPC/);
    expect(compilePolicyExpression('simulation.outflow.count() == 0', 'condition').ok).toBe(false);
  });
});
