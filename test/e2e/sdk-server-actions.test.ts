// Every server action of @turnkey/sdk-server (`actions`: sendCredential, sendOtp, verifyOtp,
// otpLogin, oauthLogin, createOauthProviders, getUsers, getSuborgs, getVerifiedSuborgs,
// createSuborg, getOrCreateSuborg), unchanged, against a real `sigil serve`. The module
// reads its configuration from the environment when it is imported, as a Next.js backend would:
// here a parent-organization API user that is not root, allowed by the policy the reference docs
// give for an authentication backend (docs/compatibility.md "Authentication activities a parent
// organization runs for its sub-organizations"). The actions submit the login activities of a
// sub-organization's user with the parent's credential (item 1): the parent's policies decide, and the
// activity is recorded in the sub-organization. Real SMTP carries the codes and bundles; a loopback
// issuer stands in for Google (SIGIL_OIDC_ISSUERS maps https://accounts.google.com to its JWKS). The
// actions swallow errors and answer undefined, so every call is checked by its value.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import {
  decryptCredentialBundle,
  encryptOtpCodeToBundle,
  generateP256KeyPair,
  getPublicKey,
  verifyOtpVerificationToken,
  verifySessionJwtSignature,
} from '@turnkey/crypto';
import { ApiKeyStamper, SignatureFormat } from '@turnkey/api-key-stamper';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, newKey, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot, expectRefusedUnchanged } from '../helpers/db-snapshot.js';
import { bundleIn, codeIn, parse, smtpEnv, startInbox, type Inbox } from '../helpers/mail.js';

type Actions = typeof import('@turnkey/sdk-server/dist/actions.js');

const GOOGLE = 'https://accounts.google.com';
const CLIENT_ID = 'web-client.apps.googleusercontent.com';

let inbox: Inbox;
let issuer: Server;
let google: { privateKey: CryptoKey; jwk: JWK };
let sigil: SigilInstance;
let actions: Actions;
let backend: { userId: string; key: KeyPair; policyId: string };

beforeAll(async () => {
  inbox = await startInbox();
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  google = { privateKey, jwk: { ...(await exportJWK(publicKey)), kid: 'g1', alg: 'RS256', use: 'sig' } };
  issuer = createServer((req, res) => {
    if (req.url !== '/google/jwks') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [google.jwk] }));
  });
  await new Promise<void>((resolve) => issuer.listen(0, '127.0.0.1', resolve));
  const jwks = `http://127.0.0.1:${(issuer.address() as { port: number }).port}/google/jwks`;
  sigil = await startSigil({ ...smtpEnv(inbox), SIGIL_OIDC_ISSUERS: `${GOOGLE}=${jwks}` });

  // The backend's own user in the parent: not root, allowed what an authentication backend needs.
  const root = sdkServerClient(sigil);
  const key = newKey();
  const { userIds } = await root.createUsers({
    users: [{ userName: 'auth backend', apiKeys: [{ apiKeyName: 'backend', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
  });
  const { policyId } = await root.createPolicy({
    policyName: 'authentication backend',
    effect: 'EFFECT_ALLOW',
    consensus: `approvers.any(user, user.id == '${userIds[0]}')`,
    condition:
      "(activity.resource == 'AUTH' && activity.action == 'CREATE') || (activity.resource == 'OTP' && activity.action == 'CREATE') || " +
      "(activity.resource == 'OTP' && activity.action == 'VERIFY') || (activity.resource == 'ORGANIZATION' && activity.action == 'CREATE') || " +
      "(activity.resource == 'CREDENTIAL' && activity.action == 'CREATE')",
    notes: '',
  });
  backend = { userId: userIds[0], key, policyId };

  // The actions module builds its client from these when it is first imported.
  process.env.NEXT_PUBLIC_BASE_URL = sigil.url;
  process.env.NEXT_PUBLIC_ORGANIZATION_ID = sigil.root.organizationId;
  process.env.TURNKEY_API_PUBLIC_KEY = key.apiPublicKey;
  process.env.TURNKEY_API_PRIVATE_KEY = key.apiPrivateKey;
  // The package exports only its root, whose index already evaluated actions.mjs (without these
  // variables) when the test helpers imported it; a query makes the loader evaluate the module
  // again, as a fresh server process would, reading the environment set just above.
  const dist = dirname(createRequire(import.meta.url).resolve('@turnkey/sdk-server'));
  actions = (await import(`${pathToFileURL(join(dist, 'actions.mjs')).href}?sigil=${Date.now()}`)) as Actions;
}, 60_000);

afterAll(async () => {
  await sigil?.stop();
  await inbox?.close();
  await new Promise<void>((resolve) => (issuer ? issuer.close(() => resolve()) : resolve()));
});

const sha256hex = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const claimsOf = (jwt: string) => JSON.parse(atob(jwt.split('.')[1]));

/** A Google id_token for `email`, with the nonce that binds it to `publicKey` when given. */
function googleToken(email: string, opts: { publicKey?: string; verified?: boolean; sub?: string } = {}) {
  return new SignJWT({ email, email_verified: opts.verified ?? true, ...(opts.publicKey ? { nonce: sha256hex(opts.publicKey) } : {}) })
    .setProtectedHeader({ alg: 'RS256', kid: 'g1', typ: 'JWT' })
    .setIssuer(GOOGLE)
    .setAudience(CLIENT_ID)
    .setSubject(opts.sub ?? `google-${email}`)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(google.privateKey);
}

/** The login usage @turnkey/core signs for otp_login (docs/reference/sessions.md "Login activities"), raw r‖s. */
async function loginSignature(signer: KeyPair, sessionPublicKey: string, tokenId: string) {
  const message = JSON.stringify({ login: { publicKey: sessionPublicKey }, tokenId, type: 'USAGE_TYPE_LOGIN' });
  return { publicKey: signer.apiPublicKey, scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256' as const, message, signature: await new ApiKeyStamper(signer).sign(message, SignatureFormat.Raw) };
}

/** The session key stamps a whoami in `organizationId` as `userId`. */
async function expectSessionWorks(session: string, sessionKey: KeyPair, organizationId: string, userId: string) {
  expect(await verifySessionJwtSignature(session, sigil.root.signerPublicKey)).toBe(true);
  expect(claimsOf(session)).toMatchObject({ organization_id: organizationId, user_id: userId, public_key: sessionKey.apiPublicKey });
  expect(await sdkServerClient(sigil, sessionKey, organizationId).getWhoami({})).toMatchObject({ organizationId, userId });
}

describe('@turnkey/sdk-server server actions', () => {
  let sub: string;
  let adaId: string;
  const ada = 'ada@example.com';

  it('createSuborg, getSuborgs, getUsers, getOrCreateSuborg and getVerifiedSuborgs', async () => {
    const created = await actions.createSuborg({ email: ada });
    expect(created?.subOrganizationId).toMatch(/^[0-9a-f-]{36}$/);
    sub = created!.subOrganizationId;
    expect((await actions.getSuborgs({ filterType: 'EMAIL' as never, filterValue: ada })).organizationIds).toEqual([sub]);

    const { users } = (await actions.getUsers({ organizationId: sub }))!;
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ userName: ada, userEmail: ada, apiKeys: [], authenticators: [], oauthProviders: [] });
    adaId = users[0].userId;
    // The default wallet of the action: Ethereum and Solana accounts.
    const wallets = await sdkServerClient(sigil, sigil.root, sub).getWallets({});
    const accounts = await sdkServerClient(sigil, sigil.root, sub).getWalletAccounts({ walletId: wallets.wallets[0].walletId });
    expect(accounts.accounts.map((a) => a.addressFormat).sort()).toEqual(['ADDRESS_FORMAT_ETHEREUM', 'ADDRESS_FORMAT_SOLANA']);

    // An unverified email finds nothing verified; with includeUnverified the existing one is found.
    expect((await actions.getVerifiedSuborgs({ filterType: 'EMAIL' as never, filterValue: ada })).organizationIds).toEqual([]);
    expect(await actions.getOrCreateSuborg({ filterType: 'EMAIL' as never, filterValue: ada, includeUnverified: true })).toEqual({ subOrganizationIds: [sub] });
    // Without it, no verified match: a new sub-organization for that contact.
    const made = await actions.getOrCreateSuborg({ filterType: 'EMAIL' as never, filterValue: 'bo@example.com', additionalData: { email: 'bo@example.com' } });
    expect(made.subOrganizationIds).toHaveLength(1);
    expect(made.subOrganizationIds[0]).not.toBe(sub);
    expect((await actions.getSuborgs({ filterType: 'EMAIL' as never, filterValue: 'bo@example.com' })).organizationIds).toEqual(made.subOrganizationIds);
  });

  it('sendOtp, verifyOtp, then otpLogin of the sub-organization user with the parent credential', async () => {
    const before = inbox.count(ada);
    const sent = await actions.sendOtp({ contact: ada, otpType: 'OTP_TYPE_EMAIL', appName: 'Actions Test', otpLength: 6, alphanumeric: false } as never);
    expect(sent?.otpId).toMatch(/^[0-9a-f-]{36}$/);
    const code = codeIn(await inbox.next(ada, before));
    expect(code).toMatch(/^\d{6}$/);

    const client = newKey();
    const encryptedOtpBundle = await encryptOtpCodeToBundle(code, sent!.otpEncryptionTargetBundle, client.apiPublicKey, sigil.root.signerPublicKey);
    const verified = await actions.verifyOtp({ otpId: sent!.otpId, encryptedOtpBundle, sessionLengthSeconds: 600 } as never);
    expect(verified?.verificationToken).toBeTruthy();
    const claims = await verifyOtpVerificationToken(verified!.verificationToken, sigil.root.signerPublicKey);
    expect(claims).toMatchObject({ contact: ada, verification_type: 'OTP_TYPE_EMAIL', organization_id: sigil.root.organizationId, public_key: client.apiPublicKey });

    const sessionKey = newKey();
    const loggedIn = await actions.otpLogin({
      suborgID: sub,
      verificationToken: verified!.verificationToken,
      publicKey: sessionKey.apiPublicKey,
      clientSignature: await loginSignature(client, sessionKey.apiPublicKey, claims.id),
      sessionLengthSeconds: 900,
    } as never);
    expect(loggedIn?.session).toBeTruthy();
    await expectSessionWorks(loggedIn!.session, sessionKey, sub, adaId);

    // Recorded in the sub-organization, voted by the parent's user, allowed by the parent's policy.
    const { activities } = await sdkServerClient(sigil, sigil.root, sub).getActivities({ filterByType: ['ACTIVITY_TYPE_OTP_LOGIN_V2'] });
    expect(activities).toHaveLength(1);
    expect(activities[0]).toMatchObject({ organizationId: sub, status: 'ACTIVITY_STATUS_COMPLETED' });
    expect(activities[0].votes[0]).toMatchObject({ userId: backend.userId, publicKey: backend.key.apiPublicKey });
    expect(activities[0].votes[0].user).toMatchObject({ userId: backend.userId, userName: 'auth backend' });
    const evaluations = await sdkServerClient(sigil, sigil.root, sub).getPolicyEvaluations({ activityId: activities[0].id } as never);
    expect((evaluations as any).policyEvaluations[0].policyEvaluations).toEqual([{ policyId: backend.policyId, outcome: 'OUTCOME_ALLOW' }]);

    // The login proved the contact: the sub-organization is now found among the verified ones.
    expect((await actions.getVerifiedSuborgs({ filterType: 'EMAIL' as never, filterValue: ada })).organizationIds).toEqual([sub]);
    expect(await actions.getOrCreateSuborg({ filterType: 'EMAIL' as never, filterValue: ada })).toEqual({ subOrganizationIds: [sub] });
  });

  it('createOauthProviders from a Google id_token of the user email, then oauthLogin', async () => {
    // Social linking refused: the token's email is not the user's. Nothing changes.
    const before = await dbSnapshot(sigil);
    const mismatch = await actions.createOauthProviders({ organizationId: sub, userId: adaId, oauthProviders: [{ providerName: 'Google', oidcToken: await googleToken('eve@example.com') }] });
    expect(mismatch).toBeUndefined();
    const unverified = await actions.createOauthProviders({ organizationId: sub, userId: adaId, oauthProviders: [{ providerName: 'Google', oidcToken: await googleToken(ada, { verified: false }) }] });
    expect(unverified).toBeUndefined();
    expect(await dbSnapshot(sigil)).toEqual(before);

    const linked = await actions.createOauthProviders({ organizationId: sub, userId: adaId, oauthProviders: [{ providerName: 'Google', oidcToken: await googleToken(ada) }] });
    expect(linked?.providerIds).toHaveLength(1);
    const providers = await sdkServerClient(sigil, sigil.root, sub).getOauthProviders({ userId: adaId });
    expect(providers.oauthProviders).toMatchObject([{ providerId: linked!.providerIds[0], issuer: GOOGLE, audience: CLIENT_ID, subject: `google-${ada}` }]);

    const sessionKey = newKey();
    const loggedIn = await actions.oauthLogin({ suborgID: sub, oidcToken: await googleToken(ada, { publicKey: sessionKey.apiPublicKey }), publicKey: sessionKey.apiPublicKey });
    expect(loggedIn?.session).toBeTruthy();
    await expectSessionWorks(loggedIn!.session, sessionKey, sub, adaId);
  });

  it('sendCredential mails the sub-organization user a credential bundle that stamps', async () => {
    const target = generateP256KeyPair();
    const before = inbox.count(ada);
    const sent = await actions.sendCredential({ email: ada, targetPublicKey: target.publicKeyUncompressed, suborgID: sub, emailCustomization: { appName: 'Actions Test' } } as never);
    expect(sent).toBeUndefined(); // the action answers nothing; the mail is its result
    const apiPrivateKey = decryptCredentialBundle(bundleIn(parse((await inbox.next(ada, before)).raw).text), target.privateKey);
    const key = { apiPrivateKey, apiPublicKey: Buffer.from(getPublicKey(apiPrivateKey, true)).toString('hex') };
    expect(await sdkServerClient(sigil, key, sub).getWhoami({})).toMatchObject({ organizationId: sub, userId: adaId });
    const { activities } = await sdkServerClient(sigil, sigil.root, sub).getActivities({ filterByType: ['ACTIVITY_TYPE_EMAIL_AUTH_V3'] });
    expect(activities[0]).toMatchObject({ organizationId: sub, status: 'ACTIVITY_STATUS_COMPLETED', votes: [{ userId: backend.userId }] });
  });

  it('the parent credential still writes nothing else to a sub-organization, and its policies decide', async () => {
    const before = await dbSnapshot(sigil);
    const wallet = await rawPost(
      `${sigil.url}/public/v1/submit/create_wallet`,
      activityBody(sub, 'ACTIVITY_TYPE_CREATE_WALLET', { walletName: 'intruder', accounts: [] }),
      { key: backend.key },
    );
    await expectRefusedUnchanged(sigil, before, wallet, 403, 7, 'REQUEST_NOT_AUTHORIZED', /cannot submit activities to a sub-organization \(ACTIVITY_TYPE_CREATE_WALLET is not one of/);

    // Another parent user: the parent's policy asks for the backend's approval, which a login
    // submitted for a sub-organization cannot wait for (votes are cast where it is recorded).
    const other = newKey();
    await sdkServerClient(sigil).createUsers({
      users: [{ userName: 'no policy', apiKeys: [{ apiKeyName: 'k', publicKey: other.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    const before2 = await dbSnapshot(sigil);
    const target = generateP256KeyPair();
    const denied = await rawPost(
      `${sigil.url}/public/v1/submit/email_auth`,
      activityBody(sub, 'ACTIVITY_TYPE_EMAIL_AUTH_V3', { email: ada, targetPublicKey: target.publicKeyUncompressed, emailCustomization: { appName: 'x' } }),
      { key: other },
    );
    await expectRefusedUnchanged(sigil, before2, denied, 403, 7, 'REQUEST_NOT_AUTHORIZED', /sufficient permissions/);
    expect(denied.body.details[1]).toEqual({
      '@type': 'type.googleapis.com/errors.v1.PolicyEnginePermissionError',
      message: 'No policies evaluated to outcome: Allow',
      policyEvaluations: [{ policyId: backend.policyId, outcome: 'OUTCOME_REQUIRES_CONSENSUS' }],
    });
    expect(denied.body.details[2].reason).toMatch(/^ACTIVITY_TYPE_EMAIL_AUTH_V3 needs more approvals in organization .*must be allowed outright/);
  });
});
