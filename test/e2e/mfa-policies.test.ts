// MFA policies (docs/mfa.md "MFA policies") end to end through @turnkey/http's TurnkeyClient and
// @turnkey/sdk-server (createMfaPolicy, updateMfaPolicy, deleteMfaPolicy, getMfaPolicy, getMfaPolicies,
// getMfaStatus) against a real `sigil serve`: the v1MfaPolicy record round trip; every refusal a `{code,
// message, details}` that leaves the database as it was; who may manage whose policies (MFA_POLICY with
// `activity.params.user_id`, a user's own without a policy); and enforcement: an activity matching
// the submitter's first MFA policy waits in ACTIVITY_STATUS_AUTHENTICATORS_NEEDED, an approval with
// the wrong kind of stamp is refused and changes nothing, one with a real WebAuthn assertion (the
// official WebauthnStamper over a software authenticator) runs it once; non-matching activities and
// submissions already carrying the method run at once; a rejection rejects; get_mfa_status follows.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { TurnkeyClient } from '@turnkey/http';
import { WebauthnStamper } from '@turnkey/webauthn-stamper';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, httpClient, newKey, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot, expectRefusedUnchanged } from '../helpers/db-snapshot.js';
import { SoftwareAuthenticator, installNavigator } from '../helpers/software-authenticator.js';

const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } as const;
const PASSKEY = 'AUTHENTICATION_TYPE_PASSKEY';
const API_KEY = 'AUTHENTICATION_TYPE_API_KEY';
const SESSION = 'AUTHENTICATION_TYPE_SESSION';
const TS = { seconds: expect.stringMatching(/^\d+$/), nanos: expect.stringMatching(/^\d+$/) };

let sigil: SigilInstance;
let org: string;
let rootId: string;
let client: TurnkeyClient;
let passkey: SoftwareAuthenticator;
let authenticatorId: string;
let address: string;
let bob: { id: string; key: KeyPair };
const device: SoftwareAuthenticator[] = [];

/** @turnkey/http's client stamping with the root user's passkey (a real WebAuthn assertion per request). */
const passkeyClient = () => new TurnkeyClient({ baseUrl: sigil.url }, new WebauthnStamper({ rpId: 'localhost', allowCredentials: [{ id: passkey.rawId, type: 'public-key' }] }));

beforeAll(async () => {
  sigil = await startSigil();
  org = sigil.root.organizationId;
  rootId = sigil.root.userId;
  client = httpClient(sigil);
  installNavigator(() => device);
  passkey = new SoftwareAuthenticator();
  device.push(passkey);
  const root = sdkServerClient(sigil);
  const challenge = randomBytes(32);
  ({ authenticatorIds: [authenticatorId] } = await root.createAuthenticators({
    userId: rootId,
    authenticators: [{ authenticatorName: 'root laptop', challenge: challenge.toString('base64url'), attestation: passkey.register(challenge) }],
  }));
  const wallet = await root.createWallet({ walletName: 'mfa wallet', accounts: [ETH] });
  address = wallet.addresses[0];
  const bobKey = newKey();
  const { userIds } = await root.createUsers({
    users: [{ userName: 'bob', apiKeys: [{ apiKeyName: 'bob key', publicKey: bobKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
  });
  bob = { id: userIds[0], key: bobKey };
});
afterAll(async () => {
  await sigil?.stop();
});

const now = () => String(Date.now());

function createPolicy(parameters: Record<string, unknown>, c: TurnkeyClient = client) {
  return c.createMfaPolicy({ type: 'ACTIVITY_TYPE_CREATE_MFA_POLICY', timestampMs: now(), organizationId: org, parameters: parameters as any });
}

function submit(path: string, type: string, parameters: unknown, key: KeyPair = sigil.root) {
  return rawPost(`${sigil.url}/public/v1/submit/${path}`, activityBody(org, type, parameters), { key });
}

function sign(c: TurnkeyClient = client, payload = `0x${randomBytes(32).toString('hex')}`) {
  return c.signRawPayload({
    type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
    timestampMs: now(),
    organizationId: org,
    parameters: { signWith: address, payload, encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' },
  });
}

const approveBody = (fingerprint: string) => activityBody(org, 'ACTIVITY_TYPE_APPROVE_ACTIVITY', { fingerprint });

describe('MFA policy records', () => {
  it('create, get, list, update and delete round trip the v1MfaPolicy record', async () => {
    const parameters = { userId: rootId, mfaPolicyName: 'exports need a passkey', condition: "activity.action == 'EXPORT'", requiredAuthenticationMethods: [{ any: [{ type: PASSKEY }] }], order: 5, notes: 'n' };
    const res = await createPolicy(parameters);
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(res.activity.intent.createMfaPolicyIntent).toEqual(parameters);
    const id = res.activity.result.createMfaPolicyResult!.mfaPolicyId;
    const record = {
      mfaPolicyId: id,
      mfaPolicyName: 'exports need a passkey',
      condition: "activity.action == 'EXPORT'",
      requiredAuthenticationMethods: [{ any: [{ type: PASSKEY }] }],
      order: 5,
      notes: 'n',
      createdAt: TS,
      updatedAt: TS,
    };
    expect((await client.getMfaPolicy({ organizationId: org, userId: rootId, mfaPolicyId: id })).mfaPolicy).toEqual(record);
    const server = sdkServerClient(sigil);
    expect((await server.getMfaPolicies({ userId: rootId })).mfaPolicies).toEqual([record]);
    // v1User carries its MFA policies too.
    expect((await server.getUser({ userId: rootId })).user.mfaPolicies).toEqual([record]);
    expect((await server.getUser({ userId: bob.id })).user.mfaPolicies).toEqual([]);

    const updated = await client.updateMfaPolicy({
      type: 'ACTIVITY_TYPE_UPDATE_MFA_POLICY',
      timestampMs: now(),
      organizationId: org,
      parameters: { userId: rootId, mfaPolicyId: id, mfaPolicyName: 'renamed', requiredAuthenticationMethods: [{ any: [{ type: PASSKEY, id: authenticatorId }, { type: API_KEY }] }] },
    });
    expect(updated.activity.result.updateMfaPolicyResult).toEqual({ mfaPolicyId: id });
    expect((await client.getMfaPolicy({ organizationId: org, userId: rootId, mfaPolicyId: id })).mfaPolicy).toEqual({
      ...record,
      mfaPolicyName: 'renamed',
      requiredAuthenticationMethods: [{ any: [{ type: PASSKEY, id: authenticatorId }, { type: API_KEY }] }],
    });

    const deleted = await server.deleteMfaPolicy({ userId: rootId, mfaPolicyId: id });
    expect(deleted.mfaPolicyId).toBe(id);
    expect((await client.getMfaPolicies({ organizationId: org, userId: rootId })).mfaPolicies).toEqual([]);
    const gone = await rawPost(`${sigil.url}/public/v1/query/get_mfa_policy`, { organizationId: org, userId: rootId, mfaPolicyId: id }, { key: sigil.root });
    expect(gone.status).toBe(404);
  });

  it('refuses bad input with a clear error and changes nothing', async () => {
    const good = { userId: rootId, mfaPolicyName: 'signing', condition: "activity.action == 'SIGN'", requiredAuthenticationMethods: [{ any: [{ type: PASSKEY }] }], order: 0 };
    const kept = (await createPolicy({ ...good, order: 9, condition: 'false' })).activity.result.createMfaPolicyResult!.mfaPolicyId;
    const cases: [Record<string, unknown>, number, RegExp, string, string?][] = [
      [{ ...good, userId: 'f0000000-0000-4000-8000-000000000000' }, 404, /user not found/, 'NOT_FOUND'],
      [{ ...good, condition: "activity.action == 'SIGN' &&" }, 400, /condition/, 'REQUEST_INVALID'],
      [{ ...good, condition: '' }, 400, /condition/, 'REQUEST_INVALID'],
      [{ ...good, requiredAuthenticationMethods: [] }, 400, /at least one step/, 'REQUEST_INVALID'],
      [{ ...good, requiredAuthenticationMethods: [{ any: [] }] }, 400, /at least one authentication method/, 'REQUEST_INVALID'],
      [{ ...good, requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_EMAIL_OTP' }] }] }, 400, /EMAIL_OTP cannot be required/, 'REQUEST_INVALID'],
      [{ ...good, requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_FINGERPRINT' }] }] }, 400, /requiredAuthenticationMethods/, 'REQUEST_INVALID'],
      [{ ...good, requiredAuthenticationMethods: [{ any: [{ type: PASSKEY, id: 'f0000000-0000-4000-8000-000000000000' }] }] }, 400, /is not a passkey/, 'REQUEST_INVALID'],
      [{ ...good, requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_SESSION', id: 'f0000000-0000-4000-8000-000000000000' }] }] }, 400, /default session id .* or a session profile/, 'REQUEST_INVALID'],
      [{ ...good, order: -1 }, 400, /order/, 'REQUEST_INVALID'],
      [{ ...good, order: 9 }, 400, /order must be unique/, 'REQUEST_INVALID'],
      [{ ...good, mfaPolicyName: '' }, 400, /mfaPolicyName/, 'REQUEST_INVALID'],
    ];
    for (const [parameters, status, message, code] of cases) {
      const before = await dbSnapshot(sigil);
      const res = await submit('create_mfa_policy', 'ACTIVITY_TYPE_CREATE_MFA_POLICY', parameters);
      await expectRefusedUnchanged(sigil, before, res, status, status === 404 ? 5 : 3, code, message);
    }
    const updates: [Record<string, unknown>, number, RegExp][] = [
      [{ userId: rootId, mfaPolicyId: 'f0000000-0000-4000-8000-000000000000' }, 404, /MFA policy not found/],
      [{ userId: bob.id, mfaPolicyId: kept }, 404, /MFA policy not found/],
      [{ userId: rootId, mfaPolicyId: kept, condition: 'nope ==' }, 400, /condition/],
    ];
    for (const [parameters, status, message] of updates) {
      const before = await dbSnapshot(sigil);
      const res = await submit('update_mfa_policy', 'ACTIVITY_TYPE_UPDATE_MFA_POLICY', parameters);
      await expectRefusedUnchanged(sigil, before, res, status, status === 404 ? 5 : 3, status === 404 ? 'NOT_FOUND' : 'REQUEST_INVALID', message);
    }
    const before = await dbSnapshot(sigil);
    await expectRefusedUnchanged(sigil, before, await submit('delete_mfa_policy', 'ACTIVITY_TYPE_DELETE_MFA_POLICY', { userId: bob.id, mfaPolicyId: kept }), 404, 5, 'NOT_FOUND', /MFA policy not found/);
    await client.deleteMfaPolicy({ type: 'ACTIVITY_TYPE_DELETE_MFA_POLICY', timestampMs: now(), organizationId: org, parameters: { userId: rootId, mfaPolicyId: kept } });
  });

  it("a user manages their own MFA policies; another user's need a policy", async () => {
    const bobClient = httpClient(sigil, bob.key);
    const own = await createPolicy({ userId: bob.id, mfaPolicyName: 'bob signs with care', condition: 'true', requiredAuthenticationMethods: [{ any: [{ type: API_KEY }] }], order: 0 }, bobClient);
    expect(own.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const before = await dbSnapshot(sigil);
    const res = await submit('create_mfa_policy', 'ACTIVITY_TYPE_CREATE_MFA_POLICY', { userId: rootId, mfaPolicyName: 'x', condition: 'true', requiredAuthenticationMethods: [{ any: [{ type: API_KEY }] }], order: 1 }, bob.key);
    await expectRefusedUnchanged(sigil, before, res, 403, 7, 'REQUEST_NOT_AUTHORIZED', /sufficient permissions/);
    // Bob's own policy is met by his API key stamp, so his activities run at once and say so.
    const id = own.activity.result.createMfaPolicyResult!.mfaPolicyId;
    const removed = await bobClient.deleteMfaPolicy({ type: 'ACTIVITY_TYPE_DELETE_MFA_POLICY', timestampMs: now(), organizationId: org, parameters: { userId: bob.id, mfaPolicyId: id } });
    expect(removed.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const status = await bobClient.getMfaStatus({ organizationId: org, activityId: removed.activity.id });
    expect(status.mfaStatuses).toEqual([{ mfaPolicyId: id, userId: bob.id, satisfied: true, satisfiedMethods: [{ type: API_KEY, id: expect.any(String) }], requiredMethods: [{ any: [{ type: API_KEY }] }] }]);
  });
});

describe('enforcement', () => {
  let policyId: string;

  it('a matching activity stamped with an API key waits; an API key approval is refused; a passkey approval runs it once', async () => {
    policyId = (await createPolicy({ userId: rootId, mfaPolicyName: 'signing needs a passkey', condition: "activity.action == 'SIGN'", requiredAuthenticationMethods: [{ any: [{ type: PASSKEY }] }], order: 0 }))
      .activity.result.createMfaPolicyResult!.mfaPolicyId;

    // Not matching: runs at once.
    const other = await client.createWallet({ type: 'ACTIVITY_TYPE_CREATE_WALLET', timestampMs: now(), organizationId: org, parameters: { walletName: 'no mfa needed', accounts: [ETH] } });
    expect(other.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect((await client.getMfaStatus({ organizationId: org, activityId: other.activity.id })).mfaStatuses).toEqual([]);

    const waiting = await sign();
    expect(waiting.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED');
    expect(waiting.activity.result).toEqual({ activity: expect.anything() });
    expect(waiting.activity.canApprove).toBe(true);
    const pending = { mfaPolicyId: policyId, userId: rootId, satisfied: false, satisfiedMethods: [], requiredMethods: [{ any: [{ type: PASSKEY }] }] };
    expect((await client.getMfaStatus({ organizationId: org, activityId: waiting.activity.id })).mfaStatuses).toEqual([pending]);
    expect((await client.getMfaStatus({ organizationId: org, activityId: waiting.activity.id, userId: bob.id })).mfaStatuses).toEqual([]);
    const listed = await client.getActivities({ organizationId: org, filterByStatus: ['ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'] });
    expect(listed.activities.map((a) => a.id)).toEqual([waiting.activity.id]);

    // The same user's API key again: refused, nothing changes.
    let before = await dbSnapshot(sigil);
    let res = await rawPost(`${sigil.url}/public/v1/submit/approve_activity`, approveBody(waiting.activity.fingerprint), { key: sigil.root });
    await expectRefusedUnchanged(sigil, before, res, 403, 7, 'REQUEST_NOT_AUTHORIZED', /AUTHENTICATION_TYPE_API_KEY stamp meets none of the steps .* \[AUTHENTICATION_TYPE_PASSKEY\]/);
    // Another user cannot approve it for the submitter.
    before = await dbSnapshot(sigil);
    res = await rawPost(`${sigil.url}/public/v1/submit/approve_activity`, approveBody(waiting.activity.fingerprint), { key: bob.key });
    await expectRefusedUnchanged(sigil, before, res, 403, 7, 'REQUEST_NOT_AUTHORIZED', /only its submitter/);

    // The passkey: a real WebAuthn assertion over the approval.
    const approval = await passkeyClient().approveActivity({ type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY', timestampMs: now(), organizationId: org, parameters: { fingerprint: waiting.activity.fingerprint } });
    expect(approval.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const done = (await client.getActivity({ organizationId: org, activityId: waiting.activity.id })).activity;
    expect(done.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(done.result.signRawPayloadResult).toEqual({ r: expect.stringMatching(/^[0-9a-f]{64}$/), s: expect.stringMatching(/^[0-9a-f]{64}$/), v: expect.stringMatching(/^0[01]$/) });
    expect(done.canApprove).toBe(false);
    expect((await client.getMfaStatus({ organizationId: org, activityId: waiting.activity.id })).mfaStatuses).toEqual([
      { ...pending, satisfied: true, satisfiedMethods: [{ type: PASSKEY, id: authenticatorId }] },
    ]);

    // Executed once: a second approval finds it finished and changes nothing.
    before = await dbSnapshot(sigil);
    res = await rawPost(`${sigil.url}/public/v1/submit/approve_activity`, approveBody(waiting.activity.fingerprint), { key: sigil.root });
    await expectRefusedUnchanged(sigil, before, res, 400, 3, 'REQUEST_INVALID', /not awaiting/);
  });

  it('a submission stamped with the required method runs at once', async () => {
    const res = await sign(passkeyClient());
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect((await client.getMfaStatus({ organizationId: org, activityId: res.activity.id })).mfaStatuses[0]).toMatchObject({ satisfied: true, satisfiedMethods: [{ type: PASSKEY, id: authenticatorId }] });
  });

  it('every step needs its own credential; a rejection rejects without running', async () => {
    await client.updateMfaPolicy({
      type: 'ACTIVITY_TYPE_UPDATE_MFA_POLICY',
      timestampMs: now(),
      organizationId: org,
      parameters: { userId: rootId, mfaPolicyId: policyId, requiredAuthenticationMethods: [{ any: [{ type: API_KEY }] }, { any: [{ type: PASSKEY }] }] },
    });
    // The API key meets the first step; the passkey is still needed.
    const waiting = await sign();
    expect(waiting.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED');
    expect((await client.getMfaStatus({ organizationId: org, activityId: waiting.activity.id })).mfaStatuses[0]).toMatchObject({
      satisfied: false,
      satisfiedMethods: [{ type: API_KEY, id: sigil.root.apiKeyId }],
    });
    const rejected = await client.rejectActivity({ type: 'ACTIVITY_TYPE_REJECT_ACTIVITY', timestampMs: now(), organizationId: org, parameters: { fingerprint: waiting.activity.fingerprint } });
    expect(rejected.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const after = (await client.getActivity({ organizationId: org, activityId: waiting.activity.id })).activity;
    expect(after.status).toBe('ACTIVITY_STATUS_REJECTED');
    expect(after.result.signRawPayloadResult).toBeUndefined();

    // Submitted with the passkey, the API key step remains: the API key approval completes it.
    const second = await sign(passkeyClient());
    expect(second.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED');
    const approval = await client.approveActivity({ type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY', timestampMs: now(), organizationId: org, parameters: { fingerprint: second.activity.fingerprint } });
    expect(approval.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect((await client.getActivity({ organizationId: org, activityId: second.activity.id })).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  });

  it('with the policy deleted, the same activity runs at once', async () => {
    // Deleting is itself an MFA_POLICY activity, not a signing one: it does not match.
    await client.deleteMfaPolicy({ type: 'ACTIVITY_TYPE_DELETE_MFA_POLICY', timestampMs: now(), organizationId: org, parameters: { userId: rootId, mfaPolicyId: policyId } });
    expect((await sign()).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  });
});

describe('a step pinned to a session profile', () => {
  it('is met by a session made with that profile, not by one made without it', async () => {
    const root = sdkServerClient(sigil);
    const { sessionProfileId } = await root.createSessionProfile({ sessionProfileName: 'mfa sessions', scope: 'true' });
    // The sessions come first: once the policy holds, a login by the API key alone must itself meet
    // it (test/e2e/security-identity.test.ts).
    const plain = newKey();
    const profiled = newKey();
    await root.stampLogin({ publicKey: plain.apiPublicKey });
    await root.stampLogin({ publicKey: profiled.apiPublicKey, sessionProfileId });
    const policy = await createPolicy({
      userId: rootId,
      mfaPolicyName: 'signing needs the profile session',
      condition: "activity.action == 'SIGN'",
      requiredAuthenticationMethods: [{ any: [{ type: SESSION, id: sessionProfileId }] }],
      order: 5,
    });
    const policyId = policy.activity.result.createMfaPolicyResult!.mfaPolicyId;

    const waiting = await sign();
    expect(waiting.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED');
    const before = await dbSnapshot(sigil);
    const res = await rawPost(`${sigil.url}/public/v1/submit/approve_activity`, approveBody(waiting.activity.fingerprint), { key: plain });
    await expectRefusedUnchanged(sigil, before, res, 403, 7, 'REQUEST_NOT_AUTHORIZED', /meets none of the steps/);
    const approval = await httpClient(sigil, profiled).approveActivity({ type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY', timestampMs: now(), organizationId: org, parameters: { fingerprint: waiting.activity.fingerprint } });
    expect(approval.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect((await client.getActivity({ organizationId: org, activityId: waiting.activity.id })).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    await client.deleteMfaPolicy({ type: 'ACTIVITY_TYPE_DELETE_MFA_POLICY', timestampMs: now(), organizationId: org, parameters: { userId: rootId, mfaPolicyId: policyId } });
  });
});

describe('MFA and consensus', () => {
  it("the submitter's MFA comes first, then the approvals; an approver's vote counts once the approver's MFA is met", async () => {
    const root = sdkServerClient(sigil);
    const bobClient = httpClient(sigil, bob.key);
    const bobSecond = newKey();
    await root.createApiKeys({ userId: bob.id, apiKeys: [{ apiKeyName: 'bob second key', publicKey: bobSecond.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }] });
    await root.createPolicy({ policyName: 'signing takes two approvers', effect: 'EFFECT_ALLOW', condition: "activity.action == 'SIGN'", consensus: 'approvers.count() >= 2', notes: '' });
    const bobPolicy = (await createPolicy({ userId: bob.id, mfaPolicyName: 'two keys to sign', condition: "activity.action == 'SIGN'", requiredAuthenticationMethods: [{ any: [{ type: API_KEY }] }, { any: [{ type: API_KEY }] }], order: 0 }, bobClient))
      .activity.result.createMfaPolicyResult!.mfaPolicyId;

    const submitted = await sign(bobClient);
    expect(submitted.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED');
    // The same key twice meets one step only: refused, nothing changes.
    const before = await dbSnapshot(sigil);
    const again = await rawPost(`${sigil.url}/public/v1/submit/approve_activity`, approveBody(submitted.activity.fingerprint), { key: bob.key });
    await expectRefusedUnchanged(sigil, before, again, 403, 7, 'REQUEST_NOT_AUTHORIZED', /from a credential already counted meets none of the steps/);
    // Bob's second key meets the second step: now the policy's consensus is what it waits for.
    await httpClient(sigil, bobSecond).approveActivity({ type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY', timestampMs: now(), organizationId: org, parameters: { fingerprint: submitted.activity.fingerprint } });
    let target = (await client.getActivity({ organizationId: org, activityId: submitted.activity.id })).activity;
    expect(target.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    expect(target.votes.map((v) => v.userId)).toEqual([bob.id]);

    // The root user's approval counts only with a passkey now.
    const rootPolicy = (await createPolicy({ userId: rootId, mfaPolicyName: 'signing needs a passkey', condition: "activity.action == 'SIGN'", requiredAuthenticationMethods: [{ any: [{ type: PASSKEY }] }], order: 0 }))
      .activity.result.createMfaPolicyResult!.mfaPolicyId;
    const byKey = await client.approveActivity({ type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY', timestampMs: now(), organizationId: org, parameters: { fingerprint: submitted.activity.fingerprint } });
    expect(byKey.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    target = (await client.getActivity({ organizationId: org, activityId: submitted.activity.id })).activity;
    expect(target.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    expect(target.votes.map((v) => v.userId)).toEqual([bob.id]);
    expect((await client.getMfaStatus({ organizationId: org, activityId: submitted.activity.id })).mfaStatuses).toEqual(
      expect.arrayContaining([
        { mfaPolicyId: bobPolicy, userId: bob.id, satisfied: true, satisfiedMethods: [{ type: API_KEY, id: expect.any(String) }, { type: API_KEY, id: expect.any(String) }], requiredMethods: [{ any: [{ type: API_KEY }] }, { any: [{ type: API_KEY }] }] },
        { mfaPolicyId: rootPolicy, userId: rootId, satisfied: false, satisfiedMethods: [], requiredMethods: [{ any: [{ type: PASSKEY }] }] },
      ]),
    );

    await passkeyClient().approveActivity({ type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY', timestampMs: now(), organizationId: org, parameters: { fingerprint: submitted.activity.fingerprint } });
    target = (await client.getActivity({ organizationId: org, activityId: submitted.activity.id })).activity;
    expect(target.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(target.result.signRawPayloadResult!.r).toMatch(/^[0-9a-f]{64}$/);
    expect(target.votes.map((v) => [v.userId, v.scheme])).toEqual([
      [bob.id, 'SIGNATURE_SCHEME_TK_API_P256'],
      [rootId, 'SIGNATURE_SCHEME_TK_API_WEBAUTHN'],
    ]);
  });
});

describe('where an activity cannot wait', () => {
  it("a parent's credential submitting for a sub-organization must carry its MFA methods: refused, nothing changes", async () => {
    const root = sdkServerClient(sigil);
    const { subOrganizationId } = await root.createSubOrganization({
      subOrganizationName: 'dana org',
      rootUsers: [{ userName: 'dana', userEmail: 'dana@example.com', apiKeys: [], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
    });
    // The root user's signing policy from above still applies; this one asks for a passkey on OTP.
    await createPolicy({ userId: rootId, mfaPolicyName: 'codes need a passkey', condition: "activity.resource == 'OTP'", requiredAuthenticationMethods: [{ any: [{ type: PASSKEY }] }], order: 1 });
    const before = await dbSnapshot(sigil);
    const res = await rawPost(
      `${sigil.url}/public/v1/submit/init_otp`,
      { type: 'ACTIVITY_TYPE_INIT_OTP_V3', timestampMs: now(), organizationId: subOrganizationId, parameters: { otpType: 'OTP_TYPE_EMAIL', contact: 'dana@example.com', appName: 'Sigil Test' } },
      { key: sigil.root },
    );
    await expectRefusedUnchanged(sigil, before, res, 403, 7, 'REQUEST_NOT_AUTHORIZED', /sufficient permissions/);
    expect(JSON.stringify(res.body.details)).toContain('a parent organization submits for a sub-organization cannot wait for them');
  });
});
