// OAuth 2.0 credentials and oauth2_authenticate end to end (docs/reference/organizations.md
// "Smart contract interfaces and OAuth 2.0 credentials"; docs/reference/bundles.md "Other signed
// tokens"): credentials are created, read, listed, updated and deleted through @turnkey/sdk-server with
// the client secret encrypted by @turnkey/crypto's encryptOauth2ClientSecret to the deployment signer
// key (the SDK's override); the secret never comes back and is not in the database in plaintext or as
// the submitted envelope. oauth2_authenticate talks to a real HTTP server on loopback playing X's and
// Discord's token and user endpoints, which checks the client's Basic credentials, the code, the
// redirect_uri and the PKCE S256 verifier as the providers do; the answered id_token verifies with jose
// against the deployment signer key published at /.well-known/sigil.json, carries the documented claims,
// and logs in with oauth_login. Refusals are clear errors that change nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { compactVerify, decodeProtectedHeader, importJWK } from 'jose';
import { decryptCredentialBundle, encryptOauth2ClientSecret, generateP256KeyPair } from '@turnkey/crypto';
import { runSigil, startSigil, type SigilInstance } from '../helpers/sigil.js';
import { TurnkeySDKClientBase } from '@turnkey/core/dist/__generated__/sdk-client-base.mjs';
import { activityBody, attestedStampLogin, rawPost, sdkServerClient } from '../helpers/clients.js';
import { dbSnapshot, dbText } from '../helpers/db-snapshot.js';

// ---------------------------------------------------------------------------------------------------
// A provider on loopback: X's POST /2/oauth2/token and GET /2/users/me, Discord's
// POST /api/oauth2/token and GET /api/users/@me.

interface Grant {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  user: Record<string, unknown>;
}

const clients = new Map<string, string>(); // client id → secret, as registered with the provider
const grants = new Map<string, Grant>(); // authorization code → what the user consented to
const tokens = new Map<string, Record<string, unknown>>(); // access token → user
const tokenRequests: { path: string; authorization: string | undefined; form: URLSearchParams }[] = [];
let failTokenEndpoint: number | undefined;
let provider: Server;
let providerUrl: string;

const b64url = (b: Buffer) => b.toString('base64url');
const s256 = (verifier: string) => b64url(createHash('sha256').update(verifier, 'ascii').digest());

/** What the user's browser brings back from the provider's consent screen: a code bound to a PKCE challenge. */
function authorize(clientId: string, redirectUri: string, user: Record<string, unknown>) {
  const codeVerifier = b64url(randomBytes(32));
  const authCode = b64url(randomBytes(24));
  grants.set(authCode, { clientId, redirectUri, codeChallenge: s256(codeVerifier), user });
  return { authCode, codeVerifier };
}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body;
}

async function handleToken(req: IncomingMessage): Promise<[number, unknown]> {
  const form = new URLSearchParams(await readBody(req));
  tokenRequests.push({ path: req.url ?? '', authorization: req.headers.authorization, form });
  if (failTokenEndpoint) return [failTokenEndpoint, { error: 'server_error' }];
  if (req.headers['content-type'] !== 'application/x-www-form-urlencoded') return [400, { error: 'invalid_request', error_description: 'form body expected' }];
  // Confidential clients authenticate with HTTP Basic (RFC 6749 §2.3.1), as X requires.
  const m = /^Basic (.+)$/.exec(req.headers.authorization ?? '');
  const [id, secret] = m ? Buffer.from(m[1], 'base64').toString('utf8').split(':').map(decodeURIComponent) : [];
  if (!id || clients.get(id) !== secret) return [401, { error: 'invalid_client', error_description: 'Missing valid authorization header' }];
  if (form.get('grant_type') !== 'authorization_code') return [400, { error: 'unsupported_grant_type' }];
  const code = form.get('code') ?? '';
  const grant = grants.get(code);
  if (!grant || grant.clientId !== id) return [400, { error: 'invalid_grant', error_description: 'Value passed for the authorization code was invalid.' }];
  if (form.get('redirect_uri') !== grant.redirectUri) return [400, { error: 'invalid_grant', error_description: 'redirect_uri does not match' }];
  if (s256(form.get('code_verifier') ?? '') !== grant.codeChallenge) return [400, { error: 'invalid_grant', error_description: 'code_verifier does not match the code_challenge' }];
  grants.delete(code); // a code is good once
  const accessToken = b64url(randomBytes(32));
  tokens.set(accessToken, grant.user);
  return [200, { token_type: 'bearer', expires_in: 7200, access_token: accessToken, scope: 'tweet.read users.read' }];
}

function handleMe(req: IncomingMessage, shape: 'x' | 'discord'): [number, unknown] {
  const user = tokens.get(/^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '');
  if (!user) return [401, { title: 'Unauthorized', detail: 'Unauthorized', status: 401 }];
  return [200, shape === 'x' ? { data: user } : user];
}

beforeAll(async () => {
  provider = createServer(async (req, res) => {
    let answer: [number, unknown] = [404, { error: 'not_found' }];
    if (req.method === 'POST' && (req.url === '/2/oauth2/token' || req.url === '/api/oauth2/token')) answer = await handleToken(req);
    else if (req.method === 'GET' && req.url === '/2/users/me') answer = handleMe(req, 'x');
    else if (req.method === 'GET' && req.url === '/api/users/@me') answer = handleMe(req, 'discord');
    res.writeHead(answer[0], { 'content-type': 'application/json' }).end(JSON.stringify(answer[1]));
  });
  await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
  providerUrl = `http://127.0.0.1:${(provider.address() as { port: number }).port}`;
  sigil = await startSigil({
    SIGIL_OAUTH2_X_TOKEN_URL: `${providerUrl}/2/oauth2/token`,
    SIGIL_OAUTH2_X_USERINFO_URL: `${providerUrl}/2/users/me`,
    SIGIL_OAUTH2_DISCORD_TOKEN_URL: `${providerUrl}/api/oauth2/token`,
    SIGIL_OAUTH2_DISCORD_USERINFO_URL: `${providerUrl}/api/users/@me`,
  });
}, 60_000);

afterAll(async () => {
  await sigil?.stop();
  await new Promise<void>((resolve) => (provider ? provider.close(() => resolve()) : resolve()));
});

let sigil: SigilInstance;

/** The deployment's receiving key, as a client learns it. */
async function publishedSignerKey(): Promise<string> {
  const wellKnown = (await (await fetch(`${sigil.url}/.well-known/sigil.json`)).json()) as { signerPublicKey: string };
  return wellKnown.signerPublicKey;
}

/** A provider application: registered with the provider, its secret encrypted to Sigil. */
async function application(prefix: string) {
  const clientId = `${prefix}-${b64url(randomBytes(9))}`;
  const clientSecret = `${prefix}-secret-${b64url(randomBytes(24))}`;
  clients.set(clientId, clientSecret);
  const encryptedClientSecret = await encryptOauth2ClientSecret(clientSecret, await publishedSignerKey());
  return { clientId, clientSecret, encryptedClientSecret };
}

async function createCredential(providerName: 'OAUTH2_PROVIDER_X' | 'OAUTH2_PROVIDER_DISCORD', prefix = 'app') {
  const app = await application(prefix);
  const { oauth2CredentialId } = await sdkServerClient(sigil).createOauth2Credential({
    provider: providerName,
    clientId: app.clientId,
    encryptedClientSecret: app.encryptedClientSecret,
  });
  return { ...app, oauth2CredentialId };
}

const submit = (type: string, parameters: unknown) =>
  rawPost(`${sigil.url}/public/v1/submit/${type.replace('ACTIVITY_TYPE_', '').toLowerCase()}`, activityBody(sigil.root.organizationId, type, parameters), { key: sigil.root });

const errorCode = (body: any) => body?.details?.[0]?.turnkeyErrorCode;

/** nonce = hex(sha256(publicKeyHex)), what oauth_login checks (docs/reference/sessions.md "Login activities"). */
const nonceFor = (publicKey: string) => createHash('sha256').update(publicKey, 'utf8').digest('hex');

async function verifyWithSigner(token: string) {
  const pub = Buffer.from(await publishedSignerKey(), 'hex');
  const key = await importJWK({ kty: 'EC', crv: 'P-256', x: b64url(pub.subarray(1, 33)), y: b64url(pub.subarray(33, 65)) }, 'ES256');
  const { payload, protectedHeader } = await compactVerify(token, key, { algorithms: ['ES256'] });
  return { header: protectedHeader, claims: JSON.parse(Buffer.from(payload).toString('utf8')) };
}

describe('OAuth 2.0 credentials', () => {
  it('create, get, list, update and delete through the SDK; the secret never comes back and is not stored readable', async () => {
    const api = sdkServerClient(sigil);
    const x = await createCredential('OAUTH2_PROVIDER_X', 'crud');
    expect(x.oauth2CredentialId).toMatch(/^[0-9a-f-]{36}$/);

    const { oauth2Credential } = await api.getOauth2Credential({ oauth2CredentialId: x.oauth2CredentialId });
    expect(oauth2Credential).toMatchObject({
      oauth2CredentialId: x.oauth2CredentialId,
      organizationId: sigil.root.organizationId,
      provider: 'OAUTH2_PROVIDER_X',
      clientId: x.clientId,
      encryptedClientSecret: '<redacted>',
      createdAt: { seconds: expect.any(String), nanos: expect.any(String) },
    });

    const discord = await application('crud-discord');
    const updated = await api.updateOauth2Credential({
      oauth2CredentialId: x.oauth2CredentialId,
      provider: 'OAUTH2_PROVIDER_DISCORD',
      clientId: discord.clientId,
      encryptedClientSecret: discord.encryptedClientSecret,
    });
    expect(updated.oauth2CredentialId).toBe(x.oauth2CredentialId);
    const { oauth2Credentials } = await api.listOauth2Credentials({});
    const listed = oauth2Credentials.find((c) => c.oauth2CredentialId === x.oauth2CredentialId);
    expect(listed).toMatchObject({ provider: 'OAUTH2_PROVIDER_DISCORD', clientId: discord.clientId, encryptedClientSecret: '<redacted>' });

    // Neither secret, nor the envelopes that carried them, are anywhere in responses or the database.
    const activities = JSON.stringify(await api.getActivities({}));
    const text = await dbText(sigil);
    for (const haystack of [activities, text, JSON.stringify(oauth2Credentials)]) {
      for (const needle of [x.clientSecret, discord.clientSecret, x.encryptedClientSecret.slice(40, 120), discord.encryptedClientSecret.slice(40, 120)]) {
        expect(haystack).not.toContain(needle);
      }
    }
    const row = (await dbSnapshot(sigil)).oauth2_credentials.find((r: any) => r.id === x.oauth2CredentialId) as { client_secret: string };
    // Sealed with the organization's own key, which the ciphertext names (docs/secrets.md "At rest").
    expect(row.client_secret).toMatch(/^v3:[0-9a-f-]{36}\.[0-9a-f]{24}:[A-Za-z0-9+/=]+$/);

    const deleted = await api.deleteOauth2Credential({ oauth2CredentialId: x.oauth2CredentialId });
    expect(deleted.oauth2CredentialId).toBe(x.oauth2CredentialId);
    await expect(api.getOauth2Credential({ oauth2CredentialId: x.oauth2CredentialId })).rejects.toThrow(/oauth2 credential not found/);
    expect((await api.listOauth2Credentials({})).oauth2Credentials.map((c) => c.oauth2CredentialId)).not.toContain(x.oauth2CredentialId);
  });

  it('refuses a secret not encrypted to this deployment, empty or duplicate client ids and unknown credentials, changing nothing', async () => {
    const existing = await createCredential('OAUTH2_PROVIDER_X', 'dup');
    const before = await dbSnapshot(sigil);

    // encryptOauth2ClientSecret without the override encrypts to Turnkey's TLS fetcher key.
    const toTurnkey = await submit('ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL', {
      provider: 'OAUTH2_PROVIDER_X',
      clientId: 'other-client',
      encryptedClientSecret: await encryptOauth2ClientSecret('s3cret'),
    });
    expect(toTurnkey.status).toBe(400);
    expect(toTurnkey.body.message).toMatch(/encryptedClientSecret could not be decrypted: .*encryptOauth2ClientSecret\(secret, signerPublicKey\)/);

    const garbage = await submit('ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL', { provider: 'OAUTH2_PROVIDER_X', clientId: 'c', encryptedClientSecret: 'zz' });
    expect(garbage.body.message).toMatch(/encryptedClientSecret could not be decrypted: the envelope is not hex/);

    const app = await application('refused');
    const emptyId = await submit('ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL', { provider: 'OAUTH2_PROVIDER_X', clientId: '', encryptedClientSecret: app.encryptedClientSecret });
    expect(emptyId.status).toBe(400);
    expect(emptyId.body.message).toBe('client_id must be set');

    const badProvider = await submit('ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL', { provider: 'OAUTH2_PROVIDER_GITHUB', clientId: 'c', encryptedClientSecret: app.encryptedClientSecret });
    expect(badProvider.status).toBe(400);
    expect(badProvider.body.message).toMatch(/parameters\.provider: must be one of OAUTH2_PROVIDER_X, OAUTH2_PROVIDER_DISCORD/);

    const dup = await submit('ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL', {
      provider: 'OAUTH2_PROVIDER_X',
      clientId: existing.clientId,
      encryptedClientSecret: app.encryptedClientSecret,
    });
    expect(dup.status).toBe(409);
    expect(dup.body.message).toMatch(/already exists in this organization/);

    const unknown = '5f0d2c1e-0000-4000-8000-000000000000';
    const update = await submit('ACTIVITY_TYPE_UPDATE_OAUTH2_CREDENTIAL', {
      oauth2CredentialId: unknown,
      provider: 'OAUTH2_PROVIDER_X',
      clientId: 'c',
      encryptedClientSecret: app.encryptedClientSecret,
    });
    expect(update.status).toBe(404);
    expect(errorCode(update.body)).toBe('OAUTH2_CREDENTIAL_NOT_FOUND');
    const del = await submit('ACTIVITY_TYPE_DELETE_OAUTH2_CREDENTIAL', { oauth2CredentialId: unknown });
    expect(del.status).toBe(404);
    expect(errorCode(del.body)).toBe('OAUTH2_CREDENTIAL_NOT_FOUND');
    const emptyDelete = await submit('ACTIVITY_TYPE_DELETE_OAUTH2_CREDENTIAL', { oauth2CredentialId: '' });
    expect(emptyDelete.body.message).toBe('oauth2_credential_id must be set');
    const get = await rawPost(`${sigil.url}/public/v1/query/get_oauth2_credential`, { organizationId: sigil.root.organizationId, oauth2CredentialId: unknown }, { key: sigil.root });
    expect(get.status).toBe(404);
    expect(errorCode(get.body)).toBe('OAUTH2_CREDENTIAL_NOT_FOUND');

    expect(await dbSnapshot(sigil)).toEqual(before);
  });
});

describe('oauth2_authenticate', () => {
  it('exchanges an X code with PKCE and answers an id_token signed by the deployment signer, which logs in with oauth_login', async () => {
    const cred = await createCredential('OAUTH2_PROVIDER_X', 'x');
    const redirectUri = 'https://app.example/oauth/callback';
    const { authCode, codeVerifier } = authorize(cred.clientId, redirectUri, { id: '1234567890', name: 'Ada', username: 'ada' });
    const session = generateP256KeyPair();
    const nonce = nonceFor(session.publicKey);
    const bearerTarget = generateP256KeyPair();

    const api = sdkServerClient(sigil);
    const requestsBefore = tokenRequests.length;
    const { oidcToken } = await api.oauth2Authenticate({
      oauth2CredentialId: cred.oauth2CredentialId,
      authCode,
      redirectUri,
      codeVerifier,
      nonce,
      bearerTokenTargetPublicKey: bearerTarget.publicKeyUncompressed,
    });

    // The provider saw the client's own Basic credentials, the code, its redirect_uri and the verifier.
    const seen = tokenRequests.slice(requestsBefore);
    expect(seen).toHaveLength(1);
    expect(seen[0].path).toBe('/2/oauth2/token');
    expect(seen[0].authorization).toBe(`Basic ${Buffer.from(`${cred.clientId}:${cred.clientSecret}`).toString('base64')}`);
    expect(Object.fromEntries(seen[0].form)).toMatchObject({ grant_type: 'authorization_code', code: authCode, redirect_uri: redirectUri, code_verifier: codeVerifier });

    const { header, claims } = await verifyWithSigner(oidcToken);
    expect(header).toEqual({ alg: 'ES256', typ: 'JWT' });
    expect(decodeProtectedHeader(oidcToken).alg).toBe('ES256');
    expect(claims).toMatchObject({ iss: 'urn:sigil:oauth2', aud: cred.clientId, sub: 'x:1234567890', nonce });
    expect(claims.exp - claims.iat).toBe(600);
    expect(Math.abs(claims.iat - Date.now() / 1000)).toBeLessThan(60);
    expect(claims.email).toBeUndefined(); // X's users/me gives no email with tweet.read + users.read
    // The provider's access token, encrypted to the caller's key as a credential bundle.
    const accessToken = Buffer.from(decryptCredentialBundle(claims.encrypted_bearer_token, bearerTarget.privateKey), 'hex').toString('utf8');
    expect(tokens.has(accessToken)).toBe(true);

    // The code and verifier are not kept in the activity record.
    const text = await dbText(sigil);
    expect(text).not.toContain(authCode);
    expect(text).not.toContain(codeVerifier);

    // A user who registered this identity logs in with the token (oauth_login checks iss/aud/sub and the nonce).
    const { userIds } = await api.createUsers({
      users: [
        {
          userName: 'ada',
          apiKeys: [],
          authenticators: [],
          oauthProviders: [{ providerName: 'X', oidcClaims: { iss: 'urn:sigil:oauth2', aud: cred.clientId, sub: 'x:1234567890' } }],
          userTags: [],
        },
      ],
    });
    const login = await api.oauthLogin({ oidcToken, publicKey: session.publicKey });
    const payload = JSON.parse(atob(login.session.split('.')[1]));
    expect(payload).toMatchObject({ user_id: userIds[0], public_key: session.publicKey });
  });

  it('reads the Discord user with its email', async () => {
    const cred = await createCredential('OAUTH2_PROVIDER_DISCORD', 'discord');
    const redirectUri = 'https://app.example/discord';
    const { authCode, codeVerifier } = authorize(cred.clientId, redirectUri, { id: '80351110224678912', username: 'nelly', email: 'nelly@example.com', verified: true });
    const { oidcToken } = await sdkServerClient(sigil).oauth2Authenticate({ oauth2CredentialId: cred.oauth2CredentialId, authCode, redirectUri, codeVerifier, nonce: 'n-1' });
    const { claims } = await verifyWithSigner(oidcToken);
    expect(claims).toMatchObject({ iss: 'urn:sigil:oauth2', aud: cred.clientId, sub: 'discord:80351110224678912', nonce: 'n-1', email: 'nelly@example.com', email_verified: true });
    expect(claims.encrypted_bearer_token).toBeUndefined();
    expect(tokenRequests.at(-1)!.path).toBe('/api/oauth2/token');
  });

  it('refuses missing fields, unknown credentials, codes the provider rejects and a failing provider, changing nothing', async () => {
    const cred = await createCredential('OAUTH2_PROVIDER_X', 'refuse');
    const redirectUri = 'https://app.example/cb';
    const { authCode, codeVerifier } = authorize(cred.clientId, redirectUri, { id: '42' });
    const good = { oauth2CredentialId: cred.oauth2CredentialId, authCode, redirectUri, codeVerifier, nonce: 'abc' };
    const before = await dbSnapshot(sigil);
    const attempt = (params: Record<string, unknown>) => submit('ACTIVITY_TYPE_OAUTH2_AUTHENTICATE', params);

    for (const [field, message] of [
      ['oauth2CredentialId', 'oauth2_credential_id must be set'],
      ['authCode', 'auth_code must be set'],
      ['redirectUri', 'redirect_uri must be set'],
      ['codeVerifier', 'code_verifier must be set'],
    ]) {
      const res = await attempt({ ...good, [field]: '' });
      expect(res.status, field).toBe(400);
      expect(res.body.message).toBe(message);
    }
    const missing = await attempt({ ...good, authCode: undefined });
    expect(missing.body.message).toMatch(/missing parameter: parameters\.authCode/);
    const badTarget = await attempt({ ...good, bearerTokenTargetPublicKey: '02abcd' });
    expect(badTarget.body.message).toMatch(/bearerTokenTargetPublicKey must be a P-256 public key/);

    const unknown = await attempt({ ...good, oauth2CredentialId: '5f0d2c1e-0000-4000-8000-000000000001' });
    expect(unknown.status).toBe(404);
    expect(errorCode(unknown.body)).toBe('OAUTH2_CREDENTIAL_NOT_FOUND');

    // The provider checks PKCE: a wrong verifier is invalid_grant, and so is a wrong redirect_uri.
    const wrongVerifier = await attempt({ ...good, codeVerifier: b64url(randomBytes(32)) });
    expect(wrongVerifier.status).toBe(400);
    expect(wrongVerifier.body.message).toMatch(/oauth2 token exchange with X failed: the provider refused the authorization code \(invalid_grant: code_verifier does not match/);
    const wrongRedirect = await attempt({ ...good, redirectUri: 'https://evil.example/cb' });
    expect(wrongRedirect.body.message).toMatch(/invalid_grant: redirect_uri does not match/);

    failTokenEndpoint = 503;
    try {
      const down = await attempt(good);
      expect(down.status).toBe(502);
      expect(down.body.message).toMatch(/oauth2 token exchange with X failed: server_error/);
    } finally {
      failTokenEndpoint = undefined;
    }
    // No message carries the secret, the code or the verifier.
    for (const res of [wrongVerifier, wrongRedirect]) {
      expect(JSON.stringify(res.body)).not.toContain(cred.clientSecret);
      expect(JSON.stringify(res.body)).not.toContain(authCode);
    }
    expect(await dbSnapshot(sigil)).toEqual(before);

    // The code was never spent by the refusals: it still works.
    const ok = await attempt(good);
    expect(ok.status).toBe(200);
    expect(ok.body.activity.result.oauth2AuthenticateResult.oidcToken).toMatch(/^ey/);
    expect(ok.body.activity.intent.oauth2AuthenticateIntent).toMatchObject({ authCode: '<redacted>', codeVerifier: '<redacted>', redirectUri });
  });
});

describe('X login through the auth proxy (as @turnkey/react-wallet-kit and @turnkey/core do it)', () => {
  it('oauth2_authenticate → signup_v2 with the token → account by OIDC token → stamp_login with an OIDC-attested stamp; oauth_login too', async () => {
    const r = runSigil(['proxy-config', 'create', '--data-dir', sigil.dataDir, '--json', '--methods', 'x,passkey'], sigil.env);
    expect(r.status, r.stderr).toBe(0);
    const { configId } = JSON.parse(r.stdout);
    const core = new TurnkeySDKClientBase({ apiBaseUrl: sigil.url, organizationId: sigil.root.organizationId, authProxyUrl: sigil.authProxyUrl, authProxyConfigId: configId });
    const cred = await createCredential('OAUTH2_PROVIDER_X', 'proxy');
    const redirectUri = 'https://app.example/oauth/callback';
    const session = generateP256KeyPair();
    const key = { apiPublicKey: session.publicKey, apiPrivateKey: session.privateKey };

    const code1 = authorize(cred.clientId, redirectUri, { id: '777', name: 'Grace', username: 'grace' });
    const { oidcToken } = await core.proxyOAuth2Authenticate({
      provider: 'OAUTH2_PROVIDER_X',
      clientId: cred.clientId,
      authCode: code1.authCode,
      codeVerifier: code1.codeVerifier,
      redirectUri,
      nonce: nonceFor(session.publicKey),
    });
    expect((await core.proxyGetAccount({ filterType: 'OIDC_TOKEN', filterValue: oidcToken })).organizationId ?? '').toBe('');
    const signup = await core.proxySignupV2({ userName: 'grace', apiKeys: [], authenticators: [], oauthProviders: [{ providerName: 'X', oidcToken }] } as never);
    expect((await core.proxyGetAccount({ filterType: 'OIDC_TOKEN', filterValue: oidcToken })).organizationId).toBe(signup.organizationId);

    const login = await attestedStampLogin(sigil.url, key, oidcToken, sigil.root.organizationId, 'STAMP_ATTESTED_SCHEME_P256_OIDC');
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    expect(JSON.parse(atob(login.body.activity.result.stampLoginResult.session.split('.')[1]))).toMatchObject({ organization_id: signup.organizationId, user_id: signup.userId });

    const other = generateP256KeyPair();
    const code2 = authorize(cred.clientId, redirectUri, { id: '777', name: 'Grace', username: 'grace' });
    const { oidcToken: second } = await core.proxyOAuth2Authenticate({ provider: 'OAUTH2_PROVIDER_X', clientId: cred.clientId, authCode: code2.authCode, codeVerifier: code2.codeVerifier, redirectUri, nonce: nonceFor(other.publicKey) });
    const { session: jwt } = await core.proxyOAuthLogin({ oidcToken: second, publicKey: other.publicKey });
    expect(JSON.parse(atob(jwt.split('.')[1]))).toMatchObject({ organization_id: signup.organizationId, public_key: other.publicKey });

    // A forged token (not signed by a trusted issuer) registers nothing.
    const before = await dbSnapshot(sigil);
    const [h, p] = oidcToken.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...JSON.parse(atob(p)), sub: 'x:1' })).toString('base64url')}.${oidcToken.split('.')[2]}`;
    await expect(core.proxySignupV2({ apiKeys: [], authenticators: [], oauthProviders: [{ providerName: 'X', oidcToken: forged }] } as never)).rejects.toThrow(/invalid OIDC token/);
    expect(await dbSnapshot(sigil)).toEqual(before);
  });
});
