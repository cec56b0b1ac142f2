// What a Solana transaction does, computed from a simulation's account states
// (docs/policies.md "Simulation before approval", "Solana"): the accounts read before and after a
// `simulateTransaction` of the transaction become the shared asset-changes shape of
// ../simulation.ts. Pure: the caller fetches the states (src/delivery/solana-rpc.ts) and hands them
// here. Layouts are the SPL Token program's (`spl_token::state::Account`, 165 bytes: mint, owner,
// amount, delegate, state, is_native, delegated_amount, close_authority; `Mint`, 82 bytes, decimals
// at 44); Token-2022 keeps the same base layout and appends extensions after an account-type byte
// at 165 (1 = mint, 2 = account). An address lookup table's addresses follow its 56-byte header.
//
// SOL and token balances are counted per owner: a token account's amount, and the rent lamports it
// holds, belong to the wallet that owns it, so closing a token account reads as the rent going back
// to the wallet and a changed token-account owner as the balance moving to the new owner. Transfers
// are the balance changes of each asset paired from the largest outflow to the largest inflow; the
// fee, which no account receives, stays an outflow of the fee payer only. Approvals are the SPL
// `Approve`/`ApproveChecked`/`Revoke` instructions the transaction carries, and any other change of a
// token account's delegate that the simulated state shows (a program granting one by cross-program
// invocation).
import { base58 } from '@scure/base';
import type { AssetChanges, SimulatedApproval, SimulatedAsset, SimulatedBalanceChange, SimulatedTransfer } from '../simulation.js';
import { readU64LE, resolveAccounts, TOKEN_2022_PROGRAM, TOKEN_PROGRAM, type SolanaTransaction } from './tx.js';

/** An account as a node returns it; `null` where the account does not exist. */
export interface SolanaAccountState {
  lamports: bigint;
  /** The program that owns the account, base58. */
  owner: string;
  data: Uint8Array;
}

export type AccountStates = ReadonlyMap<string, SolanaAccountState | null>;

/** A token account's fields that a simulation reads. */
export interface TokenAccount {
  mint: string;
  owner: string;
  amount: bigint;
  delegate?: string;
  delegatedAmount: bigint;
}

const U64_MAX = (1n << 64n) - 1n;
const TOKEN_ACCOUNT_SIZE = 165;
const MINT_SIZE = 82;
const LOOKUP_TABLE_HEADER = 56;
const SOL: SimulatedAsset = { kind: 'native', symbol: 'SOL', decimals: 9 };

const isTokenProgram = (program: string) => program === TOKEN_PROGRAM || program === TOKEN_2022_PROGRAM;

/** A token account's fields, or undefined when the account is not one (wrong owner program, size or type). */
export function tokenAccount(state: SolanaAccountState | null | undefined): TokenAccount | undefined {
  if (!state || !isTokenProgram(state.owner) || state.data.length < TOKEN_ACCOUNT_SIZE) return undefined;
  const d = state.data;
  if (d.length > TOKEN_ACCOUNT_SIZE && (state.owner !== TOKEN_2022_PROGRAM || d[TOKEN_ACCOUNT_SIZE] !== 2)) return undefined;
  // An uninitialized account (state byte 0) holds nothing yet.
  if (d[108] === 0) return undefined;
  const hasDelegate = d[72] === 1;
  return {
    mint: base58.encode(d.subarray(0, 32)),
    owner: base58.encode(d.subarray(32, 64)),
    amount: readU64LE(d, 64),
    delegate: hasDelegate ? base58.encode(d.subarray(76, 108)) : undefined,
    delegatedAmount: hasDelegate ? readU64LE(d, 121) : 0n,
  };
}

/** A mint's decimals, or undefined when the account is not an initialized mint. */
export function mintDecimals(state: SolanaAccountState | null | undefined): number | undefined {
  if (!state || !isTokenProgram(state.owner) || state.data.length < MINT_SIZE) return undefined;
  const d = state.data;
  if (d.length > MINT_SIZE && (state.owner !== TOKEN_2022_PROGRAM || d.length <= TOKEN_ACCOUNT_SIZE || d[TOKEN_ACCOUNT_SIZE] !== 1)) return undefined;
  return d[45] === 1 ? d[44] : undefined;
}

/** The addresses an address lookup table holds, in index order. */
export function lookupTableAddresses(state: SolanaAccountState | null | undefined): string[] {
  if (!state || state.data.length < LOOKUP_TABLE_HEADER) return [];
  const out: string[] = [];
  for (let at = LOOKUP_TABLE_HEADER; at + 32 <= state.data.length; at += 32) out.push(base58.encode(state.data.subarray(at, at + 32)));
  return out;
}

/** The lookup tables a transaction loads accounts through (to fetch before `accountKeys`). */
export const lookupTables = (tx: SolanaTransaction): string[] => [...new Set(tx.addressTableLookups.map((l) => base58.encode(l.accountKey)))];

/**
 * The transaction's account keys in index order with table-loaded ones resolved through `tables`
 * (table address → its addresses); an entry a table does not hold is undefined. `writable` says which
 * keys the transaction may change: only those can have other balances after it.
 */
export function accountKeys(tx: SolanaTransaction, tables: ReadonlyMap<string, string[]>): { keys: (string | undefined)[]; writable: string[] } {
  const resolved = resolveAccounts(tx);
  const keys = resolved.map((a) => (a.lookup ? tables.get(a.lookup.table)?.[a.lookup.index] : a.key));
  const writable = [...new Set(keys.filter((k, i): k is string => k !== undefined && resolved[i].writable))];
  return { keys, writable };
}

/** The mints of the token accounts among `states` (to fetch their decimals). */
export function tokenMints(...states: AccountStates[]): string[] {
  const mints = new Set<string>();
  for (const map of states) for (const s of map.values()) {
    const t = tokenAccount(s);
    if (t) mints.add(t.mint);
  }
  return [...mints];
}

export interface SolanaSimulationResult {
  tx: SolanaTransaction;
  /** The cluster as the configuration names it. */
  network: string;
  /** From `accountKeys`. */
  keys: (string | undefined)[];
  /** The accounts the simulation reported after the transaction, by address (the writable keys). */
  pre: AccountStates;
  post: AccountStates;
  /** Mint accounts, by address, for decimals. */
  mints: AccountStates;
  slot: number;
  simulatedAt: string;
  /** The simulation's error (`null` when it succeeded) and its program logs. */
  err: unknown;
  logs: string[];
  /** Whether the organization holds an address; balance changes are kept for those only (all when absent). */
  held?: (address: string) => boolean;
}

/** The empty result for a simulation that did not run or did not answer. */
export function unsimulated(status: 'NOT_SIMULATED' | 'FAILED', network: string, reason: string): AssetChanges {
  return { status, reason, chain: 'solana', network, reverted: false, transfers: [], approvals: [], balanceChanges: [], deployments: [], delegations: [] };
}

/**
 * Why a simulation failed, in a line: the error with the program's own words ("Program log: Error:
 * insufficient funds") where it logged them, else the runtime's line naming the failing program.
 */
export function solanaRevertReason(err: unknown, logs: string[]): string {
  const last = (re: RegExp) => [...logs].reverse().find((l) => re.test(l));
  const said = last(/^Program log: Error/) ?? last(/ failed: /);
  const errText = typeof err === 'string' ? err : JSON.stringify(err);
  return said ? `${errText}: ${said}` : errText;
}

/** The asset changes of a simulated transaction. */
export function solanaAssetChanges(r: SolanaSimulationResult): AssetChanges {
  const base: AssetChanges = { ...unsimulated('NOT_SIMULATED', r.network, ''), status: 'SIMULATED', block: String(r.slot), simulatedAt: r.simulatedAt };
  delete base.reason;
  if (r.err !== null && r.err !== undefined) return { ...base, reverted: true, revertReason: solanaRevertReason(r.err, r.logs) };

  const assets = new Map<string, SimulatedAsset>([['SOL', SOL]]);
  const splAsset = (mint: string): SimulatedAsset => {
    let a = assets.get(mint);
    if (!a) {
      const decimals = mintDecimals(r.mints.get(mint) ?? r.pre.get(mint) ?? r.post.get(mint));
      a = { kind: 'spl', contract: mint, ...(decimals !== undefined ? { decimals } : {}) };
      assets.set(mint, a);
    }
    return a;
  };
  /** asset key → owner → delta */
  const deltas = new Map<string, Map<string, bigint>>();
  const add = (asset: string, owner: string, amount: bigint) => {
    if (amount === 0n) return;
    const m = deltas.get(asset) ?? new Map<string, bigint>();
    deltas.set(asset, m);
    m.set(owner, (m.get(owner) ?? 0n) + amount);
  };

  for (const address of new Set([...r.pre.keys(), ...r.post.keys()])) {
    if (!r.post.has(address)) continue; // not reported after: unknown, never guessed as closed
    const before = r.pre.get(address) ?? null;
    const after = r.post.get(address) ?? null;
    const tBefore = tokenAccount(before);
    const tAfter = tokenAccount(after);
    add('SOL', tBefore?.owner ?? address, -(before?.lamports ?? 0n));
    add('SOL', tAfter?.owner ?? address, after?.lamports ?? 0n);
    for (const [t, sign] of [[tBefore, -1n], [tAfter, 1n]] as const) {
      if (!t) continue;
      splAsset(t.mint);
      add(t.mint, t.owner, sign * t.amount);
    }
  }

  const transfers: SimulatedTransfer[] = [];
  const balanceChanges: SimulatedBalanceChange[] = [];
  for (const [key, byOwner] of deltas) {
    const asset = assets.get(key)!;
    const entries = [...byOwner].filter(([, d]) => d !== 0n);
    for (const [address, delta] of entries) if (!r.held || r.held(address)) balanceChanges.push({ address, asset, delta: delta.toString() });
    const out = entries.filter(([, d]) => d < 0n).map(([a, d]) => ({ a, left: -d })).sort((x, y) => (y.left > x.left ? 1 : y.left < x.left ? -1 : 0));
    const into = entries.filter(([, d]) => d > 0n).map(([a, d]) => ({ a, left: d })).sort((x, y) => (y.left > x.left ? 1 : y.left < x.left ? -1 : 0));
    let i = 0;
    let j = 0;
    while (i < out.length && j < into.length) {
      const amount = out[i].left < into[j].left ? out[i].left : into[j].left;
      transfers.push({ asset, from: out[i].a, to: into[j].a, amount: amount.toString() });
      out[i].left -= amount;
      into[j].left -= amount;
      if (out[i].left === 0n) i++;
      if (into[j].left === 0n) j++;
    }
  }

  return { ...base, transfers, balanceChanges, approvals: approvals(r, splAsset) };
}

/** SPL approvals: the instructions that grant or revoke a delegate, then delegate changes the state shows beyond them. */
function approvals(r: SolanaSimulationResult, splAsset: (mint: string) => SimulatedAsset): SimulatedApproval[] {
  const out: SimulatedApproval[] = [];
  const explained = new Set<string>();
  const stateOf = (key: string | undefined) => (key ? (tokenAccount(r.post.get(key)) ?? tokenAccount(r.pre.get(key))) : undefined);
  const amountText = (v: bigint) => (v === U64_MAX ? 'unlimited' : v.toString());
  for (const ix of r.tx.instructions) {
    const program = r.keys[ix.programIdIndex];
    if (!program || !isTokenProgram(program) || ix.data.length === 0) continue;
    const k = (i: number) => r.keys[ix.accountIndexes[i]];
    const tag = ix.data[0];
    let source: string | undefined;
    let grant: Omit<SimulatedApproval, 'asset'> | undefined;
    if ((tag === 4 && ix.data.length >= 9) || (tag === 13 && ix.data.length >= 10)) {
      // Approve: source, delegate, owner; ApproveChecked: source, mint, delegate, owner.
      const [delegateAt, ownerAt] = tag === 4 ? [1, 2] : [2, 3];
      source = k(0);
      const amount = readU64LE(ix.data, 1);
      grant = { owner: stateOf(source)?.owner ?? k(ownerAt) ?? '', spender: k(delegateAt) ?? '', amount: amountText(amount), revoked: amount === 0n, via: 'delegate' };
    } else if (tag === 5) {
      // Revoke: source, owner. The delegate it removes is the one the account had.
      source = k(0);
      const before = tokenAccount(source ? r.pre.get(source) : undefined);
      grant = { owner: before?.owner ?? k(1) ?? '', spender: before?.delegate ?? '', amount: '0', revoked: true, via: 'delegate' };
    }
    const account = stateOf(source);
    if (!grant || !source || !account) continue;
    explained.add(source);
    out.push({ asset: splAsset(account.mint), ...grant });
  }
  for (const [address, state] of r.post) {
    if (explained.has(address)) continue;
    const after = tokenAccount(state);
    const before = tokenAccount(r.pre.get(address));
    if (!after) continue;
    const sameDelegate = after.delegate === before?.delegate;
    // A delegate spending its allowance lowers delegated_amount: that is a transfer, not a grant.
    if (sameDelegate && after.delegatedAmount <= (before?.delegatedAmount ?? 0n)) continue;
    if (after.delegate) out.push({ asset: splAsset(after.mint), owner: after.owner, spender: after.delegate, amount: amountText(after.delegatedAmount), revoked: after.delegatedAmount === 0n, via: 'delegate' });
    else if (before?.delegate) out.push({ asset: splAsset(after.mint), owner: after.owner, spender: before.delegate, amount: '0', revoked: true, via: 'delegate' });
  }
  return out;
}
