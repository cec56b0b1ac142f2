// Passkeys against a real `sigil serve` (docs/sessions-and-logins.md "Passkeys";
// docs/reference/api.md "Stamps"; docs/reference/organizations.md "Users and credentials"): software
// authenticators (ES256 and RS256) register through create_users, create_sub_organization and
// create_authenticators with real `none` attestations, then stamp requests through the official
// @turnkey/webauthn-stamper driving an injected navigator.credentials.get, used by @turnkey/sdk-server
// and @turnkey/http clients. Passkey approvals reach policies as `credentials`. Wrong origin, wrong
// challenge, wrong RP id, a forged signature, a replayed counter and an unknown credential are each a
// 401 JSON error that changes nothing; bad attestations are 400/409 and change nothing.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { generateP256KeyPair } from '@turnkey/crypto';
import { TurnkeyServerClient } from '@turnkey/sdk-server';
import { TurnkeyClient } from '@turnkey/http';
import { WebauthnStamper } from '@turnkey/webauthn-stamper';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient, type RawResponse } from '../helpers/clients.js';
import { dbSnapshot, expectRefusedUnchanged, type Snapshot } from '../helpers/db-snapshot.js';
import { SoftwareAuthenticator, installNavigator } from '../helpers/software-authenticator.js';

const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } as const;
const CHROME_ON_MAC = 'adce0002-35bc-c60a-648b-0b25f1f05503';
const WEBAUTHN = 'CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR';

let sigil: SigilInstance;
// Every authenticator the simulated browser holds; the stamper's allowCredentials picks one.
const device: SoftwareAuthenticator[] = [];

beforeAll(async () => {
  sigil = await startSigil();
  installNavigator(() => device);
});
afterAll(async () => {
  await sigil?.stop();
});

function newAuthenticator(opts: ConstructorParameters<typeof SoftwareAuthenticator>[0] = {}) {
  const a = new SoftwareAuthenticator(opts);
  device.push(a);
  return a;
}

/** A registration: the client's random challenge and the authenticator's attestation over it. */
function registration(a: SoftwareAuthenticator, name: string, opts: { origin?: string; rpId?: string; claimedChallenge?: string } = {}) {
  const challenge = randomBytes(32);
  return {
    authenticatorName: name,
    challenge: opts.claimedChallenge ?? challenge.toString('base64url'),
    attestation: a.register(challenge, opts),
  };
}

function stamperFor(a: SoftwareAuthenticator) {
  return new WebauthnStamper({ rpId: 'localhost', allowCredentials: [{ id: a.rawId, type: 'public-key' }] });
}

/** @turnkey/sdk-server's client, stamping with the passkey. */
function passkeyClient(a: SoftwareAuthenticator, organizationId = sigil.root.organizationId) {
  return new TurnkeyServerClient({ apiBaseUrl: sigil.url, organizationId, stamper: stamperFor(a) });
}

/** POSTs `body` stamped by the official WebauthnStamper over `stampBody` (the body itself by default). */
async function passkeyPost(a: SoftwareAuthenticator, path: string, body: object, opts: { stampBody?: string; headerName?: string } = {}) {
  const text = JSON.stringify(body);
  const stamp = await stamperFor(a).stamp(opts.stampBody ?? text);
  expect(stamp.stampHeaderName).toBe('X-Stamp-Webauthn');
  return rawPost(`${sigil.url}/public/v1/${path}`, text, { headers: { [opts.headerName ?? stamp.stampHeaderName]: stamp.stampHeaderValue } });
}

const whoamiBody = (organizationId = sigil.root.organizationId) => ({ organizationId });

describe('passkeys', () => {
  it('registers with create_users, renders the authenticator record, and stamps queries and activities', async () => {
    const root = sdkServerClient(sigil);
    const alice = newAuthenticator({ aaguid: CHROME_ON_MAC });
    const k = generateP256KeyPair();
    const { userIds } = await root.createUsers({
      users: [
        {
          userName: 'alice',
          apiKeys: [{ apiKeyName: 'alice key', publicKey: k.publicKey, curveType: 'API_KEY_CURVE_P256' }],
          authenticators: [registration(alice, 'alice laptop')],
          oauthProviders: [],
          userTags: [],
        },
      ],
    });
    const aliceId = userIds[0];

    // The v1Authenticator record, field for field (docs/reference/organizations.md "Users and
    // credentials"), in get_user, get_authenticators and get_authenticator.
    const { user } = await root.getUser({ userId: aliceId });
    expect(user.authenticators).toHaveLength(1);
    const record = user.authenticators[0];
    expect(Object.keys(record)).toEqual([
      'transports', 'attestationType', 'aaguid', 'credentialId', 'model', 'credential', 'authenticatorId', 'authenticatorName', 'createdAt', 'updatedAt',
    ]);
    expect(record).toEqual({
      transports: ['AUTHENTICATOR_TRANSPORT_INTERNAL'],
      attestationType: 'none',
      aaguid: CHROME_ON_MAC,
      credentialId: alice.credentialId,
      model: 'Chrome on Mac',
      credential: { publicKey: alice.publicKeyHex, type: WEBAUTHN },
      authenticatorId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      authenticatorName: 'alice laptop',
      createdAt: { seconds: expect.stringMatching(/^\d+$/), nanos: expect.stringMatching(/^\d+$/) },
      updatedAt: record.createdAt,
    });
    expect(alice.publicKeyHex).toMatch(/^0[23][0-9a-f]{64}$/);
    expect((await root.getAuthenticators({ userId: aliceId })).authenticators).toEqual([record]);
    expect((await root.getAuthenticator({ authenticatorId: record.authenticatorId })).authenticator).toEqual(record);

    // whoami through @turnkey/sdk-server and @turnkey/http, each stamping with @turnkey/webauthn-stamper.
    const alicePk = passkeyClient(alice);
    expect(await alicePk.getWhoami({})).toMatchObject({ organizationId: sigil.root.organizationId, userId: aliceId, username: 'alice' });
    const http = new TurnkeyClient({ baseUrl: sigil.url }, stamperFor(alice));
    expect((await http.getWhoami({ organizationId: sigil.root.organizationId })).userId).toBe(aliceId);
    // The swagger's spelling of the header name works too.
    const swaggerSpelling = await passkeyPost(alice, 'query/whoami', whoamiBody(), { headerName: 'X-Stamp-WebAuthn' });
    expect(swaggerSpelling.status).toBe(200);
    expect(swaggerSpelling.body.userId).toBe(aliceId);

    // A signed activity: alice adds an RS256 passkey for herself with create_authenticators (self-service).
    const rsa = newAuthenticator({ alg: 'RS256' });
    const added = await alicePk.createAuthenticators({ userId: aliceId, authenticators: [registration(rsa, 'alice security key')] });
    expect(added.authenticatorIds).toHaveLength(1);
    expect(added.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const [vote] = added.activity.votes;
    expect(vote).toMatchObject({ userId: aliceId, publicKey: alice.publicKeyHex, scheme: 'SIGNATURE_SCHEME_TK_API_WEBAUTHN', selection: 'VOTE_SELECTION_APPROVED' });
    // The vote keeps the whole assertion, so anyone can re-verify it against the signed message.
    const assertion = JSON.parse(vote.signature);
    expect(Object.keys(assertion)).toEqual(['authenticatorData', 'clientDataJson', 'credentialId', 'signature']);
    expect(assertion.credentialId).toBe(alice.credentialId);
    const rsaRecord = (await root.getAuthenticator({ authenticatorId: added.authenticatorIds[0] })).authenticator;
    expect(rsaRecord.credential).toEqual({ publicKey: rsa.publicKeyHex, type: WEBAUTHN });
    expect(rsa.publicKeyHex).toMatch(/^30820122/); // SPKI DER of a 2048-bit RSA key
    expect((await passkeyClient(rsa).getWhoami({})).userId).toBe(aliceId);
    expect((await root.getUser({ userId: aliceId })).user.authenticators.map((a) => a.authenticatorId)).toEqual([record.authenticatorId, rsaRecord.authenticatorId]);

    // Outside self-service, a passkey is subject to policies like any credential: no policy, no wallet.
    await expect(alicePk.createWallet({ walletName: 'denied', accounts: [ETH] })).rejects.toThrow(/no policy allows/);

    // A policy that wants this very passkey (credential.type and credential.credential_id) among the approvals.
    await root.createPolicy({
      policyName: 'wallets only with alice laptop passkey',
      effect: 'EFFECT_ALLOW',
      condition: "activity.type == 'ACTIVITY_TYPE_CREATE_WALLET'",
      consensus: `credentials.any(credential, credential.type == '${WEBAUTHN}' && credential.credential_id == '${alice.credentialId}')`,
      notes: '',
    });
    const wallet = await alicePk.createWallet({ walletName: 'passkey wallet', accounts: [ETH] });
    expect(wallet.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(wallet.addresses).toHaveLength(1);
    // alice's API key and her other passkey do not satisfy it.
    const walletBody = (walletName: string) => activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_WALLET', { walletName, accounts: [ETH] });
    const byKey = await rawPost(`${sigil.url}/public/v1/submit/create_wallet`, walletBody('by api key'), { key: { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey } });
    const byOther = await passkeyPost(rsa, 'submit/create_wallet', walletBody('by the other passkey'));
    // The API key has no credential_id, so the consensus cannot hold for it: no policy allows.
    expect(byKey.status).toBe(403);
    expect(byKey.body.details[2].reason).toMatch(/no policy allows ACTIVITY_TYPE_CREATE_WALLET/);
    // The other passkey is a passkey, but not this one: the activity waits for an approval that would satisfy it.
    expect(byOther.status).toBe(200);
    expect(byOther.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    expect(byOther.body.activity.votes[0]).toMatchObject({ userId: aliceId, publicKey: rsa.publicKeyHex, scheme: 'SIGNATURE_SCHEME_TK_API_WEBAUTHN' });
    expect((await root.getWallets({})).wallets.map((w) => w.walletName)).toEqual(['passkey wallet']);
    // The root quorum approves it; it then runs as its submitter, the passkey that signed it.
    const approved = await root.approveActivity({ fingerprint: byOther.body.activity.fingerprint });
    expect(approved.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const waited = (await root.getActivity({ activityId: byOther.body.activity.id })).activity;
    expect(waited.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(waited.votes.map((v) => [v.userId, v.scheme])).toEqual([
      [aliceId, 'SIGNATURE_SCHEME_TK_API_WEBAUTHN'],
      [sigil.root.userId, 'SIGNATURE_SCHEME_TK_API_P256'],
    ]);
    expect((await root.getWallets({})).wallets.map((w) => w.walletName)).toEqual(['passkey wallet', 'by the other passkey']);

    // An authenticator that never counts (always 0) is accepted again and again.
    const counterless = newAuthenticator({ counterStep: 0 });
    const more = await alicePk.createAuthenticators({ userId: aliceId, authenticators: [registration(counterless, 'counterless')] });
    const counterlessPk = passkeyClient(counterless);
    for (let i = 0; i < 3; i++) expect((await counterlessPk.getWhoami({})).userId).toBe(aliceId);

    // Deleting a passkey (self-service) ends its use at once.
    const deleted = await alicePk.deleteAuthenticators({ userId: aliceId, authenticatorIds: [added.authenticatorIds[0], more.authenticatorIds[0]] });
    expect(deleted.authenticatorIds).toEqual([added.authenticatorIds[0], more.authenticatorIds[0]]);
    await expect(passkeyClient(rsa).getWhoami({})).rejects.toThrow(/credential ID could not be found in organization or its parent organization/);
    await expect(root.getAuthenticator({ authenticatorId: added.authenticatorIds[0] })).rejects.toThrow(/webauthn authenticator not found/);
    expect((await root.getAuthenticators({ userId: aliceId })).authenticators).toEqual([record]);

    // Deleting the user removes the passkey with it.
    await root.deleteUsers({ userIds: [aliceId] });
    await expect(alicePk.getWhoami({})).rejects.toThrow(/credential ID could not be found/);
  });

  it('gives a sub-organization root user a passkey at creation; the passkey works there only', async () => {
    const parent = sdkServerClient(sigil);
    const bob = newAuthenticator();
    const created = await parent.createSubOrganization({
      subOrganizationName: 'passkey org',
      rootUsers: [{ userName: 'bob', apiKeys: [], authenticators: [registration(bob, 'bob phone')], oauthProviders: [] }],
      rootQuorumThreshold: 1,
    });
    const subId = created.subOrganizationId;
    const bobId = created.rootUserIds[0];

    const bobPk = passkeyClient(bob, subId);
    expect(await bobPk.getWhoami({})).toMatchObject({ organizationId: subId, userId: bobId, organizationName: 'passkey org' });
    // Bob is the sub-organization's root quorum: his passkey alone runs any activity there.
    const wallet = await bobPk.createWallet({ walletName: 'bob wallet', accounts: [ETH] });
    expect(wallet.activity.votes[0]).toMatchObject({ userId: bobId, publicKey: bob.publicKeyHex });
    // The credential lives in the sub-organization, not in the parent.
    await expect(passkeyClient(bob).getWhoami({})).rejects.toThrow(/credential ID could not be found in organization or its parent organization/);

    // The parent reads the passkey and finds the sub-organization by credential id.
    const readByParent = await sdkServerClient(sigil, sigil.root, subId).getAuthenticators({ userId: bobId });
    expect(readByParent.authenticators.map((a) => a.credentialId)).toEqual([bob.credentialId]);
    expect((await parent.getSubOrgIds({ filterType: 'CREDENTIAL_ID', filterValue: bob.credentialId })).organizationIds).toEqual([subId]);

    // A passkey of the parent authenticates reads of the sub-organization (target or its parent).
    const rootUser = newAuthenticator();
    await parent.createAuthenticators({ userId: sigil.root.userId, authenticators: [registration(rootUser, 'root passkey')] });
    const fromParent = await passkeyClient(rootUser, subId).getWhoami({});
    expect(fromParent).toMatchObject({ organizationId: sigil.root.organizationId, userId: sigil.root.userId });
  });
});

describe('refused passkey stamps and registrations change nothing', () => {
  let carol: SoftwareAuthenticator;
  let carolId: string;
  let before: Snapshot;

  beforeAll(async () => {
    carol = newAuthenticator();
    ({ userIds: [carolId] } = await sdkServerClient(sigil).createUsers({
      users: [{ userName: 'carol', apiKeys: [], authenticators: [registration(carol, 'carol laptop')], oauthProviders: [], userTags: [] }],
    }));
  });
  beforeEach(async () => {
    before = await dbSnapshot(sigil);
  });

  const expectRefused = (res: RawResponse, status: number, code: number, turnkeyErrorCode: string, message: RegExp) =>
    expectRefusedUnchanged(sigil, before, res, status, code, turnkeyErrorCode, message);

  it('accepts carol as a control', async () => {
    const ok = await passkeyPost(carol, 'query/whoami', whoamiBody());
    expect(ok.status).toBe(200);
    expect(ok.body.userId).toBe(carolId);
  });

  it('wrong origin', async () => {
    carol.origin = 'https://evil.example';
    try {
      const res = await passkeyPost(carol, 'query/whoami', whoamiBody());
      await expectRefused(res, 401, 16, 'SIGNATURE_INVALID', /^could not verify WebAuthN signature: origin "https:\/\/evil\.example" is not an allowed WebAuthn origin$/);
    } finally {
      carol.origin = 'http://localhost:3000';
    }
  });

  it('wrong challenge: an assertion over a different body', async () => {
    const body = activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_USER_TAG', { userTagName: 'forged', userIds: [] });
    const other = JSON.stringify({ ...body, parameters: { userTagName: 'other', userIds: [] } });
    const res = await passkeyPost(carol, 'submit/create_user_tag', body, { stampBody: other });
    await expectRefused(res, 401, 16, 'SIGNATURE_INVALID', /^could not verify WebAuthN signature: clientDataJson\.challenge does not match/);
    const q = await passkeyPost(carol, 'query/whoami', whoamiBody(), { stampBody: JSON.stringify({ organizationId: 'x' }) });
    await expectRefused(q, 401, 16, 'SIGNATURE_INVALID', /^could not verify WebAuthN signature/);
  });

  it('wrong relying party id', async () => {
    carol.rpId = 'evil.example';
    try {
      const res = await passkeyPost(carol, 'query/whoami', whoamiBody());
      await expectRefused(res, 401, 16, 'SIGNATURE_INVALID', /^could not verify WebAuthN signature: .*RP ID/i);
    } finally {
      carol.rpId = 'localhost';
    }
  });

  it('forged signature', async () => {
    const text = JSON.stringify(whoamiBody());
    const stamp = JSON.parse((await stamperFor(carol).stamp(text)).stampHeaderValue);
    const sig = Buffer.from(stamp.signature, 'base64url');
    sig[sig.length - 1] ^= 1;
    stamp.signature = sig.toString('base64url');
    const res = await rawPost(`${sigil.url}/public/v1/query/whoami`, text, { headers: { 'X-Stamp-Webauthn': JSON.stringify(stamp) } });
    await expectRefused(res, 401, 16, 'SIGNATURE_INVALID', /^could not verify WebAuthN signature/);
  });

  it('replayed counter', async () => {
    const text = JSON.stringify(whoamiBody());
    const stamp = await stamperFor(carol).stamp(text);
    const headers = { [stamp.stampHeaderName]: stamp.stampHeaderValue };
    const first = await rawPost(`${sigil.url}/public/v1/query/whoami`, text, { headers });
    expect(first.status).toBe(200);
    before = await dbSnapshot(sigil);
    // The very same stamp again: its counter is no longer above the stored one.
    const replay = await rawPost(`${sigil.url}/public/v1/query/whoami`, text, { headers });
    await expectRefused(replay, 401, 16, 'SIGNATURE_INVALID', /^could not verify WebAuthN signature: the authenticator's signature counter did not increase/);
    // A fresh assertion whose counter went backwards (a cloned authenticator) is refused the same way.
    carol.signCount -= 5;
    try {
      const cloned = await passkeyPost(carol, 'query/whoami', whoamiBody());
      await expectRefused(cloned, 401, 16, 'SIGNATURE_INVALID', /counter did not increase/);
    } finally {
      carol.signCount += 5;
    }
  });

  it('unknown credential', async () => {
    const stranger = newAuthenticator();
    const res = await passkeyPost(stranger, 'query/whoami', whoamiBody());
    await expectRefused(res, 401, 16, 'CREDENTIAL_NOT_FOUND', /^credential ID could not be found in organization or its parent organization$/);
    const act = await passkeyPost(stranger, 'submit/create_user_tag', activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_USER_TAG', { userTagName: 'x', userIds: [] }));
    await expectRefused(act, 401, 16, 'CREDENTIAL_NOT_FOUND', /^credential ID could not be found/);
  });

  it('malformed stamp', async () => {
    const res = await rawPost(`${sigil.url}/public/v1/query/whoami`, JSON.stringify(whoamiBody()), { headers: { 'X-Stamp-Webauthn': '{"credentialId":"abc"}' } });
    await expectRefused(res, 401, 16, 'SIGNATURE_INVALID', /could not extract webauthn stamp/);
  });

  const createAuthenticators = (authenticators: unknown[]) =>
    rawPost(
      `${sigil.url}/public/v1/submit/create_authenticators`,
      activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2', { userId: carolId, authenticators }),
      { key: sigil.root },
    );

  it('attestations that do not verify', async () => {
    const a = new SoftwareAuthenticator();
    await expectRefused(
      await createAuthenticators([registration(a, 'evil origin', { origin: 'https://evil.example' })]),
      400, 3, 'REQUEST_INVALID',
      /^invalid authenticator attestation: authenticators\[0\]: origin "https:\/\/evil\.example" is not an allowed WebAuthn origin$/,
    );
    await expectRefused(
      await createAuthenticators([registration(a, 'other challenge', { claimedChallenge: randomBytes(32).toString('base64url') })]),
      400, 3, 'REQUEST_INVALID',
      /^invalid authenticator attestation: authenticators\[0\]: clientDataJson\.challenge does not match/,
    );
    await expectRefused(await createAuthenticators([registration(a, 'other rp', { rpId: 'evil.example' })]), 400, 3, 'REQUEST_INVALID', /^invalid authenticator attestation: .*RP ID/i);
    const wrongId = registration(a, 'wrong id');
    wrongId.attestation.credentialId = randomBytes(32).toString('base64url');
    await expectRefused(await createAuthenticators([wrongId]), 400, 3, 'REQUEST_INVALID', /credentialId does not match the credential id in the attestation/);
    const garbage = registration(a, 'garbage');
    garbage.attestation.attestationObject = Buffer.from('not cbor').toString('base64url');
    await expectRefused(await createAuthenticators([garbage]), 400, 3, 'REQUEST_INVALID', /^invalid authenticator attestation/);
    // The second of two is bad: the first is not kept either.
    await expectRefused(
      await createAuthenticators([registration(a, 'good'), registration(new SoftwareAuthenticator(), 'bad', { origin: 'https://evil.example' })]),
      400, 3, 'REQUEST_INVALID', /authenticators\[1\]/,
    );
  });

  it('a credential already registered in the organization', async () => {
    await expectRefused(await createAuthenticators([registration(carol, 'again')]), 409, 6, 'CONFLICT', /already exists in this organization/);
    const a = new SoftwareAuthenticator();
    await expectRefused(await createAuthenticators([registration(a, 'one'), registration(a, 'two')]), 400, 3, 'REQUEST_INVALID', /listed twice/);
  });

  it('more than 10 authenticators for one user', async () => {
    const eleven = Array.from({ length: 11 }, (_, i) => registration(new SoftwareAuthenticator(), `key ${i}`));
    await expectRefused(await createAuthenticators(eleven), 429, 8, 'RATE_LIMIT_EXCEEDED', /^user has exceeded maximum authenticators/);
  });
});
