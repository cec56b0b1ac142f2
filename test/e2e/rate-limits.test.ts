// Request rate limits (docs/limits.md "Quotas and rate limits"; src/pipeline/rate-limit.ts): with a
// low limit configured, a burst beyond an organization's or a credential's bucket gets HTTP 429 with
// the documented body and the ratelimit-limit / ratelimit-remaining headers, and records nothing;
// another organization (a sub-organization has its own bucket) or another key is unaffected; once
// the bucket refills, requests pass again; and two `sigil serve` processes on one database share
// one bucket (the state is in the database, not in a process).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateP256KeyPair } from '@turnkey/crypto';
import { serve, startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient, type KeyPair, type RawResponse } from '../helpers/clients.js';
import { dbSnapshot, type Snapshot } from '../helpers/db-snapshot.js';

const ORG_MESSAGE = 'this organization cannot execute activities because it has been rate limited. Please wait and try again in a few seconds.';
const KEY_MESSAGE = 'Too many requests. Please wait and try again in a few seconds';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function newKey(): KeyPair {
  const k = generateP256KeyPair();
  return { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
}

function whoami(url: string, organizationId: string, key: KeyPair): Promise<RawResponse> {
  return rawPost(`${url}/public/v1/query/whoami`, { organizationId }, { key });
}

/** Requests one after another until the first 429; returns the answers. */
async function untilRefused(send: () => Promise<RawResponse>, max = 12): Promise<RawResponse[]> {
  const answers: RawResponse[] = [];
  for (let i = 0; i < max; i++) {
    const res = await send();
    answers.push(res);
    if (res.status === 429) break;
  }
  return answers;
}

function expectRateLimited(res: RawResponse, message: string, limit: number): void {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({
    code: 8,
    message,
    details: [{ '@type': 'type.googleapis.com/errors.v1.TurnkeyErrorDetail', turnkeyErrorCode: 'RATE_LIMIT_EXCEEDED' }],
  });
  expect(res.headers.get('ratelimit-limit')).toBe(String(limit));
  expect(res.headers.get('ratelimit-remaining')).toBe('0');
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

/** The rows a refused request may change: none but its own bucket's refill bookkeeping. */
function withoutBuckets(s: Snapshot): Snapshot {
  const { rate_limits: _buckets, ...rest } = s;
  return rest;
}

describe('per-organization limit', () => {
  let sigil: SigilInstance;
  let subOrganizationId: string;
  beforeAll(async () => {
    // 4 requests at once, then one every 2 seconds.
    sigil = await startSigil({ SIGIL_RATE_LIMIT_ORG_RPS: '0.5', SIGIL_RATE_LIMIT_ORG_BURST: '4' });
    const created = await sdkServerClient(sigil).createSubOrganization({
      subOrganizationName: 'tenant',
      rootUsers: [{ userName: 'tenant user', userEmail: 'tenant@example.com', apiKeys: [], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
    });
    subOrganizationId = created.subOrganizationId;
  });
  afterAll(async () => {
    await sigil?.stop();
  });

  it('refuses a burst beyond the bucket with 429, the documented body and headers, and records nothing', async () => {
    const answers = await untilRefused(() => whoami(sigil.url, sigil.root.organizationId, sigil.root));
    const passed = answers.filter((a) => a.status === 200);
    // The sub-organization's creation took one of the 4 tokens; refill adds at most one more.
    expect(passed.length).toBeGreaterThanOrEqual(3);
    expect(passed.length).toBeLessThanOrEqual(4);
    for (const a of passed) {
      expect(a.headers.get('ratelimit-limit')).toBe('4');
      expect(Number(a.headers.get('ratelimit-remaining'))).toBeLessThanOrEqual(2);
    }
    expect(passed.at(-1)!.headers.get('ratelimit-remaining')).toBe('0');
    expectRateLimited(answers.at(-1)!, ORG_MESSAGE, 4);

    // An activity is refused the same way through the official SDK, and nothing is written.
    const before = await dbSnapshot(sigil);
    const err = await sdkServerClient(sigil)
      .createWallet({ walletName: 'refused', accounts: [] })
      .then(() => undefined, (e: { code: number; message: string; details: unknown }) => e);
    expect(err?.code).toBe(8);
    expect(err?.message).toContain(ORG_MESSAGE);
    expect(JSON.stringify(err?.details)).toContain('RATE_LIMIT_EXCEEDED');
    const refused = await rawPost(
      `${sigil.url}/public/v1/submit/create_wallet`,
      activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_WALLET', { walletName: 'refused', accounts: [] }),
      { key: sigil.root },
    );
    expectRateLimited(refused, ORG_MESSAGE, 4);
    expect(withoutBuckets(await dbSnapshot(sigil))).toEqual(withoutBuckets(before));
  });

  it('leaves a sub-organization, which has its own bucket, unaffected', async () => {
    expect((await whoami(sigil.url, sigil.root.organizationId, sigil.root)).status).toBe(429);
    const res = await whoami(sigil.url, subOrganizationId, sigil.root);
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-remaining')).toBe('3');
  });

  it('lets requests pass again once the bucket has refilled', async () => {
    await sleep(2200);
    expect((await whoami(sigil.url, sigil.root.organizationId, sigil.root)).status).toBe(200);
  });
});

describe('per-key limit', () => {
  let sigil: SigilInstance;
  const other = newKey();
  beforeAll(async () => {
    sigil = await startSigil({ SIGIL_RATE_LIMIT_KEY_RPS: '1', SIGIL_RATE_LIMIT_KEY_BURST: '3' });
    await sdkServerClient(sigil).createUsers({
      users: [
        {
          userName: 'other',
          apiKeys: [{ apiKeyName: 'other key', publicKey: other.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    });
  });
  afterAll(async () => {
    await sigil?.stop();
  });

  it('refuses the key beyond its bucket with `Too many requests`, while another key of the organization passes', async () => {
    const answers = await untilRefused(() => whoami(sigil.url, sigil.root.organizationId, sigil.root));
    expect(answers.filter((a) => a.status === 200).length).toBeLessThanOrEqual(3);
    expectRateLimited(answers.at(-1)!, KEY_MESSAGE, 3);

    const byOther = await whoami(sigil.url, sigil.root.organizationId, other);
    expect(byOther.status).toBe(200);
    expect(byOther.headers.get('ratelimit-remaining')).toBe('2');

    await sleep(1100);
    expect((await whoami(sigil.url, sigil.root.organizationId, sigil.root)).status).toBe(200);
  });
});

describe('shared across processes', () => {
  let sigil: SigilInstance;
  let second: ReturnType<typeof serve>;
  let secondUrl: string;
  beforeAll(async () => {
    // A refill slower than the test, so exactly the burst passes.
    sigil = await startSigil({ SIGIL_RATE_LIMIT_ORG_RPS: '0.05', SIGIL_RATE_LIMIT_ORG_BURST: '4' });
    // A second `sigil serve` on the same database (PostgreSQL schema, or the same SQLite file).
    second = serve(sigil.dataDir, sigil.env);
    secondUrl = (await second.ready).url;
  });
  afterAll(async () => {
    if (second && second.child.exitCode === null) {
      const exited = new Promise((r) => second.child.once('exit', r));
      second.child.kill('SIGTERM');
      await exited;
    }
    await sigil?.stop();
  });

  it('two processes on one database let exactly one burst through between them', async () => {
    const urls = [sigil.url, secondUrl];
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => whoami(urls[i % 2], sigil.root.organizationId, sigil.root)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(4);
    const refused = answers.map((a, i) => ({ a, i })).filter(({ a }) => a.status === 429);
    expect(refused).toHaveLength(6);
    for (const { a } of refused) expectRateLimited(a, ORG_MESSAGE, 4);
    // Both processes refused some: neither kept a bucket of its own.
    expect(new Set(refused.map(({ i }) => i % 2)).size).toBe(2);
  });
});
