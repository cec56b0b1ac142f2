// A Solana JSON-RPC client over HTTP (the cluster API: getLatestBlockhash, sendTransaction,
// getSignatureStatuses, getTransaction, isBlockhashValid), for sol_send_transaction (docs/broadcasting.md
// "Solana"): one per configured cluster. simulateTransaction and getMultipleAccounts serve the
// simulation before approval (docs/policies.md "Simulation before approval", "Solana"). A node's error answer becomes a
// SolanaRpcError carrying its code, message and data (a failed preflight's error and program logs),
// so the domain can tell a refused transaction from an unreachable node. The call itself (deadline,
// the same size cap as the EVM nodes', SIGIL_EVM_RPC_MAX_RESPONSE_BYTES) is every chain's (./json-rpc.ts).
import { DEFAULT_MAX_RESPONSE_BYTES, JsonRpcClient, type JsonRpcEndpoint } from './json-rpc.js';

export class SolanaRpcError extends Error {
  constructor(
    message: string,
    /** The node's JSON-RPC error code; undefined when the node could not be reached. */
    readonly code?: number,
    /** The error's data: for a failed preflight, `{ err, logs }`. */
    readonly data?: { err?: unknown; logs?: string[] | null },
  ) {
    super(message);
    this.name = 'SolanaRpcError';
  }
}

/** One entry of getSignatureStatuses. */
export interface SignatureStatus {
  slot: number;
  err: unknown;
  confirmationStatus: 'processed' | 'confirmed' | 'finalized' | null;
}

/** A Solana node's failures: object data (a failed preflight's `{ err, logs }`) is kept. */
const SOLANA_ENDPOINT: JsonRpcEndpoint = {
  name: "the cluster's RPC endpoint",
  error: (message, code, data) =>
    new SolanaRpcError(message, code === undefined ? undefined : Number(code), typeof data === 'object' && data !== null ? (data as SolanaRpcError['data']) : undefined),
};

export class SolanaRpc extends JsonRpcClient {
  constructor(url: string, maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES) {
    super(url, maxResponseBytes, SOLANA_ENDPOINT);
  }

  async latestBlockhash(): Promise<{ blockhash: string; lastValidBlockHeight: number }> {
    const r = await this.request<{ value: { blockhash: string; lastValidBlockHeight: number } }>('getLatestBlockhash', [{ commitment: 'confirmed' }]);
    return r.value;
  }

  /** Sends a signed transaction (base64) with preflight, so a transaction that would fail is refused with its logs. */
  async sendTransaction(base64: string): Promise<string> {
    return this.request<string>('sendTransaction', [base64, { encoding: 'base64', preflightCommitment: 'confirmed', maxRetries: 0 }]);
  }

  async signatureStatus(signature: string): Promise<SignatureStatus | null> {
    const r = await this.request<{ value: (SignatureStatus | null)[] }>('getSignatureStatuses', [[signature], { searchTransactionHistory: true }]);
    return r.value[0] ?? null;
  }

  async isBlockhashValid(blockhash: string): Promise<boolean> {
    const r = await this.request<{ value: boolean }>('isBlockhashValid', [blockhash, { commitment: 'confirmed' }]);
    return r.value === true;
  }

  /** A landed transaction's error and program logs. */
  async transactionMeta(signature: string): Promise<{ err: unknown; logMessages: string[] } | null> {
    const r = await this.request<{ meta: { err: unknown; logMessages?: string[] | null } | null } | null>('getTransaction', [
      signature,
      { encoding: 'base64', commitment: 'confirmed', maxSupportedTransactionVersion: 0 },
    ]);
    if (!r?.meta) return null;
    return { err: r.meta.err, logMessages: r.meta.logMessages ?? [] };
  }

  /**
   * The accounts at `addresses` (null where none exists), read at the same commitment as the
   * simulation; the node answers at most 100 a call, so longer lists take several.
   */
  async multipleAccounts(addresses: string[]): Promise<{ slot: number; accounts: (RpcAccount | null)[] }> {
    let slot = 0;
    const accounts: (RpcAccount | null)[] = [];
    for (let at = 0; at < addresses.length; at += MAX_ACCOUNTS_PER_CALL) {
      const r = await this.request<{ context: { slot: number }; value: (RpcAccountJson | null)[] }>('getMultipleAccounts', [
        addresses.slice(at, at + MAX_ACCOUNTS_PER_CALL),
        { encoding: 'base64', commitment: 'confirmed' },
      ]);
      slot = Math.max(slot, Number(r.context?.slot ?? 0));
      accounts.push(...addresses.slice(at, at + MAX_ACCOUNTS_PER_CALL).map((_, i) => rpcAccount(r.value?.[i] ?? null)));
    }
    return { slot, accounts };
  }

  /**
   * Runs a transaction (base64) against the cluster's state without sending it: signatures are not
   * checked and the node puts in its own recent blockhash, since the transaction simulated is one not
   * yet signed; `addresses` are the accounts whose state after it is returned, in that order.
   * `minContextSlot` keeps the simulation from reading older state than the accounts read before it.
   */
  async simulateTransaction(base64: string, addresses: string[], minContextSlot?: number): Promise<SolanaSimulation> {
    const r = await this.request<{
      context: { slot: number };
      value: { err: unknown; logs?: string[] | null; accounts?: (RpcAccountJson | null)[] | null };
    }>('simulateTransaction', [
      base64,
      {
        encoding: 'base64',
        sigVerify: false,
        replaceRecentBlockhash: true,
        commitment: 'confirmed',
        ...(minContextSlot ? { minContextSlot } : {}),
        accounts: { addresses, encoding: 'base64' },
      },
    ]);
    const accounts = r.value?.accounts;
    return {
      slot: Number(r.context?.slot ?? 0),
      err: r.value?.err ?? null,
      logs: Array.isArray(r.value?.logs) ? r.value.logs.map(String) : [],
      accounts: Array.isArray(accounts) ? addresses.map((_, i) => rpcAccount(accounts[i] ?? null)) : null,
    };
  }
}

/** getMultipleAccounts answers at most this many addresses a call. */
const MAX_ACCOUNTS_PER_CALL = 100;

/** An account as the node encodes it (`encoding: base64`). */
interface RpcAccountJson {
  lamports: number | string;
  owner: string;
  data: [string, string] | string;
}

/** An account read from the cluster. */
export interface RpcAccount {
  lamports: bigint;
  owner: string;
  data: Uint8Array;
}

/** A simulation's answer: the slot it ran at, its error (null on success), its logs, and the accounts after it (null when it failed). */
export interface SolanaSimulation {
  slot: number;
  err: unknown;
  logs: string[];
  accounts: (RpcAccount | null)[] | null;
}

function rpcAccount(a: RpcAccountJson | null): RpcAccount | null {
  if (!a || typeof a !== 'object') return null;
  const data = Array.isArray(a.data) ? a.data[0] : a.data;
  if (typeof data !== 'string' || typeof a.owner !== 'string') throw new SolanaRpcError('the cluster answered an account without base64 data');
  // Lamports arrive as a JSON number; an integer that is not one is a malformed answer.
  let lamports: bigint;
  try {
    lamports = BigInt(a.lamports);
  } catch {
    throw new SolanaRpcError('the cluster answered an account with malformed lamports');
  }
  return { lamports, owner: a.owner, data: new Uint8Array(Buffer.from(data, 'base64')) };
}
