// Email OTP end to end over real SMTP (docs/sessions-and-logins.md "One-time codes (OTP)";
// docs/reference/sessions.md "OTP", "Login activities"; docs/reference/bundles.md "The bundles"): an
// `smtp-server` on loopback receives the codes Sigil sends with nodemailer; init_otp, verify_otp
// (encryptedOtpBundle from @turnkey/crypto's encryptOtpCodeToBundle, and the plaintext otpCode alias)
// and otp_login (clientSignature from @turnkey/api-key-stamper, raw r‖s) go through @turnkey/sdk-server,
// and the session key stamps a whoami. Refusals (wrong, expired and locked codes, a fourth active code,
// a reused token, a signature by another key) are clear errors that change nothing but the attempt
// count. The legacy init_otp_auth / otp_auth pair answers a credential bundle that opens with
// decryptCredentialBundle.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptCredentialBundle, encryptOtpCodeToBundle, generateP256KeyPair, getPublicKey } from '@turnkey/crypto';
import { ApiKeyStamper, SignatureFormat } from '@turnkey/api-key-stamper';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot, type Snapshot } from '../helpers/db-snapshot.js';
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

/** The code in the first mail to `to` after the first `already`, waiting for it to arrive. */
const codeSentTo = async (to: string, already: number) => codeIn(await mail.next(to, already));
const mailsTo = (to: string) => mail.count(to);

function newKey(): KeyPair & { uncompressed: string } {
  const k = generateP256KeyPair();
  return { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey, uncompressed: k.publicKeyUncompressed };
}

async function createUserWithEmail(email: string): Promise<string> {
  const { userIds } = await sdkServerClient(sigil).createUsers({
    users: [{ userName: email, userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
  });
  return userIds[0];
}

async function initOtp(contact: string, extra: Record<string, unknown> = {}, organizationId?: string) {
  const before = mailsTo(contact);
  const res = await sdkServerClient(sigil, sigil.root, organizationId).initOtp({ otpType: 'OTP_TYPE_EMAIL', contact, appName: 'Sigil Test', ...extra } as never);
  return { otpId: res.otpId, bundle: res.otpEncryptionTargetBundle, code: await codeSentTo(contact, before) };
}

/** What @turnkey/core signs for otp_login (docs/reference/sessions.md "Login activities"): the login token usage, raw r‖s. */
async function loginSignature(signer: KeyPair, sessionPublicKey: string, tokenId: string) {
  const message = JSON.stringify({ login: { publicKey: sessionPublicKey }, tokenId, type: 'USAGE_TYPE_LOGIN' });
  const signature = await new ApiKeyStamper(signer).sign(message, SignatureFormat.Raw);
  return { publicKey: signer.apiPublicKey, scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256' as const, message, signature };
}

const decodeToken = (token: string) => JSON.parse(atob(token.split('.')[1]));

/** Everything but the otps table (whose attempt counts refusals may change). */
const withoutOtps = (s: Snapshot) => Object.fromEntries(Object.entries(s).filter(([t]) => t !== 'otps'));

describe('email OTP over SMTP', () => {
  it('init_otp mails a code; the encrypted bundle verifies; otp_login answers a session whose key stamps', async () => {
    const email = 'alice@example.com';
    const userId = await createUserWithEmail(email);
    const { otpId, bundle, code } = await initOtp(email);
    expect(code).toMatch(/^[0-9A-HJKMNP-TV-Z]{9}$/); // defaults: 9 characters, Crockford base32
    const raw = mail.mails.filter((m) => m.to.includes(email)).at(-1)!.raw;
    expect(raw).toMatch(/^From: Sigil Test <auth@sigil\.test>/m);
    expect(raw).toMatch(/^Subject: Your Sigil Test verification code/m);
    expect(raw).not.toMatch(/text\/html/);
    // The target bundle is signed by the deployment signer (docs/reference/bundles.md "The bundles").
    const envelope = JSON.parse(bundle);
    expect(envelope.enclaveQuorumPublic).toBe(sigil.root.signerPublicKey);

    const client = newKey(); // the client's key bound into the verification token
    const encryptedOtpBundle = await encryptOtpCodeToBundle(code, bundle, client.apiPublicKey, sigil.root.signerPublicKey);
    const api = sdkServerClient(sigil);
    const { verificationToken } = await api.verifyOtp({ otpId, encryptedOtpBundle });
    const claims = decodeToken(verificationToken);
    expect(Object.keys(claims)).toEqual(['exp', 'id', 'organization_id', 'verification_type', 'contact', 'public_key']);
    expect(claims).toMatchObject({ organization_id: sigil.root.organizationId, verification_type: 'OTP_TYPE_EMAIL', contact: email, public_key: client.apiPublicKey });
    expect(typeof claims.exp).toBe('string');
    expect(Number(claims.exp)).toBeGreaterThan(Date.now() + 3500_000); // ms, default one hour
    expect(JSON.parse(atob(verificationToken.split('.')[0]))).toEqual({ alg: 'ES256', typ: 'JWT' });

    // The code works once.
    await expect(api.verifyOtp({ otpId, encryptedOtpBundle })).rejects.toThrow(/OTP has already been used/);

    const session = newKey();
    const res = await api.otpLogin({
      verificationToken,
      publicKey: session.apiPublicKey,
      clientSignature: await loginSignature(client, session.apiPublicKey, claims.id),
    });
    const payload = decodeToken(res.session);
    expect(payload).toMatchObject({ public_key: session.apiPublicKey, session_type: 'SESSION_TYPE_READ_WRITE', user_id: userId, organization_id: sigil.root.organizationId });
    expect(typeof payload.exp).toBe('number');
    const me = await sdkServerClient(sigil, session).getWhoami({});
    expect(me.userId).toBe(userId);

    // The secret parameters are not kept in the activity record.
    const text = JSON.stringify(await dbSnapshot(sigil));
    expect(text).not.toContain(code);
    expect(text).not.toContain(encryptedOtpBundle.slice(20, 80));
  });

  it('verifies the plaintext otpCode alias (ACTIVITY_TYPE_VERIFY_OTP) with a numeric 6-digit code', async () => {
    const email = 'bob@example.com';
    const userId = await createUserWithEmail(email);
    const { otpId, code } = await initOtp(email, { otpLength: 6, alphanumeric: false });
    expect(code).toMatch(/^\d{6}$/);
    const client = newKey();
    const body = activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_VERIFY_OTP', { otpId, otpCode: code, publicKey: client.apiPublicKey });
    const r = await rawPost(`${sigil.url}/public/v1/submit/verify_otp`, body, { key: sigil.root });
    expect(r.status).toBe(200);
    expect(r.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const token = r.body.activity.result.verifyOtpResult.verificationToken;
    expect(JSON.stringify(r.body.activity.intent)).not.toContain(code);
    const claims = decodeToken(token);
    expect(claims.public_key).toBe(client.apiPublicKey);

    // The legacy type on otp_login, answered under otpLoginResult.
    const session = newKey();
    const login = activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_OTP_LOGIN', {
      verificationToken: token,
      publicKey: session.apiPublicKey,
      clientSignature: await loginSignature(client, session.apiPublicKey, claims.id),
    });
    const l = await rawPost(`${sigil.url}/public/v1/submit/otp_login`, login, { key: sigil.root });
    expect(l.status).toBe(200);
    expect(decodeToken(l.body.activity.result.otpLoginResult.session).user_id).toBe(userId);
  });

  it('logs a sub-organization user in from the parent, and the session names the sub-organization', async () => {
    const email = 'carol@example.com';
    const created = await sdkServerClient(sigil).createSubOrganization({
      subOrganizationName: 'carol org',
      rootUsers: [{ userName: 'carol', userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
    });
    const { otpId, bundle, code } = await initOtp(email);
    const client = newKey();
    const api = sdkServerClient(sigil);
    const { verificationToken } = await api.verifyOtp({ otpId, encryptedOtpBundle: await encryptOtpCodeToBundle(code, bundle, client.apiPublicKey, sigil.root.signerPublicKey) });
    const session = newKey();
    const res = await api.otpLogin({
      verificationToken,
      publicKey: session.apiPublicKey,
      clientSignature: await loginSignature(client, session.apiPublicKey, decodeToken(verificationToken).id),
    });
    const payload = decodeToken(res.session);
    expect(payload.organization_id).toBe(created.subOrganizationId);
    expect(payload.user_id).toBe(created.rootUserIds![0]);
    const me = await sdkServerClient(sigil, session, created.subOrganizationId).getWhoami({});
    expect(me.userId).toBe(created.rootUserIds![0]);
  });
});

describe('OTP refusals', () => {
  it('counts wrong codes and locks the code after three attempts', async () => {
    const email = 'dave@example.com';
    await createUserWithEmail(email);
    const { otpId, code } = await initOtp(email);
    const api = sdkServerClient(sigil);
    const wrong = code === 'AAAAAAAAA' ? 'BBBBBBBBB' : 'AAAAAAAAA';
    const verify = (c: string) =>
      rawPost(`${sigil.url}/public/v1/submit/verify_otp`, activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_VERIFY_OTP', { otpId, otpCode: c }), { key: sigil.root });

    const before = await dbSnapshot(sigil);
    const first = await verify(wrong);
    expect(first.status).toBe(400);
    expect(first.body.message).toBe('Invalid OTP code');
    const after = await dbSnapshot(sigil);
    expect(withoutOtps(after)).toEqual(withoutOtps(before)); // no activity, no token, no key
    expect((after.otps as { id: string; attempts: number }[]).find((o) => o.id === otpId)!.attempts).toBe(1);

    expect((await verify(wrong)).body.message).toBe('Invalid OTP code');
    expect((await verify(wrong)).body.message).toBe('Invalid OTP code');
    // The fourth attempt is refused even with the right code.
    const fourth = await verify(code);
    expect(fourth.status).toBe(400);
    expect(fourth.body.message).toMatch(/OTP locked after 3 wrong attempts/);
    await expect(api.verifyOtp({ otpId, encryptedOtpBundle: 'x' })).rejects.toThrow(/OTP locked/);
  });

  it('refuses an expired code', async () => {
    const email = 'erin@example.com';
    const { otpId, code } = await initOtp(email, { expirationSeconds: '1' });
    await new Promise((r) => setTimeout(r, 1300));
    const before = await dbSnapshot(sigil);
    const r = await rawPost(
      `${sigil.url}/public/v1/submit/verify_otp`,
      activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_VERIFY_OTP', { otpId, otpCode: code }),
      { key: sigil.root },
    );
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/OTP expired: request a new code/);
    expect(await dbSnapshot(sigil)).toEqual(before);
  });

  it('refuses a fourth active code for a contact', async () => {
    const email = 'frank@example.com';
    for (let i = 0; i < 3; i++) await initOtp(email);
    const before = await dbSnapshot(sigil);
    const sent = mailsTo(email);
    await expect(sdkServerClient(sigil).initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: email, appName: 'Sigil Test' })).rejects.toThrow(
      /Max number of OTPs have been initiated/,
    );
    expect(await dbSnapshot(sigil)).toEqual(before);
    expect(mailsTo(email)).toBe(sent);
  });

  it('refuses bad init_otp parameters', async () => {
    const api = sdkServerClient(sigil);
    const before = await dbSnapshot(sigil);
    await expect(api.initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: 'not an email', appName: 'x' })).rejects.toThrow(/invalid contact/);
    await expect(api.initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: 'g@example.com', appName: 'x', otpLength: 5 })).rejects.toThrow(/invalid otpLength 5/);
    await expect(api.initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: 'g@example.com', appName: 'x', expirationSeconds: '601' })).rejects.toThrow(
      /invalid expirationSeconds/,
    );
    expect(await dbSnapshot(sigil)).toEqual(before);
  });

  it('refuses a reused verification token and a signature by a key other than the token’s', async () => {
    const email = 'grace@example.com';
    await createUserWithEmail(email);
    const { otpId, bundle, code } = await initOtp(email);
    const client = newKey();
    const api = sdkServerClient(sigil);
    const { verificationToken } = await api.verifyOtp({ otpId, encryptedOtpBundle: await encryptOtpCodeToBundle(code, bundle, client.apiPublicKey, sigil.root.signerPublicKey) });
    const tokenId = decodeToken(verificationToken).id;
    const session = newKey();
    const intruder = newKey();

    const before = await dbSnapshot(sigil);
    // Signed by another key, and named as that key: not the token's key.
    await expect(
      api.otpLogin({ verificationToken, publicKey: session.apiPublicKey, clientSignature: await loginSignature(intruder, session.apiPublicKey, tokenId) }),
    ).rejects.toThrow(/public key must match the public key contained within the OTP verification token/);
    // Signed by another key but naming the token's key: the signature does not verify.
    const forged = { ...(await loginSignature(intruder, session.apiPublicKey, tokenId)), publicKey: client.apiPublicKey };
    await expect(api.otpLogin({ verificationToken, publicKey: session.apiPublicKey, clientSignature: forged })).rejects.toThrow(/does not verify/);
    // The right key over another token id.
    await expect(
      api.otpLogin({ verificationToken, publicKey: session.apiPublicKey, clientSignature: await loginSignature(client, session.apiPublicKey, 'other') }),
    ).rejects.toThrow(/login usage of this verification token/);
    // A token whose signature does not hold.
    const [h, p] = verificationToken.split('.');
    await expect(
      api.otpLogin({ verificationToken: `${h}.${p}.${'A'.repeat(86)}`, publicKey: session.apiPublicKey, clientSignature: await loginSignature(client, session.apiPublicKey, tokenId) }),
    ).rejects.toThrow(/invalid verification token/);
    expect(await dbSnapshot(sigil)).toEqual(before);

    await api.otpLogin({ verificationToken, publicKey: session.apiPublicKey, clientSignature: await loginSignature(client, session.apiPublicKey, tokenId) });
    const afterLogin = await dbSnapshot(sigil);
    const again = newKey();
    await expect(
      api.otpLogin({ verificationToken, publicKey: again.apiPublicKey, clientSignature: await loginSignature(client, again.apiPublicKey, tokenId) }),
    ).rejects.toThrow(/verification token: it has already been used/);
    expect(await dbSnapshot(sigil)).toEqual(afterLogin);
  });

  it('does not let a non-root user without a policy run OTP activities', async () => {
    const key = newKey();
    const { userIds } = await sdkServerClient(sigil).createUsers({
      users: [{ userName: 'plain', apiKeys: [{ apiKeyName: 'k', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    expect(userIds).toHaveLength(1);
    const sent = mail.mails.length;
    await expect(sdkServerClient(sigil, key).initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: 'h@example.com', appName: 'x' })).rejects.toThrow(/sufficient permissions/);
    expect(mail.mails.length).toBe(sent);
  });
});

describe('legacy init_otp_auth / otp_auth', () => {
  it('answers a credential bundle whose key stamps, and keeps the two flows apart', async () => {
    const email = 'heidi@example.com';
    const userId = await createUserWithEmail(email);
    const api = sdkServerClient(sigil);
    const sent = mailsTo(email);
    const { otpId } = await api.initOtpAuth({ otpType: 'OTP_TYPE_EMAIL', contact: email, appName: 'Sigil Test' });
    const code = await codeSentTo(email, sent);
    const target = generateP256KeyPair();

    // A code of init_otp_auth is not a verify_otp code, nor the other way round.
    await expect(api.verifyOtp({ otpId, encryptedOtpBundle: 'x' })).rejects.toThrow(/not found/);
    const other = await initOtp(email);
    await expect(api.otpAuth({ otpId: other.otpId, otpCode: other.code, targetPublicKey: target.publicKey })).rejects.toThrow(/not found/);

    const before = await dbSnapshot(sigil);
    await expect(api.otpAuth({ otpId, otpCode: '000000000', targetPublicKey: target.publicKey })).rejects.toThrow(/Invalid OTP code/);
    expect(withoutOtps(await dbSnapshot(sigil))).toEqual(withoutOtps(before));

    const res = await api.otpAuth({ otpId, otpCode: code, targetPublicKey: target.publicKey });
    expect(res.userId).toBe(userId);
    const privateKey = decryptCredentialBundle(res.credentialBundle!, target.privateKey);
    const publicKey = Buffer.from(getPublicKey(privateKey, true)).toString('hex');
    const me = await sdkServerClient(sigil, { apiPublicKey: publicKey, apiPrivateKey: privateKey }).getWhoami({});
    expect(me.userId).toBe(userId);
    const { apiKeys } = await api.getApiKeys({ userId });
    const key = apiKeys.find((k) => k.apiKeyId === res.apiKeyId)!;
    expect(key.apiKeyName).toMatch(/^OTP Auth - \d{4}-\d\d-\d\dT/);
    expect(key.credential.type).toBe('CREDENTIAL_TYPE_OTP_AUTH_KEY_P256');
    expect(key.expirationSeconds).toBe('900');
    // The code works once.
    await expect(api.otpAuth({ otpId, otpCode: code, targetPublicKey: target.publicKey })).rejects.toThrow(/OTP has already been used/);
  });
});
