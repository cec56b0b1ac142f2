// A Solana JSON-RPC client over HTTP (the cluster API: getLatestBlockhash, sendTransaction,
// getSignatureStatuses, getTransaction, isBlockhashValid), for sol_send_transaction (docs/broadcasting.md
// "Solana"): one per configured cluster. A node's error answer becomes a
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
}
