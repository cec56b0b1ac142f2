// Sessions through the official SDKs (docs/sessions-and-logins.md "Sessions, IP allowlists and OAuth
// providers"; docs/reference/sessions.md "Login activities", "The session JWT"):
// create_read_write_session's credential bundle opens with @turnkey/crypto and its key stamps until it
// expires, then the SDK sees the expired-key error; stamp_login answers a session JWT that decodes like
// the SDK's parseSession and verifies against the deployment signer; read-only sessions (X-Session) read
// but never submit; invalidateExisting and the per-user limit of expiring keys; login from the parent's
// organizationId finds the sub-organization.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, createPublicKey, verify } from 'node:crypto';
import { decryptCredentialBundle, generateP256KeyPair, getPublicKey, verifySessionJwtSignature } from '@turnkey/crypto';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, httpClient, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot } from '../helpers/db-snapshot.js';

let sigil: SigilInstance;
beforeAll(async () => {
  sigil = await startSigil();
});
afterAll(async () => {
  await sigil?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function newKey(): KeyPair {
  const k = generateP256KeyPair();
  return { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
}

/** What @turnkey/core / sdk-browser parseSession do: plain atob of the payload, then JSON.parse. */
function parseSessionLikeSdk(token: string) {
  const [header, payload] = token.split('.');
  return { header: JSON.parse(atob(header)), payload: JSON.parse(atob(payload)) };
}

/** ES256 as Turnkey signs sessions: ECDSA-P256-SHA256 over sha256(header.payload), raw r‖s. */
function verifyWithNodeCrypto(token: string, signerPublicKeyHex: string): boolean {
  const [h, p, s] = token.split('.');
  const pub = Buffer.from(signerPublicKeyHex, 'hex');
  const key = createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: pub.subarray(1, 33).toString('base64url'), y: pub.subarray(33, 65).toString('base64url') },
    format: 'jwk',
  });
  const digest = createHash('sha256').update(`${h}.${p}`).digest();
  return verify('sha256', digest, { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'));
}

async function createUser(name: string): Promise<{ userId: string; key: KeyPair }> {
  const key = newKey();
  const { userIds } = await sdkServerClient(sigil).createUsers({
    users: [{ userName: name, apiKeys: [{ apiKeyName: `${name} key`, publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
  });
  return { userId: userIds[0], key };
}

describe('create_read_write_session', () => {
  it('returns a credential bundle whose key stamps requests until it expires', async () => {
    const api = sdkServerClient(sigil);
    const target = generateP256KeyPair();
    const res = await api.createReadWriteSession({ targetPublicKey: target.publicKeyUncompressed, expirationSeconds: '2' });
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(res.activity.type).toBe('ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2');
    expect(res).toMatchObject({
      organizationId: sigil.root.organizationId,
      organizationName: 'Root organization',
      userId: sigil.root.userId,
      username: 'Root user',
    });
    const privateKey = decryptCredentialBundle(res.credentialBundle, target.privateKey);
    expect(privateKey).toMatch(/^[0-9a-f]{64}$/);
    const publicKey = Buffer.from(getPublicKey(privateKey, true)).toString('hex');
    const session = { apiPublicKey: publicKey, apiPrivateKey: privateKey };

    const { apiKey } = await api.getApiKey({ apiKeyId: res.apiKeyId });
    expect(apiKey.credential).toEqual({ publicKey, type: 'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256' });
    expect(apiKey.expirationSeconds).toBe('2');
    expect(apiKey.apiKeyName).toMatch(/^Read Write Session - \d{4}-/);

    // The session key reads and writes as the root user.
    const asSession = sdkServerClient(sigil, session);
    expect((await asSession.getWhoami({})).userId).toBe(sigil.root.userId);
    const tag = await asSession.createUserTag({ userTagName: 'made with a session', userIds: [] });
    expect(tag.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');

    await sleep(2100);
    await expect(asSession.getWhoami({})).rejects.toThrow(/Unauthenticated desc = expired api key publicKey: /);
    await expect(httpClient(sigil, session).getWhoami({ organizationId: sigil.root.organizationId })).rejects.toThrow(/expired api key/);
  });

  it('defaults to 15 minutes, makes sessions for the caller itself, and invalidates earlier ones of its kind only', async () => {
    const bob = await createUser('bob');
    const asBob = sdkServerClient(sigil, bob.key);
    // A stamp_login key of bob's, which a read-write invalidation must leave alone.
    const login = newKey();
    await asBob.stampLogin({ publicKey: login.apiPublicKey });

    const t1 = generateP256KeyPair();
    const first = await asBob.createReadWriteSession({ targetPublicKey: t1.publicKey });
    expect(first.userId).toBe(bob.userId);
    const firstKey = decryptCredentialBundle(first.credentialBundle, t1.privateKey);
    const firstSession = { apiPublicKey: Buffer.from(getPublicKey(firstKey, true)).toString('hex'), apiPrivateKey: firstKey };
    expect((await asBob.getApiKey({ apiKeyId: first.apiKeyId })).apiKey.expirationSeconds).toBe('900');
    expect((await sdkServerClient(sigil, firstSession).getWhoami({})).userId).toBe(bob.userId);

    const t2 = generateP256KeyPair();
    const second = await asBob.createReadWriteSession({ targetPublicKey: t2.publicKey, invalidateExisting: true, apiKeyName: 'laptop' });
    await expect(sdkServerClient(sigil, firstSession).getWhoami({})).rejects.toThrow(/could not find public key in organization or its parent organization/);
    const keys = (await asBob.getApiKeys({ userId: bob.userId })).apiKeys;
    expect(keys.map((k) => k.credential.type).sort()).toEqual(['CREDENTIAL_TYPE_API_KEY_P256', 'CREDENTIAL_TYPE_LOGIN', 'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256']);
    expect(keys.find((k) => k.apiKeyId === second.apiKeyId)?.apiKeyName).toBe('laptop');
    expect((await sdkServerClient(sigil, login).getWhoami({})).userId).toBe(bob.userId);

    // Without a policy, bob may not open a session as another user; the refusal changes nothing.
    const before = await dbSnapshot(sigil);
    const other = await rawPost(
      `${sigil.url}/public/v1/submit/create_read_write_session`,
      activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2', { targetPublicKey: t1.publicKey, userId: sigil.root.userId }),
      { key: bob.key },
    );
    expect(other.status).toBe(403);
    expect(other.body.details[2].reason).toMatch(/no policy allows ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2/);
    expect(await dbSnapshot(sigil)).toEqual(before);
  });

  it('refuses a bad target key and a bad expiration', async () => {
    const api = sdkServerClient(sigil);
    await expect(api.createReadWriteSession({ targetPublicKey: '04abcd' })).rejects.toThrow(/invalid targetPublicKey/);
    await expect(api.createReadWriteSession({ targetPublicKey: generateP256KeyPair().publicKey, expirationSeconds: '-5' })).rejects.toThrow(
      /invalid api key expiration/,
    );
  });
});

describe('stamp_login', () => {
  it('registers the client key and answers a session JWT the SDK can parse and verify', async () => {
    const api = sdkServerClient(sigil);
    const sessionKey = newKey();
    const before = Math.floor(Date.now() / 1000);
    const res = await api.stampLogin({ publicKey: sessionKey.apiPublicKey, expirationSeconds: '600' });
    expect(res.activity.type).toBe('ACTIVITY_TYPE_STAMP_LOGIN');
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');

    const parts = res.session.split('.');
    expect(parts).toHaveLength(3);
    // Browsers' atob throws on '-' and '_' (Traps 7): the payload must be plain base64 characters.
    expect(parts[1]).toMatch(/^[A-Za-z0-9+/]+$/);
    const { header, payload } = parseSessionLikeSdk(res.session);
    expect(header).toEqual({ alg: 'ES256', typ: 'JWT' });
    expect(Object.keys(payload)).toEqual(['exp', 'public_key', 'session_type', 'user_id', 'organization_id']);
    expect(payload).toMatchObject({
      public_key: sessionKey.apiPublicKey,
      session_type: 'SESSION_TYPE_READ_WRITE',
      user_id: sigil.root.userId,
      organization_id: sigil.root.organizationId,
    });
    expect(typeof payload.exp).toBe('number');
    expect(payload.exp).toBeGreaterThanOrEqual(before + 599);
    expect(payload.exp).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 600);

    // The signature verifies with the deployment signer key `sigil init` printed, with the SDK and independently.
    expect(await verifySessionJwtSignature(res.session, sigil.root.signerPublicKey)).toBe(true);
    expect(verifyWithNodeCrypto(res.session, sigil.root.signerPublicKey)).toBe(true);
    expect(await verifySessionJwtSignature(res.session, generateP256KeyPair().publicKeyUncompressed)).toBe(false);
    const forged = Buffer.from(JSON.stringify({ ...payload, user_id: 'someone-else' })).toString('base64url');
    expect(verifyWithNodeCrypto(`${parts[0]}.${forged}.${parts[2]}`, sigil.root.signerPublicKey)).toBe(false);

    // The session key is an expiring login credential of the user.
    const asSession = sdkServerClient(sigil, sessionKey);
    expect((await asSession.getWhoami({})).userId).toBe(sigil.root.userId);
    const keys = (await api.getApiKeys({ userId: sigil.root.userId })).apiKeys;
    const registered = keys.find((k) => k.credential.publicKey === sessionKey.apiPublicKey);
    expect(registered).toMatchObject({ credential: { type: 'CREDENTIAL_TYPE_LOGIN' }, expirationSeconds: '600' });

    // Without expirationSeconds the session lasts 900 s; invalidateExisting ends the earlier logins.
    const next = newKey();
    const second = await api.stampLogin({ publicKey: next.apiPublicKey, invalidateExisting: true });
    const exp = parseSessionLikeSdk(second.session).payload.exp;
    expect(Math.abs(exp - (Math.floor(Date.now() / 1000) + 900))).toBeLessThanOrEqual(3);
    await expect(asSession.getWhoami({})).rejects.toThrow(/could not find public key/);
    expect((await sdkServerClient(sigil, next).getWhoami({})).userId).toBe(sigil.root.userId);
  });

  it('expires: the SDK sees the expired-key error', async () => {
    const sessionKey = newKey();
    await sdkServerClient(sigil).stampLogin({ publicKey: sessionKey.apiPublicKey, expirationSeconds: '1' });
    const asSession = sdkServerClient(sigil, sessionKey);
    await expect(asSession.getWhoami({})).resolves.toMatchObject({ userId: sigil.root.userId });
    await sleep(1100);
    const res = await rawPost(`${sigil.url}/public/v1/query/whoami`, { organizationId: sigil.root.organizationId }, { key: sessionKey });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe(16);
    expect(res.body.message).toContain('Unauthenticated desc = expired api key publicKey: ' + sessionKey.apiPublicKey);
  });

  it('logs a sub-organization user in when the request names the parent organization', async () => {
    const subKey = newKey();
    const created = await sdkServerClient(sigil).createSubOrganization({
      subOrganizationName: 'login sub-org',
      rootUsers: [{ userName: 'end user', apiKeys: [{ apiKeyName: 'device', publicKey: subKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
    });
    const sessionKey = newKey();
    // Stamped by the sub-organization's key, sent with the parent's organizationId (as @turnkey/core does).
    const res = await sdkServerClient(sigil, subKey, sigil.root.organizationId).stampLogin({ publicKey: sessionKey.apiPublicKey });
    expect(res.activity.organizationId).toBe(created.subOrganizationId);
    const { payload } = parseSessionLikeSdk(res.session);
    expect(payload.organization_id).toBe(created.subOrganizationId);
    expect(payload.user_id).toBe(created.rootUserIds[0]);
    const me = await sdkServerClient(sigil, sessionKey, payload.organization_id).getWhoami({});
    expect(me).toMatchObject({ organizationId: created.subOrganizationId, userId: created.rootUserIds[0] });
    // Only login activities look into sub-organizations.
    await expect(sdkServerClient(sigil, subKey, sigil.root.organizationId).getWhoami({})).rejects.toThrow(/could not find public key/);
  });

  it('refuses unknown session profiles and keys that are not P-256 points', async () => {
    const api = sdkServerClient(sigil);
    await expect(api.stampLogin({ publicKey: newKey().apiPublicKey, sessionProfileId: 'profile' })).rejects.toThrow(/session profile not found: sessionProfileId profile/);
    await expect(api.stampLogin({ publicKey: '02' + 'ff'.repeat(32) })).rejects.toThrow(/invalid publicKey/);
    const taken = await api.stampLogin({ publicKey: newKey().apiPublicKey });
    const again = parseSessionLikeSdk(taken.session).payload.public_key;
    await expect(api.stampLogin({ publicKey: again })).rejects.toThrow(/already exists/);
  });

  it('keeps at most 10 expiring keys per user, evicting the oldest', async () => {
    const carol = await createUser('carol');
    const asCarol = sdkServerClient(sigil, carol.key);
    const sessions: KeyPair[] = [];
    for (let i = 0; i < 11; i++) {
      const k = newKey();
      await asCarol.stampLogin({ publicKey: k.apiPublicKey });
      sessions.push(k);
    }
    const keys = (await asCarol.getApiKeys({ userId: carol.userId })).apiKeys;
    expect(keys.filter((k) => k.expirationSeconds !== undefined)).toHaveLength(10);
    expect(keys.some((k) => k.credential.publicKey === sessions[0].apiPublicKey)).toBe(false);
    expect(keys.some((k) => k.credential.publicKey === sessions[10].apiPublicKey)).toBe(true);
    expect(keys.some((k) => k.credential.publicKey === carol.key.apiPublicKey)).toBe(true);
  });
});

describe('create_read_only_session', () => {
  const query = (path: string, headers: Record<string, string>, body: object = { organizationId: sigil.root.organizationId }) =>
    rawPost(`${sigil.url}/public/v1/query/${path}`, body, { headers });

  it('answers a session that reads through X-Session and never submits', async () => {
    const res = await sdkServerClient(sigil).createReadOnlySession({});
    expect(res).toMatchObject({
      organizationId: sigil.root.organizationId,
      organizationName: 'Root organization',
      userId: sigil.root.userId,
      username: 'Root user',
    });
    const expiry = Number(res.sessionExpiry);
    expect(Math.abs(expiry - (Math.floor(Date.now() / 1000) + 3600))).toBeLessThanOrEqual(3);

    const me = await query('whoami', { 'X-Session': res.session });
    expect(me.status).toBe(200);
    expect(me.body.userId).toBe(sigil.root.userId);
    const users = await query('list_users', { 'X-Session': res.session });
    expect(users.status).toBe(200);
    expect(users.body.users.length).toBeGreaterThan(0);

    const before = await dbSnapshot(sigil);
    const submit = await rawPost(
      `${sigil.url}/public/v1/submit/create_user_tag`,
      activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_USER_TAG', { userTagName: 'read-only', userIds: [] }),
      { headers: { 'X-Session': res.session } },
    );
    expect(submit.status).toBe(403);
    expect(submit.body).toMatchObject({ code: 7, message: expect.stringMatching(/read-only session \(X-Session\) cannot submit activities/) });
    expect(await dbSnapshot(sigil)).toEqual(before);

    // Tampering, a read-write session JWT, and no session at all are refused.
    const [h, p, s] = res.session.split('.');
    const tampered = Buffer.from(JSON.stringify({ ...JSON.parse(atob(p)), exp: expiry + 86400 })).toString('base64url');
    expect((await query('whoami', { 'X-Session': `${h}.${tampered}.${s}` })).body.message).toMatch(/signature does not verify/);
    const rw = await sdkServerClient(sigil).stampLogin({ publicKey: newKey().apiPublicKey });
    const asRw = await query('whoami', { 'X-Session': rw.session });
    expect(asRw.status).toBe(401);
    expect(asRw.body.message).toMatch(/X-Session takes a session from create_read_only_session/);
    expect((await query('whoami', {})).status).toBe(401);
  });

  it('ends when the credential that created it is deleted', async () => {
    const dave = await createUser('dave');
    const ro = await sdkServerClient(sigil, dave.key).createReadOnlySession({});
    expect((await query('whoami', { 'X-Session': ro.session })).body.userId).toBe(dave.userId);
    const { apiKeys } = await sdkServerClient(sigil).getApiKeys({ userId: dave.userId });
    await sdkServerClient(sigil).deleteApiKeys({ userId: dave.userId, apiKeyIds: apiKeys.map((k) => k.apiKeyId) });
    const after = await query('whoami', { 'X-Session': ro.session });
    expect(after.status).toBe(401);
    expect(after.body.message).toMatch(/revoked read-only session/);
  });
});
