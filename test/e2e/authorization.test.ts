// Four authorization flaws (docs/reference/policies.md "Keywords"; docs/reference/activities.md
// "Votes"), each reproduced through the official clients against a real Sigil (and its auth proxy for
// the first), and each refused now:
// 1. bearer secrets (verification tokens, client signatures, OTP codes, OIDC tokens) are never
//    readable from an activity, a vote, a policy evaluation, the database or the log, and a token
//    bound to no key can neither sign up with V8 nor log in through the proxy after its signup;
// 2. sign_raw_payloads judges every payload as sign_raw_payload would (an EIP-712 Permit DENY);
// 3. tag activities are USER / PRIVATE_KEY activities for policies, init_otp_auth is AUTH/CREATE;
// 4. only users included in an activity's consensus may approve or reject it;
// and two final approvals on two processes at once run the activity once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper, SignatureFormat } from '@turnkey/api-key-stamper';
import { encryptOtpCodeToBundle, generateP256KeyPair } from '@turnkey/crypto';
import { runSigil, serveAnother, startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot } from '../helpers/db-snapshot.js';
import { codeIn, smtpEnv, startInbox, type Inbox } from '../helpers/mail.js';

let inbox: Inbox;
let sigil: SigilInstance;
let root: ReturnType<typeof sdkServerClient>;
let org: string;
let configId: string;
const users: Record<string, { id: string; key: KeyPair }> = {};

function newKey(): KeyPair {
  const k = generateP256KeyPair();
  return { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
}

function http(key: KeyPair) {
  return new TurnkeyClient({ baseUrl: sigil.url }, new ApiKeyStamper(key));
}

async function newUser(name: string) {
  const key = newKey();
  const { userIds } = await root.createUsers({
    users: [{ userName: name, apiKeys: [{ apiKeyName: `${name} key`, publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
  });
  users[name] = { id: userIds[0], key };
  return users[name];
}

/** `call` is refused with an error matching `message`, and no row of any table changed. */
async function refusedUnchanged(call: () => Promise<unknown>, message: RegExp): Promise<void> {
  const before = await dbSnapshot(sigil);
  await expect(call()).rejects.toThrow(message);
  expect(await dbSnapshot(sigil)).toEqual(before);
}

const decode = (jwt: string) => JSON.parse(atob(jwt.split('.')[1]));

/** init_otp through @turnkey/sdk-server as the root user; the code as mailed over real SMTP. */
async function mailedCode(email: string): Promise<{ otpId: string; otpEncryptionTargetBundle: string; code: string }> {
  const before = inbox.count(email);
  const r = await root.initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: email, appName: 'Sigil Test' } as never);
  return { ...r, code: codeIn(await inbox.next(email, before)) };
}

/** The legacy verify_otp with a plaintext code and no publicKey: a token bound to no key. */
async function unboundToken(email: string): Promise<{ token: string; code: string }> {
  const { otpId, code } = await mailedCode(email);
  const res = await rawPost(`${sigil.url}/public/v1/submit/verify_otp`, activityBody(org, 'ACTIVITY_TYPE_VERIFY_OTP', { otpId, otpCode: code }), { key: sigil.root });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const token = res.body.activity.result.verifyOtpResult.verificationToken;
  expect(decode(token).public_key).toBeUndefined();
  return { token, code };
}

/** verify_otp V2 through @turnkey/sdk-server: a token bound to `key`. */
async function boundToken(email: string, key: KeyPair): Promise<{ token: string; code: string; activityId: string }> {
  const { otpId, otpEncryptionTargetBundle, code } = await mailedCode(email);
  const encryptedOtpBundle = await encryptOtpCodeToBundle(code, otpEncryptionTargetBundle, key.apiPublicKey, sigil.root.signerPublicKey);
  const r = await root.verifyOtp({ otpId, encryptedOtpBundle });
  return { token: r.verificationToken, code, activityId: r.activity.id };
}

/** The client signature @turnkey/core makes for a token usage (docs/reference/sessions.md "Login activities"): raw r‖s by the token's key. */
async function usageSignature(key: KeyPair, usage: Record<string, unknown>) {
  const message = JSON.stringify(usage);
  const signature = await new ApiKeyStamper(key).sign(message, SignatureFormat.Raw);
  return { publicKey: key.apiPublicKey, scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256' as const, message, signature };
}

const rootUser = (email: string, apiKeys: unknown[] = []) => ({ userName: email, userEmail: email, apiKeys, authenticators: [], oauthProviders: [] });

async function proxyPost(operation: string, body: unknown) {
  return rawPost(`${sigil.authProxyUrl}/v1/${operation}`, body as object, { headers: { 'X-Auth-Proxy-Config-ID': configId } });
}

beforeAll(async () => {
  inbox = await startInbox();
  sigil = await startSigil(smtpEnv(inbox));
  root = sdkServerClient(sigil);
  org = sigil.root.organizationId;
  const r = runSigil(['proxy-config', 'create', '--data-dir', sigil.dataDir, '--json', '--app-name', 'Authz Test'], sigil.env);
  if (r.status !== 0) throw new Error(`proxy-config create failed: ${r.stderr}`);
  configId = JSON.parse(r.stdout).configId;
  // A user of the parent organization with no policies at all.
  await newUser('mallory');
}, 60_000);

afterAll(async () => {
  await sigil?.stop();
  await inbox?.close();
});

describe('create_read_write_session follows Turnkey: the caller by default, another user only where a policy allows (before any policy exists here)', () => {
  it('create_read_write_session for another user needs a policy; for oneself it does not', async () => {
    const sam = await newUser('sam');
    const target = newKey();
    const samApi = sdkServerClient(sigil, sam.key);
    const own = await samApi.createReadWriteSession({ targetPublicKey: target.apiPublicKey } as never);
    expect(own.userId).toBe(sam.id);
    await refusedUnchanged(() => samApi.createReadWriteSession({ targetPublicKey: target.apiPublicKey, userId: sigil.root.userId } as never), /no policy allows ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2/);
  });
});

describe('1. bearer secrets never leave through records, and a stranger cannot log in with them', () => {
  it('the reported takeover: legacy token → create_sub_organization V8 → get_activity → proxy otp_login is refused at every step', async () => {
    const email = 'victim@example.com';
    const { token } = await unboundToken(email);
    // V8 takes only key-bound tokens (docs/compatibility.md "What is implemented").
    await refusedUnchanged(() =>
      root.createSubOrganization({ subOrganizationName: 'victim', rootUsers: [rootUser(email)], rootQuorumThreshold: 1, verificationToken: token }),
      /bound to no public key, and ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8 takes only key-bound tokens/,
    );
    // The legacy V7 still takes it, and spends it whole.
    const v7 = await rawPost(`${sigil.url}/public/v1/submit/create_sub_organization`, activityBody(org, 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7', {
      subOrganizationName: 'victim', rootUsers: [rootUser(email)], rootQuorumThreshold: 1, verificationToken: token,
    }), { key: sigil.root });
    expect(v7.status, JSON.stringify(v7.body)).toBe(200);
    expect(v7.body.activity.intent.createSubOrganizationIntentV7.verificationToken).toBe('<redacted>');
    const activityId = v7.body.activity.id;

    // Mallory reads the activity: no token in the intent, no body in the vote.
    const seen = await sdkServerClient(sigil, users.mallory.key).getActivity({ activityId });
    const text = JSON.stringify(seen);
    expect(text).not.toContain(token);
    expect(seen.activity.intent.createSubOrganizationIntentV7!.verificationToken).toBe('<redacted>');
    expect(seen.activity.votes[0].message).toBe(seen.activity.fingerprint);
    expect(JSON.stringify(await sdkServerClient(sigil, users.mallory.key).getActivities({}))).not.toContain(token);

    // Had she the token anyway: unstamped proxy otp_login with her own key is refused (spent whole).
    const before = await dbSnapshot(sigil);
    const attempt = await proxyPost('otp_login', { verificationToken: token, publicKey: users.mallory.key.apiPublicKey });
    expect(attempt.status, JSON.stringify(attempt.body)).toBe(400);
    expect(attempt.body.message).toMatch(/invalid verification token: it has already been used/);
    expect(await dbSnapshot(sigil)).toEqual(before);
  });

  it('a key-bound token: signup needs its clientSignature, keeps only the login its key can sign, and nobody else can use it', async () => {
    const email = 'vera@example.com';
    const key = newKey();
    const { token } = await boundToken(email, key);
    const claims = decode(token);
    await refusedUnchanged(() =>
      root.createSubOrganization({ subOrganizationName: 'vera', rootUsers: [rootUser(email)], rootQuorumThreshold: 1, verificationToken: token }),
      /clientSignature is required: the verification token is bound to a public key/,
    );
    const clientSignature = await usageSignature(key, { signupV2: { email }, tokenId: claims.id, type: 'USAGE_TYPE_SIGNUP' });
    const sub = await root.createSubOrganization({ subOrganizationName: 'vera', rootUsers: [rootUser(email)], rootQuorumThreshold: 1, verificationToken: token, clientSignature });
    const seen = await sdkServerClient(sigil, users.mallory.key).getActivity({ activityId: sub.activity.id });
    expect(JSON.stringify(seen)).not.toContain(token);
    expect(JSON.stringify(seen)).not.toContain(clientSignature.signature);
    // The client signature keeps the shape of v1ClientSignature; only its signature is redacted.
    expect(seen.activity.intent.createSubOrganizationIntentV8!.clientSignature).toEqual({ ...clientSignature, signature: '<redacted>' });

    // The proxy's otp_login_v2 with the token but a signature by another key: refused.
    const mallory = newKey();
    const forged = await proxyPost('otp_login_v2', {
      verificationToken: token,
      publicKey: mallory.apiPublicKey,
      clientSignature: await usageSignature(mallory, { login: { publicKey: mallory.apiPublicKey }, tokenId: claims.id, type: 'USAGE_TYPE_LOGIN' }),
    });
    expect(forged.status).toBe(400);
    expect(forged.body.message).toMatch(/public key must match the public key contained within the OTP verification token/);
    // Without a signature through the legacy endpoint: refused, the token is bound to a key.
    const unsigned = await proxyPost('otp_login', { verificationToken: token, publicKey: mallory.apiPublicKey });
    expect(unsigned.status).toBe(400);
    expect(unsigned.body.message).toMatch(/clientSignature is required/);
    // The key's holder logs in once (@turnkey/core's signUpWithOtp → loginWithOtp), then it is spent.
    const session = newKey();
    const good = await proxyPost('otp_login_v2', {
      verificationToken: token,
      publicKey: session.apiPublicKey,
      organizationId: sub.subOrganizationId,
      clientSignature: await usageSignature(key, { login: { publicKey: session.apiPublicKey }, tokenId: claims.id, type: 'USAGE_TYPE_LOGIN' }),
    });
    expect(good.status, JSON.stringify(good.body)).toBe(200);
    expect(decode(good.body.session).organization_id).toBe(sub.subOrganizationId);
    const again = await proxyPost('otp_login_v2', {
      verificationToken: token,
      publicKey: session.apiPublicKey,
      organizationId: sub.subOrganizationId,
      clientSignature: await usageSignature(key, { login: { publicKey: session.apiPublicKey }, tokenId: claims.id, type: 'USAGE_TYPE_LOGIN' }),
    });
    expect(again.status).toBe(400);
    expect(again.body.message).toMatch(/already been used/);
  });

  it('a token bound to no key cannot log in with OTP_LOGIN_V2, and a contact update spends a token whole', async () => {
    const email = 'una@example.com';
    const key = newKey();
    const sub = await root.createSubOrganization({
      subOrganizationName: 'una',
      rootUsers: [rootUser(email, [{ apiKeyName: 'k', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }])],
      rootQuorumThreshold: 1,
    });
    const { token } = await unboundToken(email);
    const session = newKey();
    const anyKey = newKey();
    const clientSignature = await usageSignature(anyKey, { login: { publicKey: session.apiPublicKey }, tokenId: decode(token).id, type: 'USAGE_TYPE_LOGIN' });
    await refusedUnchanged(
      () => root.otpLogin({ verificationToken: token, publicKey: session.apiPublicKey, clientSignature }),
      /bound to no public key, so it cannot log in with ACTIVITY_TYPE_OTP_LOGIN_V2/,
    );

    // update_user_email: the token is redacted from the record and spent whole.
    const own = sdkServerClient(sigil, key, sub.subOrganizationId);
    const newEmail = 'una.new@example.com';
    const { token: updateToken } = await unboundToken(newEmail);
    const upd = await own.updateUserEmail({ userId: sub.rootUserIds[0], userEmail: newEmail, verificationToken: updateToken });
    expect(JSON.stringify(await own.getActivity({ activityId: upd.activity.id }))).not.toContain(updateToken);
    const reuse = await proxyPost('otp_login', { verificationToken: updateToken, publicKey: session.apiPublicKey });
    expect(reuse.status).toBe(400);
    expect(reuse.body.message).toMatch(/already been used/);
  });

  it('verify_otp answers its token to the submitter only; no record, evaluation, table or log line holds a token, code or signature', async () => {
    const email = 'wanda@example.com';
    const key = newKey();
    const { token, code, activityId } = await boundToken(email, key);
    expect(decode(token).contact).toBe(email);
    const stored = await root.getActivity({ activityId });
    expect(stored.activity.result.verifyOtpResult!.verificationToken).toBe('<redacted>');
    expect(stored.activity.intent.verifyOtpIntentV2!.encryptedOtpBundle).toBe('<redacted>');
    const evaluations = await root.getPolicyEvaluations({ activityId } as never).catch(() => ({}));
    expect(JSON.stringify(evaluations)).not.toContain(token);

    const { token: legacy, code: legacyCode } = await unboundToken('xena@example.com');
    // Every table but the append-only audit log, and the audit log and server log themselves.
    const everything = JSON.stringify(await dbSnapshot(sigil)) + JSON.stringify(await auditRows()) + sigil.stderr();
    for (const secret of [token, legacy, token.split('.')[2], legacy.split('.')[2]]) expect(everything).not.toContain(secret);
    for (const c of [code, legacyCode]) expect(everything).not.toMatch(new RegExp(`[^0-9A-Za-z]${c}[^0-9A-Za-z]`));
  });
});

/** The audit log's rows, through the operator command that exports it. */
async function auditRows(): Promise<unknown> {
  const r = runSigil(['audit', 'export', '--data-dir', sigil.dataDir], sigil.env);
  return r.stdout;
}

describe('2. sign_raw_payloads judges every payload as sign_raw_payload would', () => {
  const typed = (primaryType: 'Permit' | 'Mail') =>
    JSON.stringify(
      primaryType === 'Permit'
        ? {
            types: {
              EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'chainId', type: 'uint256' }],
              Permit: [{ name: 'owner', type: 'address' }, { name: 'spender', type: 'address' }, { name: 'value', type: 'uint256' }],
            },
            primaryType,
            domain: { name: 'Token', chainId: 1 },
            message: { owner: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', spender: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', value: '1000' },
          }
        : {
            types: { EIP712Domain: [{ name: 'name', type: 'string' }], Mail: [{ name: 'contents', type: 'string' }] },
            primaryType,
            domain: { name: 'Mail' },
            message: { contents: 'hello' },
          },
    );

  it('a DENY on eth.eip_712.primary_type stops a batch holding a Permit, as it stops the Permit alone', async () => {
    const alice = await newUser('alice');
    const w = await root.createWallet({ walletName: 'eip712', accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] });
    const signWith = w.addresses[0];
    await root.createPolicy({
      policyName: 'alice signs EIP-712',
      notes: '',
      effect: 'EFFECT_ALLOW',
      consensus: `approvers.any(user, user.id == '${alice.id}')`,
      condition: "activity.action == 'SIGN' && activity.params.encoding == 'PAYLOAD_ENCODING_EIP712'",
    });
    await root.createPolicy({ policyName: 'no permits', notes: '', effect: 'EFFECT_DENY', condition: "eth.eip_712.primary_type == 'Permit'" });
    const client = http(alice.key);
    const params = { signWith, encoding: 'PAYLOAD_ENCODING_EIP712' as const, hashFunction: 'HASH_FUNCTION_NO_OP' as const };
    const ts = () => String(Date.now());

    const mail = await client.signRawPayload({ type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', timestampMs: ts(), organizationId: org, parameters: { ...params, payload: typed('Mail') } });
    expect(mail.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    await expect(
      client.signRawPayload({ type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', timestampMs: ts(), organizationId: org, parameters: { ...params, payload: typed('Permit') } }),
    ).rejects.toThrow(/policy engine denied request explicitly/);
    await refusedUnchanged(() =>
      client.signRawPayloads({ type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS', timestampMs: ts(), organizationId: org, parameters: { ...params, payloads: [typed('Mail'), typed('Permit')] } }),
      /policy engine denied request explicitly/,
    );
    const both = await client.signRawPayloads({ type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS', timestampMs: ts(), organizationId: org, parameters: { ...params, payloads: [typed('Mail'), typed('Mail')] } });
    expect(both.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(both.activity.result.signRawPayloadsResult!.signatures).toHaveLength(2);
  });
});

describe('3. tag activities are USER and PRIVATE_KEY activities for policies', () => {
  it("a DENY on activity.resource == 'USER' stops update_user_tag as it stops update_user", async () => {
    const tess = await newUser('tess');
    await root.createPolicy({ policyName: 'tess may do anything', notes: '', effect: 'EFFECT_ALLOW', consensus: `approvers.any(user, user.id == '${tess.id}')`, condition: 'true' });
    await root.createPolicy({ policyName: 'but not touch users', notes: '', effect: 'EFFECT_DENY', consensus: `approvers.any(user, user.id == '${tess.id}')`, condition: "activity.resource == 'USER'" });
    const { userTagId } = await root.createUserTag({ userTagName: 'approvers', userIds: [] });
    const tessApi = sdkServerClient(sigil, tess.key);
    await expect(tessApi.updateUser({ userId: tess.id, userName: 'tess2' } as never)).rejects.toThrow(/policy engine denied request explicitly/);
    await refusedUnchanged(() => tessApi.updateUserTag({ userTagId, addUserIds: [tess.id], removeUserIds: [] }), /policy engine denied request explicitly/);
    await refusedUnchanged(() => tessApi.createUserTag({ userTagName: 'mine', userIds: [tess.id] }), /policy engine denied request explicitly/);
    // Private key tags are PRIVATE_KEY activities: a DENY on that resource stops them too.
    await root.createPolicy({ policyName: 'no key changes for tess', notes: '', effect: 'EFFECT_DENY', consensus: `approvers.any(user, user.id == '${tess.id}')`, condition: "activity.resource == 'PRIVATE_KEY'" });
    await refusedUnchanged(() => tessApi.createPrivateKeyTag({ privateKeyTagName: 'k', privateKeyIds: [] }), /policy engine denied request explicitly/);
  });

  it('init_otp_auth is AUTH/CREATE, as the documented resource table lists it', async () => {
    const olga = await newUser('olga');
    await root.createPolicy({ policyName: 'olga may authenticate users', notes: '', effect: 'EFFECT_ALLOW', consensus: `approvers.any(user, user.id == '${olga.id}')`, condition: "activity.resource == 'AUTH' && activity.action == 'CREATE'" });
    const r = await sdkServerClient(sigil, olga.key).initOtpAuth({ otpType: 'OTP_TYPE_EMAIL', contact: 'olga.user@example.com', appName: 'Sigil Test' } as never);
    expect(r.otpId).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('4. only users included in the consensus vote', () => {
  it('a user with no policies cannot reject or approve; a user the consensus names can', async () => {
    const pam = await newUser('pam');
    const quinn = await newUser('quinn');
    const rick = await newUser('rick');
    await root.createPolicy({
      policyName: 'pam creates wallets with quinn',
      notes: '',
      effect: 'EFFECT_ALLOW',
      consensus: `approvers.any(user, user.id == '${pam.id}') && approvers.any(user, user.id == '${quinn.id}')`,
      condition: "activity.type == 'ACTIVITY_TYPE_CREATE_WALLET'",
    });
    const pending = await sdkServerClient(sigil, pam.key).createWallet({ walletName: 'pending', accounts: [] });
    expect(pending.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    const fingerprint = pending.activity.fingerprint;
    // Reads say who may vote: canApprove/canReject only for users the consensus can count (and who
    // have not voted), in get_activity and list_activities alike.
    const seenBy = async (key: KeyPair) => {
      const api = sdkServerClient(sigil, key);
      const one = (await api.getActivity({ activityId: pending.activity.id })).activity;
      const listed = (await api.getActivities({ filterByStatus: ['ACTIVITY_STATUS_CONSENSUS_NEEDED'] })).activities.find((a) => a.id === pending.activity.id)!;
      expect(listed.canApprove).toBe(one.canApprove);
      expect(one.canReject).toBe(one.canApprove);
      return one.canApprove;
    };
    expect(await seenBy(quinn.key)).toBe(true);
    expect(await seenBy(sigil.root)).toBe(true);
    expect(await seenBy(rick.key)).toBe(false);
    expect(await seenBy(pam.key)).toBe(false);
    for (const decide of ['rejectActivity', 'approveActivity'] as const) {
      await refusedUnchanged(() => sdkServerClient(sigil, rick.key)[decide]({ fingerprint }), /user .* is not included in the consensus of activity/);
      await refusedUnchanged(() => sdkServerClient(sigil, users.mallory.key)[decide]({ fingerprint }), /not included in the consensus/);
    }
    expect((await root.getActivity({ activityId: pending.activity.id })).activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    await sdkServerClient(sigil, quinn.key).rejectActivity({ fingerprint });
    expect((await root.getActivity({ activityId: pending.activity.id })).activity.status).toBe('ACTIVITY_STATUS_REJECTED');

    // A count-based consensus includes every user; a tag-based one only the tagged.
    const { userTagId } = await root.createUserTag({ userTagName: 'treasury', userIds: [quinn.id] });
    await root.createPolicy({
      policyName: 'pam creates keys with a treasury approver',
      notes: '',
      effect: 'EFFECT_ALLOW',
      consensus: `approvers.any(user, user.id == '${pam.id}') && approvers.filter(user, user.tags.contains('${userTagId}')).count() >= 1`,
      condition: "activity.type == 'ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2'",
    });
    const keys = await sdkServerClient(sigil, pam.key).createPrivateKeys({ privateKeys: [{ privateKeyName: 'k1', curve: 'CURVE_SECP256K1', addressFormats: [], privateKeyTags: [] }] });
    expect(keys.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    await expect(sdkServerClient(sigil, rick.key).approveActivity({ fingerprint: keys.activity.fingerprint })).rejects.toThrow(/not included in the consensus/);
    // Root users are in every consensus.
    await root.approveActivity({ fingerprint: keys.activity.fingerprint });
    expect((await root.getActivity({ activityId: keys.activity.id })).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  });
});

describe('two final approvals at once on two processes run the activity once', () => {
  it('with a root quorum of 2 of 3, concurrent approvals by the other two roots create one wallet', async () => {
    const second = await serveAnother(sigil);
    try {
      const [r2, r3] = [newKey(), newKey()];
      const { userIds } = await root.createUsers({
        users: [r2, r3].map((k, i) => ({ userName: `root${i + 2}`, apiKeys: [{ apiKeyName: 'k', publicKey: k.apiPublicKey, curveType: 'API_KEY_CURVE_P256' as const }], authenticators: [], oauthProviders: [], userTags: [] })),
      });
      await root.updateRootQuorum({ threshold: 2, userIds: [sigil.root.userId, ...userIds] });
      for (let round = 0; round < 6; round++) {
        const name = `race-${round}`;
        const pending = await root.createWallet({ walletName: name, accounts: [] });
        expect(pending.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
        const fingerprint = pending.activity.fingerprint;
        const results = await Promise.allSettled([
          sdkServerClient(sigil, r2).approveActivity({ fingerprint }),
          sdkServerClient({ ...second }, r3).approveActivity({ fingerprint }),
        ]);
        expect(results.some((r) => r.status === 'fulfilled')).toBe(true);
        for (const r of results) if (r.status === 'rejected') expect(String(r.reason)).toMatch(/is not awaiting consensus|already voted/);
        const done = await root.getActivity({ activityId: pending.activity.id });
        expect(done.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
        const wallets = (await root.getWallets({})).wallets.filter((w) => w.walletName === name);
        expect(wallets).toHaveLength(1);
      }
    } finally {
      await second.stop();
    }
  });
});
