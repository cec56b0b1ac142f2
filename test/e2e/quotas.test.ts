// Resource quotas through the official SDK (docs/limits.md "Quotas and rate limits";
// docs/reference/api.md "Limits"; src/domain/governance/quotas.ts): the 101st user, policy and wallet,
// the 1001st private key, the 11th long-lived API key of a user and the 11th tag of a sub-organization
// are refused with 429 / gRPC 8 / RATE_LIMIT_EXCEEDED and the documented message, changing nothing;
// deleting one frees a slot; concurrent creates never overshoot (the organization's row is locked while
// counting); expiring API keys beyond 10 push out the oldest instead of being refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateP256KeyPair } from '@turnkey/crypto';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot } from '../helpers/db-snapshot.js';

let sigil: SigilInstance;
beforeAll(async () => {
  sigil = await startSigil();
});
afterAll(async () => {
  await sigil?.stop();
});

function newKey(): KeyPair {
  const k = generateP256KeyPair();
  return { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
}

interface Refusal {
  code: number;
  message: string;
  details: unknown;
}

/** Awaits a request the SDK must reject; returns the TurnkeyRequestError. */
async function refusal(request: Promise<unknown>): Promise<Refusal> {
  const outcome = await request.then(
    () => undefined,
    (e: Refusal) => e,
  );
  if (!outcome) throw new Error('the request was expected to be refused');
  return outcome;
}

/** Refused with the quota error, and the database is exactly as before. */
async function expectQuotaRefusal(request: () => Promise<unknown>, message: RegExp): Promise<void> {
  const before = await dbSnapshot(sigil);
  const err = await refusal(request());
  expect(err.code).toBe(8);
  expect(err.message).toMatch(message);
  expect(err.details).toEqual([{ '@type': 'type.googleapis.com/errors.v1.TurnkeyErrorDetail', turnkeyErrorCode: 'RATE_LIMIT_EXCEEDED' }]);
  expect(await dbSnapshot(sigil)).toEqual(before);
}

/** Runs `n` requests, `width` at a time. */
async function inBatches<T>(n: number, width: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let start = 0; start < n; start += width) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(width, n - start) }, (_, j) => fn(start + j)))));
  }
  return out;
}

const user = (name: string) => ({ userName: name, userEmail: `${name}@example.com`, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] });

describe('organization quotas', () => {
  it('users: 100 per organization, the 101st is refused, concurrent creates never overshoot, deleting frees a slot', async () => {
    const api = sdkServerClient(sigil);
    // The root user is the first; create_users takes the other 99 at once.
    const { userIds } = await api.createUsers({ users: Array.from({ length: 99 }, (_, i) => user(`user-${i}`)) });
    expect((await api.getUsers({})).users).toHaveLength(100);
    await expectQuotaRefusal(
      () => api.createUsers({ users: [user('one-too-many')] }),
      /^Turnkey error 8: organization has exceeded maximum users: an organization holds at most 100 users \(has 100, adding 1\)/,
    );

    // Two free slots, five concurrent creates: exactly two succeed, whichever process or order.
    await api.deleteUsers({ userIds: userIds.slice(0, 2) });
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => api.createUsers({ users: [user(`racer-${i}`)] })));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(2);
    for (const o of outcomes) if (o.status === 'rejected') expect(String(o.reason.message)).toMatch(/organization has exceeded maximum users/);
    expect((await api.getUsers({})).users).toHaveLength(100);

    await api.deleteUsers({ userIds: [userIds[2]] });
    await api.createUsers({ users: [user('fits-again')] });
    // Room for the users the API key tests create.
    await api.deleteUsers({ userIds: userIds.slice(3, 8) });
  });

  it('policies: the 101st is refused, deleting one frees a slot', async () => {
    const api = sdkServerClient(sigil);
    const policy = (name: string) => ({ policyName: name, effect: 'EFFECT_DENY' as const, condition: 'false', notes: '' });
    const { policyIds } = await api.createPolicies({ policies: Array.from({ length: 100 }, (_, i) => policy(`policy-${i}`)) });
    await expectQuotaRefusal(() => api.createPolicy(policy('one-too-many')), /organization has exceeded maximum policies: an organization holds at most 100 policies/);
    await expectQuotaRefusal(
      () => api.createPolicies({ policies: [policy('a'), policy('b')] }),
      /organization has exceeded maximum policies: .* \(has 100, adding 2\)/,
    );
    await api.deletePolicy({ policyId: policyIds[0] });
    await api.createPolicy(policy('fits-again'));
    // Later tests need not run past 100 policies that never match.
    const left = (await api.getPolicies({})).policies;
    await inBatches(left.length, 10, (i) => api.deletePolicy({ policyId: left[i].policyId }));
  });

  it('wallets: the 101st is refused, deleting one frees a slot', async () => {
    const api = sdkServerClient(sigil);
    const wallets = await inBatches(100, 10, (i) => api.createWallet({ walletName: `wallet-${i}`, accounts: [] }));
    await expectQuotaRefusal(
      () => api.createWallet({ walletName: 'one-too-many', accounts: [] }),
      /organization has exceeded maximum wallets: an organization holds at most 100 wallets \(has 100, adding 1\)/,
    );
    await api.deleteWallets({ walletIds: [wallets[0].walletId], deleteWithoutExport: true });
    await api.createWallet({ walletName: 'fits-again', accounts: [] });
  });

  it('private keys: the 1001st is refused', async () => {
    const api = sdkServerClient(sigil);
    const key = (name: string) => ({ privateKeyName: name, curve: 'CURVE_ED25519' as const, privateKeyTags: [], addressFormats: [] });
    for (let batch = 0; batch < 4; batch++) {
      await api.createPrivateKeys({ privateKeys: Array.from({ length: 250 }, (_, i) => key(`key-${batch}-${i}`)) });
    }
    await expectQuotaRefusal(
      () => api.createPrivateKeys({ privateKeys: [key('one-too-many')] }),
      /organization has exceeded maximum private keys: an organization holds at most 1000 private keys \(has 1000, adding 1\)/,
    );
  });

  it('user tags: 100 in a parent organization, the 101st is refused', async () => {
    const api = sdkServerClient(sigil);
    await inBatches(100, 10, (i) => api.createUserTag({ userTagName: `tag-${i}`, userIds: [] }));
    await expectQuotaRefusal(
      () => api.createUserTag({ userTagName: 'one-too-many', userIds: [] }),
      /organization has exceeded maximum user tags: an organization holds at most 100 user tags/,
    );
  });

  it('tags in a sub-organization: the 11th user tag and the 11th private key tag are refused', async () => {
    const key = newKey();
    const { subOrganizationId } = await sdkServerClient(sigil).createSubOrganization({
      subOrganizationName: 'tenant',
      rootUsers: [
        { userName: 'tenant', apiKeys: [{ apiKeyName: 'device', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] },
      ],
      rootQuorumThreshold: 1,
    });
    const api = sdkServerClient(sigil, key, subOrganizationId);
    const userTags = [];
    for (let i = 0; i < 10; i++) userTags.push(await api.createUserTag({ userTagName: `tag-${i}`, userIds: [] }));
    await expectQuotaRefusal(
      () => api.createUserTag({ userTagName: 'one-too-many', userIds: [] }),
      /organization has exceeded maximum user tags: a sub-organization holds at most 10 user tags \(has 10, adding 1\)/,
    );
    for (let i = 0; i < 10; i++) await api.createPrivateKeyTag({ privateKeyTagName: `pk-tag-${i}`, privateKeyIds: [] });
    await expectQuotaRefusal(
      () => api.createPrivateKeyTag({ privateKeyTagName: 'one-too-many', privateKeyIds: [] }),
      /organization has exceeded maximum private key tags: a sub-organization holds at most 10 private key tags/,
    );
    await api.deleteUserTags({ userTagIds: [userTags[0].userTagId] });
    await api.createUserTag({ userTagName: 'fits-again', userIds: [] });
  });

  it('a sub-organization created with more than 100 root users is refused', async () => {
    await expectQuotaRefusal(
      () =>
        sdkServerClient(sigil).createSubOrganization({
          subOrganizationName: 'crowd',
          rootUsers: Array.from({ length: 101 }, (_, i) => ({ userName: `root-${i}`, userEmail: `root-${i}@example.com`, apiKeys: [], authenticators: [], oauthProviders: [] })),
          rootQuorumThreshold: 1,
        }),
      /organization has exceeded maximum users: a sub-organization holds at most 100 users \(has 0, adding 101\)/,
    );
  });
});

describe('API keys per user', () => {
  const apiKey = (name: string, expirationSeconds?: string) => ({
    apiKeyName: name,
    publicKey: newKey().apiPublicKey,
    curveType: 'API_KEY_CURVE_P256' as const,
    ...(expirationSeconds ? { expirationSeconds } : {}),
  });

  it('the 11th long-lived key is refused with `user has exceeded maximum long-lived api keys`; deleting one frees a slot', async () => {
    const api = sdkServerClient(sigil);
    const userId = sigil.root.userId;
    // The root user holds the key `sigil init` made.
    const { apiKeyIds } = await api.createApiKeys({ userId, apiKeys: Array.from({ length: 9 }, (_, i) => apiKey(`long-${i}`)) });
    await expectQuotaRefusal(() => api.createApiKeys({ userId, apiKeys: [apiKey('one-too-many')] }), /^Turnkey error 8: user has exceeded maximum long-lived api keys/);
    // A new user with 11 long-lived keys is refused the same way.
    await expectQuotaRefusal(
      () => api.createUsers({ users: [{ ...user('keyring'), apiKeys: Array.from({ length: 11 }, (_, i) => apiKey(`k-${i}`)) }] }),
      /user has exceeded maximum long-lived api keys/,
    );
    // Expiring keys do not count against the long-lived ones.
    await api.createApiKeys({ userId, apiKeys: [apiKey('expiring', '3600')] });
    await api.deleteApiKeys({ userId, apiKeyIds: [apiKeyIds[0]] });
    await api.createApiKeys({ userId, apiKeys: [apiKey('fits-again')] });
    const keys = (await api.getApiKeys({ userId })).apiKeys;
    expect(keys.filter((k) => k.expirationSeconds === undefined)).toHaveLength(10);
  });

  it('an 11th expiring key pushes out the oldest; more than 10 in one request are refused', async () => {
    const api = sdkServerClient(sigil);
    const { userIds } = await api.createUsers({ users: [user('sessions')] });
    const userId = userIds[0];
    const first = await api.createApiKeys({ userId, apiKeys: Array.from({ length: 10 }, (_, i) => apiKey(`exp-${i}`, '3600')) });
    const next = await api.createApiKeys({ userId, apiKeys: [apiKey('exp-10', '3600')] });
    const held = (await api.getApiKeys({ userId })).apiKeys.map((k) => k.apiKeyId).sort();
    expect(held).toHaveLength(10);
    expect(held).toContain(next.apiKeyIds[0]);
    // All ten were created at the same instant; the eviction order then falls back to the id.
    expect(held.filter((id) => first.apiKeyIds.includes(id))).toHaveLength(9);
    await expectQuotaRefusal(
      () => api.createApiKeys({ userId, apiKeys: Array.from({ length: 11 }, (_, i) => apiKey(`burst-${i}`, '60')) }),
      /^Turnkey error 8: user has exceeded maximum short-lived api keys/,
    );
  });
});

describe('operator quota overrides (SIGIL_QUOTAS)', () => {
  it('a deployment may set its own limits; the message names the limit in force', async () => {
    // A process of its own: quota overrides are per process (configureQuotas), and the file's other
    // deployment, in this process, keeps the defaults.
    const small = await startSigil({ SIGIL_QUOTAS: 'wallets=2' }, { process: true });
    try {
      const api = sdkServerClient(small);
      await api.createWallet({ walletName: 'one', accounts: [] });
      await api.createWallet({ walletName: 'two', accounts: [] });
      const before = await dbSnapshot(small);
      await expect(api.createWallet({ walletName: 'three', accounts: [] })).rejects.toThrow(/organization has exceeded maximum wallets: an organization holds at most 2 wallets/);
      expect(await dbSnapshot(small)).toEqual(before);
    } finally {
      await small.stop();
    }
  });
});
