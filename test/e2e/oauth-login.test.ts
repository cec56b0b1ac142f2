// OAuth login end to end (docs/sessions-and-logins.md "OAuth and OIDC login"; swagger
// v1OauthLoginIntent, v1OauthIntent): a real OIDC issuer on loopback serves its discovery document
// and JWKS and signs id_tokens with keys made by jose; Sigil trusts it through SIGIL_OIDC_ISSUERS
// (one issuer discovered, one with its JWKS URL given). oauth_login through @turnkey/sdk-server
// answers a session whose key stamps a whoami, for users of the organization and, submitted by the
// parent, of its sub-organizations; the legacy oauth answers a credential bundle that opens with
// @turnkey/crypto. Refusals (another audience, expired, wrong or missing nonce, unknown issuer,
// another signer, a kid the issuer never published) are INVALID_OIDC_TOKEN errors that change
// nothing; a rotated key is fetched once, and keys are cached in between.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { createHash } from 'node:crypto';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { decryptCredentialBundle, generateP256KeyPair, getPublicKey } from '@turnkey/crypto';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, attestedStampLogin, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot } from '../helpers/db-snapshot.js';

interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function signingKey(kid: string, alg: 'RS256' | 'ES256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

let server: Server;
let base: string;
/** The issuer found through discovery, and the one configured with its JWKS URL. */
let ISSUER: string;
const ISSUER_B = 'https://b.issuer.test';
const published: Record<string, SigningKey[]> = { a: [], b: [] };
const fetches: Record<string, number> = {};
let k1: SigningKey;
let k2: SigningKey;
let kb: SigningKey;
let sigil: SigilInstance;

beforeAll(async () => {
  [k1, k2, kb] = await Promise.all([signingKey('k1', 'RS256'), signingKey('k2', 'RS256'), signingKey('kb', 'ES256')]);
  published.a = [k1];
  published.b = [kb];
  server = createServer((req, res) => {
    const path = req.url ?? '';
    fetches[path] = (fetches[path] ?? 0) + 1;
    const json = (body: unknown) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (path === '/a/.well-known/openid-configuration') return json({ issuer: ISSUER, jwks_uri: `${base}/a/jwks`, id_token_signing_alg_values_supported: ['RS256'] });
    if (path === '/a/jwks') return json({ keys: published.a.map((k) => k.jwk) });
    if (path === '/b/jwks') return json({ keys: published.b.map((k) => k.jwk) });
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  ISSUER = `${base}/a`;
  sigil = await startSigil({ SIGIL_OIDC_ISSUERS: `${ISSUER},${ISSUER_B}=${base}/b/jwks` });
}, 60_000);

afterAll(async () => {
  await sigil?.stop();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

const AUD = 'client-web';
const sha256hex = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** An id_token as a provider issues it; `nonce: null` leaves the nonce out. */
async function idToken(o: { sub: string; nonceFor?: string; nonce?: string | null; tknonce?: string; iss?: string; aud?: string; exp?: number; key?: SigningKey; kid?: string }) {
  const key = o.key ?? k1;
  const claims: Record<string, unknown> = { email: `${o.sub}@example.com` };
  if (o.nonce !== null) {
    const nonce = o.nonce ?? (o.nonceFor !== undefined ? sha256hex(o.nonceFor) : undefined);
    if (nonce !== undefined) claims.nonce = nonce;
  }
  if (o.tknonce !== undefined) claims.tknonce = o.tknonce;
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, kid: o.kid ?? key.kid, typ: 'JWT' })
    .setIssuer(o.iss ?? ISSUER)
    .setAudience(o.aud ?? AUD)
    .setSubject(o.sub)
    .setIssuedAt(now - 10)
    .setExpirationTime(o.exp ?? now + 600)
    .sign(key.privateKey);
}

function newKey(): KeyPair {
  const k = generateP256KeyPair();
  return { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
}

/** A user of the root organization whose one credential is an OAuth provider registered from an id_token of `sub`. */
async function userWithProvider(sub: string, iss = ISSUER, key = k1): Promise<string> {
  const oauthProviders = [{ providerName: 'Test IdP', oidcToken: await idToken({ sub, iss, key }) }];
  const { userIds } = await sdkServerClient(sigil).createUsers({ users: [{ userName: sub, apiKeys: [], authenticators: [], oauthProviders, userTags: [] }] });
  return userIds[0];
}

const decodeToken = (token: string) => JSON.parse(atob(token.split('.')[1]));
const discoveryFetches = () => fetches['/a/.well-known/openid-configuration'] ?? 0;
const jwksFetches = () => fetches['/a/jwks'] ?? 0;

describe('oauth_login', () => {
  it('answers a session for the provider’s user whose key stamps; the token is not kept', async () => {
    const userId = await userWithProvider('alice');
    const session = newKey();
    const oidcToken = await idToken({ sub: 'alice', nonceFor: session.apiPublicKey });
    const api = sdkServerClient(sigil);
    const res = await api.oauthLogin({ oidcToken, publicKey: session.apiPublicKey });
    expect(res.activity.type).toBe('ACTIVITY_TYPE_OAUTH_LOGIN');
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const payload = decodeToken(res.session);
    expect(payload).toMatchObject({ public_key: session.apiPublicKey, session_type: 'SESSION_TYPE_READ_WRITE', user_id: userId, organization_id: sigil.root.organizationId });
    expect(payload.exp * 1000).toBeGreaterThan(Date.now() + 890_000); // 900 s by default
    const me = await sdkServerClient(sigil, session).getWhoami({});
    expect(me.userId).toBe(userId);

    const { apiKeys } = await api.getApiKeys({ userId });
    expect(apiKeys).toHaveLength(1);
    expect(apiKeys[0].credential).toMatchObject({ type: 'CREDENTIAL_TYPE_LOGIN', publicKey: session.apiPublicKey });
    expect(apiKeys[0].expirationSeconds).toBe('900');
    // The id_token is a bearer credential: neither the activity record nor any table keeps it.
    expect(JSON.stringify(await dbSnapshot(sigil))).not.toContain(oidcToken.split('.')[2]);
    expect(discoveryFetches()).toBe(1);
    expect(jwksFetches()).toBe(1);

    // tknonce serves as well as nonce; invalidateExisting replaces the earlier login key; keys come from the cache.
    const second = newKey();
    await api.oauthLogin({ oidcToken: await idToken({ sub: 'alice', nonce: null, tknonce: sha256hex(second.apiPublicKey) }), publicKey: second.apiPublicKey, invalidateExisting: true, expirationSeconds: '120' });
    const after = (await api.getApiKeys({ userId })).apiKeys;
    expect(after.map((k) => k.credential.publicKey)).toEqual([second.apiPublicKey]);
    expect(after[0].expirationSeconds).toBe('120');
    await expect(sdkServerClient(sigil, session).getWhoami({})).rejects.toThrow(/could not find public key/);
    expect(discoveryFetches()).toBe(1);
    expect(jwksFetches()).toBe(1);
  });

  it('trusts an issuer configured with its JWKS URL (ES256)', async () => {
    const userId = await userWithProvider('bella', ISSUER_B, kb);
    const session = newKey();
    const res = await sdkServerClient(sigil).oauthLogin({ oidcToken: await idToken({ sub: 'bella', iss: ISSUER_B, key: kb, nonceFor: session.apiPublicKey }), publicKey: session.apiPublicKey });
    expect(decodeToken(res.session).user_id).toBe(userId);
    expect((await sdkServerClient(sigil, session).getWhoami({})).userId).toBe(userId);
    expect(fetches['/b/jwks']).toBe(1);
  });

  it('logs a sub-organization user in when the parent submits, and the session names the sub-organization', async () => {
    const created = await sdkServerClient(sigil).createSubOrganization({
      subOrganizationName: 'carol org',
      rootUsers: [{ userName: 'carol', apiKeys: [], authenticators: [], oauthProviders: [{ providerName: 'Test IdP', oidcToken: await idToken({ sub: 'carol' }) }] }],
      rootQuorumThreshold: 1,
    });
    const session = newKey();
    const res = await sdkServerClient(sigil).oauthLogin({ oidcToken: await idToken({ sub: 'carol', nonceFor: session.apiPublicKey }), publicKey: session.apiPublicKey });
    const payload = decodeToken(res.session);
    expect(payload.organization_id).toBe(created.subOrganizationId);
    expect(payload.user_id).toBe(created.rootUserIds![0]);
    const me = await sdkServerClient(sigil, session, created.subOrganizationId).getWhoami({});
    expect(me).toMatchObject({ organizationId: created.subOrganizationId, userId: created.rootUserIds![0] });
  });

  it('opens a session limited by the parent’s session profile for a sub-organization user (docs/sessions-and-logins.md "Session profiles")', async () => {
    const api = sdkServerClient(sigil);
    const { sessionProfileId } = await api.createSessionProfile({ sessionProfileName: 'oauth users', scope: "activity.resource == 'USER'", expirationSeconds: '180' });
    const created = await api.createSubOrganization({
      subOrganizationName: 'dana org',
      rootUsers: [{ userName: 'dana', apiKeys: [], authenticators: [], oauthProviders: [{ providerName: 'Test IdP', oidcToken: await idToken({ sub: 'dana' }) }] }],
      rootQuorumThreshold: 1,
    });
    const session = newKey();
    const res = await api.oauthLogin({ oidcToken: await idToken({ sub: 'dana', nonceFor: session.apiPublicKey }), publicKey: session.apiPublicKey, expirationSeconds: '900', sessionProfileId });
    expect(decodeToken(res.session)).toMatchObject({ organization_id: created.subOrganizationId, session_profile_id: sessionProfileId, scope: "activity.resource == 'USER'" });
    const asSession = sdkServerClient(sigil, session, created.subOrganizationId);
    const { apiKeys } = await asSession.getApiKeys({ userId: created.rootUserIds![0] });
    expect(apiKeys.map((k) => [k.credential.sessionProfileId, k.expirationSeconds])).toEqual([[sessionProfileId, '180']]);
    expect((await asSession.createUserTag({ userTagName: 'in scope', userIds: [] })).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    await expect(asSession.createWallet({ walletName: 'out of scope', accounts: [] })).rejects.toThrow(/outside the scope of session profile/);
  });
});

describe('legacy oauth', () => {
  it('answers a credential bundle whose key stamps', async () => {
    const userId = await userWithProvider('dave');
    const target = generateP256KeyPair();
    const api = sdkServerClient(sigil);
    const res = await api.oauth({ oidcToken: await idToken({ sub: 'dave', nonceFor: target.publicKey }), targetPublicKey: target.publicKey });
    expect(res.activity.type).toBe('ACTIVITY_TYPE_OAUTH');
    expect(res.userId).toBe(userId);
    const privateKey = decryptCredentialBundle(res.credentialBundle, target.privateKey);
    const publicKey = Buffer.from(getPublicKey(privateKey, true)).toString('hex');
    const me = await sdkServerClient(sigil, { apiPublicKey: publicKey, apiPrivateKey: privateKey }).getWhoami({});
    expect(me.userId).toBe(userId);
    const key = (await api.getApiKeys({ userId })).apiKeys.find((k) => k.apiKeyId === res.apiKeyId)!;
    expect(key.apiKeyName).toMatch(/^Oauth - \d{4}-\d\d-\d\dT/);
    expect(key.credential.type).toBe('CREDENTIAL_TYPE_OAUTH_KEY_P256');
    expect(key.expirationSeconds).toBe('900');

    // The nonce binds the token to targetPublicKey: another target is refused.
    const other = generateP256KeyPair();
    await expect(api.oauth({ oidcToken: await idToken({ sub: 'dave', nonceFor: target.publicKey }), targetPublicKey: other.publicKey })).rejects.toThrow(
      /invalid OIDC token: wrong nonce/,
    );
  });
});

describe('refusals', () => {
  /** Submits oauth_login raw, to read the error body, and checks the database did not change. */
  async function refused(oidcToken: string, publicKey: string): Promise<{ status: number; message: string; code: string }> {
    const before = await dbSnapshot(sigil);
    const r = await rawPost(`${sigil.url}/public/v1/submit/oauth_login`, activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_OAUTH_LOGIN', { oidcToken, publicKey }), {
      key: sigil.root,
    });
    expect(await dbSnapshot(sigil)).toEqual(before);
    return { status: r.status, message: r.body.message, code: r.body.details?.[0]?.turnkeyErrorCode };
  }

  it('refuses another audience, an expired token, a wrong or missing nonce, an unknown issuer and another signer, changing nothing', async () => {
    await userWithProvider('erin');
    const session = newKey();
    const pub = session.apiPublicKey;
    const ok = (r: { status: number; code: string }) => {
      expect(r.status).toBe(400);
      expect(r.code).toBe('INVALID_OIDC_TOKEN');
    };

    let r = await refused(await idToken({ sub: 'erin', aud: 'client-ios', nonceFor: pub }), pub);
    ok(r);
    expect(r.message).toMatch(/^invalid OIDC token: no OAuth provider with issuer .* audience "client-ios" and subject "erin"/);

    r = await refused(await idToken({ sub: 'erin', nonceFor: pub, exp: Math.floor(Date.now() / 1000) - 3600 }), pub);
    ok(r);
    expect(r.message).toMatch(/^invalid OIDC token: expired at \d{4}-/);

    r = await refused(await idToken({ sub: 'erin', nonceFor: newKey().apiPublicKey }), pub);
    ok(r);
    expect(r.message).toContain(`invalid OIDC token: wrong nonce: it must be the lowercase hex sha256 of the public key ${pub}`);

    r = await refused(await idToken({ sub: 'erin', nonce: null }), pub);
    ok(r);
    expect(r.message).toMatch(/^invalid OIDC token: it has no nonce \(or tknonce\) claim/);

    const before = { ...fetches };
    r = await refused(await idToken({ sub: 'erin', iss: 'https://accounts.evil.test', nonceFor: pub }), pub);
    ok(r);
    expect(r.message).toBe('invalid OIDC token: unknown issuer "https://accounts.evil.test": this deployment does not trust tokens it issues');
    expect(fetches).toEqual(before); // nothing fetched for an issuer nobody trusts

    // Signed by another key under the published kid.
    const forger = await signingKey('k1', 'RS256');
    r = await refused(await idToken({ sub: 'erin', nonceFor: pub, key: forger }), pub);
    ok(r);
    expect(r.message).toBe(`invalid OIDC token: bad signature: it does not verify with the signing keys of issuer ${ISSUER}`);

    // A token claiming to be this deployment's own (oauth2_authenticate) but signed by someone else.
    r = await refused(await idToken({ sub: 'erin', iss: 'urn:sigil:oauth2', key: (await signingKey('self', 'ES256')), nonceFor: pub }), pub);
    ok(r);
    expect(r.message).toMatch(/^invalid OIDC token: bad signature/);

    // Not a JWT at all, through the SDK.
    await expect(sdkServerClient(sigil).oauthLogin({ oidcToken: 'not-a-token', publicKey: pub })).rejects.toThrow(/invalid OIDC token: it is not a JWT/);
    // A malformed session key is refused before the token is looked at.
    r = await refused(await idToken({ sub: 'erin', nonceFor: 'zz' }), 'zz');
    expect(r.status).toBe(400);
    expect(r.message).toMatch(/invalid publicKey/);
  });

  it('fetches a rotated key once, and does not refetch for every unknown kid', async () => {
    const userId = await userWithProvider('frank');
    const jwksBefore = jwksFetches();
    // The provider publishes a new key and signs with it: Sigil's cache does not hold it yet.
    published.a = [k1, k2];
    const session = newKey();
    const res = await sdkServerClient(sigil).oauthLogin({ oidcToken: await idToken({ sub: 'frank', key: k2, nonceFor: session.apiPublicKey }), publicKey: session.apiPublicKey });
    expect(decodeToken(res.session).user_id).toBe(userId);
    expect(jwksFetches()).toBe(jwksBefore + 1);
    // Now cached: no fetch for the next token of that key.
    const again = newKey();
    await sdkServerClient(sigil).oauthLogin({ oidcToken: await idToken({ sub: 'frank', key: k2, nonceFor: again.apiPublicKey }), publicKey: again.apiPublicKey });
    expect(jwksFetches()).toBe(jwksBefore + 1);

    // A kid the issuer never published, right after a refetch: refused without asking the provider again.
    const stranger = await signingKey('k9', 'RS256');
    const r = await refused(await idToken({ sub: 'frank', key: stranger, nonceFor: session.apiPublicKey }), session.apiPublicKey);
    expect(r.code).toBe('INVALID_OIDC_TOKEN');
    expect(r.message).toBe(`invalid OIDC token: bad signature: issuer ${ISSUER} has no signing key with kid "k9"`);
    expect(jwksFetches()).toBe(jwksBefore + 1);
  });
});

describe('stamp_login with an OIDC-attested stamp (as @turnkey/core loginWithOauth sends it)', () => {
  it('logs a sub-organization user in from the parent id; list_suborgs finds it by OIDC token; a wrong nonce is refused', async () => {
    const registration = await idToken({ sub: 'oidc-sub-user' });
    const { subOrganizationId, rootUserIds } = await sdkServerClient(sigil).createSubOrganization({
      subOrganizationName: 'oidc sub',
      rootUsers: [{ userName: 'oidc user', apiKeys: [], authenticators: [], oauthProviders: [{ providerName: 'Test IdP', oidcToken: registration }] }],
      rootQuorumThreshold: 1,
    });
    const found = await sdkServerClient(sigil).getSubOrgIds({ filterType: 'OIDC_TOKEN', filterValue: registration });
    expect(found.organizationIds).toEqual([subOrganizationId]);

    const key = newKey();
    const before = await dbSnapshot(sigil);
    const wrongNonce = await attestedStampLogin(sigil.url, key, await idToken({ sub: 'oidc-sub-user', nonceFor: newKey().apiPublicKey }), sigil.root.organizationId, 'STAMP_ATTESTED_SCHEME_P256_OIDC');
    expect(wrongNonce.status).toBe(400);
    expect(wrongNonce.body.message).toMatch(/invalid OIDC token: .*nonce/);
    expect(await dbSnapshot(sigil)).toEqual(before);

    const login = await attestedStampLogin(sigil.url, key, await idToken({ sub: 'oidc-sub-user', nonceFor: key.apiPublicKey }), sigil.root.organizationId, 'STAMP_ATTESTED_SCHEME_P256_OIDC');
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    const session = decodeToken(login.body.activity.result.stampLoginResult.session);
    expect(session).toMatchObject({ organization_id: subOrganizationId, user_id: rootUserIds[0], public_key: key.apiPublicKey });
    const me = await sdkServerClient(sigil, key, subOrganizationId).getWhoami({ organizationId: subOrganizationId });
    expect(me.userId).toBe(rootUserIds[0]);
  });
});
