// The token-bucket statement behind rate limits (src/store/repositories/rate-limits.ts), on a real
// database (embedded SQLite, or PostgreSQL when SIGIL_TEST_DATABASE_URL is set) with explicit clock
// values: a new bucket starts full, a refused request takes nothing, refill is capped at the burst,
// a clock behind the last writer's refills nothing, and pruning removes only idle buckets.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/index.js';
import { dropSchema, freshDeploymentEnv } from '../helpers/sigil.js';

let store: Store;
let databaseUrl: string | undefined;
let dataDir: string;
beforeAll(async () => {
  const fresh = freshDeploymentEnv();
  databaseUrl = fresh.databaseUrl;
  dataDir = fresh.dataDir;
  store = await Store.open({ dataDir: fresh.dataDir, databaseUrl });
});
afterAll(async () => {
  await store?.close();
  if (databaseUrl) await dropSchema(databaseUrl);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const T0 = 1_700_000_000_000;
const take = (bucket: string, now: number, rate = 2, burst = 3) => store.repos.rateLimits.take([{ bucket, rate, burst }], now).then(([s]) => s);

describe('rate limit buckets', () => {
  it('starts full, refuses without taking once empty, refills at the rate up to the burst', async () => {
    expect(await take('a', T0)).toEqual({ bucket: 'a', tokens: 2, allowed: true });
    expect(await take('a', T0)).toMatchObject({ tokens: 1, allowed: true });
    expect(await take('a', T0)).toMatchObject({ tokens: 0, allowed: true });
    expect(await take('a', T0)).toMatchObject({ tokens: 0, allowed: false });
    // 2 tokens per second: 250 ms adds half a token, not enough.
    expect(await take('a', T0 + 250)).toMatchObject({ tokens: 0.5, allowed: false });
    expect(await take('a', T0 + 500)).toMatchObject({ tokens: 0, allowed: true });
    // A long pause refills to the burst, never beyond.
    expect(await take('a', T0 + 60_000)).toMatchObject({ tokens: 2, allowed: true });
  });

  it('takes from several buckets in one statement, each on its own terms', async () => {
    const states = await store.repos.rateLimits.take(
      [
        { bucket: 'org', rate: 1, burst: 1 },
        { bucket: 'key', rate: 1, burst: 5 },
      ],
      T0,
    );
    expect(states.sort((x, y) => x.bucket.localeCompare(y.bucket))).toEqual([
      { bucket: 'key', tokens: 4, allowed: true },
      { bucket: 'org', tokens: 0, allowed: true },
    ]);
    const again = await store.repos.rateLimits.take(
      [
        { bucket: 'org', rate: 1, burst: 1 },
        { bucket: 'key', rate: 1, burst: 5 },
      ],
      T0,
    );
    expect(Object.fromEntries(again.map((s) => [s.bucket, s.allowed]))).toEqual({ org: false, key: true });
  });

  it('refills nothing for a clock behind the last writer (another process)', async () => {
    await take('skew', T0 + 10_000);
    await take('skew', T0 + 10_000);
    await take('skew', T0 + 10_000);
    expect(await take('skew', T0)).toMatchObject({ tokens: 0, allowed: false });
    expect(await take('skew', T0 + 10_500)).toMatchObject({ tokens: 0, allowed: true });
  });

  it('prunes buckets idle since the cutoff only', async () => {
    await take('idle', T0 - 120_000);
    await take('busy', T0);
    expect(await store.repos.rateLimits.prune(T0 - 60_000)).toBeGreaterThanOrEqual(1);
    // A pruned bucket comes back full.
    expect(await take('idle', T0)).toMatchObject({ tokens: 2, allowed: true });
    expect(await take('busy', T0)).toMatchObject({ tokens: 1, allowed: true });
  });
});
