// Regression tests of the identity flaws (docs/compatibility.md "Email and SMS logins through the
// parent"; docs/mfa.md "MFA policies"; docs/auth-proxy.md "The auth proxy"), each an attack driven
// through the official clients against a real `sigil serve`, seen failing before its fix:
//  - flaw 1: a sub-organization's owner writes a victim's email into their sub-organization
//    (create_users, update_user_email); the victim's email logins through the parent (otp_login V2
//    and the legacy type through @turnkey/sdk-server, the attested stamp_login @turnkey/core sends,
//    otp_auth, email_auth, the auth proxy's account lookup) must neither land there, nor mark the
//    decoy verified, nor fail for "more than one user" once the victim has an account of their own;
//  - flaw 2: with docs/mfa.md's example MFA policy ("signing needs a passkey", guarding MFA_POLICY),
//    the API key alone cannot register the passkey (or API key, or session) that approves its own
//    waiting signature (or links an OAuth identity to log in with), and a credential created after
//    an activity was submitted never counts for it;
//  - flaw 6: the auth proxy refuses a signup that uses none of the configuration's login methods, and
//    limits signups per client address;
//  - the stored otp_login intent keeps v1ClientSignature's shape, with only its signature redacted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { TurnkeySDKClientBase } from '@turnkey/core/dist/__generated__/sdk-client-base.mjs';
import { encryptOtpCodeToBundle, generateP256KeyPair } from '@turnkey/crypto';
import { ApiKeyStamper, SignatureFormat } from '@turnkey/api-key-stamper';
import { TurnkeyClient } from '@turnkey/http';
import { WebauthnStamper } from '@turnkey/webauthn-stamper';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { runSigil, startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, attestedStampLogin, httpClient, newKey, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot, expectRefusedUnchanged } from '../helpers/db-snapshot.js';
import { codeIn, smtpEnv, startInbox, type Inbox } from '../helpers/mail.js';
import { SoftwareAuthenticator, installNavigator } from '../helpers/software-authenticator.js';

/** The signups one client address may make in an hour on this instance (SIGIL_AUTH_PROXY_SIGNUPS_PER_HOUR). */
const SIGNUPS_PER_HOUR = 3;

let inbox: Inbox;
let sigil: SigilInstance;
let parent: string;
const device: SoftwareAuthenticator[] = [];

beforeAll(async () => {
  inbox = await startInbox();
  sigil = await startSigil({ ...smtpEnv(inbox), SIGIL_AUTH_PROXY_SIGNUPS_PER_HOUR: String(SIGNUPS_PER_HOUR) });
  parent = sigil.root.organizationId;
  installNavigator(() => device);
}, 60_000);

afterAll(async () => {
  await sigil?.stop();
  await inbox?.close();
});

const decode = (jwt: string) => JSON.parse(atob(jwt.split('.')[1]));
const now = () => String(Date.now());

function proxyConfig(methods: string): string {
  const r = runSigil(['proxy-config', 'create', '--data-dir', sigil.dataDir, '--json', '--methods', methods], sigil.env);
  if (r.status !== 0) throw new Error(`proxy-config create failed: ${r.stderr}`);
  return JSON.parse(r.stdout).configId;
}

const core = (configId: string) => new TurnkeySDKClientBase({ apiBaseUrl: sigil.url, organizationId: parent, authProxyUrl: sigil.authProxyUrl, authProxyConfigId: configId });

/** The parent's init_otp → the mailed code → verify_otp V2 bound to `key`, through @turnkey/sdk-server (the app's backend). */
async function parentToken(email: string, key: KeyPair): Promise<string> {
  const api = sdkServerClient(sigil);
  const before = inbox.count(email);
  const { otpId, otpEncryptionTargetBundle } = await api.initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: email, appName: 'Parent App' } as never);
  const code = codeIn(await inbox.next(email, before));
  const encryptedOtpBundle = await encryptOtpCodeToBundle(code, otpEncryptionTargetBundle, key.apiPublicKey, sigil.root.signerPublicKey);
  return (await api.verifyOtp({ otpId, encryptedOtpBundle })).verificationToken;
}

/** otp_login V2 through the parent as @turnkey/sdk-server sends it, with the login usage signed by the token's key. */
async function otpLoginBody(email: string) {
  const key = newKey();
  const token = await parentToken(email, key);
  const session = newKey();
  const message = JSON.stringify({ login: { publicKey: session.apiPublicKey }, tokenId: decode(token).id, type: 'USAGE_TYPE_LOGIN' });
  const signature = await new ApiKeyStamper(key).sign(message, SignatureFormat.Raw);
  const parameters = { verificationToken: token, publicKey: session.apiPublicKey, clientSignature: { publicKey: key.apiPublicKey, scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256', message, signature } };
  return { token, key, parameters };
}

const submitAsParent = (path: string, type: string, parameters: unknown, organizationId = parent) =>
  rawPost(`${sigil.url}/public/v1/submit/${path}`, activityBody(organizationId, type, parameters), { key: sigil.root });

/** A sub-organization the parent made for a user of its app, with that user's own API key. */
async function subOrganization(name: string, email?: string): Promise<{ id: string; userId: string; key: KeyPair }> {
  const key = newKey();
  const created = await sdkServerClient(sigil).createSubOrganization({
    subOrganizationName: name,
    rootUsers: [{ userName: name, ...(email ? { userEmail: email } : {}), apiKeys: [{ apiKeyName: 'own key', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] }],
    rootQuorumThreshold: 1,
  });
  return { id: created.subOrganizationId, userId: created.rootUserIds![0], key };
}

describe('flaw 1: email logins through the parent match only contacts verified or set by the parent', () => {
  it('a decoy user with the victim’s email in an attacker’s sub-organization receives none of the victim’s logins', async () => {
    const victim = 'victim.one@example.com';
    const attacker = await subOrganization('attacker one');
    // The attacker writes the victim's address into their own sub-organization: no proof asked.
    const decoy = await sdkServerClient(sigil, attacker.key, attacker.id).createUsers({
      users: [{ userName: 'decoy', userEmail: victim, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    expect(decoy.userIds).toHaveLength(1);

    // otp_login V2 through the parent: no session in the attacker's sub-organization.
    const login = await otpLoginBody(victim);
    let before = await dbSnapshot(sigil);
    await expectRefusedUnchanged(sigil, before, await submitAsParent('otp_login', 'ACTIVITY_TYPE_OTP_LOGIN_V2', login.parameters), 404, 5, 'NOT_FOUND', /no user with email victim\.one@example\.com/);

    // The attested stamp_login @turnkey/core sends, to the parent and to the attacker's sub-organization.
    const attested = newKey();
    const token = await parentToken(victim, attested);
    for (const organizationId of [parent, attacker.id]) {
      const res = await attestedStampLogin(sigil.url, attested, token, organizationId);
      expect(res.status, JSON.stringify(res.body)).toBe(404);
      expect(res.body.message).toMatch(/no user with email victim\.one@example\.com/);
    }

    // The auth proxy's account lookup (what @turnkey/core logs in to) does not answer the decoy's sub-organization.
    const configId = proxyConfig('email');
    expect(await core(configId).proxyGetAccount({ filterType: 'EMAIL', filterValue: victim, verificationToken: token })).toEqual({});

    // otp_auth and email_auth through the parent.
    const api = sdkServerClient(sigil);
    const sent = inbox.count(victim);
    const { otpId } = await api.initOtpAuth({ otpType: 'OTP_TYPE_EMAIL', contact: victim, appName: 'Parent App' } as never);
    const code = codeIn(await inbox.next(victim, sent));
    before = await dbSnapshot(sigil);
    const otpAuth = await submitAsParent('otp_auth', 'ACTIVITY_TYPE_OTP_AUTH', { otpId, otpCode: code, targetPublicKey: generateP256KeyPair().publicKeyUncompressed });
    expect(otpAuth.status, JSON.stringify(otpAuth.body)).toBe(404);
    const emailAuth = await submitAsParent('email_auth', 'ACTIVITY_TYPE_EMAIL_AUTH_V3', {
      email: victim,
      targetPublicKey: generateP256KeyPair().publicKeyUncompressed,
      emailCustomization: { appName: 'Parent App' },
    });
    expect(emailAuth.status, JSON.stringify(emailAuth.body)).toBe(404);
    expect(inbox.count(victim)).toBe(sent + 1);

    // Nothing marked the decoy verified: the parent's verified lookup does not answer it.
    expect((await api.getVerifiedSubOrgIds({ filterType: 'EMAIL', filterValue: victim })).organizationIds).toEqual([]);
  });

  it('the victim’s own account keeps its logins (no lock-out), whatever decoys others write', async () => {
    const victim = 'victim.two@example.com';
    const own = await subOrganization('victim two', victim);
    // One decoy by create_users, one by changing a contact the parent had set (the attacker's own).
    const attacker = await subOrganization('attacker two', 'attacker.two@example.com');
    const attackerApi = sdkServerClient(sigil, attacker.key, attacker.id);
    await attackerApi.createUsers({ users: [{ userName: 'decoy', userEmail: victim, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }] });
    await attackerApi.updateUserEmail({ userId: attacker.userId, userEmail: victim });

    const login = await otpLoginBody(victim);
    const res = await submitAsParent('otp_login', 'ACTIVITY_TYPE_OTP_LOGIN_V2', login.parameters);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const session = decode(res.body.activity.result.otpLoginResult.session);
    expect(session).toMatchObject({ organization_id: own.id, user_id: own.userId });
    // The stored intent keeps v1ClientSignature's shape: only its signature is redacted.
    const seen = await sdkServerClient(sigil).getActivity({ activityId: res.body.activity.id });
    expect(seen.activity.intent.otpLoginIntentV2!.clientSignature).toEqual({ ...login.parameters.clientSignature, signature: '<redacted>' });
    expect(JSON.stringify(seen)).not.toContain(login.parameters.clientSignature.signature);

    // The attested login, as @turnkey/core sends it after its account lookup.
    const attested = newKey();
    const token = await parentToken(victim, attested);
    const configId = proxyConfig('email');
    expect(await core(configId).proxyGetAccount({ filterType: 'EMAIL', filterValue: victim, verificationToken: token })).toEqual({ organizationId: own.id });
    const stamped = await attestedStampLogin(sigil.url, attested, token, own.id);
    expect(stamped.status, JSON.stringify(stamped.body)).toBe(200);
    expect(decode(stamped.body.activity.result.stampLoginResult.session)).toMatchObject({ organization_id: own.id, user_id: own.userId });

    // The login verified the victim's own contact, and only it.
    expect((await sdkServerClient(sigil).getVerifiedSubOrgIds({ filterType: 'EMAIL', filterValue: victim })).organizationIds).toEqual([own.id]);
  });
});

const PASSKEY = 'AUTHENTICATION_TYPE_PASSKEY';
const API_KEY = 'AUTHENTICATION_TYPE_API_KEY';
const SESSION = 'AUTHENTICATION_TYPE_SESSION';
const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } as const;

/** A sub-organization whose root user has an API key, a passkey, a wallet and the MFA policy `steps` for signing and MFA_POLICY. */
async function mfaUser(name: string, steps: { any: { type: string; id?: string }[] }[]) {
  const sub = await subOrganization(name);
  const api = sdkServerClient(sigil, sub.key, sub.id);
  const passkey = new SoftwareAuthenticator();
  device.push(passkey);
  const challenge = randomBytes(32);
  await api.createAuthenticators({
    userId: sub.userId,
    authenticators: [{ authenticatorName: 'laptop', challenge: challenge.toString('base64url'), attestation: passkey.register(challenge) }],
  });
  const { addresses } = await api.createWallet({ walletName: 'w', accounts: [ETH] });
  const client = httpClient(sigil, sub.key);
  // The example policy of docs/mfa.md "MFA policies", guarding its own removal too.
  const policy = await client.createMfaPolicy({
    type: 'ACTIVITY_TYPE_CREATE_MFA_POLICY',
    timestampMs: now(),
    organizationId: sub.id,
    parameters: { userId: sub.userId, mfaPolicyName: 'signing needs a passkey', condition: "activity.action == 'SIGN' || activity.resource == 'MFA_POLICY'", requiredAuthenticationMethods: steps, order: 0 } as never,
  });
  expect(policy.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  const passkeyClient = (p: SoftwareAuthenticator = passkey) =>
    new TurnkeyClient({ baseUrl: sigil.url }, new WebauthnStamper({ rpId: 'localhost', allowCredentials: [{ id: p.rawId, type: 'public-key' }] }));
  const sign = (c: TurnkeyClient = client) =>
    c.signRawPayload({
      type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
      timestampMs: now(),
      organizationId: sub.id,
      parameters: { signWith: addresses[0], payload: `0x${randomBytes(32).toString('hex')}`, encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' },
    });
  const approve = (c: TurnkeyClient, fingerprint: string) =>
    c.approveActivity({ type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY', timestampMs: now(), organizationId: sub.id, parameters: { fingerprint } });
  const rawApprove = (fingerprint: string, key: KeyPair) =>
    rawPost(`${sigil.url}/public/v1/submit/approve_activity`, activityBody(sub.id, 'ACTIVITY_TYPE_APPROVE_ACTIVITY', { fingerprint }), { key });
  return { ...sub, client, passkey, passkeyClient, sign, approve, rawApprove };
}

/** A new passkey's registration for `userId` as @turnkey/http sends create_authenticators. */
function newPasskey(userId: string) {
  const passkey = new SoftwareAuthenticator();
  device.push(passkey);
  const challenge = randomBytes(32);
  return { passkey, parameters: { userId, authenticators: [{ authenticatorName: 'new', challenge: challenge.toString('base64url'), attestation: passkey.register(challenge) }] } };
}

describe('flaw 2: a credential added while MFA policies hold meets them itself, and never approves what came before it', () => {
  it('the API key alone cannot register the passkey that approves its own waiting signature', async () => {
    const alice = await mfaUser('mfa alice', [{ any: [{ type: PASSKEY }] }]);
    const waiting = await alice.sign();
    expect(waiting.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED');

    // The attack: the API key registers a passkey of the attacker's...
    const stolen = newPasskey(alice.userId);
    const created = await alice.client.createAuthenticators({ type: 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2', timestampMs: now(), organizationId: alice.id, parameters: stolen.parameters as never });
    // ...which now waits for one of the user's passkeys itself.
    expect(created.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED');
    expect((await sdkServerClient(sigil, alice.key, alice.id).getAuthenticators({ userId: alice.userId })).authenticators).toHaveLength(1);

    // The user's own passkey approves the registration; the new passkey still cannot approve the
    // signature submitted before it existed.
    expect((await alice.approve(alice.passkeyClient(), created.activity.fingerprint)).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const body = activityBody(alice.id, 'ACTIVITY_TYPE_APPROVE_ACTIVITY', { fingerprint: waiting.activity.fingerprint });
    const text = JSON.stringify(body);
    const stamp = await new WebauthnStamper({ rpId: 'localhost', allowCredentials: [{ id: stolen.passkey.rawId, type: 'public-key' }] }).stamp(text);
    const res = await rawPost(`${sigil.url}/public/v1/submit/approve_activity`, text, { headers: { [stamp.stampHeaderName]: stamp.stampHeaderValue } });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 7, message: expect.stringMatching(/from a credential created after the activity was submitted/) });
    const still = await alice.client.getActivity({ organizationId: alice.id, activityId: waiting.activity.id });
    expect(still.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED');
    expect((await alice.client.getMfaStatus({ organizationId: alice.id, activityId: waiting.activity.id })).mfaStatuses[0]).toMatchObject({ satisfied: false });

    // A signature submitted after the passkey was registered may be approved with it.
    const later = await alice.sign();
    expect(later.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED');
    expect((await alice.approve(alice.passkeyClient(stolen.passkey), later.activity.fingerprint)).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect((await alice.approve(alice.passkeyClient(), waiting.activity.fingerprint)).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  });

  it('an API key step is not met by an API key the first one creates', async () => {
    const bob = await mfaUser('mfa bob', [{ any: [{ type: API_KEY }] }, { any: [{ type: API_KEY }] }]);
    const waiting = await bob.sign();
    expect(waiting.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED');
    const second = newKey();
    const created = await bob.client.createApiKeys({
      type: 'ACTIVITY_TYPE_CREATE_API_KEYS_V2',
      timestampMs: now(),
      organizationId: bob.id,
      parameters: { userId: bob.userId, apiKeys: [{ apiKeyName: 'second', publicKey: second.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }] },
    });
    expect(created.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED');
    const before = await dbSnapshot(sigil);
    await expectRefusedUnchanged(sigil, before, await bob.rawApprove(waiting.activity.fingerprint, second), 401, 16, 'PUBLIC_KEY_NOT_FOUND', /./);
  });

  it('a session step is not met by a session the API key logs in, with or without a session profile, nor by an OAuth identity it links', async () => {
    const profileOwner = await subOrganization('mfa carol');
    const { sessionProfileId } = await sdkServerClient(sigil, profileOwner.key, profileOwner.id).createSessionProfile({ sessionProfileName: 'mfa sessions', scope: 'true' });
    const sub = { ...profileOwner };
    // The profile belongs to carol's sub-organization; her second policy pins it, and her first
    // takes her API key, which must not stand in for it.
    const client = httpClient(sigil, sub.key);
    const first = await client.createMfaPolicy({
      type: 'ACTIVITY_TYPE_CREATE_MFA_POLICY',
      timestampMs: now(),
      organizationId: sub.id,
      parameters: { userId: sub.userId, mfaPolicyName: 'wallets need a key or a session', condition: "activity.resource == 'WALLET'", requiredAuthenticationMethods: [{ any: [{ type: API_KEY }, { type: SESSION }] }], order: 0 } as never,
    });
    expect(first.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const policy = await client.createMfaPolicy({
      type: 'ACTIVITY_TYPE_CREATE_MFA_POLICY',
      timestampMs: now(),
      organizationId: sub.id,
      parameters: { userId: sub.userId, mfaPolicyName: 'signing needs the profile session', condition: "activity.action == 'SIGN' || activity.resource == 'MFA_POLICY'", requiredAuthenticationMethods: [{ any: [{ type: SESSION, id: sessionProfileId }] }], order: 1 } as never,
    });
    expect(policy.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    for (const extra of [{ sessionProfileId }, {}]) {
      const session = newKey();
      const login = await client.stampLogin({ type: 'ACTIVITY_TYPE_STAMP_LOGIN', timestampMs: now(), organizationId: sub.id, parameters: { publicKey: session.apiPublicKey, ...extra } as never });
      expect(login.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED');
    }
    // Nor by an OAuth identity of the attacker's, which would log in to such sessions.
    const linked = await client.createOauthProviders({
      type: 'ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2',
      timestampMs: now(),
      organizationId: sub.id,
      parameters: { userId: sub.userId, oauthProviders: [{ providerName: 'Google', oidcClaims: { iss: 'https://accounts.google.com', sub: 'attacker', aud: 'client-web' } }] } as never,
    });
    expect(linked.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED');
  });
});

describe('flaw 6: auth proxy signups', () => {
  const p256Signup = (apiPublicKey: string) => ({
    userName: 'nobody',
    apiKeys: [{ apiKeyName: 'root', publicKey: apiPublicKey, curveType: 'API_KEY_CURVE_P256' }],
    authenticators: [],
    oauthProviders: [],
    wallet: { walletName: 'w', accounts: [ETH] },
  });
  const walletSignup = () => ({
    userName: 'wallet user',
    apiKeys: [{ apiKeyName: 'wallet', publicKey: Buffer.from(secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true)).toString('hex'), curveType: 'API_KEY_CURVE_SECP256K1' }],
    authenticators: [],
    oauthProviders: [],
  });

  it('refuses a signup that uses none of the enabled login methods, and creates nothing', async () => {
    const emailOnly = proxyConfig('email');
    for (const body of [p256Signup(newKey().apiPublicKey), walletSignup()]) {
      const before = await dbSnapshot(sigil);
      const res = await rawPost(`${sigil.authProxyUrl}/v1/signup`, body, { headers: { 'X-Auth-Proxy-Config-ID': emailOnly } });
      await expectRefusedUnchanged(sigil, before, res, 403, 7, 'REQUEST_NOT_AUTHORIZED', /disallowed/);
    }
    await expect(core(emailOnly).proxySignupV2(p256Signup(newKey().apiPublicKey) as never)).rejects.toThrow(/disallowed/);
  });

  it(`limits signups to ${SIGNUPS_PER_HOUR} an hour per client address`, async () => {
    const wallets = proxyConfig('wallet');
    for (let i = 0; i < SIGNUPS_PER_HOUR; i++) {
      const ok = await core(wallets).proxySignupV2(walletSignup() as never);
      expect(ok.organizationId).toMatch(/^[0-9a-f-]{36}$/);
    }
    const before = await dbSnapshot(sigil);
    const res = await rawPost(`${sigil.authProxyUrl}/v1/signup_v2`, walletSignup(), { headers: { 'X-Auth-Proxy-Config-ID': wallets } });
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    // The refusal is audited and counted in its bucket (neither in the snapshot); nothing else changes.
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ code: 8, message: expect.stringMatching(/Too many signups/) });
    expect(await dbSnapshot(sigil)).toEqual(before);
  });
});
