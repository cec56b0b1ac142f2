// Bad input against a real `sigil serve`: every refusal is a JSON {code, message, details} with the
// right HTTP status and Turnkey error code, and leaves every database row exactly as it was.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateP256KeyPair } from '@turnkey/crypto';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient, type RawResponse } from '../helpers/clients.js';
import { dbSnapshot, expectRefusedUnchanged, type Snapshot } from '../helpers/db-snapshot.js';

let sigil: SigilInstance;
let before: Snapshot;

beforeAll(async () => {
  sigil = await startSigil();
});
afterAll(async () => {
  await sigil?.stop();
});
beforeEach(async () => {
  before = await dbSnapshot(sigil);
});

function submitUrl(op: string) {
  return `${sigil.url}/public/v1/submit/${op}`;
}

function tagBody(overrides: Partial<ReturnType<typeof activityBody>> = {}) {
  return { ...activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_USER_TAG', { userTagName: 'x', userIds: [] }), ...overrides };
}

const expectRefused = (res: RawResponse, status: number, code: number, turnkeyErrorCode: string, message: RegExp) =>
  expectRefusedUnchanged(sigil, before, res, status, code, turnkeyErrorCode, message);

describe('refusals change nothing', () => {
  it('missing stamp', async () => {
    const res = await rawPost(submitUrl('create_user_tag'), tagBody());
    await expectRefused(res, 401, 16, 'SIGNATURE_MISSING', /^cannot authenticate public API activity request without a stamp \(X-Stamp\/X-Stamp-Webauthn header\)$/);
  });

  it('malformed stamp', async () => {
    const res = await rawPost(submitUrl('create_user_tag'), tagBody(), { headers: { 'X-Stamp': 'not-a-stamp!!' } });
    await expectRefused(res, 401, 16, 'SIGNATURE_INVALID', /could not extract api key stamp/);
    const badScheme = Buffer.from(JSON.stringify({ publicKey: '02ab', scheme: 'SIGNATURE_SCHEME_NOPE', signature: '3006' })).toString('base64url');
    const res2 = await rawPost(submitUrl('create_user_tag'), tagBody(), { headers: { 'X-Stamp': badScheme } });
    await expectRefused(res2, 401, 16, 'SIGNATURE_INVALID', /unsupported signature scheme/);
  });

  it('signature over a different body', async () => {
    const body = tagBody();
    const res = await rawPost(submitUrl('create_user_tag'), body, {
      key: sigil.root,
      stampBody: JSON.stringify({ ...body, parameters: { userTagName: 'other', userIds: [] } }),
    });
    await expectRefused(res, 401, 16, 'SIGNATURE_INVALID', /^could not verify api key signature$/);
  });

  it('the same body re-serialized differently fails: stamps cover the raw bytes', async () => {
    const body = tagBody();
    const text = JSON.stringify(body);
    const res = await rawPost(submitUrl('create_user_tag'), JSON.stringify(body, null, 1), { key: sigil.root, stampBody: text });
    await expectRefused(res, 401, 16, 'SIGNATURE_INVALID', /could not verify api key signature/);
  });

  it('unknown public key', async () => {
    const k = generateP256KeyPair();
    const res = await rawPost(submitUrl('create_user_tag'), tagBody(), { key: { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey } });
    await expectRefused(res, 401, 16, 'PUBLIC_KEY_NOT_FOUND', /^could not find public key in organization or its parent organization$/);
  });

  it('expired API key', async () => {
    const k = generateP256KeyPair();
    const key = { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
    await sdkServerClient(sigil).createApiKeys({
      userId: sigil.root.userId,
      apiKeys: [{ apiKeyName: 'short-lived', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256', expirationSeconds: '1' }],
    });
    await expect(sdkServerClient(sigil, key).getWhoami({})).resolves.toMatchObject({ userId: sigil.root.userId });
    await new Promise((r) => setTimeout(r, 1100));
    before = await dbSnapshot(sigil);
    const res = await rawPost(submitUrl('create_user_tag'), tagBody(), { key });
    await expectRefused(res, 401, 16, 'API_KEY_EXPIRED', /Unauthenticated desc = expired api key publicKey/);
    await expect(sdkServerClient(sigil, key).getWhoami({})).rejects.toThrow(/expired api key/);
  });

  it('stale and future timestampMs', async () => {
    const stale = tagBody({ timestampMs: String(Date.now() - 61 * 60 * 1000) });
    await expectRefused(await rawPost(submitUrl('create_user_tag'), stale, { key: sigil.root }), 400, 3, 'INVALID_TIME', /too old/);
    const future = tagBody({ timestampMs: String(Date.now() + 6 * 60 * 1000) });
    await expectRefused(await rawPost(submitUrl('create_user_tag'), future, { key: sigil.root }), 400, 3, 'INVALID_TIME', /in the future/);
    const notNumber = tagBody({ timestampMs: 'yesterday' });
    await expectRefused(await rawPost(submitUrl('create_user_tag'), notNumber, { key: sigil.root }), 400, 3, 'REQUEST_INVALID', /timestampMs/);
    // Within the window (59 minutes old) is accepted.
    const ok = await rawPost(submitUrl('list_nothing'), tagBody(), { key: sigil.root });
    expect(ok.status).toBe(404);
  });

  it('wrong type for the path', async () => {
    const body = tagBody({ type: 'ACTIVITY_TYPE_CREATE_USERS_V4' });
    const res = await rawPost(submitUrl('create_user_tag'), body, { key: sigil.root });
    await expectRefused(res, 400, 3, 'REQUEST_INVALID', /invalid activity type "ACTIVITY_TYPE_CREATE_USERS_V4" for \/public\/v1\/submit\/create_user_tag/);
  });

  it('missing required parameter', async () => {
    const body = activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_USERS_V4', {
      users: [{ apiKeys: [], authenticators: [], oauthProviders: [], userTags: [], userEmail: 'a@b.co' }],
    });
    const res = await rawPost(submitUrl('create_users'), body, { key: sigil.root });
    await expectRefused(res, 400, 3, 'REQUEST_INVALID', /^bad request body: missing parameter: parameters\.users\[0\]\.userName$/);
    expect(res.body.details[1]).toEqual({
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{ field: 'parameters.users[0].userName', description: 'missing required field' }],
    });
    const noParams = { ...tagBody(), parameters: undefined };
    await expectRefused(await rawPost(submitUrl('create_user_tag'), noParams, { key: sigil.root }), 400, 3, 'REQUEST_INVALID', /missing parameter: parameters$/);
  });

  it('wrong field type and value outside an enum', async () => {
    const body = activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_USERS_V4', {
      users: [{ userName: 5, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    await expectRefused(await rawPost(submitUrl('create_users'), body, { key: sigil.root }), 400, 3, 'REQUEST_INVALID', /parameters\.users\[0\]\.userName: must be string/);
    const badCurve = activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_API_KEYS_V2', {
      userId: sigil.root.userId,
      apiKeys: [{ apiKeyName: 'k', publicKey: '02'.padEnd(66, '1'), curveType: 'API_KEY_CURVE_RSA' }],
    });
    await expectRefused(await rawPost(submitUrl('create_api_keys'), badCurve, { key: sigil.root }), 400, 3, 'REQUEST_INVALID', /curveType: must be one of API_KEY_CURVE_P256/);
  });

  it('domain rules: invalid API key public key, bad email and phone, unknown user, deleting a root quorum member', async () => {
    const badKey = activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_API_KEYS_V2', {
      userId: sigil.root.userId,
      // x = 2^256 - 1 exceeds the field prime, so no point has it.
      apiKeys: [{ apiKeyName: 'k', publicKey: '02'.padEnd(66, 'f'), curveType: 'API_KEY_CURVE_P256' }],
    });
    await expectRefused(await rawPost(submitUrl('create_api_keys'), badKey, { key: sigil.root }), 400, 3, 'REQUEST_INVALID', /invalid api key public key/);
    const badEmail = activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_UPDATE_USER_EMAIL', { userId: sigil.root.userId, userEmail: 'not an email' });
    await expectRefused(await rawPost(submitUrl('update_user_email'), badEmail, { key: sigil.root }), 400, 3, 'INVALID_EMAIL', /invalid email address/);
    const badPhone = activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER', { userId: sigil.root.userId, userPhoneNumber: '555-1234' });
    await expectRefused(await rawPost(submitUrl('update_user_phone_number'), badPhone, { key: sigil.root }), 400, 3, 'REQUEST_INVALID', /E\.164/);
    const unknownUser = activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_UPDATE_USER_NAME', { userId: '00000000-0000-4000-8000-000000000000', userName: 'x' });
    await expectRefused(await rawPost(submitUrl('update_user_name'), unknownUser, { key: sigil.root }), 404, 5, 'NOT_FOUND', /user not found/);
    const rootDelete = activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_DELETE_USERS', { userIds: [sigil.root.userId] });
    await expectRefused(await rawPost(submitUrl('delete_users'), rootDelete, { key: sigil.root }), 400, 3, 'REQUEST_INVALID', /^quorum users missing/);
  });

  it('a failure half-way through a multi-user create leaves no user behind', async () => {
    const k = generateP256KeyPair();
    const body = activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_USERS_V4', {
      users: [
        { userName: 'first', apiKeys: [{ apiKeyName: 'k', publicKey: k.publicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] },
        { userName: 'second', apiKeys: [], authenticators: [], oauthProviders: [], userTags: ['00000000-0000-4000-8000-000000000000'], userEmail: 's@example.com' },
      ],
    });
    await expectRefused(await rawPost(submitUrl('create_users'), body, { key: sigil.root }), 404, 5, 'NOT_FOUND', /user tag not found/);
  });

  it('unknown operation and unknown paths', async () => {
    const res = await rawPost(submitUrl('create_unicorns'), tagBody(), { key: sigil.root });
    await expectRefused(res, 404, 12, 'UNIMPLEMENTED', /^unknown operation: \/public\/v1\/submit\/create_unicorns$/);
    const q = await rawPost(`${sigil.url}/public/v1/query/list_unicorns`, { organizationId: sigil.root.organizationId }, { key: sigil.root });
    await expectRefused(q, 404, 12, 'UNIMPLEMENTED', /unknown operation/);
    const other = await rawPost(`${sigil.url}/public/v2/anything`, {});
    await expectRefused(other, 404, 5, 'NOT_FOUND', /no such endpoint/);
  });

  it('oversized body', async () => {
    const huge = tagBody({ parameters: { userTagName: 'x'.repeat(3 * 1024 * 1024), userIds: [] } as never });
    const res = await rawPost(submitUrl('create_user_tag'), huge, { key: sigil.root });
    await expectRefused(res, 413, 3, 'BODY_TOO_LARGE', /request body too large: the limit is 2097152 bytes/);
  });

  it('body that is not JSON, or not an object', async () => {
    await expectRefused(await rawPost(submitUrl('create_user_tag'), '{"type":', { key: sigil.root }), 400, 3, 'REQUEST_INVALID', /not valid JSON/);
    await expectRefused(await rawPost(submitUrl('create_user_tag'), '[1,2]', { key: sigil.root }), 400, 3, 'REQUEST_INVALID', /must be a JSON object/);
  });

  it('organization that does not exist, and a malformed organization id', async () => {
    const body = tagBody({ organizationId: '00000000-0000-4000-8000-000000000000' });
    await expectRefused(await rawPost(submitUrl('create_user_tag'), body, { key: sigil.root }), 404, 5, 'ORGANIZATION_NOT_FOUND', /^no organization found with the given ID/);
    const malformed = tagBody({ organizationId: 'acme' });
    await expectRefused(await rawPost(submitUrl('create_user_tag'), malformed, { key: sigil.root }), 400, 3, 'INVALID_ORGANIZATION_ID', /^malformed organization ID provided$/);
  });

  it('non-root user trying an activity', async () => {
    const k = generateP256KeyPair();
    const key = { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
    const { userIds } = await sdkServerClient(sigil).createUsers({
      users: [{ userName: 'plain', apiKeys: [{ apiKeyName: 'k', publicKey: k.publicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    before = await dbSnapshot(sigil);
    const res = await rawPost(submitUrl('create_user_tag'), tagBody(), { key });
    await expectRefused(res, 403, 7, 'REQUEST_NOT_AUTHORIZED', /^You don't have sufficient permissions to take this action\./);
    expect(res.body.details[2].reason).toMatch(/^no policy allows ACTIVITY_TYPE_CREATE_USER_TAG/);
    const rename = activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_UPDATE_ORGANIZATION_NAME', { organizationName: 'mine now' });
    const renamed = await rawPost(submitUrl('update_organization_name'), rename, { key });
    await expectRefused(renamed, 403, 7, 'REQUEST_NOT_AUTHORIZED', /sufficient permissions/);
    expect(renamed.body.details[2].reason).toBe('only the root quorum can run ACTIVITY_TYPE_UPDATE_ORGANIZATION_NAME');
    // Reads are not policy-governed: the plain user may query its organization.
    const me = await sdkServerClient(sigil, key).getWhoami({});
    expect(me.userId).toBe(userIds[0]);
  });

  it('the SDK surfaces refusals as TurnkeyRequestError with code and details', async () => {
    const k = generateP256KeyPair();
    const api = sdkServerClient(sigil, { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey });
    await expect(api.getWhoami({})).rejects.toMatchObject({
      name: 'TurnkeyRequestError',
      code: 16,
      message: expect.stringContaining('Turnkey error 16: could not find public key in organization or its parent organization'),
    });
  });
});

describe('transport', () => {
  it('answers CORS preflights for every header the SDKs send, and never redirects', async () => {
    const res = await fetch(submitUrl('create_user_tag'), {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-stamp,x-stamp-webauthn,x-client-version',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    const allowed = (res.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    for (const h of ['x-stamp', 'x-stamp-webauthn', 'x-stamp-attested', 'x-client-version', 'x-session', 'x-auth-proxy-config-id', 'x-captcha-token']) {
      expect(allowed).toContain(h);
    }
    const slash = await fetch(`${submitUrl('create_user_tag')}/`, { method: 'POST', body: '{}', redirect: 'manual' });
    expect(slash.status).toBe(404);
    expect(await slash.json()).toMatchObject({ code: 5 });
  });

  it('health and the deployment key', async () => {
    expect(await (await fetch(`${sigil.url}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${sigil.url}/readyz`)).json()).toEqual({ status: 'ready' });
    expect(await (await fetch(`${sigil.url}/.well-known/sigil.json`)).json()).toEqual({
      signerPublicKey: sigil.root.signerPublicKey,
      // Its private half is sealed in the database like any secret, under the deployment's seal.
      signerKey: { sealedBy: 'static', storedIn: 'database' },
      // The key webhook deliveries are signed with (docs/webhooks.md "Webhooks").
      webhookVerificationKey: { keyId: expect.stringMatching(/^sigil-webhook-[0-9a-f]{16}$/), publicKey: expect.stringMatching(/^[0-9a-f]{64}$/), algorithm: 'ed25519' },
      // The embedded-wallet frames (docs/embedded-wallets.md "Embedded wallets: Sigil's frames"), on
      // their own port.
      frames: {
        export: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/export$/),
        import: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/import$/),
        exportAndSign: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/export-and-sign$/),
        auth: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/auth$/),
      },
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
    });
    expect((await fetch(`${sigil.authProxyUrl}/healthz`)).status).toBe(200);
  });
});
