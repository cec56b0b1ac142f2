// The endpoint probe (docs/compatibility.md "What is implemented"): every endpoint of the newest
// official client (@turnkey/http's generated TurnkeyClient) is called once, stamped, with a minimal
// body. An endpoint Sigil serves answers anything but "no such endpoint" (usually a 400 for the empty
// parameters, or data); an endpoint it does not serve answers 501 "unknown operation" (404 outside
// /public/v1); a broken one answers 5xx. The test pins
// the set Sigil does not serve to test/vectors/unserved-endpoints.json, where each has its reason
// (hosted-only product lines, or not built yet), so adding or losing an endpoint changes this test,
// and no endpoint may answer 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { startSigil, ROOT, type SigilInstance } from '../helpers/sigil.js';

let sigil: SigilInstance;
beforeAll(async () => {
  sigil = await startSigil();
});
afterAll(async () => {
  await sigil?.stop();
});

interface Probe {
  path: string;
  method: string;
  outcome: 'served' | 'unserved' | 'broken';
  answer: string;
}

/** The client's endpoint methods and their paths, read from the client's own request calls. */
function clientEndpoints(client: TurnkeyClient): { method: string; path: string }[] {
  const out: { method: string; path: string }[] = [];
  for (const [method, fn] of Object.entries(client)) {
    if (typeof fn !== 'function' || method.startsWith('stamp')) continue;
    const m = /this\.request\("([^"]+)"/.exec(String(fn));
    if (m) out.push({ method, path: m[1] });
  }
  return out;
}

async function probe(client: TurnkeyClient, method: string, path: string, organizationId: string): Promise<Probe> {
  const body = { organizationId, timestampMs: String(Date.now()), type: 'ACTIVITY_TYPE_PROBE', parameters: {} };
  try {
    await (client as unknown as Record<string, (b: unknown) => Promise<unknown>>)[method](body);
    return { path, method, outcome: 'served', answer: '200' };
  } catch (e) {
    const err = e as { code?: number; message: string };
    if (typeof err.code !== 'number') return { path, method, outcome: 'broken', answer: err.message };
    // gRPC codes as Sigil maps its errors: 2 UNKNOWN and 13 INTERNAL are what a 5xx carries.
    if (err.code === 2 || err.code === 13) return { path, method, outcome: 'broken', answer: err.message };
    // 12 UNIMPLEMENTED "unknown operation": a path of the public API Sigil has no operation for;
    // 5 NOT_FOUND "no such endpoint": a path outside it.
    if ((err.code === 12 && err.message.includes('unknown operation')) || (err.code === 5 && err.message.includes('no such endpoint')))
      return { path, method, outcome: 'unserved', answer: err.message };
    return { path, method, outcome: 'served', answer: `code ${err.code}` };
  }
}

describe('endpoint probe of the newest official client', () => {
  it('serves every endpoint but the pinned unserved ones, and none is broken', async () => {
    const client = new TurnkeyClient({ baseUrl: sigil.url }, new ApiKeyStamper(sigil.root));
    const endpoints = clientEndpoints(client);
    expect(endpoints.length).toBeGreaterThan(150);
    const results: Probe[] = [];
    for (const { method, path } of endpoints) results.push(await probe(client, method, path, sigil.root.organizationId));

    const pinned = JSON.parse(readFileSync(`${ROOT}/test/vectors/unserved-endpoints.json`, 'utf8')) as { endpoints: Record<string, string> };
    const broken = results.filter((r) => r.outcome === 'broken');
    const unserved = results.filter((r) => r.outcome === 'unserved').map((r) => r.path).sort();
    const served = results.filter((r) => r.outcome === 'served');
    process.stdout.write(`endpoint probe: ${endpoints.length} endpoints, ${served.length} served, ${unserved.length} unserved, ${broken.length} broken\n`);
    expect(broken).toEqual([]);
    expect(unserved).toEqual(Object.keys(pinned.endpoints).sort());
  });
});
