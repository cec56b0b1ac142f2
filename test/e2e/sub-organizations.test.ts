// Sub-organizations through @turnkey/sdk-server: a parent creates one with a root user, an API key
// and a wallet; that key works in the sub-organization; the parent reads it but cannot write to it;
// list_suborgs finds it by name, email and public key; deletion needs the sub-organization's own root
// user and exported keys (or deleteWithoutExport), and its answer shows the voter it deleted in full.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateP256KeyPair } from '@turnkey/crypto';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, httpClient, rawPost, sdkServerClient } from '../helpers/clients.js';

let sigil: SigilInstance;
beforeAll(async () => {
  sigil = await startSigil();
});
afterAll(async () => {
  await sigil?.stop();
});

const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } as const;

describe('sub-organizations', () => {
  it('create, use, read from the parent, list, and delete', async () => {
    const parent = sdkServerClient(sigil);
    const k = generateP256KeyPair();
    const key = { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
    const created = await parent.createSubOrganization({
      subOrganizationName: 'end user 1',
      rootUsers: [{ userName: 'end user', userEmail: 'end@example.com', apiKeys: [{ apiKeyName: 'device', publicKey: k.publicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
      wallet: { walletName: 'default', accounts: [ETH] },
    });
    const subId = created.subOrganizationId;
    expect(created.rootUserIds).toHaveLength(1);
    expect(created.wallet?.addresses).toHaveLength(1);

    // The end user's key works in its sub-organization, and signs with the sub-organization's wallet.
    const user = sdkServerClient(sigil, key, subId);
    expect(await user.getWhoami({})).toMatchObject({ organizationId: subId, userId: created.rootUserIds[0], organizationName: 'end user 1' });
    const sig = await user.signRawPayload({ signWith: created.wallet!.addresses[0], payload: '0x' + '55'.repeat(32), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' });
    expect(sig.r).toMatch(/^[0-9a-f]{64}$/);
    // ...but not in the parent.
    await expect(sdkServerClient(sigil, key).getWhoami({})).rejects.toThrow(/could not find public key/);

    // The parent reads the sub-organization but cannot write to it.
    const org = await httpClient(sigil).getOrganization({ organizationId: subId });
    expect(org.organizationData.name).toBe('end user 1');
    expect((await sdkServerClient(sigil, sigil.root, subId).getWallets({})).wallets).toHaveLength(1);
    const write = await rawPost(`${sigil.url}/public/v1/submit/create_wallet`, activityBody(subId, 'ACTIVITY_TYPE_CREATE_WALLET', { walletName: 'intruder', accounts: [ETH] }), { key: sigil.root });
    expect(write.status).toBe(403);
    expect(write.body.message).toMatch(/cannot submit activities to a sub-organization/);

    // A sub-organization cannot create sub-organizations of its own.
    await expect(
      user.createSubOrganization({ subOrganizationName: 'nested', rootUsers: [{ userName: 'x', userEmail: 'x@example.com', apiKeys: [], authenticators: [], oauthProviders: [] }], rootQuorumThreshold: 1 }),
    ).rejects.toThrow(/cannot be called by sub-organizations/);

    const byEmail = await parent.getSubOrgIds({ filterType: 'EMAIL', filterValue: 'end@example.com' });
    expect(byEmail.organizationIds).toEqual([subId]);
    expect((await parent.getSubOrgIds({ filterType: 'PUBLIC_KEY', filterValue: k.publicKey })).organizationIds).toEqual([subId]);
    expect((await parent.getSubOrgIds({ filterType: 'NAME', filterValue: 'end user 1' })).organizationIds).toEqual([subId]);
    expect((await parent.getSubOrgIds({ filterType: 'EMAIL', filterValue: 'nobody@example.com' })).organizationIds).toEqual([]);

    // Deletion: the parent cannot; the sub-organization's root user can, once keys are exported or with the flag.
    const byParent = await rawPost(`${sigil.url}/public/v1/submit/delete_sub_organization`, activityBody(subId, 'ACTIVITY_TYPE_DELETE_SUB_ORGANIZATION', {}), { key: sigil.root });
    expect(byParent.status).toBe(403);
    await expect(user.deleteSubOrganization({})).rejects.toThrow(/never exported/);
    // A change to the voter just before (so no earlier answer has shown it as it now is).
    await user.updateUserName({ userId: created.rootUserIds[0], userName: 'end user, leaving' });
    const deleted = await user.deleteSubOrganization({ deleteWithoutExport: true });
    expect(deleted.subOrganizationUuid).toBe(subId);
    // The deletion took its voter with it: the vote still shows the voter as it was (a full v1User).
    expect(deleted.activity.votes).toHaveLength(1);
    expect(deleted.activity.votes[0].user).toEqual({
      userId: created.rootUserIds[0],
      userName: 'end user, leaving',
      userEmail: 'end@example.com',
      authenticators: [],
      apiKeys: [expect.objectContaining({ apiKeyName: 'device', credential: expect.objectContaining({ publicKey: k.publicKey }) })],
      userTags: [],
      oauthProviders: [],
      createdAt: { seconds: expect.any(String), nanos: expect.any(String) },
      updatedAt: { seconds: expect.any(String), nanos: expect.any(String) },
      mfaPolicies: [],
    });
    expect((await parent.getSubOrgIds({})).organizationIds).not.toContain(subId);
    await expect(sdkServerClient(sigil, key, subId).getWhoami({})).rejects.toThrow(/no organization found/);
  });

  it('a vote whose voter was deleted since still carries a complete user record', async () => {
    const root = sdkServerClient(sigil);
    const k = generateP256KeyPair();
    const { userIds } = await root.createUsers({
      users: [{ userName: 'leaver', apiKeys: [{ apiKeyName: 'k', publicKey: k.publicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    // Users manage their own keys without a policy: the leaver votes on its own activity.
    const own = await sdkServerClient(sigil, { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey }).createApiKeys({
      userId: userIds[0],
      apiKeys: [{ apiKeyName: 'second', publicKey: generateP256KeyPair().publicKey, curveType: 'API_KEY_CURVE_P256' }],
    });
    await root.deleteUsers({ userIds });
    const { activity } = await root.getActivity({ activityId: own.activity.id });
    expect(activity.votes[0].user).toMatchObject({ userId: userIds[0], userName: '', authenticators: [], apiKeys: [], userTags: [], oauthProviders: [], mfaPolicies: [] });
    expect(activity.votes[0].user.createdAt).toEqual(activity.votes[0].createdAt);
  });

  it('a deletion that waits for a second root user is carried out by that user\'s approval, which answers its vote', async () => {
    const keys = [generateP256KeyPair(), generateP256KeyPair()];
    const created = await sdkServerClient(sigil).createSubOrganization({
      subOrganizationName: 'two roots',
      rootUsers: keys.map((k, i) => ({ userName: `root ${i}`, userEmail: `root${i}@example.com`, apiKeys: [{ apiKeyName: 'k', publicKey: k.publicKey, curveType: 'API_KEY_CURVE_P256' as const }], authenticators: [], oauthProviders: [] })),
      rootQuorumThreshold: 2,
    });
    const subId = created.subOrganizationId;
    const as = (i: number) => httpClient(sigil, { apiPublicKey: keys[i].publicKey, apiPrivateKey: keys[i].privateKey });
    const submitted = await as(0).deleteSubOrganization({ type: 'ACTIVITY_TYPE_DELETE_SUB_ORGANIZATION', timestampMs: String(Date.now()), organizationId: subId, parameters: { deleteWithoutExport: true } });
    expect(submitted.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    const approval = await as(1).approveActivity({ type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY', timestampMs: String(Date.now()), organizationId: subId, parameters: { fingerprint: submitted.activity.fingerprint } });
    expect(approval.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect((await sdkServerClient(sigil).getSubOrgIds({ filterType: 'NAME', filterValue: 'two roots' })).organizationIds).toEqual([]);
    await expect(sdkServerClient(sigil, { apiPublicKey: keys[1].publicKey, apiPrivateKey: keys[1].privateKey }, subId).getWhoami({})).rejects.toThrow(/no organization found|could not find public key/);
  });

  it('refuses a threshold above the number of root users', async () => {
    await expect(
      sdkServerClient(sigil).createSubOrganization({
        subOrganizationName: 'bad',
        rootUsers: [{ userName: 'a', userEmail: 'a@example.com', apiKeys: [], authenticators: [], oauthProviders: [] }],
        rootQuorumThreshold: 2,
      }),
    ).rejects.toThrow(/rootQuorumThreshold must be from 1 to the number of root users/);
  });
});
