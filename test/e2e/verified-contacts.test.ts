// Verified contacts and older create_sub_organization versions (docs/compatibility.md "Email and SMS
// logins through the parent", "Older activity versions"; docs/reference/sessions.md "OTP": a
// verification token marks a contact verified at sub-organization creation and verifies a contact
// update): through @turnkey/sdk-server, a sub-organization created with the token of its root user's
// email is found by getVerifiedSubOrgIds while one created without is not; update_user_email with a
// token verifies the new email; a token for another contact is refused and changes nothing. V7 of
// create_sub_organization answers under its own result member; ACTIVITY_TYPE_VERIFY_OTP takes the V2
// body @turnkey/core sends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptOtpCodeToBundle, generateP256KeyPair } from '@turnkey/crypto';
import { ApiKeyStamper, SignatureFormat } from '@turnkey/api-key-stamper';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot } from '../helpers/db-snapshot.js';
import { codeIn, smtpEnv, startInbox, type Inbox } from '../helpers/mail.js';

let inbox: Inbox;
let sigil: SigilInstance;

beforeAll(async () => {
  inbox = await startInbox();
  sigil = await startSigil(smtpEnv(inbox));
}, 60_000);

afterAll(async () => {
  await sigil?.stop();
  await inbox?.close();
});

function newKey(): KeyPair {
  const k = generateP256KeyPair();
  return { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
}

/** init_otp → mailed code → verify_otp (V2), all through @turnkey/sdk-server as the root user. */
async function tokenFor(email: string, key = newKey(), organizationId = sigil.root.organizationId): Promise<string> {
  const api = sdkServerClient(sigil, sigil.root, organizationId);
  const before = inbox.count(email);
  const { otpId, otpEncryptionTargetBundle } = await api.initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: email, appName: 'Sigil Test' } as never);
  const code = codeIn(await inbox.next(email, before));
  const encryptedOtpBundle = await encryptOtpCodeToBundle(code, otpEncryptionTargetBundle, key.apiPublicKey, sigil.root.signerPublicKey);
  return (await api.verifyOtp({ otpId, encryptedOtpBundle })).verificationToken;
}

/** A key-bound token with the signup usage signature its key makes (as @turnkey/core signs it). */
async function signupProof(email: string): Promise<{ verificationToken: string; clientSignature: Record<string, string> }> {
  const key = newKey();
  const verificationToken = await tokenFor(email, key);
  const message = JSON.stringify({ signupV2: { email }, tokenId: JSON.parse(atob(verificationToken.split('.')[1])).id, type: 'USAGE_TYPE_SIGNUP' });
  const signature = await new ApiKeyStamper(key).sign(message, SignatureFormat.Raw);
  return { verificationToken, clientSignature: { publicKey: key.apiPublicKey, scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256', message, signature } };
}

const rootUser = (email: string) => ({ userName: email, userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [] });

describe('verified contacts', () => {
  it('create_sub_organization with a verificationToken verifies the email; list_verified_suborgs finds only such', async () => {
    const api = sdkServerClient(sigil);
    const verified = await api.createSubOrganization({
      subOrganizationName: 'verified',
      rootUsers: [rootUser('vera@example.com')],
      rootQuorumThreshold: 1,
      ...(await signupProof('vera@example.com')),
    });
    const plain = await api.createSubOrganization({ subOrganizationName: 'plain', rootUsers: [rootUser('paul@example.com')], rootQuorumThreshold: 1 });

    expect((await api.getVerifiedSubOrgIds({ filterType: 'EMAIL', filterValue: 'vera@example.com' })).organizationIds).toEqual([verified.subOrganizationId]);
    expect((await api.getVerifiedSubOrgIds({ filterType: 'EMAIL', filterValue: 'paul@example.com' })).organizationIds).toEqual([]);
    expect((await api.getSubOrgIds({ filterType: 'EMAIL', filterValue: 'paul@example.com' })).organizationIds).toEqual([plain.subOrganizationId]);
    await expect(api.getVerifiedSubOrgIds({ filterType: 'NAME', filterValue: 'plain' })).rejects.toThrow(/filters by EMAIL or PHONE_NUMBER/);

    // update_user_email with the token of the new email verifies it; the sub-organization's own user updates.
    const withKey = newKey();
    const sub2 = await api.createSubOrganization({
      subOrganizationName: 'with key',
      rootUsers: [{ ...rootUser('quinn@example.com'), apiKeys: [{ apiKeyName: 'k', publicKey: withKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }] }],
      rootQuorumThreshold: 1,
    });
    const own = sdkServerClient(sigil, withKey, sub2.subOrganizationId);
    const wrong = await tokenFor('someone.else@example.com');
    const before = await dbSnapshot(sigil);
    await expect(own.updateUserEmail({ userId: sub2.rootUserIds[0], userEmail: 'quinn.new@example.com', verificationToken: wrong })).rejects.toThrow(/verifies someone\.else@example\.com, not quinn\.new@example\.com/);
    expect(await dbSnapshot(sigil)).toEqual(before);
    const good = await tokenFor('quinn.new@example.com');
    await own.updateUserEmail({ userId: sub2.rootUserIds[0], userEmail: 'quinn.new@example.com', verificationToken: good });
    expect((await api.getVerifiedSubOrgIds({ filterType: 'EMAIL', filterValue: 'quinn.new@example.com' })).organizationIds).toEqual([sub2.subOrganizationId]);
    // Changing it again without a token leaves it unverified.
    await own.updateUserEmail({ userId: sub2.rootUserIds[0], userEmail: 'quinn.other@example.com' });
    expect((await api.getVerifiedSubOrgIds({ filterType: 'EMAIL', filterValue: 'quinn.other@example.com' })).organizationIds).toEqual([]);
  });

  it('a token for an email no root user has is refused, and a token signs up once', async () => {
    const api = sdkServerClient(sigil);
    const token = await signupProof('owner@example.com');
    const before = await dbSnapshot(sigil);
    await expect(
      api.createSubOrganization({ subOrganizationName: 'x', rootUsers: [rootUser('other@example.com')], rootQuorumThreshold: 1, ...token }),
    ).rejects.toThrow(/it verifies owner@example\.com, which is not the userEmail of any root user/);
    expect(await dbSnapshot(sigil)).toEqual(before);
    await api.createSubOrganization({ subOrganizationName: 'once', rootUsers: [rootUser('owner@example.com')], rootQuorumThreshold: 1, ...token });
    await expect(
      api.createSubOrganization({ subOrganizationName: 'twice', rootUsers: [rootUser('owner@example.com')], rootQuorumThreshold: 1, ...token }),
    ).rejects.toThrow(/already been used/);
  });
});

describe('older type values', () => {
  it('ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7 answers under createSubOrganizationResultV7; V4 keys default to P-256', async () => {
    const url = `${sigil.url}/public/v1/submit/create_sub_organization`;
    const key = newKey();
    const v7 = await rawPost(url, activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7', {
      subOrganizationName: 'v7',
      rootUsers: [{ userName: 'u', apiKeys: [{ apiKeyName: 'k', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
    }), { key: sigil.root });
    expect(v7.status, JSON.stringify(v7.body)).toBe(200);
    const result = v7.body.activity.result;
    expect(Object.keys(result).filter((k) => k !== 'activity')).toEqual(['createSubOrganizationResultV7']);
    expect(v7.body.activity.intent.createSubOrganizationIntentV7.subOrganizationName).toBe('v7');
    const sub = result.createSubOrganizationResultV7.subOrganizationId;
    expect((await sdkServerClient(sigil, key, sub).getWhoami({ organizationId: sub })).organizationId).toBe(sub);

    const v4key = newKey();
    const v4 = await rawPost(url, activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V4', {
      subOrganizationName: 'v4',
      rootUsers: [{ userName: 'u', apiKeys: [{ apiKeyName: 'k', publicKey: v4key.apiPublicKey }], authenticators: [] }],
      rootQuorumThreshold: 1,
    }), { key: sigil.root });
    expect(v4.status, JSON.stringify(v4.body)).toBe(200);
    const sub4 = v4.body.activity.result.createSubOrganizationResultV4.subOrganizationId;
    expect((await sdkServerClient(sigil, v4key, sub4).getWhoami({ organizationId: sub4 })).organizationId).toBe(sub4);
  });

  it('ACTIVITY_TYPE_VERIFY_OTP takes the V2 body (encryptedOtpBundle) as @turnkey/core sends it', async () => {
    const email = 'legacy@example.com';
    const before = inbox.count(email);
    const { otpId, otpEncryptionTargetBundle } = await sdkServerClient(sigil).initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: email, appName: 'Sigil Test' } as never);
    const code = codeIn(await inbox.next(email, before));
    const client = newKey();
    const encryptedOtpBundle = await encryptOtpCodeToBundle(code, otpEncryptionTargetBundle, client.apiPublicKey, sigil.root.signerPublicKey);
    const res = await rawPost(`${sigil.url}/public/v1/submit/verify_otp`, activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_VERIFY_OTP', { otpId, encryptedOtpBundle }), { key: sigil.root });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const token = res.body.activity.result.verifyOtpResult.verificationToken;
    expect(JSON.parse(atob(token.split('.')[1])).public_key).toBe(client.apiPublicKey);
    // Neither shape: refused with the schema's message.
    const neither = await rawPost(`${sigil.url}/public/v1/submit/verify_otp`, activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_VERIFY_OTP', { otpId }), { key: sigil.root });
    expect(neither.status).toBe(400);
    expect(neither.body.message).toMatch(/bad request body/);
  });
});

describe('older init_otp versions', () => {
  it('ACTIVITY_TYPE_INIT_OTP (no appName) and _V2 answer under initOtpResult; the code still arrives', async () => {
    for (const [type, extra] of [
      ['ACTIVITY_TYPE_INIT_OTP', {}],
      ['ACTIVITY_TYPE_INIT_OTP_V2', { appName: 'Old App' }],
    ] as const) {
      const email = `${type.toLowerCase().replace(/_/g, '.')}@example.com`;
      const before = inbox.count(email);
      const res = await rawPost(`${sigil.url}/public/v1/submit/init_otp`, activityBody(sigil.root.organizationId, type, { otpType: 'OTP_TYPE_EMAIL', contact: email, ...extra }), { key: sigil.root });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.activity.result.initOtpResult.otpId).toMatch(/^[0-9a-f-]{36}$/);
      expect(codeIn(await inbox.next(email, before))).toMatch(/^[0-9A-Z]{9}$/);
    }
  });
});
