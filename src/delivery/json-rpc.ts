// One JSON-RPC 2.0 call over HTTP, bounded, for every chain's client (the EVM nodes' and the Solana
// clusters'; docs/broadcasting.md "What the node is trusted with"): a call that takes longer than
// CALL_TIMEOUT_MS fails, an answer is read only up to a size cap (SIGIL_EVM_RPC_MAX_RESPONSE_BYTES),
// so a node can neither hold a request for ever nor make Sigil buffer without end. Each failure becomes
// the calling client's own error, through its `error` factory: with the node's code and data when the
// node answered a JSON-RPC error, without a code when it could not be reached or answered no JSON-RPC
// (which the domain reads as "try again later", not as a refusal).

/** How long one call may take before it counts as failed (a slow node must not hold a request for ever). */
export const CALL_TIMEOUT_MS = 15_000;
/** The largest answer read when the caller sets none. */
export const DEFAULT_MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

/** What a client's failures are named and made of. */
export interface JsonRpcEndpoint {
  /** How messages name the node: "the chain's RPC endpoint". */
  name: string;
  /** The error a failure becomes; `code` and `data` are the node's, absent when it gave none. */
  error(message: string, code?: number, data?: unknown): Error;
}

/** The body of `response`, refused once it passes `limit` bytes (the rest is not read). */
export async function readBounded(response: Response, limit: number, endpoint: JsonRpcEndpoint): Promise<string> {
  const tooLarge = () => endpoint.error(`${endpoint.name} answered more than ${limit} bytes (SIGIL_EVM_RPC_MAX_RESPONSE_BYTES)`);
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export class JsonRpcClient {
  private id = 0;

  constructor(
    readonly url: string,
    private readonly maxResponseBytes: number,
    private readonly endpoint: JsonRpcEndpoint,
  ) {}

  /** Calls `method` with `params`; its `result`, or the endpoint's error. */
  async request<T>(method: string, params: unknown[]): Promise<T> {
    const { name, error } = this.endpoint;
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++this.id, method, params }),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
    } catch (err) {
      throw error(`${name} could not be reached: ${(err as Error).message}`);
    }
    const text = await readBounded(response, this.maxResponseBytes, this.endpoint);
    let body: { result?: T; error?: { code: number; message: string; data?: unknown } } | null;
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      body = null;
    }
    if (typeof body !== 'object' || body === null) throw error(`${name} answered ${response.status} without a JSON-RPC body`);
    if (body.error) throw error(String(body.error.message), body.error.code, body.error.data);
    return body.result as T;
  }
}
