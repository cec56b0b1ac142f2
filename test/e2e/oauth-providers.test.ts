// OAuth providers through @turnkey/sdk-server (docs/sessions-and-logins.md "OAuth and OIDC login";
// swagger v1CreateOauthProvidersIntentV2, v1OauthProvider): a user registers identities from an OIDC
// token's payload or from explicit claims, sees them in get_oauth_providers and in its user record,
// deletes them; duplicates, malformed tokens, other users' providers and the per-user limit are refused;
// users and sub-organization root users can be created with providers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateP256KeyPair } from '@turnkey/crypto';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot } from '../helpers/db-snapshot.js';

let sigil: SigilInstance;
beforeAll(async () => {
  sigil = await startSigil();
});
afterAll(async () => {
  await sigil?.stop();
});

const b64url = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
/** An id_token-shaped JWT; registration reads its payload only. */
const oidcToken = (claims: Record<string, unknown>) => `${b64url({ alg: 'RS256', kid: 'test' })}.${b64url(claims)}.${Buffer.from('not a real signature').toString('base64url')}`;

const GOOGLE = 'https://accounts.google.com';
const APPLE = 'https://appleid.apple.com';

async function createUser(name: string): Promise<{ userId: string; key: KeyPair }> {
  const k = generateP256KeyPair();
  const key = { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
  const { userIds } = await sdkServerClient(sigil).createUsers({
    users: [{ userName: name, apiKeys: [{ apiKeyName: `${name} key`, publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
  });
  return { userId: userIds[0], key };
}

describe('OAuth providers', () => {
  it('create from a token or claims, list, show in the user record, delete', async () => {
    const alice = await createUser('alice');
    const asAlice = sdkServerClient(sigil, alice.key);
    const token = oidcToken({ iss: GOOGLE, sub: '1234567890', aud: ['client-web'], nonce: 'abc', exp: 1 });
    const created = await asAlice.createOauthProviders({
      userId: alice.userId,
      oauthProviders: [
        { providerName: 'Google', oidcToken: token },
        { providerName: 'Apple', oidcClaims: { iss: APPLE, sub: 'apple-sub', aud: 'com.example.app' } },
      ],
    });
    expect(created.activity.type).toBe('ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2');
    expect(created.providerIds).toHaveLength(2);

    const { oauthProviders } = await asAlice.getOauthProviders({ userId: alice.userId });
    expect(oauthProviders).toEqual([
      {
        providerId: created.providerIds[0],
        providerName: 'Google',
        issuer: GOOGLE,
        audience: 'client-web',
        subject: '1234567890',
        createdAt: { seconds: expect.any(String), nanos: expect.any(String) },
        updatedAt: { seconds: expect.any(String), nanos: expect.any(String) },
      },
      expect.objectContaining({ providerId: created.providerIds[1], providerName: 'Apple', issuer: APPLE, audience: 'com.example.app', subject: 'apple-sub' }),
    ]);
    const { user } = await asAlice.getUser({ userId: alice.userId });
    expect(user.oauthProviders).toEqual(oauthProviders);
    // Without userId: every provider of the organization.
    expect((await asAlice.getOauthProviders({})).oauthProviders.map((p) => p.providerId)).toEqual(expect.arrayContaining(created.providerIds));

    const deleted = await asAlice.deleteOauthProviders({ userId: alice.userId, providerIds: [created.providerIds[0]] });
    expect(deleted.providerIds).toEqual([created.providerIds[0]]);
    expect((await asAlice.getOauthProviders({ userId: alice.userId })).oauthProviders.map((p) => p.providerName)).toEqual(['Apple']);
    // The same identity can be registered again once deleted.
    await asAlice.createOauthProviders({ userId: alice.userId, oauthProviders: [{ providerName: 'Google again', oidcClaims: { iss: GOOGLE, sub: '1234567890', aud: 'client-web' } }] });
  });

  it('refuses duplicates, malformed tokens, unknown ids and other users’ providers, changing nothing', async () => {
    const bob = await createUser('bob');
    const asBob = sdkServerClient(sigil, bob.key);
    const claims = { iss: GOOGLE, sub: 'bob-sub', aud: 'client-web' };
    const [providerId] = (await asBob.createOauthProviders({ userId: bob.userId, oauthProviders: [{ providerName: 'Google', oidcClaims: claims }] })).providerIds;
    const carol = await createUser('carol');

    const before = await dbSnapshot(sigil);
    const create = (userId: string, oauthProviders: unknown[], key = bob.key) =>
      rawPost(`${sigil.url}/public/v1/submit/create_oauth_providers`, activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2', { userId, oauthProviders }), { key });
    // Same issuer, audience and subject: one identity, once per organization (here on another user).
    const dup = await create(carol.userId, [{ providerName: 'again', oidcToken: oidcToken(claims) }], sigil.root);
    expect(dup.status).toBe(409);
    expect(dup.body.message).toMatch(/oauth provider already exists/);
    const malformed = await create(bob.userId, [{ providerName: 'x', oidcToken: 'not-a-jwt' }]);
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toMatch(/invalid oidc token: oauthProviders\[0\]\.oidcToken is not a JWT/);
    const noSub = await create(bob.userId, [{ providerName: 'x', oidcToken: oidcToken({ iss: GOOGLE, aud: 'a' }) }]);
    expect(noSub.body.message).toMatch(/has no sub claim/);
    const neither = await create(bob.userId, [{ providerName: 'x' }]);
    expect(neither.body.message).toMatch(/give oidcToken or oidcClaims/);
    const mismatch = await create(bob.userId, [{ providerName: 'x', oidcToken: oidcToken({ iss: GOOGLE, sub: 's1', aud: 'a' }), oidcClaims: { iss: GOOGLE, sub: 's2', aud: 'a' } }]);
    expect(mismatch.body.message).toMatch(/oidcClaims do not match/);
    const twice = await create(bob.userId, [
      { providerName: 'a', oidcClaims: { iss: GOOGLE, sub: 'same', aud: 'a' } },
      { providerName: 'b', oidcClaims: { iss: GOOGLE, sub: 'same', aud: 'a' } },
    ]);
    expect(twice.body.message).toMatch(/the same identity is listed twice/);
    // Another user's providers need a policy.
    const foreign = await create(carol.userId, [{ providerName: 'x', oidcClaims: { iss: GOOGLE, sub: 'x', aud: 'a' } }]);
    expect(foreign.status).toBe(403);
    await expect(sdkServerClient(sigil, carol.key).deleteOauthProviders({ userId: bob.userId, providerIds: [providerId] })).rejects.toThrow(/no policy allows/);
    await expect(asBob.deleteOauthProviders({ userId: bob.userId, providerIds: [providerId, '00000000-0000-4000-8000-000000000000'] })).rejects.toThrow(
      /oauth provider not found for user .*00000000-0000-4000-8000-000000000000/,
    );
    expect(await dbSnapshot(sigil)).toEqual(before);

    // The v1 type value is accepted on the same path.
    const v1 = await rawPost(
      `${sigil.url}/public/v1/submit/create_oauth_providers`,
      activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS', {
        userId: bob.userId,
        oauthProviders: [{ providerName: 'v1', oidcToken: oidcToken({ iss: APPLE, sub: 'bob', aud: 'svc' }) }],
      }),
      { key: bob.key },
    );
    expect(v1.status).toBe(200);
    expect(v1.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  });

  it('holds at most 10 providers per user', async () => {
    const dan = await createUser('dan');
    const api = sdkServerClient(sigil);
    const many = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ providerName: `p${from + i}`, oidcClaims: { iss: GOOGLE, sub: `dan-${from + i}`, aud: 'a' } }));
    await api.createOauthProviders({ userId: dan.userId, oauthProviders: many(0, 9) });
    await expect(api.createOauthProviders({ userId: dan.userId, oauthProviders: many(9, 2) })).rejects.toThrow(/user has exceeded maximum oauth providers/);
    await api.createOauthProviders({ userId: dan.userId, oauthProviders: many(9, 1) });
    expect((await api.getOauthProviders({ userId: dan.userId })).oauthProviders).toHaveLength(10);
  });

  it('registers providers with new users and sub-organization root users, and deletes them with the user', async () => {
    const api = sdkServerClient(sigil);
    const { userIds } = await api.createUsers({
      users: [
        {
          userName: 'erin',
          apiKeys: [],
          authenticators: [],
          oauthProviders: [{ providerName: 'Google', oidcClaims: { iss: GOOGLE, sub: 'erin', aud: 'client-web' } }],
          userTags: [],
        },
      ],
    });
    expect((await api.getUser({ userId: userIds[0] })).user.oauthProviders).toMatchObject([{ providerName: 'Google', subject: 'erin' }]);
    await api.deleteUsers({ userIds });
    expect((await api.getOauthProviders({})).oauthProviders.some((p) => p.subject === 'erin')).toBe(false);

    const sub = await api.createSubOrganization({
      subOrganizationName: 'social login user',
      rootUsers: [{ userName: 'frank', apiKeys: [], authenticators: [], oauthProviders: [{ providerName: 'Google', oidcToken: oidcToken({ iss: GOOGLE, sub: 'frank', aud: 'client-web' }) }] }],
      rootQuorumThreshold: 1,
    });
    const inSub = await sdkServerClient(sigil, sigil.root, sub.subOrganizationId).getOauthProviders({ userId: sub.rootUserIds[0] });
    expect(inSub.oauthProviders).toMatchObject([{ issuer: GOOGLE, audience: 'client-web', subject: 'frank' }]);
  });
});
