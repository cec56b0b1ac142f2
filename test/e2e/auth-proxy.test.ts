// The auth proxy end to end (docs/auth-proxy.md "The auth proxy"; docs/reference/auth-proxy.md
// "Endpoints"): a configuration made with `sigil proxy-config create`, then @turnkey/core's generated
// client's proxy methods unchanged (proxyInitOtpV2, proxyVerifyOtpV2, proxyGetAccount, proxySignupV2,
// proxyOtpLoginV2, proxyGetWalletKitConfig…) over real SMTP on loopback, and the login @turnkey/core
// does after it: stamp_login with X-Stamp-Attested naming the parent organization, answered from the
// user's sub-organization. Refusals (unknown config, disallowed origin or method, a contact without
// proof, a reused token, an attested key doing anything but log in) are clear errors that create
// nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { TurnkeySDKClientBase } from '@turnkey/core/dist/__generated__/sdk-client-base.mjs';
import { encryptOtpCodeToBundle, generateP256KeyPair } from '@turnkey/crypto';
import { ApiKeyStamper, SignatureFormat } from '@turnkey/api-key-stamper';
import { runSigil, startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, attestedStampHeader, attestedStampLogin, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot } from '../helpers/db-snapshot.js';
import { codeIn, smtpEnv, startInbox, type Inbox } from '../helpers/mail.js';

let inbox: Inbox;
let sigil: SigilInstance;
let configId: string;
/** The SMS gateway: a real HTTP server on loopback receiving Sigil's webhook posts {to, body}. */
let smsGateway: Server;
const texts: { to: string; body: string }[] = [];

function proxyConfig(args: string[]): { configId: string; organizationId: string; proxyUserId: string } {
  const r = runSigil(['proxy-config', 'create', '--data-dir', sigil.dataDir, '--json', ...args], sigil.env);
  if (r.status !== 0) throw new Error(`proxy-config create failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

beforeAll(async () => {
  inbox = await startInbox();
  smsGateway = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      texts.push(JSON.parse(raw));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => smsGateway.listen(0, '127.0.0.1', resolve));
  const smsUrl = `http://127.0.0.1:${(smsGateway.address() as { port: number }).port}/sms`;
  sigil = await startSigil({ ...smtpEnv(inbox), SIGIL_SMS_WEBHOOK_URL: smsUrl });
  configId = proxyConfig(['--allowed-origins', 'https://app.example.com', '--app-name', 'Proxy Test', '--otp-length', '6', '--otp-alphanumeric', 'false']).configId;
}, 60_000);

afterAll(async () => {
  await sigil?.stop();
  await inbox?.close();
  await new Promise<void>((resolve) => (smsGateway ? smsGateway.close(() => resolve()) : resolve()));
});

function core(id = configId) {
  return new TurnkeySDKClientBase({ apiBaseUrl: sigil.url, organizationId: sigil.root.organizationId, authProxyUrl: sigil.authProxyUrl, authProxyConfigId: id });
}

function newKey(): KeyPair {
  const k = generateP256KeyPair();
  return { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
}

const decode = (jwt: string) => JSON.parse(atob(jwt.split('.')[1]));

/** otp_init_v2 → the mailed code encrypted to the bundle for `key` → otp_verify_v2. */
async function verifiedToken(email: string, key: KeyPair): Promise<string> {
  const before = inbox.count(email);
  const { otpId, otpEncryptionTargetBundle } = await core().proxyInitOtpV2({ otpType: 'OTP_TYPE_EMAIL', contact: email });
  const code = codeIn(await inbox.next(email, before));
  expect(code).toMatch(/^\d{6}$/); // the configuration's OTP settings
  const encryptedOtpBundle = await encryptOtpCodeToBundle(code, otpEncryptionTargetBundle, key.apiPublicKey, sigil.root.signerPublicKey);
  const { verificationToken } = await core().proxyVerifyOtpV2({ otpId, encryptedOtpBundle });
  return verificationToken;
}

/** The client signature @turnkey/core makes for a token usage (docs/reference/sessions.md "Login activities"): raw r‖s by the token's key. */
async function usageSignature(key: KeyPair, usage: Record<string, unknown>) {
  const message = JSON.stringify(usage);
  const signature = await new ApiKeyStamper(key).sign(message, SignatureFormat.Raw);
  return { publicKey: key.apiPublicKey, scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256' as const, message, signature };
}

/** The signup usage signature a key-bound token needs (docs/compatibility.md "What is implemented": a token bound to a key needs it). */
const signupSignature = (key: KeyPair, token: string, contact: Record<string, string>) =>
  usageSignature(key, { signupV2: contact, tokenId: decode(token).id, type: 'USAGE_TYPE_SIGNUP' });

/** @turnkey/core's signup for an email with a key-bound verification token, as an app sends it. */
const signupWithEmail = async (key: KeyPair, token: string, email: string) =>
  core().proxySignupV2({
    userEmail: email,
    verificationToken: token,
    apiKeys: [],
    authenticators: [],
    oauthProviders: [],
    clientSignature: await signupSignature(key, token, { email }),
  } as never);

const attestedHeader = attestedStampHeader;

/** stamp_login exactly as @turnkey/core's loginWithOtp submits it: the parent's id, attested stamp only. */
const attestedLogin = (key: KeyPair, token: string, organizationId = sigil.root.organizationId) => attestedStampLogin(sigil.url, key, token, organizationId);

async function proxyPost(operation: string, body: unknown, headers: Record<string, string> = { 'X-Auth-Proxy-Config-ID': configId }) {
  return rawPost(`${sigil.authProxyUrl}/v1/${operation}`, body as object, { headers });
}

describe('auth proxy: OTP signup and login through @turnkey/core', () => {
  it('wallet_kit_config and wallet_kit_client_params describe the configuration', async () => {
    const c = await core().proxyGetWalletKitConfig({});
    expect(c).toMatchObject({ organizationId: sigil.root.organizationId, sessionExpirationSeconds: '900', otpLength: '6', otpAlphanumeric: false });
    expect(c.enabledProviders).toEqual(['email', 'sms', 'passkey', 'wallet']);
    expect(await core().proxyGetWalletKitClientParams({})).toEqual({ turnstileSiteKey: '' });
  });

  it('otp_init_v2 → otp_verify_v2 → account (none) → signup_v2 → stamp_login with X-Stamp-Attested from the parent id', async () => {
    const email = 'carol@example.com';
    const key = newKey();
    const token = await verifiedToken(email, key);
    const claims = decode(token);
    expect(claims).toMatchObject({ organization_id: sigil.root.organizationId, contact: email, public_key: key.apiPublicKey });

    const none = await core().proxyGetAccount({ filterType: 'EMAIL', filterValue: email, verificationToken: token });
    expect(none.organizationId ?? '').toBe('');

    const signup = await core().proxySignupV2({
      userEmail: email,
      userName: email,
      organizationName: 'Carol',
      verificationToken: token,
      apiKeys: [],
      authenticators: [],
      oauthProviders: [],
      clientSignature: await usageSignature(key, { signupV2: { email }, tokenId: claims.id, type: 'USAGE_TYPE_SIGNUP' }),
    } as never);
    expect(signup.organizationId).toMatch(/^[0-9a-f-]{36}$/);
    const found = await core().proxyGetAccount({ filterType: 'EMAIL', filterValue: email, verificationToken: token });
    expect(found.organizationId).toBe(signup.organizationId);

    // The token proved the email: the sub-organization is a verified one for this contact.
    const parent = sdkServerClient(sigil);
    expect((await parent.getVerifiedSubOrgIds({ filterType: 'EMAIL', filterValue: email })).organizationIds).toEqual([signup.organizationId]);

    // The login @turnkey/core does next: the parent's organizationId, the attested stamp only.
    const login = await attestedLogin(key, token);
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    expect(login.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(login.body.activity.organizationId).toBe(signup.organizationId);
    const session = decode(login.body.activity.result.stampLoginResult.session);
    expect(session).toMatchObject({ organization_id: signup.organizationId, user_id: signup.userId, public_key: key.apiPublicKey, session_type: 'SESSION_TYPE_READ_WRITE' });
    const me = await sdkServerClient(sigil, key, signup.organizationId).getWhoami({ organizationId: signup.organizationId });
    expect(me.userId).toBe(signup.userId);

    // The token's login use is spent, and so is its signup use.
    const again = await attestedLogin(newKey(), token);
    expect(again.status).toBe(401);
    const before = await dbSnapshot(sigil);
    await expect(signupWithEmail(key, token, email)).rejects.toThrow(/already been used/);
    const reLogin = await attestedLogin(key, token);
    expect(reLogin.body.message).toMatch(/already been used/);
    expect(await dbSnapshot(sigil)).toEqual(before);
  });

  it('otp_login_v2 answers a session for the user with the verified email', async () => {
    const email = 'dave@example.com';
    const first = newKey();
    const token = await verifiedToken(email, first);
    const signup = await core().proxySignupV2({
      userEmail: email,
      verificationToken: token,
      apiKeys: [],
      authenticators: [],
      oauthProviders: [],
      clientSignature: await signupSignature(first, token, { email }),
    } as never);

    const key = newKey();
    const token2 = await verifiedToken(email, key);
    const sessionKey = newKey();
    const { session } = await core().proxyOtpLoginV2({
      verificationToken: token2,
      publicKey: sessionKey.apiPublicKey,
      clientSignature: await usageSignature(key, { login: { publicKey: sessionKey.apiPublicKey }, tokenId: decode(token2).id, type: 'USAGE_TYPE_LOGIN' }),
    });
    expect(decode(session)).toMatchObject({ organization_id: signup.organizationId, public_key: sessionKey.apiPublicKey });
    const me = await sdkServerClient(sigil, sessionKey, signup.organizationId).getWhoami({ organizationId: signup.organizationId });
    expect(me.organizationId).toBe(signup.organizationId);

    // The proxy's work is ordinary activities of the parent, made by the proxy's own user.
    const { activities } = await sdkServerClient(sigil).getActivities({});
    expect(activities.map((a) => a.type)).toEqual(expect.arrayContaining(['ACTIVITY_TYPE_INIT_OTP_V3', 'ACTIVITY_TYPE_VERIFY_OTP_V2', 'ACTIVITY_TYPE_OTP_LOGIN_V2', 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8']));
  });

  it("the proxy's policy leaves other users' own logins alone: a user of the proxy's organization logs in with an attested stamp", async () => {
    const email = 'root.member@example.com';
    const { userIds } = await sdkServerClient(sigil).createUsers({
      users: [{ userName: 'member', userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    const key = newKey();
    const login = await attestedLogin(key, await verifiedToken(email, key));
    expect(login.body.activity?.status, JSON.stringify(login.body)).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(decode(login.body.activity.result.stampLoginResult.session)).toMatchObject({ organization_id: sigil.root.organizationId, user_id: userIds[0] });
    const own = await sdkServerClient(sigil).stampLogin({ publicKey: newKey().apiPublicKey });
    expect(own.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  });

  it('SMS: the code goes to the configured gateway; signup with the phone number; account finds it', async () => {
    const phone = '+14155550123';
    const key = newKey();
    const before = texts.length;
    const { otpId, otpEncryptionTargetBundle } = await core().proxyInitOtpV2({ otpType: 'OTP_TYPE_SMS', contact: phone });
    for (let i = 0; i < 50 && texts.length === before; i++) await new Promise((r) => setTimeout(r, 100));
    const text = texts[before];
    expect(text.to).toBe(phone);
    const code = /(\d{6})/.exec(text.body)![1];
    const encryptedOtpBundle = await encryptOtpCodeToBundle(code, otpEncryptionTargetBundle, key.apiPublicKey, sigil.root.signerPublicKey);
    const { verificationToken } = await core().proxyVerifyOtpV2({ otpId, encryptedOtpBundle });
    expect(decode(verificationToken)).toMatchObject({ verification_type: 'OTP_TYPE_SMS', contact: phone });
    const signup = await core().proxySignupV2({
      userPhoneNumber: phone,
      verificationToken,
      apiKeys: [],
      authenticators: [],
      oauthProviders: [],
      clientSignature: await signupSignature(key, verificationToken, { phoneNumber: phone }),
    } as never);
    expect((await core().proxyGetAccount({ filterType: 'PHONE_NUMBER', filterValue: phone, verificationToken })).organizationId).toBe(signup.organizationId);
    const login = await attestedLogin(key, verificationToken);
    expect(login.body.activity?.organizationId, JSON.stringify(login.body)).toBe(signup.organizationId);
  });

  it('the plaintext otp_init / otp_verify pair answers a token bound to the given key', async () => {
    const email = 'erin@example.com';
    const key = newKey();
    const before = inbox.count(email);
    const { otpId } = await core().proxyInitOtp({ otpType: 'OTP_TYPE_EMAIL', contact: email });
    const code = codeIn(await inbox.next(email, before));
    const { verificationToken } = await core().proxyVerifyOtp({ otpId, otpCode: code, publicKey: key.apiPublicKey });
    expect(decode(verificationToken)).toMatchObject({ contact: email, public_key: key.apiPublicKey });
  });
});

describe('auth proxy refusals', () => {
  it('an unknown or missing config id is a clear error', async () => {
    const unknown = await proxyPost('otp_init_v2', { otpType: 'OTP_TYPE_EMAIL', contact: 'x@example.com' }, { 'X-Auth-Proxy-Config-ID': '00000000-0000-7000-8000-000000000000' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toMatch(/auth proxy config .* not found/);
    const missing = await proxyPost('otp_init_v2', { otpType: 'OTP_TYPE_EMAIL', contact: 'x@example.com' }, {});
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/missing X-Auth-Proxy-Config-ID/);
    const noSuch = await proxyPost('no_such_thing', {});
    expect(noSuch.status).toBe(404);
  });

  it('a disallowed origin, a disabled method and a contact without proof create nothing', async () => {
    const passkeyOnly = proxyConfig(['--methods', 'passkey']).configId;
    const before = await dbSnapshot(sigil);
    const mails = inbox.mails.length;
    const evil = await proxyPost('otp_init_v2', { otpType: 'OTP_TYPE_EMAIL', contact: 'x@example.com' }, { 'X-Auth-Proxy-Config-ID': configId, Origin: 'https://evil.example' });
    expect(evil.status).toBe(403);
    expect(evil.body.message).toMatch(/origin https:\/\/evil\.example is not allowed/);
    const allowed = await proxyPost('wallet_kit_config', {}, { 'X-Auth-Proxy-Config-ID': configId, Origin: 'https://app.example.com' });
    expect(allowed.status).toBe(200);

    const disabled = await proxyPost('otp_init_v2', { otpType: 'OTP_TYPE_EMAIL', contact: 'x@example.com' }, { 'X-Auth-Proxy-Config-ID': passkeyOnly });
    expect(disabled.status).toBe(403);
    expect(disabled.body.message).toMatch(/EMAIL disallowed/);
    const oauth = await proxyPost('oauth_login', { oidcToken: 'a.b.c', publicKey: newKey().apiPublicKey }, { 'X-Auth-Proxy-Config-ID': passkeyOnly });
    expect(oauth.body.message).toMatch(/OAUTH disallowed/);

    const squat = await proxyPost('signup_v2', { userEmail: 'victim@example.com', apiKeys: [], authenticators: [], oauthProviders: [] });
    expect(squat.status).toBe(400);
    expect(squat.body.message).toMatch(/need the verificationToken/);
    expect(inbox.mails.length).toBe(mails);
    expect(await dbSnapshot(sigil)).toEqual(before);
  });

  it('a signup whose client signature is not the token key\'s signup usage creates nothing', async () => {
    const email = 'gina@example.com';
    const key = newKey();
    const token = await verifiedToken(email, key);
    const tokenId = decode(token).id;
    const before = await dbSnapshot(sigil);
    const signup = (clientSignature: unknown) =>
      core().proxySignupV2({ userEmail: email, verificationToken: token, apiKeys: [], authenticators: [], oauthProviders: [], clientSignature } as never);
    await expect(signup(await usageSignature(newKey(), { signupV2: { email }, tokenId, type: 'USAGE_TYPE_SIGNUP' }))).rejects.toThrow(
      /its public key must match the public key contained within the OTP verification token/,
    );
    await expect(signup(await usageSignature(key, { login: { publicKey: key.apiPublicKey }, tokenId, type: 'USAGE_TYPE_LOGIN' }))).rejects.toThrow(
      /must be the signup usage of this verification token/,
    );
    const forged = { ...(await usageSignature(key, { signupV2: { email }, tokenId, type: 'USAGE_TYPE_SIGNUP' })), message: JSON.stringify({ signupV2: {}, tokenId, type: 'USAGE_TYPE_SIGNUP' }) };
    await expect(signup(forged)).rejects.toThrow(/does not verify with the token public key/);
    expect(await dbSnapshot(sigil)).toEqual(before);
  });

  it('an attested stamp only logs in, only with the key its token names', async () => {
    const email = 'frank@example.com';
    const key = newKey();
    const token = await verifiedToken(email, key);
    await signupWithEmail(key, token, email);
    const before = await dbSnapshot(sigil);

    const otherKey = newKey();
    const wrongKey = await attestedLogin(otherKey, token);
    expect(wrongKey.status).toBe(401);
    expect(wrongKey.body.message).toMatch(/not the public key the verification token was issued for/);

    const body = JSON.stringify(activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_WALLET', { walletName: 'w', accounts: [] }));
    const notLogin = await rawPost(`${sigil.url}/public/v1/submit/create_wallet`, body, { headers: await attestedHeader(key, body, token) });
    expect(notLogin.status).toBe(403);
    expect(notLogin.body.message).toMatch(/can only log in/);

    const tampered = await attestedLogin(key, token);
    expect(tampered.status).toBe(200); // the untouched request still works once
    const bodyText = JSON.stringify(activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_STAMP_LOGIN', { publicKey: key.apiPublicKey }));
    const headers = await attestedHeader(key, bodyText, token);
    const badSig = await rawPost(`${sigil.url}/public/v1/submit/stamp_login`, bodyText.replace('STAMP_LOGIN', 'STAMP_LOGIN '), { headers });
    expect(badSig.status).toBe(401);
    expect(badSig.body.message).toMatch(/could not verify attested stamp signature/);
    // Only the one successful login wrote anything (its new key bumps the read cache's generation).
    const after = await dbSnapshot(sigil);
    expect(Object.keys(after).filter((t) => JSON.stringify(after[t]) !== JSON.stringify(before[t])).sort()).toEqual(['activities', 'api_keys', 'cache_generations', 'otps', 'votes']);
  });
});
