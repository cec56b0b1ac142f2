// Asking an Ethereum node what a transaction would do (docs/policies.md "Simulation before approval";
// docs/broadcasting.md "Simulation"): `eth_simulateV1` against the latest block, with traceTransfers
// (native value moved by internal calls shows as logs) and validation off (fees and the nonce are the
// signer's business, not the simulation's); where the node lacks it, `debug_traceCall` with the
// `callTracer` and its logs. Then each token's `symbol()` and `decimals()` at the same block. The whole
// exchange has one deadline: an approval never waits on a slow node longer than the operator allows.
// The answers are handed back as the node gave them; src/chains/ethereum/simulation.ts reads them.
import { EvmRpcError, type EvmRpc } from './evm-rpc.js';

/** The transaction to simulate, as quantities and 0x hex. */
export interface EvmSimulationCall {
  from: string;
  to: string | null;
  value: bigint;
  data: string;
  gas: bigint;
  nonce: bigint;
  /** EIP-7702 authorizations (a type-4 transaction), as the node's call object takes them. */
  authorizationList?: { chainId: bigint; address: string; nonce: bigint; yParity: bigint; r: bigint; s: bigint }[];
}

/** Which method answered, at which block, and its raw answer. */
export type EvmSimulationAnswer =
  | { method: 'eth_simulateV1'; block: bigint; timestamp: bigint; call: unknown }
  | { method: 'debug_traceCall'; block: bigint; timestamp: bigint; trace: unknown };

/** How the node is asked: `auto` tries eth_simulateV1 and falls back to debug_traceCall where the node lacks it. */
export type EvmSimulationMethod = 'auto' | 'eth_simulateV1' | 'debug_traceCall';

export class EvmSimulationTimeout extends Error {
  constructor(ms: number) {
    super(`the chain's node did not answer the simulation within ${ms} ms (SIGIL_EVM_SIMULATION_TIMEOUT_MS)`);
    this.name = 'EvmSimulationTimeout';
  }
}

const hex = (n: bigint) => '0x' + n.toString(16);

/** `promise`, or a timeout once `deadline` (epoch ms) passes. */
async function by<T>(promise: Promise<T>, deadline: number, budgetMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new EvmSimulationTimeout(budgetMs)), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

function callObject(c: EvmSimulationCall): Record<string, unknown> {
  const out: Record<string, unknown> = { from: c.from, value: hex(c.value), gas: hex(c.gas), nonce: hex(c.nonce) };
  if (c.to) out.to = c.to;
  if (c.data && c.data !== '0x') out.input = c.data;
  if (c.authorizationList?.length) {
    out.authorizationList = c.authorizationList.map((a) => ({ chainId: hex(a.chainId), address: a.address, nonce: hex(a.nonce), yParity: hex(a.yParity), r: hex(a.r), s: hex(a.s) }));
  }
  return out;
}

/**
 * Whether the node cannot answer this request with eth_simulateV1: it has no such method (JSON-RPC
 * -32601, or words to that effect), or refuses the request's shape (-32602: anvil 1.7 builds no
 * simulated contract creation), where debug_traceCall may still answer.
 */
function lacksMethod(err: unknown): boolean {
  if (!(err instanceof EvmRpcError)) return false;
  return err.code === -32601 || err.code === -32602 || err.code === -32004 || /not (found|supported|available|implemented)|unknown method|does not exist/i.test(err.message);
}

/** Simulates `call` at the latest block within `timeoutMs`; a failure throws (EvmRpcError, EvmSimulationTimeout). */
export async function simulateEvmCall(rpc: EvmRpc, call: EvmSimulationCall, opts: { timeoutMs: number; method: EvmSimulationMethod }): Promise<EvmSimulationAnswer> {
  const deadline = Date.now() + opts.timeoutMs;
  const latest = await by(rpc.request<{ number: string; timestamp: string } | null>('eth_getBlockByNumber', ['latest', false]), deadline, opts.timeoutMs);
  if (!latest) throw new EvmRpcError('the chain\'s node has no latest block');
  const block = BigInt(latest.number);
  const timestamp = BigInt(latest.timestamp);
  const at = hex(block);
  const object = callObject(call);
  if (opts.method !== 'debug_traceCall') {
    try {
      const blocks = await by(
        rpc.request<{ calls?: unknown[] }[]>('eth_simulateV1', [{ blockStateCalls: [{ calls: [object] }], traceTransfers: true, validation: false }, at]),
        deadline,
        opts.timeoutMs,
      );
      const answered = blocks?.[0]?.calls?.[0];
      if (!answered) throw new EvmRpcError('eth_simulateV1 answered without the call\'s result');
      return { method: 'eth_simulateV1', block, timestamp, call: answered };
    } catch (err) {
      if (opts.method === 'eth_simulateV1' || !lacksMethod(err)) throw err;
    }
  }
  // callTracer takes `data` where eth_simulateV1 takes `input`.
  const { input, ...rest } = object;
  const trace = await by(
    rpc.request<unknown>('debug_traceCall', [{ ...rest, ...(input ? { data: input } : {}) }, at, { tracer: 'callTracer', tracerConfig: { withLog: true } }]),
    deadline,
    opts.timeoutMs,
  );
  return { method: 'debug_traceCall', block, timestamp, trace };
}

/** symbol() and decimals() selectors (ERC-20). */
const SYMBOL = '0x95d89b41';
const DECIMALS = '0x313ce567';

/**
 * Each contract's raw `symbol()` and `decimals()` answers at `block` (undefined where the call
 * reverts or the deadline passes: a token need not implement them, and a missing name never fails
 * the simulation).
 */
export async function tokenMetadataCalls(rpc: EvmRpc, contracts: string[], block: bigint, timeoutMs: number): Promise<Map<string, { symbol?: string; decimals?: string }>> {
  const deadline = Date.now() + timeoutMs;
  const ask = (to: string, data: string) => by(rpc.call({ from: '0x0000000000000000000000000000000000000000', to, data }, block), deadline, timeoutMs).catch(() => undefined);
  const answers = await Promise.all(
    contracts.map(async (c) => {
      const [symbol, decimals] = await Promise.all([ask(c, SYMBOL), ask(c, DECIMALS)]);
      return [c, { symbol, decimals }] as const;
    }),
  );
  return new Map(answers);
}
