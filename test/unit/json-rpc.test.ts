// The JSON-RPC call every chain's client makes (src/delivery/json-rpc.ts; docs/broadcasting.md "What the
// node is trusted with"), through the EVM and Solana clients against a small HTTP server on loopback:
// a result comes back as given; a node's error keeps its code and the data each chain reads (an EVM
// node's revert data as a string, a Solana node's failed preflight `{ err, logs }` as an object); an
// answer larger than the cap (declared, or streamed without a length), an answer that is no JSON-RPC and
// an unreachable node are errors without a code, which the domain reads as "try again later".
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvmRpc, EvmRpcError, boundedText } from '../../src/delivery/evm-rpc.js';
import { SolanaRpc, SolanaRpcError } from '../../src/delivery/solana-rpc.js';

/** What the server answers, by JSON-RPC method. */
const answers: Record<string, (id: unknown) => { body: string; chunked?: boolean }> = {
  eth_chainId: (id) => ({ body: JSON.stringify({ jsonrpc: '2.0', id, result: '0xaa36a7' }) }),
  eth_call: (id) => ({ body: JSON.stringify({ jsonrpc: '2.0', id, error: { code: 3, message: 'execution reverted', data: '0x08c379a0' } }) }),
  eth_estimateGas: (id) => ({ body: JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: 'gas required exceeds allowance', data: { detail: 'ignored' } } }) }),
  sendTransaction: (id) => ({ body: JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32002, message: 'Transaction simulation failed', data: { err: { InstructionError: [0, { Custom: 1 }] }, logs: ['Program log: no'] } } }) }),
  getLatestBlockhash: (id) => ({ body: JSON.stringify({ jsonrpc: '2.0', id, result: { context: { slot: 1 }, value: { blockhash: '11111111111111111111111111111111', lastValidBlockHeight: 150 } } }) }),
  big: () => ({ body: 'x'.repeat(4096) }),
  bigStreamed: () => ({ body: 'x'.repeat(4096), chunked: true }),
  notJson: () => ({ body: '<html>bad gateway</html>' }),
};

let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { id, method } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const { body, chunked } = answers[method](id);
      res.setHeader('content-type', 'application/json');
      if (!chunked) {
        res.setHeader('content-length', Buffer.byteLength(body));
        res.end(body);
        return;
      }
      // No length declared: the cap must stop the read as it goes.
      for (let i = 0; i < body.length; i += 512) res.write(body.slice(i, i + 512));
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** The error a call rejects with. */
async function failure(call: Promise<unknown>): Promise<any> {
  return call.then(
    () => expect.unreachable('the call succeeded'),
    (err: unknown) => err,
  );
}

describe("the JSON-RPC call of the chains' clients", () => {
  it('answers the result', async () => {
    expect(await new EvmRpc(url).chainId()).toBe(11155111n);
    expect(await new SolanaRpc(url).latestBlockhash()).toEqual({ blockhash: '11111111111111111111111111111111', lastValidBlockHeight: 150 });
  });

  it("keeps a node's error code and the data its chain reads", async () => {
    const revert = await failure(new EvmRpc(url).call({ from: '0x0000000000000000000000000000000000000001' }, 'latest'));
    expect(revert).toBeInstanceOf(EvmRpcError);
    expect(revert).toMatchObject({ code: 3, message: 'execution reverted', data: '0x08c379a0' });
    // An EVM client keeps only revert data (a hex string).
    const refused = await failure(new EvmRpc(url).estimateGas({ from: '0x0000000000000000000000000000000000000001' }));
    expect(refused).toMatchObject({ code: -32000, message: 'gas required exceeds allowance', data: undefined });
    const preflight = await failure(new SolanaRpc(url).sendTransaction('AA=='));
    expect(preflight).toBeInstanceOf(SolanaRpcError);
    expect(preflight).toMatchObject({ code: -32002, data: { err: { InstructionError: [0, { Custom: 1 }] }, logs: ['Program log: no'] } });
  });

  it('refuses an answer over the size cap, declared or streamed, as a failure without a code', async () => {
    for (const method of ['big', 'bigStreamed']) {
      const evm = await failure(new EvmRpc(url, 1024).request(method, []));
      expect(evm).toBeInstanceOf(EvmRpcError);
      expect(evm.code).toBeUndefined();
      expect(evm.message).toBe("the chain's RPC endpoint answered more than 1024 bytes (SIGIL_EVM_RPC_MAX_RESPONSE_BYTES)");
      const solana = await failure(new SolanaRpc(url, 1024).request(method, []));
      expect(solana).toBeInstanceOf(SolanaRpcError);
      expect(solana.code).toBeUndefined();
      expect(solana.message).toMatch(/answered more than 1024 bytes \(SIGIL_EVM_RPC_MAX_RESPONSE_BYTES\)/);
    }
    // The same cap read by itself, as other callers of the EVM client use it.
    const response = await fetch(url, { method: 'POST', body: JSON.stringify({ id: 1, method: 'bigStreamed' }) });
    await expect(boundedText(response, 1024)).rejects.toBeInstanceOf(EvmRpcError);
  });

  it('an answer that is no JSON-RPC, and a node that cannot be reached, fail without a code', async () => {
    const evm = await failure(new EvmRpc(url).request('notJson', []));
    expect(evm).toMatchObject({ code: undefined, message: "the chain's RPC endpoint answered 200 without a JSON-RPC body" });
    const solana = await failure(new SolanaRpc(url).request('notJson', []));
    expect(solana).toMatchObject({ code: undefined, message: "the cluster's RPC endpoint answered 200 without a JSON-RPC body" });
    // A port nothing listens on (the server's, once closed).
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const unreachable = await failure(new EvmRpc(`http://127.0.0.1:${port}`).chainId());
    expect(unreachable).toBeInstanceOf(EvmRpcError);
    expect(unreachable.code).toBeUndefined();
    expect(unreachable.message).toMatch(/^the chain's RPC endpoint could not be reached: /);
    const unreachableSolana = await failure(new SolanaRpc(`http://127.0.0.1:${port}`).latestBlockhash());
    expect(unreachableSolana).toBeInstanceOf(SolanaRpcError);
    expect(unreachableSolana.message).toMatch(/^the cluster's RPC endpoint could not be reached: /);
  });
});
