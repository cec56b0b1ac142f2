// Email auth, email recovery and email customization end to end over real SMTP
// (docs/sessions-and-logins.md "Email auth and recovery"; the credential bundle of
// docs/reference/bundles.md "The bundles"): an `smtp-server` on loopback receives what Sigil sends
// with nodemailer.
//  - email_auth through @turnkey/sdk-server's emailAuth: the credential bundle from the mail (and
//    from its magic link) opens with @turnkey/crypto's decryptCredentialBundle and the key stamps a
//    whoami; a parent reaches its sub-organizations' users; invalidateExisting removes earlier keys;
//    the V2 alias answers under emailAuthResult.
//  - Custom senders and reply-to are honoured only for SIGIL_EMAIL_ALLOWED_SENDER_DOMAINS, on
//    email_auth and init_otp alike; an HTML/header-injection attempt in appName stays inert text.
//  - Recovery: init_user_email_recovery → bundle from the mail → recover_user stamped by the
//    recovery key with a software passkey's attestation → the passkey stamps through
//    @turnkey/webauthn-stamper and the recovery key is gone; from a parent for a sub-organization
//    user too. Who may recover whom, and a DENY policy on recovery keys, are obeyed.
//  - Refusals (unknown email, bad magic link template, bad customization, bad keys) are clear errors
//    that change nothing (dbSnapshot) and send no mail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { decryptCredentialBundle, generateP256KeyPair, getPublicKey } from '@turnkey/crypto';
import { TurnkeyServerClient } from '@turnkey/sdk-server';
import { WebauthnStamper } from '@turnkey/webauthn-stamper';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot } from '../helpers/db-snapshot.js';
import { bundleIn, parse, smtpEnv, startInbox, type Inbox, type Mail, type Parsed } from '../helpers/mail.js';
import { SoftwareAuthenticator, installNavigator } from '../helpers/software-authenticator.js';

let mail: Inbox;
const device: SoftwareAuthenticator[] = [];
let sigil: SigilInstance;

beforeAll(async () => {
  mail = await startInbox();
  sigil = await startSigil({
    ...smtpEnv(mail),
    SIGIL_EMAIL_ALLOWED_SENDER_DOMAINS: 'allowed.test, Mail.Allowed.Test',
  });
  installNavigator(() => device);
}, 60_000);

afterAll(async () => {
  await sigil?.stop();
  await mail?.close();
});

/** The first mail to `to` after the first `already`, parsed. */
async function mailTo(to: string, already: number): Promise<Mail & Parsed> {
  const m = await mail.next(to, already);
  return { ...m, ...parse(m.raw) };
}

const mailsTo = (to: string) => mail.count(to);

/** Opens a bundle with the target key and answers the API key it carries. */
function openBundle(bundle: string, target: { privateKey: string }): KeyPair {
  const apiPrivateKey = decryptCredentialBundle(bundle, target.privateKey);
  return { apiPrivateKey, apiPublicKey: Buffer.from(getPublicKey(apiPrivateKey, true)).toString('hex') };
}

async function createUserWithEmail(email: string, apiKeys: { apiKeyName: string; publicKey: string; curveType: 'API_KEY_CURVE_P256' }[] = []) {
  const { userIds } = await sdkServerClient(sigil).createUsers({
    users: [{ userName: email, userEmail: email, apiKeys, authenticators: [], oauthProviders: [], userTags: [] }],
  });
  return userIds[0];
}

function newKey(): KeyPair {
  const k = generateP256KeyPair();
  return { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
}

/** A registration of a new software passkey: the client's challenge and the attestation over it. */
function registration(name: string) {
  const a = new SoftwareAuthenticator();
  device.push(a);
  const challenge = randomBytes(32);
  return { authenticator: a, params: { authenticatorName: name, challenge: challenge.toString('base64url'), attestation: a.register(challenge) } };
}

function passkeyClient(a: SoftwareAuthenticator, organizationId = sigil.root.organizationId) {
  return new TurnkeyServerClient({
    apiBaseUrl: sigil.url,
    organizationId,
    stamper: new WebauthnStamper({ rpId: 'localhost', allowCredentials: [{ id: a.rawId, type: 'public-key' }] }),
  });
}

const APP = { appName: 'Sigil Wallet' };

describe('email_auth', () => {
  it('emails a credential bundle whose key stamps; the magic link carries the same bundle', async () => {
    const email = 'alice@example.com';
    const userId = await createUserWithEmail(email);
    const api = sdkServerClient(sigil);
    const target = generateP256KeyPair();
    const sent = mailsTo(email);
    const res = await api.emailAuth({
      email,
      targetPublicKey: target.publicKeyUncompressed,
      emailCustomization: { ...APP, magicLinkTemplate: 'https://wallet.example/auth?bundle=%s&via=email', logoUrl: 'https://wallet.example/logo.png', templateVariables: '{"username":"alice","n":1}' },
    });
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(res.userId).toBe(userId);
    expect(Object.keys(res.activity.result.emailAuthResult!)).toEqual(['userId', 'apiKeyId']); // no bundle in the result

    const mail = await mailTo(email, sent);
    expect(mail.headers.from).toBe('Sigil Test <auth@sigil.test>');
    expect(mail.headers.subject).toBe('Sign in to Sigil Wallet');
    expect(mail.headers['content-type']).toMatch(/^text\/plain/);
    expect(mail.raw).not.toMatch(/text\/html/);
    expect(mail.headerNames).not.toContain('reply-to');
    const bundle = bundleIn(mail.text);
    const key = openBundle(bundle, target);
    const me = await sdkServerClient(sigil, key).getWhoami({});
    expect(me).toMatchObject({ organizationId: sigil.root.organizationId, userId });

    const link = /^(https:\/\/wallet\.example\/auth\?\S+)$/m.exec(mail.text)![1];
    const url = new URL(link);
    expect(url.searchParams.get('via')).toBe('email');
    expect(url.searchParams.get('bundle')).toBe(bundle);
    expect(openBundle(url.searchParams.get('bundle')!, target)).toEqual(key);

    // The key: an expiring email-auth key of the user, 15 minutes by default.
    const { apiKeys } = await api.getApiKeys({ userId });
    const record = apiKeys.find((k) => k.apiKeyId === res.apiKeyId)!;
    expect(record.apiKeyName).toMatch(/^Email Auth - \d{4}-\d\d-\d\dT/);
    expect(record.credential).toEqual({ publicKey: key.apiPublicKey, type: 'CREDENTIAL_TYPE_EMAIL_AUTH_KEY_P256' });
    expect(record.expirationSeconds).toBe('900');

    // Neither the bundle nor the key is kept anywhere but as the key's public half.
    const text = JSON.stringify(await dbSnapshot(sigil));
    expect(text).not.toContain(bundle);
    expect(text).not.toContain(key.apiPrivateKey);
  });

  it('invalidateExisting removes the earlier email-auth keys only; a name and expiry may be given', async () => {
    const email = 'bob@example.com';
    const own = newKey();
    const userId = await createUserWithEmail(email, [{ apiKeyName: 'own key', publicKey: own.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }]);
    const api = sdkServerClient(sigil);
    const auth = async (extra: Record<string, unknown>) => {
      const target = generateP256KeyPair();
      const sent = mailsTo(email);
      const res = await api.emailAuth({ email, targetPublicKey: target.publicKey, emailCustomization: APP, ...extra });
      return { res, key: openBundle(bundleIn((await mailTo(email, sent)).text), target) };
    };
    const first = await auth({ apiKeyName: 'first login', expirationSeconds: '120' });
    const second = await auth({});
    const named = (await api.getApiKeys({ userId })).apiKeys.find((k) => k.apiKeyId === first.res.apiKeyId)!;
    expect([named.apiKeyName, named.expirationSeconds]).toEqual(['first login', '120']);
    expect((await sdkServerClient(sigil, first.key).getWhoami({})).userId).toBe(userId);
    const third = await auth({ invalidateExisting: true });
    await expect(sdkServerClient(sigil, first.key).getWhoami({})).rejects.toThrow(/could not find public key/);
    await expect(sdkServerClient(sigil, second.key).getWhoami({})).rejects.toThrow(/could not find public key/);
    expect((await sdkServerClient(sigil, third.key).getWhoami({})).userId).toBe(userId);
    expect((await sdkServerClient(sigil, own).getWhoami({})).userId).toBe(userId);
    const { apiKeys } = await api.getApiKeys({ userId });
    expect(apiKeys.map((k) => k.apiKeyId).sort()).toEqual([third.res.apiKeyId, apiKeys.find((k) => k.apiKeyName === 'own key')!.apiKeyId].sort());
    expect(first.res.apiKeyId).not.toBe(third.res.apiKeyId);
  });

  it('reaches a sub-organization user from the parent; the key lives in the sub-organization', async () => {
    const email = 'carol@example.com';
    const created = await sdkServerClient(sigil).createSubOrganization({
      subOrganizationName: 'carol org',
      rootUsers: [{ userName: 'carol', userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
    });
    const target = generateP256KeyPair();
    const sent = mailsTo(email);
    const res = await sdkServerClient(sigil).emailAuth({ email, targetPublicKey: target.publicKey, emailCustomization: APP });
    expect(res.userId).toBe(created.rootUserIds![0]);
    const key = openBundle(bundleIn((await mailTo(email, sent)).text), target);
    const me = await sdkServerClient(sigil, key, created.subOrganizationId).getWhoami({});
    expect(me).toMatchObject({ organizationId: created.subOrganizationId, userId: created.rootUserIds![0] });
  });

  it('accepts the older ACTIVITY_TYPE_EMAIL_AUTH_V2 body and answers under emailAuthResult', async () => {
    const email = 'dave@example.com';
    const userId = await createUserWithEmail(email);
    const target = generateP256KeyPair();
    const url = `${sigil.url}/public/v1/submit/email_auth`;
    // appName is required of every version, as the reference requires it of all email activities.
    const before = await dbSnapshot(sigil);
    const bare = await rawPost(url, activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_EMAIL_AUTH_V2', { email, targetPublicKey: target.publicKey }), { key: sigil.root });
    expect(bare.status).toBe(400);
    expect(bare.body.message).toMatch(/invalid emailCustomization.appName: the name of your application is required/);
    expect(await dbSnapshot(sigil)).toEqual(before);

    const sent = mailsTo(email);
    const r = await rawPost(
      url,
      activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_EMAIL_AUTH_V2', { email, targetPublicKey: target.publicKey, emailCustomization: APP }),
      { key: sigil.root },
    );
    expect(r.status).toBe(200);
    expect(r.body.activity.type).toBe('ACTIVITY_TYPE_EMAIL_AUTH_V2');
    expect(r.body.activity.result.emailAuthResult.userId).toBe(userId);
    const key = openBundle(bundleIn((await mailTo(email, sent)).text), target);
    expect((await sdkServerClient(sigil, key).getWhoami({})).userId).toBe(userId);
  });
});

describe('custom senders and injection', () => {
  it('honours sendFromEmailAddress, the sender name and reply-to only for allowed domains', async () => {
    const email = 'erin@example.com';
    await createUserWithEmail(email);
    const api = sdkServerClient(sigil);
    const send = async (sender: Record<string, string>) => {
      const sent = mailsTo(email);
      await api.emailAuth({ email, targetPublicKey: generateP256KeyPair().publicKey, emailCustomization: APP, ...sender });
      return mailTo(email, sent);
    };

    const full = await send({ sendFromEmailAddress: 'login@allowed.test', sendFromEmailSenderName: 'Acme Login', replyToEmailAddress: 'help@mail.allowed.test' });
    expect(full.headers.from).toBe('Acme Login <login@allowed.test>');
    expect(full.headers['reply-to']).toBe('help@mail.allowed.test');
    expect(full.from).toBe('login@allowed.test'); // the SMTP envelope sender too

    // The sender name defaults to "Notifications"; a reply-to outside the allowed domains is dropped alone.
    const named = await send({ sendFromEmailAddress: 'login@ALLOWED.test', replyToEmailAddress: 'help@evil.test' });
    expect(named.headers.from).toBe('Notifications <login@allowed.test>'); // nodemailer writes domains in lower case
    expect(named.headerNames).not.toContain('reply-to');

    // A from-address outside them (or malformed, or a subdomain not listed) is ignored with the other two.
    for (const address of ['login@evil.test', 'login@sub.allowed.test', 'not an address@allowed.test']) {
      const ignored = await send({ sendFromEmailAddress: address, sendFromEmailSenderName: 'Evil', replyToEmailAddress: 'help@allowed.test' });
      expect(ignored.headers.from).toBe('Sigil Test <auth@sigil.test>');
      expect(ignored.headerNames).not.toContain('reply-to');
      expect(ignored.from).toBe('auth@sigil.test');
    }

    // A sender name cannot add headers.
    const crafted = await send({ sendFromEmailAddress: 'login@allowed.test', sendFromEmailSenderName: 'Acme\r\nBcc: victim@evil.test' });
    expect(crafted.headerNames).not.toContain('bcc');
    expect(crafted.to).toEqual([email]);
    expect(crafted.headers.from).toMatch(/^"?Acme Bcc: victim@evil\.test"? <login@allowed\.test>$/);
  });

  it('keeps an HTML and header injection attempt in appName inert plain text', async () => {
    const email = 'frank@example.com';
    await createUserWithEmail(email);
    const target = generateP256KeyPair();
    const appName = '<img src=x onerror=alert(1)><a href="https://evil.test">Acme</a>\r\nBcc: victim@evil.test';
    const sent = mailsTo(email);
    await sdkServerClient(sigil).emailAuth({ email, targetPublicKey: target.publicKey, emailCustomization: { appName, magicLinkTemplate: 'https://wallet.example/#%s' } });
    const mail = await mailTo(email, sent);
    expect(mail.to).toEqual([email]);
    expect(mail.headerNames).not.toContain('bcc');
    expect(mail.headers['content-type']).toMatch(/^text\/plain/);
    expect(mail.raw).not.toMatch(/text\/html/);
    const inert = '<img src=x onerror=alert(1)><a href="https://evil.test">Acme</a> Bcc: victim@evil.test';
    expect(mail.text).toContain(`Use this credential to sign in to ${inert}:`);
    expect(mail.headers.subject).toBe(`Sign in to ${inert}`);
    // The key still works: the name is only text.
    expect(openBundle(bundleIn(mail.text), target).apiPublicKey).toMatch(/^0[23]/);
  });

  it('applies emailCustomization and the sender to init_otp emails', async () => {
    const email = 'grace@example.com';
    const sent = mailsTo(email);
    const api = sdkServerClient(sigil);
    await api.initOtp({
      otpType: 'OTP_TYPE_EMAIL',
      contact: email,
      appName: 'Sigil Wallet',
      emailCustomization: { magicLinkTemplate: 'https://wallet.example/otp/%s', logoUrl: 'https://wallet.example/logo.png' },
      sendFromEmailAddress: 'codes@allowed.test',
      sendFromEmailSenderName: 'Wallet Codes',
      replyToEmailAddress: 'help@allowed.test',
    });
    const mail = await mailTo(email, sent);
    const code = /verification code is:\s+([0-9A-Z]{6,9})\s/.exec(mail.text)![1];
    expect(mail.text).toContain(`https://wallet.example/otp/${code}`);
    expect(mail.headers.from).toBe('Wallet Codes <codes@allowed.test>');
    expect(mail.headers['reply-to']).toBe('help@allowed.test');

    const before = await dbSnapshot(sigil);
    await expect(
      api.initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: email, appName: 'x', emailCustomization: { magicLinkTemplate: 'https://wallet.example/otp' } }),
    ).rejects.toThrow(/invalid magic link template/);
    await expect(api.initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: email, appName: 'x', emailCustomization: { templateId: 'welcome' } })).rejects.toThrow(
      /failed to get email template contents/,
    );
    expect(await dbSnapshot(sigil)).toEqual(before);
    expect(mailsTo(email)).toBe(sent + 1);
  });
});

describe('email_auth refusals', () => {
  it('refuses unknown emails, bad templates, bad customization and bad keys, changing nothing and sending nothing', async () => {
    const email = 'heidi@example.com';
    await createUserWithEmail(email);
    const api = sdkServerClient(sigil);
    const target = generateP256KeyPair().publicKey;
    const base = { email, targetPublicKey: target, emailCustomization: APP };
    const before = await dbSnapshot(sigil);
    const sent = mail.mails.length;
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ email: 'nobody@example.com' }, /no user with email nobody@example.com in organization/],
      [{ email: 'not-an-email' }, /invalid email address/],
      [{ emailCustomization: { ...APP, magicLinkTemplate: 'https://wallet.example/auth' } }, /invalid magic link template: .* exactly one %s/],
      [{ emailCustomization: { ...APP, magicLinkTemplate: 'https://wallet.example/%s/%s' } }, /invalid magic link template/],
      [{ emailCustomization: { ...APP, magicLinkTemplate: 'javascript:alert(%s)' } }, /invalid magic link template: .* http or https URL/],
      [{ emailCustomization: { ...APP, magicLinkTemplate: 'https://wallet.example/a b/%s' } }, /invalid magic link template/],
      [{ emailCustomization: { ...APP, logoUrl: 'http://wallet.example/logo.png' } }, /invalid emailCustomization.logoUrl: it must be an https URL/],
      [{ emailCustomization: { ...APP, templateVariables: '{not json' } }, /failed to unmarshal template variables/],
      [{ emailCustomization: { ...APP, templateVariables: '{"nested":{"a":1}}' } }, /failed to unmarshal template variables: .* "nested"/],
      [{ emailCustomization: { ...APP, templateId: 'tmpl-1' } }, /failed to get email template contents: .* no email templates/],
      [{ emailCustomization: { appName: '  ' } }, /invalid emailCustomization.appName: the name of your application is required/],
      [{ emailCustomization: { appName: 'x'.repeat(101) } }, /invalid emailCustomization.appName: at most 100 characters/],
      [{ targetPublicKey: '04abcd' }, /invalid targetPublicKey/],
      [{ expirationSeconds: '-5' }, /invalid api key expiration/],
      [{ apiKeyName: ' ' }, /apiKeyName must not be empty/],
    ];
    for (const [change, message] of cases) {
      await expect(api.emailAuth({ ...base, ...change } as never), JSON.stringify(change)).rejects.toThrow(message);
    }
    expect(await dbSnapshot(sigil)).toEqual(before);
    expect(mail.mails.length).toBe(sent);
  });

  it('does not let a user without a policy run email_auth', async () => {
    const key = newKey();
    await createUserWithEmail('ivan@example.com', [{ apiKeyName: 'k', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }]);
    const before = await dbSnapshot(sigil);
    const sent = mail.mails.length;
    await expect(
      sdkServerClient(sigil, key).emailAuth({ email: 'ivan@example.com', targetPublicKey: generateP256KeyPair().publicKey, emailCustomization: APP }),
    ).rejects.toThrow(/sufficient permissions.*no policy allows ACTIVITY_TYPE_EMAIL_AUTH_V3/);
    expect(await dbSnapshot(sigil)).toEqual(before);
    expect(mail.mails.length).toBe(sent);
  });
});

describe('email recovery', () => {
  /** init_user_email_recovery, then the recovery key from the mail. */
  async function startRecovery(email: string, organizationId?: string) {
    const target = generateP256KeyPair();
    const sent = mailsTo(email);
    const res = await sdkServerClient(sigil, sigil.root, organizationId).initUserEmailRecovery({ email, targetPublicKey: target.publicKey, emailCustomization: APP });
    const mail = await mailTo(email, sent);
    expect(mail.headers.subject).toBe('Recover your Sigil Wallet account');
    return { userId: res.userId, key: openBundle(bundleIn(mail.text), target) };
  }

  it('recovers a sub-organization user from the parent: a new passkey, and the recovery key is spent', async () => {
    const email = 'judy@example.com';
    const created = await sdkServerClient(sigil).createSubOrganization({
      subOrganizationName: 'judy org',
      rootUsers: [{ userName: 'judy', userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
    });
    const subOrg = created.subOrganizationId;
    const judy = created.rootUserIds![0];
    const { userId, key } = await startRecovery(email);
    expect(userId).toBe(judy);
    const asRecovery = sdkServerClient(sigil, key, subOrg);
    const { apiKeys } = await asRecovery.getApiKeys({ userId: judy });
    expect(apiKeys.map((k) => [k.apiKeyName.replace(/ - .*/, ''), k.credential.type, k.expirationSeconds])).toEqual([
      ['Email Recovery', 'CREDENTIAL_TYPE_RECOVER_USER_KEY_P256', '900'],
    ]);

    const { authenticator, params } = registration('judy new phone');
    const res = await asRecovery.recoverUser({ userId: judy, authenticator: params });
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(res.authenticatorId).toHaveLength(1);
    expect(res.activity.result.recoverUserResult).toEqual({ authenticatorId: res.authenticatorId });

    // The passkey stamps through @turnkey/webauthn-stamper; the recovery key no longer does.
    const me = await passkeyClient(authenticator, subOrg).getWhoami({});
    expect(me).toMatchObject({ organizationId: subOrg, userId: judy });
    const { user } = await passkeyClient(authenticator, subOrg).getUser({ userId: judy });
    expect(user.authenticators.map((a) => [a.authenticatorId, a.authenticatorName, a.credentialId])).toEqual([
      [res.authenticatorId[0], 'judy new phone', authenticator.credentialId],
    ]);
    expect(user.apiKeys).toEqual([]);
    await expect(asRecovery.getWhoami({})).rejects.toThrow(/could not find public key/);
  });

  it('lets only the recovered user (with its recovery key) recover itself; a new recovery replaces the last', async () => {
    const email = 'ken@example.com';
    const ken = await createUserWithEmail(email);
    const otherKey = newKey();
    const other = await createUserWithEmail('lena@example.com', [{ apiKeyName: 'lena key', publicKey: otherKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }]);
    const stale = await startRecovery(email);
    const { key } = await startRecovery(email);
    expect(stale.userId).toBe(ken);
    // Only the newest recovery credential works.
    await expect(sdkServerClient(sigil, stale.key).getWhoami({})).rejects.toThrow(/could not find public key/);

    const before = await dbSnapshot(sigil);
    // Another user's own key, for ken: no policy allows it.
    await expect(sdkServerClient(sigil, otherKey).recoverUser({ userId: ken, authenticator: registration('x').params })).rejects.toThrow(
      /sufficient permissions.*no policy allows ACTIVITY_TYPE_RECOVER_USER/,
    );
    // Ken's recovery key, for another user.
    await expect(sdkServerClient(sigil, key).recoverUser({ userId: other, authenticator: registration('y').params })).rejects.toThrow(/sufficient permissions/);
    // A bad attestation (the challenge is not the one signed).
    const bad = registration('z').params;
    await expect(sdkServerClient(sigil, key).recoverUser({ userId: ken, authenticator: { ...bad, challenge: randomBytes(32).toString('base64url') } })).rejects.toThrow(
      /invalid authenticator attestation/,
    );
    // Non-root users may not start a recovery without a policy (RECOVERY/CREATE).
    await expect(
      sdkServerClient(sigil, otherKey).initUserEmailRecovery({ email, targetPublicKey: generateP256KeyPair().publicKey, emailCustomization: APP }),
    ).rejects.toThrow(/no policy allows ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY_V2/);
    expect(await dbSnapshot(sigil)).toEqual(before);

    const { authenticator, params } = registration('ken laptop');
    const res = await sdkServerClient(sigil, key).recoverUser({ userId: ken, authenticator: params });
    expect((await passkeyClient(authenticator).getWhoami({})).userId).toBe(ken);
    expect(res.authenticatorId).toHaveLength(1);
  });

  it('obeys a DENY policy on recovery keys for anything but recover_user', async () => {
    const email = 'mallory@example.com';
    const mallory = await createUserWithEmail(email);
    await sdkServerClient(sigil).createPolicy({
      policyName: 'recovery keys only recover',
      effect: 'EFFECT_DENY',
      condition: "activity.type != 'ACTIVITY_TYPE_RECOVER_USER'",
      consensus: "credentials.any(c, c.type == 'CREDENTIAL_TYPE_RECOVER_USER_KEY_P256')",
      notes: '',
    });
    const { key } = await startRecovery(email);
    const asRecovery = sdkServerClient(sigil, key);

    const before = await dbSnapshot(sigil);
    // Adding an API key to oneself is self-service, but the policy denies it to a recovery key.
    await expect(
      asRecovery.createApiKeys({ userId: mallory, apiKeys: [{ apiKeyName: 'stolen', publicKey: newKey().apiPublicKey, curveType: 'API_KEY_CURVE_P256' }] }),
    ).rejects.toThrow(/policy engine denied request explicitly/);
    await expect(asRecovery.createReadWriteSession({ targetPublicKey: generateP256KeyPair().publicKey })).rejects.toThrow(/policy engine denied request explicitly/);
    expect(await dbSnapshot(sigil)).toEqual(before);

    const { authenticator, params } = registration('mallory phone');
    await asRecovery.recoverUser({ userId: mallory, authenticator: params });
    expect((await passkeyClient(authenticator).getWhoami({})).userId).toBe(mallory);
  });

  it('refuses an unknown email and bad customization, changing nothing', async () => {
    const api = sdkServerClient(sigil);
    const before = await dbSnapshot(sigil);
    const sent = mail.mails.length;
    const target = generateP256KeyPair().publicKey;
    await expect(api.initUserEmailRecovery({ email: 'nobody@example.com', targetPublicKey: target, emailCustomization: APP })).rejects.toThrow(/no user with email/);
    await expect(
      api.initUserEmailRecovery({ email: 'ken@example.com', targetPublicKey: target, emailCustomization: { ...APP, magicLinkTemplate: 'ftp://x/%s' } }),
    ).rejects.toThrow(/invalid magic link template/);
    await expect(api.initUserEmailRecovery({ email: 'ken@example.com', targetPublicKey: target, emailCustomization: { appName: '' } })).rejects.toThrow(
      /appName: the name of your application is required/,
    );
    expect(await dbSnapshot(sigil)).toEqual(before);
    expect(mail.mails.length).toBe(sent);
  });
});
