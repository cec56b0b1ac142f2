// An Ethereum JSON-RPC client over HTTP (execution-apis: eth_* methods), for broadcasting (
// docs/broadcasting.md "Broadcasting"): one per configured chain. Quantities travel as 0x hex (returned here as
// bigint); a node's error answer becomes an EvmRpcError carrying its code, message and revert
// data, so the domain can tell a revert (code 3 with data) from a refusal. The call itself (deadline,
// size cap Config.evmRpcMaxResponseBytes) is the one every chain's client makes (./json-rpc.ts).
import { DEFAULT_MAX_RESPONSE_BYTES, JsonRpcClient, readBounded, type JsonRpcEndpoint } from './json-rpc.js';

export class EvmRpcError extends Error {
  constructor(
    message: string,
    /** The node's JSON-RPC error code; undefined when the node could not be reached. */
    readonly code?: number,
    /** Revert data (0x hex) where the node gives it. */
    readonly data?: string,
  ) {
    super(message);
    this.name = 'EvmRpcError';
  }
}

export interface EvmCall {
  from: string;
  to?: string | null;
  value?: bigint;
  data?: string;
  gas?: bigint;
}

export interface EvmReceipt {
  status: 'success' | 'reverted';
  blockNumber: bigint;
  transactionHash: string;
}

const hex = (n: bigint) => '0x' + n.toString(16);

function callObject(c: EvmCall): Record<string, string> {
  const out: Record<string, string> = { from: c.from };
  if (c.to) out.to = c.to;
  if (c.value !== undefined) out.value = hex(c.value);
  if (c.data && c.data !== '0x') out.data = c.data;
  if (c.gas !== undefined) out.gas = hex(c.gas);
  return out;
}

/** An EVM node's failures: revert data (a string) is kept, other error data is not. */
const EVM_ENDPOINT: JsonRpcEndpoint = {
  name: "the chain's RPC endpoint",
  error: (message, code, data) => new EvmRpcError(message, code, typeof data === 'string' ? data : undefined),
};

/** The body of `response`, refused (EvmRpcError) once it passes `limit` bytes (the rest is not read). */
export function boundedText(response: Response, limit: number): Promise<string> {
  return readBounded(response, limit, EVM_ENDPOINT);
}

export class EvmRpc extends JsonRpcClient {
  constructor(url: string, maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES) {
    super(url, maxResponseBytes, EVM_ENDPOINT);
  }

  async chainId(): Promise<bigint> {
    return BigInt(await this.request<string>('eth_chainId', []));
  }

  async transactionCount(address: string, block: 'latest' | 'pending'): Promise<bigint> {
    return BigInt(await this.request<string>('eth_getTransactionCount', [address, block]));
  }

  /** The address's balance in wei at the latest block. */
  async balance(address: string): Promise<bigint> {
    return BigInt(await this.request<string>('eth_getBalance', [address, 'latest']));
  }

  async estimateGas(call: EvmCall): Promise<bigint> {
    return BigInt(await this.request<string>('eth_estimateGas', [callObject(call)]));
  }

  async maxPriorityFeePerGas(): Promise<bigint> {
    return BigInt(await this.request<string>('eth_maxPriorityFeePerGas', []));
  }

  /** The base fee of the latest block (0 on a chain without EIP-1559). */
  async baseFeePerGas(): Promise<bigint> {
    const block = await this.request<{ baseFeePerGas?: string } | null>('eth_getBlockByNumber', ['latest', false]);
    return block?.baseFeePerGas ? BigInt(block.baseFeePerGas) : 0n;
  }

  /** Runs `call` at `block` and answers its return data; a revert throws EvmRpcError with its data. */
  async call(call: EvmCall, block: bigint | 'latest'): Promise<string> {
    return this.request<string>('eth_call', [callObject(call), typeof block === 'bigint' ? hex(block) : block]);
  }

  async sendRawTransaction(signed: string): Promise<string> {
    return this.request<string>('eth_sendRawTransaction', [signed]);
  }

  async receipt(hash: string): Promise<EvmReceipt | undefined> {
    const r = await this.request<{ status: string; blockNumber: string; transactionHash: string } | null>('eth_getTransactionReceipt', [hash]);
    if (!r) return undefined;
    return { status: BigInt(r.status) === 1n ? 'success' : 'reverted', blockNumber: BigInt(r.blockNumber), transactionHash: r.transactionHash };
  }

  /** What the node knows of a transaction (from its pool or a block), or undefined. */
  async transaction(hash: string): Promise<{ from: string; nonce: bigint; to: string | null; value: bigint; input: string; gas: bigint } | undefined> {
    const t = await this.request<{ from: string; nonce: string; to: string | null; value: string; input: string; gas: string } | null>('eth_getTransactionByHash', [hash]);
    if (!t) return undefined;
    return { from: t.from.toLowerCase(), nonce: BigInt(t.nonce), to: t.to ? t.to.toLowerCase() : null, value: BigInt(t.value), input: t.input, gas: BigInt(t.gas) };
  }
}
