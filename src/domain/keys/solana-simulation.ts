// Simulating a Solana transaction before anyone approves it (docs/policies.md "Simulation before
// approval", "Solana"): the accounts it may change are read from the cluster, the transaction is run
// by the cluster's `simulateTransaction` (unsigned, with the node's recent blockhash) with the same
// accounts returned after it, the mints of any token accounts among them are read for decimals, and
// ../../chains/solana/simulation.ts turns the two states into the shared asset changes. A node that
// cannot be reached, or answers in a way that cannot be read, is a FAILED simulation with the reason,
// never an empty success. Called with no database transaction open, like every node call.
// SolanaSimulator is the registry's entry for TRANSACTION_TYPE_SOLANA (docs/broadcasting.md
// "Simulation"): which cluster a transaction is simulated on, and which addresses are the organization's.
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
import type { ParsedTransaction } from '../../chains/transactions.js';
import { SolanaRpc, SolanaRpcError, type RpcAccount } from '../../delivery/solana-rpc.js';
import { heldAmong, type SimulationRequest, type TransactionSimulator } from './simulation.js';

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


export interface SolanaSimulatorDeps {
  /** Canonical CAIP-2 id of a cluster → JSON-RPC URL (the sending RPCs, Config.solanaRpcUrls). */
  rpcUrls: Record<string, string>;
  /** Where a transaction that names no cluster is simulated when several are configured (Config.solanaSimulationCluster). */
  simulationCluster?: string;
  /** The canonical CAIP-2 id of a cluster named any way the API accepts (config solanaCluster). */
  cluster(caip2: string): { caip2: string } | undefined;
  /** The setting that configures a cluster's RPC, named when a cluster has none. */
  rpcSetting(caip2: string): string;
  rpcMaxResponseBytes?: number;
}

export class SolanaSimulator implements TransactionSimulator {
  readonly transactionType = 'TRANSACTION_TYPE_SOLANA';

  private readonly rpcs = new Map<string, SolanaRpc>();
  /** The cluster of a transaction that names none (sign_transaction): the only one, or the one the setting names. */
  private readonly defaultCluster: string | undefined;

  constructor(private readonly deps: SolanaSimulatorDeps) {
    for (const [caip2, url] of Object.entries(deps.rpcUrls)) this.rpcs.set(caip2, new SolanaRpc(url, deps.rpcMaxResponseBytes));
    const clusters = [...this.rpcs.keys()];
    this.defaultCluster = deps.simulationCluster ?? (clusters.length === 1 ? clusters[0] : undefined);
  }

  callsNode(parsed: ParsedTransaction): boolean {
    return parsed.solana !== undefined && this.defaultCluster !== undefined;
  }

  async simulate(request: SimulationRequest): Promise<AssetChanges> {
    const tx = request.parsed.solana;
    const named = request.network === undefined ? undefined : (this.deps.cluster(request.network)?.caip2 ?? request.network);
    const caip2 = named ?? this.defaultCluster;
    if (!tx) return unsimulated('NOT_SIMULATED', caip2 ?? '', 'not a Solana transaction');
    if (this.rpcs.size === 0) return unsimulated('NOT_SIMULATED', named ?? '', 'no Solana RPC is configured (SIGIL_SOLANA_RPC_MAINNET or SIGIL_SOLANA_RPC_DEVNET)');
    if (!caip2) {
      return unsimulated('NOT_SIMULATED', '', `set SIGIL_SOLANA_SIMULATION_CLUSTER: several Solana clusters are configured (${[...this.rpcs.keys()].join(', ')}) and a signature names none to simulate on`);
    }
    const rpc = this.rpcs.get(caip2);
    if (!rpc) return unsimulated('NOT_SIMULATED', caip2, `no RPC is configured for ${caip2} (${this.deps.rpcSetting(caip2)})`);
    const changes = await simulateSolanaTransaction(rpc, tx, { network: caip2 });
    if (changes.balanceChanges.length === 0) return changes;
    // Balance changes are kept for the organization's own addresses only, as on every chain.
    const signer = request.target.address ?? '';
    const others = changes.balanceChanges.map((b) => b.address).filter((a) => a !== signer);
    const own = new Set([signer, ...(await heldAmong(request, others))]);
    return { ...changes, balanceChanges: changes.balanceChanges.filter((b) => own.has(b.address)) };
  }
}
