// Session profiles through the official SDKs (swagger v1CreateSessionProfileIntent,
// v1SessionProfile, v1StampLoginIntent / v1OtpLoginIntentV2 sessionProfileId;
// docs/sessions-and-logins.md "Session profiles"; docs/reference/sessions.md "Session profiles"):
// create_session_profile / get_session_profile / get_session_profiles; a login naming a profile
// (stamp_login, otp_login over real SMTP) answers a session whose key expires at the shorter of the
// intent's and the profile's lifetime, whose JWT carries session_profile_id and scope as @turnkey/core's
// parseSession reads them, and which the pipeline holds to the scope: an in-scope activity completes, an
// out-of-scope one is refused and changes nothing, queries still read. A sub-organization sees and logs
// in with its parent's profile. A limited session cannot open an unlimited one. Bad input is refused and
// changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptOtpCodeToBundle, generateP256KeyPair, verifySessionJwtSignature } from '@turnkey/crypto';
import { ApiKeyStamper, SignatureFormat } from '@turnkey/api-key-stamper';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, newKey, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot, expectRefusedUnchanged } from '../helpers/db-snapshot.js';
import { codeIn, smtpEnv, startInbox, type Inbox } from '../helpers/mail.js';

let mail: Inbox;
let sigil: SigilInstance;

beforeAll(async () => {
  mail = await startInbox();
  sigil = await startSigil(smtpEnv(mail));
}, 60_000);

afterAll(async () => {
  await sigil?.stop();
  await mail?.close();
});

/** What @turnkey/core's parseSession does: plain atob of the payload, then JSON.parse. */
const decodeToken = (token: string) => JSON.parse(atob(token.split('.')[1]));

/** A v1 timestamp ({seconds, nanos}) in milliseconds. */
const millis = (t: { seconds: string; nanos: string | number }) => Number(t.seconds) * 1000 + Math.floor(Number(t.nanos) / 1e6);

// Users may create user tags and log in (AUTH); nothing else. The `>` and `?`-free comparison proves a
// scope with characters base64url would turn into `-`/`_` still reaches the client's atob intact.
const SCOPE = "(activity.resource == 'USER' && activity.action == 'CREATE') || (activity.resource == 'AUTH' && 2 > 1)";

async function createProfile(name: string, extra: { scope?: string; expirationSeconds?: string; notes?: string } = {}, key: KeyPair = sigil.root, organizationId?: string) {
  const res = await sdkServerClient(sigil, key, organizationId).createSessionProfile({ sessionProfileName: name, scope: extra.scope ?? SCOPE, ...extra });
  expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  return res.sessionProfileId;
}

/** The session key's API key record and its creation time. */
async function loginKey(userId: string, publicKey: string, organizationId?: string) {
  const { apiKeys } = await sdkServerClient(sigil, sigil.root, organizationId).getApiKeys({ userId, organizationId });
  const key = apiKeys.find((k) => k.credential.publicKey === publicKey)!;
  return { ...key, createdMs: millis(key.createdAt as never) };
}

describe('create_session_profile, get_session_profile, get_session_profiles', () => {
  it('creates a profile and reads it back as v1SessionProfile; bad input is refused and changes nothing', async () => {
    const api = sdkServerClient(sigil);
    const id = await createProfile('readers', { scope: "activity.action != 'EXPORT'", expirationSeconds: '3600', notes: 'no exports' });
    const { sessionProfile } = await api.getSessionProfile({ sessionProfileId: id });
    expect(sessionProfile).toEqual({
      sessionProfileId: id,
      sessionProfileName: 'readers',
      scope: "activity.action != 'EXPORT'",
      expirationSeconds: '3600',
      notes: 'no exports',
      createdAt: expect.objectContaining({ seconds: expect.any(String) }),
      updatedAt: expect.objectContaining({ seconds: expect.any(String) }),
    });
    const bare = await createProfile('bare', { scope: 'true' });
    const { sessionProfiles } = await api.getSessionProfiles({});
    expect(sessionProfiles.map((p) => p.sessionProfileId)).toEqual(expect.arrayContaining([id, bare]));
    const bareRecord = sessionProfiles.find((p) => p.sessionProfileId === bare)!;
    expect(bareRecord.expirationSeconds).toBeUndefined();
    expect(bareRecord.notes).toBeUndefined();

    const submit = (parameters: Record<string, unknown>) =>
      rawPost(`${sigil.url}/public/v1/submit/create_session_profile`, activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_SESSION_PROFILE', parameters), { key: sigil.root });
    const before = await dbSnapshot(sigil);
    await expectRefusedUnchanged(sigil, before, await submit({ sessionProfileName: 'broken', scope: "activity.resource == " }), 400, 3, 'REQUEST_INVALID', /^invalid session profile scope: invalid policy condition: /);
    await expectRefusedUnchanged(sigil, before, await submit({ sessionProfileName: 'counts', scope: 'controls.daily.count > 1' }), 400, 3, 'REQUEST_INVALID', /^invalid session profile scope: /);
    await expectRefusedUnchanged(sigil, before, await submit({ sessionProfileName: 'readers', scope: 'true' }), 400, 3, 'REQUEST_INVALID', /session profile name must be unique/);
    await expectRefusedUnchanged(sigil, before, await submit({ sessionProfileName: ' ', scope: 'true' }), 400, 3, 'REQUEST_INVALID', /sessionProfileName must not be empty/);
    await expectRefusedUnchanged(sigil, before, await submit({ sessionProfileName: 'x', scope: 'true', expirationSeconds: '15m' }), 400, 3, 'REQUEST_INVALID', /invalid session profile expiration/);
    await expectRefusedUnchanged(sigil, before, await submit({ sessionProfileName: 'x' }), 400, 3, 'REQUEST_INVALID', /missing parameter: parameters\.scope/);
    await expect(api.getSessionProfile({ sessionProfileId: 'no-such-profile' })).rejects.toThrow(/session profile not found: sessionProfileId no-such-profile/);
    // Immutable: the API offers no way to change or remove a profile.
    for (const path of ['update_session_profile', 'delete_session_profile']) {
      expect((await rawPost(`${sigil.url}/public/v1/submit/${path}`, activityBody(sigil.root.organizationId, 'X', {}), { key: sigil.root })).status).toBe(404);
    }
  });

  it('is governed by policies as SESSION_PROFILE / CREATE', async () => {
    const api = sdkServerClient(sigil);
    const key = newKey();
    const { userIds } = await api.createUsers({
      users: [{ userName: 'profile maker', apiKeys: [{ apiKeyName: 'k', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    await expect(sdkServerClient(sigil, key).createSessionProfile({ sessionProfileName: 'not yet', scope: 'true' })).rejects.toThrow(/no policy allows ACTIVITY_TYPE_CREATE_SESSION_PROFILE/);
    await api.createPolicy({
      policyName: 'profile makers',
      effect: 'EFFECT_ALLOW',
      condition: `activity.resource == 'SESSION_PROFILE' && activity.action == 'CREATE'`,
      consensus: `approvers.any(user, user.id == '${userIds[0]}')`,
      notes: '',
    });
    expect(await createProfile('made by a policy', { scope: 'true' }, key)).toEqual(expect.any(String));
  });
});

describe('stamp_login with a session profile', () => {
  it('expires at the shorter of the intent and the profile, carries the profile in its JWT and key, and is held to the scope', async () => {
    const api = sdkServerClient(sigil);
    const profileId = await createProfile('users only', { expirationSeconds: '300' });

    // Intent 600 s, profile 300 s: the profile's.
    const session = newKey();
    const res = await api.stampLogin({ publicKey: session.apiPublicKey, expirationSeconds: '600', sessionProfileId: profileId });
    const claims = decodeToken(res.session);
    expect(claims).toMatchObject({ public_key: session.apiPublicKey, session_type: 'SESSION_TYPE_READ_WRITE', user_id: sigil.root.userId, session_profile_id: profileId, scope: SCOPE });
    await expect(verifySessionJwtSignature(res.session, sigil.root.signerPublicKey)).resolves.toBe(true);
    const key = await loginKey(sigil.root.userId, session.apiPublicKey);
    expect(key.credential).toEqual({ publicKey: session.apiPublicKey, type: 'CREDENTIAL_TYPE_LOGIN', sessionProfileId: profileId });
    expect(key.expirationSeconds).toBe('300');
    expect(claims.exp).toBe(Math.floor((key.createdMs + 300_000) / 1000));
    // Intent 120 s, profile 300 s: the intent's. No intent: the profile's.
    const shorter = newKey();
    await api.stampLogin({ publicKey: shorter.apiPublicKey, expirationSeconds: '120', sessionProfileId: profileId });
    expect((await loginKey(sigil.root.userId, shorter.apiPublicKey)).expirationSeconds).toBe('120');
    const unstated = newKey();
    await api.stampLogin({ publicKey: unstated.apiPublicKey, sessionProfileId: profileId });
    expect((await loginKey(sigil.root.userId, unstated.apiPublicKey)).expirationSeconds).toBe('300');

    // In scope: a user tag. Queries read as before.
    const asSession = sdkServerClient(sigil, session);
    const tag = await asSession.createUserTag({ userTagName: 'in scope', userIds: [] });
    expect(tag.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect((await asSession.getWhoami({})).userId).toBe(sigil.root.userId);
    expect((await asSession.getPolicies({})).policies).toEqual(expect.any(Array));

    // Out of scope: a policy, even for the root user; the refusal changes nothing.
    const before = await dbSnapshot(sigil);
    const refused = await rawPost(
      `${sigil.url}/public/v1/submit/create_policy`,
      activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_POLICY_V3', { policyName: 'out of scope', effect: 'EFFECT_ALLOW', condition: 'true', notes: '' }),
      { key: session },
    );
    await expectRefusedUnchanged(
      sigil,
      before,
      refused,
      403,
      7,
      'REQUEST_NOT_AUTHORIZED',
      new RegExp(`ACTIVITY_TYPE_CREATE_POLICY_V3 is outside the scope of session profile ${profileId}, which this session was created with \\(its scope is false for this activity\\)`),
    );
    await expect(asSession.createPolicy({ policyName: 'via sdk', effect: 'EFFECT_ALLOW', condition: 'true', notes: '' })).rejects.toThrow(/outside the scope of session profile/);
    // A vote is an activity too (ACTIVITY / APPROVE): out of this scope.
    await expect(asSession.approveActivity({ fingerprint: `sha256:${'0'.repeat(64)}` })).rejects.toThrow(/ACTIVITY_TYPE_APPROVE_ACTIVITY is outside the scope of session profile/);
    // The same request stamped by the root user's own key completes: the scope is the session's alone.
    const direct = await api.createPolicy({ policyName: 'by the root key', effect: 'EFFECT_DENY', condition: 'false', notes: '' });
    expect(direct.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  });

  it('a limited session opens only sessions with its own profile', async () => {
    const api = sdkServerClient(sigil);
    const profileId = await createProfile('refreshable', { expirationSeconds: '600' });
    const other = await createProfile('another', { scope: 'true' });
    const session = newKey();
    await api.stampLogin({ publicKey: session.apiPublicKey, sessionProfileId: profileId });
    const asSession = sdkServerClient(sigil, session);

    // A refresh without a profile (as @turnkey/core refreshes a session that has none) keeps the profile.
    const refreshed = newKey();
    const res = await asSession.stampLogin({ publicKey: refreshed.apiPublicKey, expirationSeconds: '900' });
    expect(decodeToken(res.session)).toMatchObject({ session_profile_id: profileId, scope: SCOPE });
    expect((await loginKey(sigil.root.userId, refreshed.apiPublicKey)).expirationSeconds).toBe('600');
    await expect(sdkServerClient(sigil, refreshed).createPolicy({ policyName: 'still limited', effect: 'EFFECT_ALLOW', condition: 'true', notes: '' })).rejects.toThrow(
      /outside the scope of session profile/,
    );

    // So does a read-write session it makes for its user.
    const target = generateP256KeyPair();
    const rw = await asSession.createReadWriteSession({ targetPublicKey: target.publicKey });
    const { apiKey } = await api.getApiKey({ apiKeyId: rw.apiKeyId });
    expect(apiKey.credential).toMatchObject({ type: 'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256', sessionProfileId: profileId });
    expect(apiKey.expirationSeconds).toBe('600');

    // Another profile is refused, and changes nothing.
    const before = await dbSnapshot(sigil);
    const swap = await rawPost(
      `${sigil.url}/public/v1/submit/stamp_login`,
      activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_STAMP_LOGIN', { publicKey: newKey().apiPublicKey, sessionProfileId: other }),
      { key: session },
    );
    await expectRefusedUnchanged(sigil, before, swap, 400, 3, 'REQUEST_INVALID', /a session made with a profile can only open sessions with that profile/);

    // An unknown profile is refused and changes nothing.
    const unknown = await rawPost(
      `${sigil.url}/public/v1/submit/stamp_login`,
      activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_STAMP_LOGIN', { publicKey: newKey().apiPublicKey, sessionProfileId: 'no-such-profile' }),
      { key: sigil.root },
    );
    await expectRefusedUnchanged(sigil, before, unknown, 404, 5, 'NOT_FOUND', /session profile not found: sessionProfileId no-such-profile/);
  });
});

describe('a scope over the signing target', () => {
  it('sees the wallet an activity signs with, as a policy condition does; a batch over the wallet signs', async () => {
    const api = sdkServerClient(sigil);
    const account = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } as const;
    const hot = await api.createWallet({ walletName: 'hot', accounts: [account] });
    const cold = await api.createWallet({ walletName: 'cold', accounts: [account] });
    const profileId = await createProfile('hot wallet signer', { scope: `activity.action == 'SIGN' && wallet.id == '${hot.walletId}'` });
    const session = newKey();
    await api.stampLogin({ publicKey: session.apiPublicKey, sessionProfileId: profileId });
    const asSession = sdkServerClient(sigil, session);
    const sign = (signWith: string) => ({ signWith, payload: 'ab'.repeat(32), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL' as const, hashFunction: 'HASH_FUNCTION_NO_OP' as const });

    expect((await asSession.signRawPayload(sign(hot.addresses[0]))).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    await expect(asSession.signRawPayload(sign(cold.addresses[0]))).rejects.toThrow(/outside the scope of session profile .* \(its scope is false for this activity\)/);
    await expect(
      asSession.signRawPayloads({ signWith: hot.addresses[0], payloads: ['ab'.repeat(32), 'cd'.repeat(32)], encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' }),
    ).resolves.toMatchObject({ activity: { status: 'ACTIVITY_STATUS_COMPLETED' } });
    // An activity without a signing target has no `wallet`: the scope cannot be evaluated, which refuses.
    await expect(asSession.createUserTag({ userTagName: 'no wallet here', userIds: [] })).rejects.toThrow(/outside the scope of session profile .* \(its scope could not be evaluated on this activity: /);
  });
});

describe('session profiles and sub-organizations', () => {
  /** What @turnkey/core signs for otp_login: the login token usage, raw r‖s. */
  async function loginSignature(signer: KeyPair, sessionPublicKey: string, tokenId: string) {
    const message = JSON.stringify({ login: { publicKey: sessionPublicKey }, tokenId, type: 'USAGE_TYPE_LOGIN' });
    const signature = await new ApiKeyStamper(signer).sign(message, SignatureFormat.Raw);
    return { publicKey: signer.apiPublicKey, scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256' as const, message, signature };
  }

  it('a sub-organization reads its parent’s profile and its users log in with it by OTP', async () => {
    const api = sdkServerClient(sigil);
    const profileId = await createProfile('end users', { expirationSeconds: '240' });
    const email = 'erin@example.com';
    const device = newKey();
    const created = await api.createSubOrganization({
      subOrganizationName: 'erin org',
      rootUsers: [{ userName: 'erin', userEmail: email, apiKeys: [{ apiKeyName: 'device', publicKey: device.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
    });
    const sub = created.subOrganizationId;
    const userId = created.rootUserIds![0];
    // A sub-organization sees its own profiles first, then its parent's; the parent sees only its own.
    const own = await createProfile('sub own', { scope: 'true' }, device, sub);
    const listed = (await sdkServerClient(sigil, device, sub).getSessionProfiles({})).sessionProfiles.map((p) => p.sessionProfileId);
    expect(listed[0]).toBe(own);
    expect(listed).toContain(profileId);
    expect((await api.getSessionProfiles({})).sessionProfiles.map((p) => p.sessionProfileId)).not.toContain(own);
    await expect(api.getSessionProfile({ sessionProfileId: own })).rejects.toThrow(/session profile not found/);

    /** init_otp and verify_otp, then the otp_login body (not yet submitted) for a fresh session key. */
    const prepareLogin = async (sessionProfileId?: string) => {
      const before = mail.count(email);
      const init = await api.initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: email, appName: 'Sigil Test' } as never);
      const code = codeIn(await mail.next(email, before));
      const client = newKey();
      const { verificationToken } = await api.verifyOtp({
        otpId: init.otpId,
        encryptedOtpBundle: await encryptOtpCodeToBundle(code, init.otpEncryptionTargetBundle, client.apiPublicKey, sigil.root.signerPublicKey),
      });
      const session = newKey();
      const body = activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_OTP_LOGIN_V2', {
        verificationToken,
        publicKey: session.apiPublicKey,
        clientSignature: await loginSignature(client, session.apiPublicKey, decodeToken(verificationToken).id),
        expirationSeconds: '900',
        ...(sessionProfileId ? { sessionProfileId } : {}),
      });
      return { session, submit: () => rawPost(`${sigil.url}/public/v1/submit/otp_login`, body, { key: sigil.root }) };
    };

    // An unknown profile: refused, nothing changed (the verification token is not spent either).
    const bad = await prepareLogin('no-such-profile');
    const before = await dbSnapshot(sigil);
    await expectRefusedUnchanged(sigil, before, await bad.submit(), 404, 5, 'NOT_FOUND', /session profile not found: sessionProfileId no-such-profile is not a session profile of organization .* or its parent/);

    const { session, submit } = await prepareLogin(profileId);
    const res = await submit();
    expect(res.status).toBe(200);
    const claims = decodeToken(res.body.activity.result.otpLoginResult.session);
    expect(claims).toMatchObject({ organization_id: sub, user_id: userId, session_profile_id: profileId, scope: SCOPE });
    const key = await loginKey(userId, session.apiPublicKey, sub);
    expect(key.expirationSeconds).toBe('240'); // min(900, 240)
    expect(key.credential.sessionProfileId).toBe(profileId);

    // The sub-organization's user reads the parent's profile through the sub-organization.
    const asSession = sdkServerClient(sigil, session, sub);
    expect((await asSession.getSessionProfile({ sessionProfileId: profileId })).sessionProfile.sessionProfileName).toBe('end users');
    expect((await asSession.getSessionProfiles({})).sessionProfiles.map((p) => p.sessionProfileId)).toContain(profileId);
    // In scope in the sub-organization; out of scope refused.
    expect((await asSession.createUserTag({ userTagName: 'sub tag', userIds: [] })).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    await expect(asSession.createPolicy({ policyName: 'no', effect: 'EFFECT_ALLOW', condition: 'true', notes: '' })).rejects.toThrow(/outside the scope of session profile/);
  });
});
