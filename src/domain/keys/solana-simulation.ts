// Simulating a Solana transaction before anyone approves it (docs/policies.md "Simulation before
// approval", "Solana"): the accounts it may change are read from the cluster, the transaction is run
// by the cluster's `simulateTransaction` (unsigned, with the node's recent blockhash) with the same
// accounts returned after it, the mints of any token accounts among them are read for decimals, and
// ../../chains/solana/simulation.ts turns the two states into the shared asset changes. A node that
// cannot be reached, or answers in a way that cannot be read, is a FAILED simulation with the reason,
// never an empty success. Called with no database transaction open, like every node call.
import type { AssetChanges } from '../../chains/simulation.js';
import {
  accountKeys,
  lookupTableAddresses,
  lookupTables,
  solanaAssetChanges,
  tokenMints,
  unsimulated,
  type SolanaAccountState,
} from '../../chains/solana/simulation.js';
import { serializeSolanaTransaction, type SolanaTransaction } from '../../chains/solana/tx.js';
import { SolanaRpcError, type RpcAccount, type SolanaRpc } from '../../delivery/solana-rpc.js';

export interface SolanaSimulationOptions {
  /** The cluster as the configuration names it (AssetChanges.network). */
  network: string;
  /** Whether the organization holds an address: balance changes are kept for those (all when absent). */
  held?: (address: string) => boolean;
  /** The clock (tests). */
  now?: () => Date;
}

const byAddress = (addresses: string[], accounts: (RpcAccount | null)[]) =>
  new Map<string, SolanaAccountState | null>(addresses.map((a, i) => [a, accounts[i] ?? null]));

/** Simulates `tx` on the cluster `rpc` speaks to and returns what it would do. Never throws for a node's failure. */
export async function simulateSolanaTransaction(rpc: SolanaRpc, tx: SolanaTransaction, options: SolanaSimulationOptions): Promise<AssetChanges> {
  try {
    const tableKeys = lookupTables(tx);
    const tables = new Map<string, string[]>();
    if (tableKeys.length) {
      const { accounts } = await rpc.multipleAccounts(tableKeys);
      tableKeys.forEach((t, i) => tables.set(t, lookupTableAddresses(accounts[i])));
    }
    const { keys, writable } = accountKeys(tx, tables);
    if (keys.some((k) => k === undefined)) return unsimulated('FAILED', options.network, 'an address lookup table the transaction uses does not hold the accounts it names');

    const before = await rpc.multipleAccounts(writable);
    const wire = Buffer.from(serializeSolanaTransaction(tx), 'hex').toString('base64');
    const sim = await rpc.simulateTransaction(wire, writable, before.slot || undefined);
    const simulatedAt = (options.now ?? (() => new Date()))().toISOString();
    const pre = byAddress(writable, before.accounts);
    const post = sim.accounts ? byAddress(writable, sim.accounts) : new Map<string, SolanaAccountState | null>();
    if (sim.err === null && !sim.accounts) return unsimulated('FAILED', options.network, 'the cluster simulated the transaction but returned no account states');

    const known = new Set(writable);
    const mintKeys = tokenMints(pre, post).filter((m) => !known.has(m));
    const mints = mintKeys.length ? byAddress(mintKeys, (await rpc.multipleAccounts(mintKeys)).accounts) : new Map<string, SolanaAccountState | null>();

    return solanaAssetChanges({ tx, network: options.network, keys, pre, post, mints, slot: sim.slot, simulatedAt, err: sim.err, logs: sim.logs, held: options.held });
  } catch (err) {
    const reason = err instanceof SolanaRpcError ? `the cluster's simulation failed: ${err.message}` : `the simulation's answer could not be read: ${(err as Error).message}`;
    return unsimulated('FAILED', options.network, reason);
  }
}

