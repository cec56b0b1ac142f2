// Older activity versions whose intents are in the swagger (docs/compatibility.md "Older activity
// versions"), sent as applications pinned to older SDKs send them: through @turnkey/http's
// TurnkeyClient, whose methods post the body they are given. Each answers under its own result member
// and does what its current version does: CREATE_POLICY and _V2 (legacy selectors, stored as condition
// and consensus), UPDATE_POLICY, CREATE_SUB_ORGANIZATION V1–V3, CREATE_USERS V1, CREATE_AUTHENTICATORS
// V1, CREATE_PRIVATE_KEYS V1 and CREATE_READ_WRITE_SESSION V1. Refusals are clear and change nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { decryptCredentialBundle, generateP256KeyPair, getPublicKey } from '@turnkey/crypto';
import { recoverAddress } from 'viem';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { newKey, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot } from '../helpers/db-snapshot.js';
import { SoftwareAuthenticator } from '../helpers/software-authenticator.js';

let sigil: SigilInstance;
let org: string;
beforeAll(async () => {
  sigil = await startSigil();
  org = sigil.root.organizationId;
});
afterAll(async () => {
  await sigil?.stop();
});

const http = (key: KeyPair = sigil.root) => new TurnkeyClient({ baseUrl: sigil.url }, new ApiKeyStamper(key));

/** An activity body of an older type, as a pinned SDK builds it. */
const body = (type: string, parameters: unknown, organizationId = org) => ({ type, timestampMs: String(Date.now()), organizationId, parameters }) as never;

/** A passkey registration as a V1 activity carries it: the browser's PublicKeyCredential. */
function v1Passkey(name: string) {
  const device = new SoftwareAuthenticator();
  const challenge = randomBytes(32);
  const att = device.register(challenge);
  return {
    device,
    params: {
      authenticatorName: name,
      challenge: challenge.toString('base64url'),
      attestation: {
        id: att.credentialId,
        type: 'public-key',
        rawId: att.credentialId,
        authenticatorAttachment: 'platform',
        response: { clientDataJson: att.clientDataJson, attestationObject: att.attestationObject, transports: att.transports, authenticatorAttachment: 'platform' },
        clientExtensionResults: {},
      },
    },
  };
}

describe('older activity versions', () => {
  it('CREATE_POLICY and _V2 store legacy selectors as the expressions that say the same, and they decide', async () => {
    const bob = newKey();
    const { userIds } = await sdkServerClient(sigil).createUsers({
      users: [{ userName: 'bob', apiKeys: [{ apiKeyName: 'bob', publicKey: bob.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    const asBob = sdkServerClient(sigil, bob);
    await expect(asBob.createWallet({ walletName: 'before', accounts: [] })).rejects.toThrow(/sufficient permissions/);

    const v2 = await http().createPolicy(
      body('ACTIVITY_TYPE_CREATE_POLICY_V2', {
        policyName: 'bob creates wallets',
        effect: 'EFFECT_ALLOW',
        selectors: [
          { subject: 'user.id', operator: 'OPERATOR_EQUAL', targets: [userIds[0]] },
          { subject: 'activity.type', operator: 'OPERATOR_IN', targets: ['ACTIVITY_TYPE_CREATE_WALLET', 'ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS'] },
        ],
      }),
    );
    expect(v2.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const policyId = (v2.activity.result as any).createPolicyResult.policyId;
    expect(policyId).toMatch(/^[0-9a-f-]{36}$/);
    expect((v2.activity.intent as any).createPolicyIntentV2.selectors).toHaveLength(2);
    const { policy } = await sdkServerClient(sigil).getPolicy({ policyId });
    expect(policy).toMatchObject({
      effect: 'EFFECT_ALLOW',
      condition: "activity.type in ['ACTIVITY_TYPE_CREATE_WALLET', 'ACTIVITY_TYPE_CREATE_WALLET_ACCOUNTS']",
      consensus: `approvers.any(user, user.id == '${userIds[0]}')`,
      notes: '',
    });
    expect((await asBob.createWallet({ walletName: 'allowed now', accounts: [] })).walletId).toMatch(/^[0-9a-f-]{36}$/);

    // V1: one target per selector; a DENY on another activity type.
    const v1 = await http().createPolicy(
      body('ACTIVITY_TYPE_CREATE_POLICY', { policyName: 'no deletions', effect: 'EFFECT_DENY', selectors: [{ subject: 'activity.type', operator: 'OPERATOR_EQUAL', target: 'ACTIVITY_TYPE_DELETE_WALLETS' }], notes: 'v1' }),
    );
    const v1Id = (v1.activity.result as any).createPolicyResult.policyId;
    expect((await sdkServerClient(sigil).getPolicy({ policyId: v1Id })).policy).toMatchObject({ condition: "activity.type == 'ACTIVITY_TYPE_DELETE_WALLETS'", consensus: '', notes: 'v1' });
    // (The root quorum bypasses policies; Bob does not.)
    const { wallets } = await asBob.getWallets({});
    await expect(asBob.deleteWallets({ walletIds: [wallets[0].walletId], deleteWithoutExport: true })).rejects.toThrow(/policy engine denied request explicitly/);

    // A selector that says nothing the language can: refused, nothing written.
    const before = await dbSnapshot(sigil);
    await expect(
      http().createPolicy(body('ACTIVITY_TYPE_CREATE_POLICY_V2', { policyName: 'bad', effect: 'EFFECT_ALLOW', selectors: [{ subject: 'activity.type', operator: 'OPERATOR_MORE_THAN', targets: ['many'] }] })),
    ).rejects.toThrow(/Turnkey error 3: selectors\[0\]\.target: the ordering operators compare integers, got "many"/);
    await expect(http().createPolicy(body('ACTIVITY_TYPE_CREATE_POLICY', { policyName: 'empty', effect: 'EFFECT_ALLOW', selectors: [] }))).rejects.toThrow(/selectors must list at least one selector/);
    await expect(
      http().createPolicy(body('ACTIVITY_TYPE_CREATE_POLICY', { policyName: 'unknown', effect: 'EFFECT_ALLOW', selectors: [{ subject: 'nothing.here', operator: 'OPERATOR_EQUAL', target: 'x' }] })),
    ).rejects.toThrow(/Turnkey error 3: .*nothing/);
    expect(await dbSnapshot(sigil)).toEqual(before);

    // UPDATE_POLICY (V1) answers under updatePolicyResult.
    const updated = await http().updatePolicy(body('ACTIVITY_TYPE_UPDATE_POLICY', { policyId: v1Id, policyName: 'no deletions at all', policyNotes: 'updated by V1' }));
    expect(updated.activity.result).toMatchObject({ updatePolicyResult: { policyId: v1Id } });
    expect((await sdkServerClient(sigil).getPolicy({ policyId: v1Id })).policy).toMatchObject({ policyName: 'no deletions at all', notes: 'updated by V1', effect: 'EFFECT_DENY' });
  });

  it('CREATE_SUB_ORGANIZATION V1, V2 and V3, each under its own result member', async () => {
    // V1: a name and one root passkey (v1AuthenticatorParamsV2).
    const device = new SoftwareAuthenticator();
    const challenge = randomBytes(32);
    const rootAuthenticator = { authenticatorName: 'root passkey', challenge: challenge.toString('base64url'), attestation: device.register(challenge) };
    const v1 = await http().createSubOrganization(body('ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION', { name: 'v1 sub', rootAuthenticator }));
    const r1 = (v1.activity.result as any).createSubOrganizationResult;
    expect(r1.subOrganizationId).toMatch(/^[0-9a-f-]{36}$/);
    expect(r1.rootUserIds).toHaveLength(1);
    const users1 = await sdkServerClient(sigil, sigil.root, r1.subOrganizationId).getUsers({});
    expect(users1.users[0]).toMatchObject({ userId: r1.rootUserIds[0], userName: 'v1 sub', authenticators: [{ authenticatorName: 'root passkey', credentialId: device.credentialId }] });

    // V2: root users whose API keys have no curveType (P-256).
    const key = newKey();
    const v2 = await http().createSubOrganization(
      body('ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V2', {
        subOrganizationName: 'v2 sub',
        rootUsers: [{ userName: 'v2 root', userEmail: 'v2@example.com', apiKeys: [{ apiKeyName: 'device', publicKey: key.apiPublicKey }], authenticators: [] }],
        rootQuorumThreshold: 1,
      }),
    );
    const r2 = (v2.activity.result as any).createSubOrganizationResult;
    expect(Object.keys(v2.activity.result as object).sort()).toEqual(['activity', 'createSubOrganizationResult']);
    expect(await sdkServerClient(sigil, key, r2.subOrganizationId).getWhoami({})).toMatchObject({ organizationId: r2.subOrganizationId, userId: r2.rootUserIds[0] });

    // V3: and private keys, answered with their addresses; the root user signs with one.
    const key3 = newKey();
    const v3 = await http().createSubOrganization(
      body('ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V3', {
        subOrganizationName: 'v3 sub',
        rootUsers: [{ userName: 'v3 root', apiKeys: [{ apiKeyName: 'device', publicKey: key3.apiPublicKey }], authenticators: [] }],
        rootQuorumThreshold: 1,
        privateKeys: [{ privateKeyName: 'eth', curve: 'CURVE_SECP256K1', privateKeyTags: [], addressFormats: ['ADDRESS_FORMAT_ETHEREUM'] }],
      }),
    );
    const r3 = (v3.activity.result as any).createSubOrganizationResultV3;
    expect(r3.privateKeys).toHaveLength(1);
    expect(r3.privateKeys[0].addresses).toEqual([{ format: 'ADDRESS_FORMAT_ETHEREUM', address: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/) }]);
    const digest = `0x${'5a'.repeat(32)}` as const;
    const sig = await sdkServerClient(sigil, key3, r3.subOrganizationId).signRawPayload({ signWith: r3.privateKeys[0].privateKeyId, payload: digest, encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' });
    expect(await recoverAddress({ hash: digest, signature: { r: `0x${sig.r}`, s: `0x${sig.s}`, yParity: Number(sig.v) } })).toBe(r3.privateKeys[0].addresses[0].address);
  });

  it('CREATE_USERS and CREATE_AUTHENTICATORS V1 take the browser credential form; CREATE_PRIVATE_KEYS V1 answers ids', async () => {
    const key = newKey();
    const passkey = v1Passkey('laptop');
    const created = await http().createUsers(
      body('ACTIVITY_TYPE_CREATE_USERS', {
        users: [{ userName: 'carol', userEmail: 'carol@example.com', accessType: 'ACCESS_TYPE_API', apiKeys: [{ apiKeyName: 'carol', publicKey: key.apiPublicKey }], authenticators: [{ ...passkey.params, userId: '' }], userTags: [] }],
      }),
    );
    const [carol] = (created.activity.result as any).createUsersResult.userIds;
    expect(await sdkServerClient(sigil, key).getWhoami({})).toMatchObject({ userId: carol });

    const phone = v1Passkey('phone');
    const added = await http(key).createAuthenticators(body('ACTIVITY_TYPE_CREATE_AUTHENTICATORS', { userId: carol, authenticators: [{ ...phone.params, userId: carol }] }));
    const { authenticatorIds } = (added.activity.result as any).createAuthenticatorsResult;
    expect(authenticatorIds).toHaveLength(1);
    const { user } = await sdkServerClient(sigil).getUser({ userId: carol });
    expect(user.authenticators.map((a) => [a.authenticatorName, a.credentialId])).toEqual([
      ['laptop', passkey.device.credentialId],
      ['phone', phone.device.credentialId],
    ]);

    const keys = await http().createPrivateKeys(
      body('ACTIVITY_TYPE_CREATE_PRIVATE_KEYS', { privateKeys: [{ privateKeyName: 'v1 key', curve: 'CURVE_ED25519', privateKeyTags: [], addressFormats: ['ADDRESS_FORMAT_SOLANA'] }] }),
    );
    expect(Object.keys(keys.activity.result as object).sort()).toEqual(['activity', 'createPrivateKeysResult']);
    const { privateKeyIds } = (keys.activity.result as any).createPrivateKeysResult;
    expect(privateKeyIds).toHaveLength(1);
    expect((await sdkServerClient(sigil).getPrivateKey({ privateKeyId: privateKeyIds[0] })).privateKey.privateKeyName).toBe('v1 key');
  });

  it('CREATE_READ_WRITE_SESSION V1 names its user by email and answers a credential bundle', async () => {
    const key = newKey();
    const { userIds } = await sdkServerClient(sigil).createUsers({
      users: [{ userName: 'dora', userEmail: 'dora@example.com', apiKeys: [{ apiKeyName: 'dora', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    const target = generateP256KeyPair();
    // Dora's own session, without any policy.
    const res = await http(key).createReadWriteSession(body('ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION', { targetPublicKey: target.publicKeyUncompressed, email: 'dora@example.com' }));
    const result = (res.activity.result as any).createReadWriteSessionResult;
    expect(result).toMatchObject({ organizationId: org, userId: userIds[0], username: 'dora', apiKeyId: expect.any(String) });
    const sessionPrivateKey = decryptCredentialBundle(result.credentialBundle, target.privateKey);
    const session = { apiPrivateKey: sessionPrivateKey, apiPublicKey: Buffer.from(getPublicKey(sessionPrivateKey, true)).toString('hex') };
    expect(await sdkServerClient(sigil, session).getWhoami({})).toMatchObject({ userId: userIds[0] });

    // Someone else's email is not Dora's to use; an unknown email is not found. Nothing changes.
    const before = await dbSnapshot(sigil);
    await expect(
      http(key).createReadWriteSession(body('ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION', { targetPublicKey: target.publicKeyUncompressed, email: 'carol@example.com' })),
    ).rejects.toThrow(/sufficient permissions/);
    await expect(
      http().createReadWriteSession(body('ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION', { targetPublicKey: target.publicKeyUncompressed, email: 'nobody@example.com' })),
    ).rejects.toThrow(/no user with email nobody@example.com/);
    expect(await dbSnapshot(sigil)).toEqual(before);
  });
});
