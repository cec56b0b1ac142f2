// What an Ethereum transaction did in a simulation, read from what the node answered (docs/policies.md
// "Simulation before approval"): the result of `eth_simulateV1` (with traceTransfers, so native value
// moved by internal calls appears as Transfer logs of the 0xeeee…eeee pseudo-contract) or the call
// tree of `debug_traceCall` with the `callTracer` (withLog). Both become one execution (logs of the
// calls that succeeded, native transfers, deployments, the revert), and that becomes the asset
// changes of src/chains/simulation.ts: ERC-20 / ERC-721 / ERC-1155 transfers, approvals (an EIP-2612
// permit emits Approval too), contracts created, EIP-7702 delegations and the revert's reason.
// Pure: the node is asked by src/delivery/evm-simulation.ts.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { toChecksumAddress } from '../addresses/ethereum.js';
import type { SimulatedApproval, SimulatedAsset, SimulatedBalanceChange, SimulatedTransfer } from '../simulation.js';
import { eip7702AuthorizationDigest } from './eip712.js';
import { rlpEncode } from './rlp.js';
import type { EthAuthorization } from './tx.js';

export interface EvmLog {
  address: string;
  topics: string[];
  data: string;
}

/** What one simulated transaction did, whichever method the node answered. */
export interface EvmExecution {
  reverted: boolean;
  /** The revert's return data (0x hex) where the node gave it. */
  revertData?: string;
  /** The node's own words for a failure (`execution reverted`, `out of gas`). */
  revertMessage?: string;
  /** Logs of the calls that succeeded, in order. */
  logs: EvmLog[];
  /** Native value moved by the transaction and by its internal calls. */
  nativeTransfers: { from: string; to: string; value: bigint }[];
  /** Contracts created (CREATE, CREATE2, a transaction without `to`). */
  deployments: string[];
  /** Token contracts the transaction calls `permit(…)` on: their Approval events are permits. */
  permitted: Set<string>;
}

/** A callTracer frame (geth's `callTracer`, `withLog: true`), as anvil and geth answer it. */
export interface CallFrame {
  type: string;
  from: string;
  to?: string;
  value?: string;
  input?: string;
  output?: string;
  error?: string;
  revertReason?: string;
  logs?: { address: string; topics: string[]; data: string }[];
  calls?: CallFrame[];
}

/** One call's result in an `eth_simulateV1` block. */
export interface SimulateV1Call {
  status: string;
  returnData?: string;
  logs?: { address: string; topics: string[]; data: string }[];
  error?: { code?: number; message?: string; data?: string };
}

/** The transaction as simulated: what the execution is read against. */
export interface SimulatedTx {
  from: string;
  to: string | null;
  nonce: bigint;
  value: bigint;
  data: string;
}

const TRANSFER = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const APPROVAL = '0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925';
const APPROVAL_FOR_ALL = '0x17307eab39ab6107e8899845ad3d59bd9653f200f220920489ca2b5937696c31';
const TRANSFER_SINGLE = '0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62';
const TRANSFER_BATCH = '0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb';
/** permit(address,address,uint256,uint256,uint8,bytes32,bytes32), EIP-2612. */
const PERMIT_SELECTOR = '0xd505accf';
/** The pseudo-contract eth_simulateV1 names as the emitter of native value transfers (traceTransfers). */
const NATIVE_EMITTER = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
const MAX_UINT256 = (1n << 256n) - 1n;

const lower = (a: string) => a.toLowerCase();
const word = (data: string, i: number) => BigInt('0x' + (data.replace(/^0x/, '').slice(i * 64, i * 64 + 64) || '0'));
const topicAddress = (t: string) => '0x' + t.replace(/^0x/, '').slice(24).toLowerCase();
const quantity = (v: string | undefined) => (v ? BigInt(v) : 0n);

/** The address a contract created by `from` at `nonce` gets (CREATE): keccak256(rlp([from, nonce]))[12:]. */
export function createdAddress(from: string, nonce: bigint): string {
  const n = nonce === 0n ? new Uint8Array(0) : Buffer.from(nonce.toString(16).padStart(Math.ceil(nonce.toString(16).length / 2) * 2, '0'), 'hex');
  const hash = keccak_256(rlpEncode([Buffer.from(from.replace(/^0x/, ''), 'hex'), n]));
  return '0x' + Buffer.from(hash.subarray(12)).toString('hex');
}

/**
 * The reason a revert gives: `Error(string)`'s message, `Panic(uint256)`'s code named, a custom
 * error's selector, or the node's own words when there is no data.
 */
export function decodeRevertReason(data: string | undefined, nodeMessage?: string): string {
  const d = (data ?? '').toLowerCase();
  if (d.startsWith('0x08c379a0') && d.length >= 10 + 128) {
    try {
      const body = d.slice(10);
      const offset = Number(word(body, 0));
      const length = Number(BigInt('0x' + body.slice(offset * 2, offset * 2 + 64)));
      const text = Buffer.from(body.slice(offset * 2 + 64, offset * 2 + 64 + length * 2), 'hex').toString('utf8');
      return text || 'execution reverted';
    } catch {
      return `execution reverted with malformed Error(string) data ${d.slice(0, 74)}`;
    }
  }
  if (d.startsWith('0x4e487b71') && d.length === 10 + 64) {
    const code = word(d.slice(10), 0);
    return `panic 0x${code.toString(16)}${PANICS[Number(code)] ? ` (${PANICS[Number(code)]})` : ''}`;
  }
  if (d.length >= 10) return `execution reverted with custom error ${d.slice(0, 10)}`;
  return nodeMessage || 'execution reverted';
}

const PANICS: Record<number, string> = {
  0x01: 'assertion failed',
  0x11: 'arithmetic overflow or underflow',
  0x12: 'division or modulo by zero',
  0x21: 'invalid enum value',
  0x22: 'invalid storage byte array',
  0x31: 'pop on an empty array',
  0x32: 'array index out of bounds',
  0x41: 'out of memory',
  0x51: 'call to an uninitialized function',
};

function permitsIn(tx: SimulatedTx): Set<string> {
  return new Set(tx.to && tx.data.toLowerCase().startsWith(PERMIT_SELECTOR) ? [lower(tx.to)] : []);
}

/** The execution a `debug_traceCall` callTracer tree describes; calls that failed leave nothing (their logs and value are undone). */
export function executionFromCallTrace(root: CallFrame): EvmExecution {
  const out: EvmExecution = { reverted: false, logs: [], nativeTransfers: [], deployments: [], permitted: new Set() };
  if (root.error) {
    out.reverted = true;
    out.revertData = root.output;
    out.revertMessage = root.revertReason ?? root.error;
    return out;
  }
  const walk = (frame: CallFrame) => {
    if (frame.error) return;
    const type = frame.type.toUpperCase();
    const value = quantity(frame.value);
    const to = frame.to ? lower(frame.to) : '';
    if (value > 0n && to && type !== 'DELEGATECALL' && type !== 'STATICCALL' && type !== 'CALLCODE') out.nativeTransfers.push({ from: lower(frame.from), to, value });
    if ((type === 'CREATE' || type === 'CREATE2') && to) out.deployments.push(to);
    if (to && (frame.input ?? '').toLowerCase().startsWith(PERMIT_SELECTOR)) out.permitted.add(to);
    // The tracer lists a frame's logs and its sub-calls apart; their relative order does not
    // change what moved, so logs come first, then the sub-calls' in order.
    for (const log of frame.logs ?? []) out.logs.push({ address: lower(log.address), topics: log.topics.map(lower), data: log.data });
    for (const call of frame.calls ?? []) walk(call);
  };
  walk(root);
  return out;
}

/** The execution of `tx` from its `eth_simulateV1` result (traceTransfers on). */
export function executionFromSimulateV1(call: SimulateV1Call, tx: SimulatedTx): EvmExecution {
  const out: EvmExecution = { reverted: false, logs: [], nativeTransfers: [], deployments: [], permitted: permitsIn(tx) };
  if (quantity(call.status) !== 1n) {
    out.reverted = true;
    out.revertData = call.error?.data ?? call.returnData;
    out.revertMessage = call.error?.message;
    return out;
  }
  for (const log of call.logs ?? []) {
    const address = lower(log.address);
    const topics = log.topics.map(lower);
    if (address === NATIVE_EMITTER && topics[0] === TRANSFER && topics.length === 3) {
      out.nativeTransfers.push({ from: topicAddress(topics[1]), to: topicAddress(topics[2]), value: word(log.data, 0) });
    } else {
      out.logs.push({ address, topics, data: log.data });
    }
  }
  // The simulation's answer has no call tree: the one contract it shows created is the transaction's own.
  if (!tx.to) out.deployments.push(createdAddress(lower(tx.from), tx.nonce));
  return out;
}

/** What the execution moved and granted, with assets named by kind and contract (symbols are added by `nameAssets`). */
export interface Movements {
  transfers: SimulatedTransfer[];
  approvals: SimulatedApproval[];
}

const checksum = (a: string) => toChecksumAddress(a);

/** Transfers and approvals read from the execution's native transfers and token events. */
export function movementsOf(exec: EvmExecution): Movements {
  const transfers: SimulatedTransfer[] = [];
  const approvals: SimulatedApproval[] = [];
  if (exec.reverted) return { transfers, approvals };
  for (const t of exec.nativeTransfers) transfers.push({ asset: { kind: 'native' }, from: checksum(t.from), to: checksum(t.to), amount: t.value.toString() });
  for (const log of exec.logs) {
    const [topic, a, b, c] = log.topics;
    const contract = checksum(log.address);
    const data = log.data.replace(/^0x/, '');
    if (topic === TRANSFER && log.topics.length === 3 && data.length >= 64) {
      transfers.push({ asset: { kind: 'erc20', contract }, from: checksum(topicAddress(a)), to: checksum(topicAddress(b)), amount: word(data, 0).toString() });
    } else if (topic === TRANSFER && log.topics.length === 4) {
      transfers.push({ asset: { kind: 'erc721', contract, tokenId: BigInt(c).toString() }, from: checksum(topicAddress(a)), to: checksum(topicAddress(b)), amount: '1' });
    } else if (topic === APPROVAL && log.topics.length === 3 && data.length >= 64) {
      const amount = word(data, 0);
      approvals.push({
        asset: { kind: 'erc20', contract },
        owner: checksum(topicAddress(a)),
        spender: checksum(topicAddress(b)),
        amount: amount === MAX_UINT256 ? 'unlimited' : amount.toString(),
        revoked: amount === 0n,
        via: exec.permitted.has(lower(log.address)) ? 'permit' : 'approve',
      });
    } else if (topic === APPROVAL && log.topics.length === 4) {
      const spender = topicAddress(b);
      const revoked = BigInt(spender) === 0n;
      approvals.push({ asset: { kind: 'erc721', contract, tokenId: BigInt(c).toString() }, owner: checksum(topicAddress(a)), spender: checksum(spender), amount: revoked ? '0' : '1', revoked, via: 'approve' });
    } else if (topic === APPROVAL_FOR_ALL && log.topics.length === 3 && data.length >= 64) {
      const approved = word(data, 0) !== 0n;
      // ERC-721 and ERC-1155 share the event; the kind is the one whose transfers the contract emits, else ERC-721.
      approvals.push({ asset: { kind: 'erc721', contract }, owner: checksum(topicAddress(a)), spender: checksum(topicAddress(b)), amount: approved ? 'unlimited' : '0', revoked: !approved, via: 'setApprovalForAll' });
    } else if (topic === TRANSFER_SINGLE && log.topics.length === 4 && data.length >= 128) {
      transfers.push({ asset: { kind: 'erc1155', contract, tokenId: word(data, 0).toString() }, from: checksum(topicAddress(b)), to: checksum(topicAddress(c)), amount: word(data, 1).toString() });
    } else if (topic === TRANSFER_BATCH && log.topics.length === 4) {
      for (const [id, amount] of batchOf(data)) {
        transfers.push({ asset: { kind: 'erc1155', contract, tokenId: id.toString() }, from: checksum(topicAddress(b)), to: checksum(topicAddress(c)), amount: amount.toString() });
      }
    }
  }
  const multiToken = new Set(transfers.filter((t) => t.asset.kind === 'erc1155').map((t) => t.asset.contract));
  for (const a of approvals) if (a.via === 'setApprovalForAll' && multiToken.has(a.asset.contract)) a.asset.kind = 'erc1155';
  return { transfers, approvals };
}

/** TransferBatch's data: (uint256[] ids, uint256[] values), ABI-encoded; a malformed one gives nothing. */
function batchOf(data: string): [bigint, bigint][] {
  try {
    const idsAt = Number(word(data, 0)) / 32;
    const valuesAt = Number(word(data, 1)) / 32;
    const n = Number(word(data, idsAt));
    if (n !== Number(word(data, valuesAt)) || n > 1024 || data.length < (valuesAt + 1 + n) * 64) return [];
    return Array.from({ length: n }, (_, i) => [word(data, idsAt + 1 + i), word(data, valuesAt + 1 + i)]);
  } catch {
    return [];
  }
}

/** The token contracts whose symbol and decimals are worth asking (ERC-20 transfers and approvals). */
export function fungibleContracts(m: Movements): string[] {
  const set = new Set<string>();
  for (const x of [...m.transfers, ...m.approvals]) if (x.asset.kind === 'erc20' && x.asset.contract) set.add(x.asset.contract);
  return [...set];
}

/** The movements with each token's symbol and decimals where the chain answered them. */
export function nameAssets(m: Movements, tokens: ReadonlyMap<string, { symbol?: string; decimals?: number }>, native: { symbol: string; decimals: number }): Movements {
  const named = (asset: SimulatedAsset): SimulatedAsset => {
    if (asset.kind === 'native') return { ...asset, ...native };
    const info = asset.contract ? tokens.get(asset.contract) : undefined;
    return info ? { ...asset, ...(info.symbol !== undefined ? { symbol: info.symbol } : {}), ...(info.decimals !== undefined ? { decimals: info.decimals } : {}) } : asset;
  };
  return {
    transfers: m.transfers.map((t) => ({ ...t, asset: named(t.asset) })),
    approvals: m.approvals.map((a) => ({ ...a, asset: named(a.asset) })),
  };
}

/** The asset's identity as a key: kind, contract and token id. */
export function assetKey(asset: SimulatedAsset): string {
  return `${asset.kind}:${asset.contract?.toLowerCase() ?? ''}:${asset.tokenId ?? ''}`;
}

/** Net change per (address `own` holds, asset) over the transfers; zero nets are left out. */
export function balanceChangesOf(transfers: SimulatedTransfer[], own: (address: string) => boolean): SimulatedBalanceChange[] {
  const net = new Map<string, SimulatedBalanceChange & { sum: bigint }>();
  const add = (address: string, asset: SimulatedAsset, delta: bigint) => {
    if (!own(address)) return;
    const key = `${address.toLowerCase()} ${assetKey(asset)}`;
    const entry = net.get(key) ?? { address, asset, delta: '0', sum: 0n };
    entry.sum += delta;
    net.set(key, entry);
  };
  for (const t of transfers) {
    add(t.from, t.asset, -BigInt(t.amount));
    add(t.to, t.asset, BigInt(t.amount));
  }
  return [...net.values()].filter((e) => e.sum !== 0n).map(({ sum, address, asset }) => ({ address, asset, delta: sum.toString() }));
}

/**
 * The EIP-7702 delegations a type-4 transaction sets: each authorization's signer (recovered from
 * its signature over the authorization digest) delegates to its address. One whose signature does
 * not recover is left out: the chain skips it too.
 */
export function delegationsOf(list: readonly EthAuthorization[] | undefined): { authority: string; delegate: string }[] {
  const out: { authority: string; delegate: string }[] = [];
  for (const auth of list ?? []) {
    try {
      const digest = eip7702AuthorizationDigest({ chainId: auth.chainId, address: auth.address, nonce: auth.nonce });
      const sig = new secp256k1.Signature(auth.r, auth.s).addRecoveryBit(Number(auth.yParity));
      const pub = sig.recoverPublicKey(digest).toBytes(false);
      const authority = '0x' + Buffer.from(keccak_256(pub.subarray(1)).subarray(12)).toString('hex');
      out.push({ authority: checksum(authority), delegate: checksum(auth.address.toLowerCase()) });
    } catch {
      // An unrecoverable authorization is invalid on chain: it delegates nothing.
    }
  }
  return out;
}

/** An ERC-20 `symbol()` answer: an ABI string, or the bytes32 some older tokens return; undefined when neither. */
export function decodeSymbol(returned: string | undefined): string | undefined {
  const d = (returned ?? '').replace(/^0x/, '');
  if (d.length === 64) {
    const text = Buffer.from(d, 'hex').toString('utf8').replace(/\0+$/, '');
    return /^[\x20-\x7e]{1,32}$/.test(text) ? text : undefined;
  }
  if (d.length < 128) return undefined;
  const offset = Number(word(d, 0));
  if (offset !== 32) return undefined;
  const length = Number(word(d, 1));
  if (length === 0 || length > 64 || d.length < 128 + length * 2) return undefined;
  const text = Buffer.from(d.slice(128, 128 + length * 2), 'hex').toString('utf8');
  // Shown to approvers: printable text only, so a token cannot draw on the card.
  return /^[\x20-\x7e]+$/.test(text) ? text : undefined;
}

/** An ERC-20 `decimals()` answer, when it is a uint8. */
export function decodeDecimals(returned: string | undefined): number | undefined {
  const d = (returned ?? '').replace(/^0x/, '');
  if (d.length !== 64) return undefined;
  const n = word(d, 0);
  return n <= 255n ? Number(n) : undefined;
}
