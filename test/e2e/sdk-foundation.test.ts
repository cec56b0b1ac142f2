// The foundation driven by the official SDKs, unchanged: @turnkey/sdk-server (Turnkey.apiClient())
// and @turnkey/http (TurnkeyClient + ApiKeyStamper) against a real `sigil serve` (issue: foundation).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateP256KeyPair } from '@turnkey/crypto';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { httpClient, rawPost, sdkServerClient } from '../helpers/clients.js';

let sigil: SigilInstance;

beforeAll(async () => {
  sigil = await startSigil();
});
afterAll(async () => {
  await sigil?.stop();
});

function newKey() {
  const k = generateP256KeyPair();
  return { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
}

describe('official SDKs against Sigil', () => {
  it('whoami answers with the root user through sdk-server and @turnkey/http', async () => {
    const api = sdkServerClient(sigil);
    const me = await api.getWhoami({});
    expect(me).toMatchObject({
      organizationId: sigil.root.organizationId,
      organizationName: 'Root organization',
      userId: sigil.root.userId,
      username: 'Root user',
    });
    const viaHttp = await httpClient(sigil).getWhoami({ organizationId: sigil.root.organizationId });
    expect(viaHttp.userId).toBe(sigil.root.userId);
    // The older path name answers the same.
    const old = await rawPost(`${sigil.url}/public/v1/query/get_whoami`, { organizationId: sigil.root.organizationId }, { key: sigil.root });
    expect(old.body).toEqual(viaHttp);
  });

  it('creates a user with an API key, and that key authenticates as the new user', async () => {
    const api = sdkServerClient(sigil);
    const key = newKey();
    const created = await api.createUsers({
      users: [
        {
          userName: 'alice',
          userEmail: 'alice@example.com',
          apiKeys: [{ apiKeyName: 'alice key', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    });
    expect(created.userIds).toHaveLength(1);
    expect(created.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(created.activity.type).toBe('ACTIVITY_TYPE_CREATE_USERS_V4');

    const asAlice = sdkServerClient(sigil, key);
    const me = await asAlice.getWhoami({});
    expect(me.userId).toBe(created.userIds[0]);
    expect(me.username).toBe('alice');

    // A non-root user is refused every activity until the policy engine exists: a clear 403.
    await expect(asAlice.updateUserName({ userId: created.userIds[0], userName: 'mallory' })).rejects.toThrow(
      /Turnkey error 7: You don't have sufficient permissions to take this action/,
    );
    const user = await api.getUser({ userId: created.userIds[0] });
    expect(user.user.userName).toBe('alice');
  });

  it('get/list users and API keys, update, tag and delete a user', async () => {
    const api = sdkServerClient(sigil);
    const key = newKey();
    const { userIds } = await api.createUsers({
      users: [
        {
          userName: 'bob',
          apiKeys: [{ apiKeyName: 'bob key', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256', expirationSeconds: '3600' }],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    });
    const bobId = userIds[0];
    const got = await api.getUser({ userId: bobId });
    expect(got.user).toMatchObject({ userId: bobId, userName: 'bob', userTags: [], authenticators: [], oauthProviders: [] });
    expect(got.user.apiKeys[0].credential).toEqual({ publicKey: key.apiPublicKey, type: 'CREDENTIAL_TYPE_API_KEY_P256' });
    expect(got.user.apiKeys[0].expirationSeconds).toBe('3600');
    expect(got.user.createdAt).toEqual({ seconds: expect.stringMatching(/^\d+$/), nanos: expect.stringMatching(/^\d+$/) });

    const list = await api.getUsers({});
    expect(list.users.map((u) => u.userId)).toEqual(expect.arrayContaining([sigil.root.userId, bobId]));

    const keys = await api.getApiKeys({ userId: bobId });
    expect(keys.apiKeys).toHaveLength(1);
    const one = await api.getApiKey({ apiKeyId: keys.apiKeys[0].apiKeyId });
    expect(one.apiKey.apiKeyName).toBe('bob key');

    // A second key for bob, then delete it again.
    const extra = newKey();
    const added = await api.createApiKeys({
      userId: bobId,
      apiKeys: [{ apiKeyName: 'bob second', publicKey: extra.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }],
    });
    expect(added.apiKeyIds).toHaveLength(1);
    expect((await api.getApiKeys({ userId: bobId })).apiKeys).toHaveLength(2);
    const removed = await api.deleteApiKeys({ userId: bobId, apiKeyIds: added.apiKeyIds });
    expect(removed.apiKeyIds).toEqual(added.apiKeyIds);
    expect((await api.getApiKeys({ userId: bobId })).apiKeys).toHaveLength(1);

    // Tags: create, assign through update_user, rename, list, delete.
    const tag = await api.createUserTag({ userTagName: 'ops', userIds: [] });
    await api.updateUser({ userId: bobId, userName: 'robert', userEmail: 'rob@example.com', userTagIds: [tag.userTagId] });
    let bob = (await api.getUser({ userId: bobId })).user;
    expect(bob).toMatchObject({ userName: 'robert', userEmail: 'rob@example.com', userTags: [tag.userTagId] });
    await api.updateUserTag({ userTagId: tag.userTagId, newUserTagName: 'operators', addUserIds: [], removeUserIds: [] });
    const tags = await api.listUserTags({});
    expect(tags.userTags.find((t) => t.tagId === tag.userTagId)).toMatchObject({ tagName: 'operators', tagType: 'TAG_TYPE_USER' });

    await api.updateUserName({ userId: bobId, userName: 'bobby' });
    await api.updateUserEmail({ userId: bobId, userEmail: '' });
    await api.updateUserPhoneNumber({ userId: bobId, userPhoneNumber: '+13214567890' });
    bob = (await api.getUser({ userId: bobId })).user;
    expect(bob.userName).toBe('bobby');
    expect(bob.userEmail).toBeUndefined();
    expect(bob.userPhoneNumber).toBe('+13214567890');
    await api.updateUserPhoneNumber({ userId: bobId, userPhoneNumber: '' });
    expect((await api.getUser({ userId: bobId })).user.userPhoneNumber).toBeUndefined();

    const delTags = await api.deleteUserTags({ userTagIds: [tag.userTagId] });
    expect(delTags.userIds).toEqual([bobId]);
    expect((await api.getUser({ userId: bobId })).user.userTags).toEqual([]);

    const deleted = await api.deleteUsers({ userIds: [bobId] });
    expect(deleted.userIds).toEqual([bobId]);
    await expect(api.getUser({ userId: bobId })).rejects.toThrow(/user not found/);
    // The deleted user's key no longer authenticates.
    await expect(sdkServerClient(sigil, key).getWhoami({})).rejects.toThrow(
      /could not find public key in organization or its parent organization/,
    );
  });

  it('get_activity returns the same record as the submit, and list_activities pages through', async () => {
    const client = httpClient(sigil);
    const submitted = await client.createUserTag({
      type: 'ACTIVITY_TYPE_CREATE_USER_TAG',
      timestampMs: String(Date.now()),
      organizationId: sigil.root.organizationId,
      parameters: { userTagName: `tag-${Date.now()}`, userIds: [] },
    });
    const fetched = await client.getActivity({ organizationId: sigil.root.organizationId, activityId: submitted.activity.id });
    expect(fetched.activity).toEqual(submitted.activity);
    const a = submitted.activity as any;
    expect(a.result.createUserTagResult.userTagId).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.intent).toEqual({ createUserTagIntent: expect.objectContaining({ userIds: [] }) });
    expect(a.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(a.result.activity.id).toBe(a.id);
    expect(a.timestampMs).toMatch(/^\d+$/);
    expect(a.votes[0]).toMatchObject({ userId: sigil.root.userId, selection: 'VOTE_SELECTION_APPROVED' });
    expect(a.canApprove).toBe(false);
    expect(a.canReject).toBe(false);

    const api = sdkServerClient(sigil);
    const all = await api.getActivities({ paginationOptions: { limit: '100' } });
    expect(all.activities[0].id).toBe(submitted.activity.id); // newest first
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await api.getActivities({ paginationOptions: { limit: '2', ...(after ? { after } : {}) } });
      seen.push(...page.activities.map((x) => x.id));
      if (page.activities.length < 2) break;
      after = page.activities[page.activities.length - 1].id;
    }
    expect(seen).toEqual(all.activities.map((x) => x.id));
    const back = await api.getActivities({ paginationOptions: { limit: '2', before: seen[seen.length - 1] } });
    expect(back.activities.map((x) => x.id)).toEqual(seen.slice(-3, -1));
    const filtered = await api.getActivities({ filterByType: ['ACTIVITY_TYPE_CREATE_USER_TAG'] });
    expect(filtered.activities.every((x) => x.type === 'ACTIVITY_TYPE_CREATE_USER_TAG')).toBe(true);
  });

  it('resubmitting an identical body returns the same activity; a new timestamp makes a new one', async () => {
    const client = httpClient(sigil);
    const body = {
      type: 'ACTIVITY_TYPE_CREATE_USER_TAG' as const,
      timestampMs: String(Date.now()),
      organizationId: sigil.root.organizationId,
      parameters: { userTagName: `idem-${Date.now()}`, userIds: [] },
    };
    const first = await client.createUserTag(body);
    const again = await client.createUserTag(body);
    expect(again.activity.id).toBe(first.activity.id);
    expect(again.activity.fingerprint).toBe(first.activity.fingerprint);
    const tags = await sdkServerClient(sigil).listUserTags({});
    expect(tags.userTags.filter((t) => t.tagName === body.parameters.userTagName)).toHaveLength(1);

    // A new timestamp is a new activity; here it fails because the tag name is taken.
    await expect(client.createUserTag({ ...body, timestampMs: String(Date.now() + 1) })).rejects.toThrow(/already exists/);
  });

  it('a burst of new submissions and replays, read together, answers each with its own activity', async () => {
    // Requests arriving together share one read of generations and fingerprints on PostgreSQL
    // (src/store/hot-reads.ts); each must still get the activity its own body names.
    const client = httpClient(sigil);
    const tagBody = (i: number, timestampMs: string) => ({
      type: 'ACTIVITY_TYPE_CREATE_USER_TAG' as const,
      timestampMs,
      organizationId: sigil.root.organizationId,
      parameters: { userTagName: `burst-${timestampMs}-${i}`, userIds: [] },
    });
    const ts = String(Date.now());
    const earlier = await Promise.all([0, 1, 2, 3].map((i) => client.createUserTag(tagBody(i, ts))));
    const burst = await Promise.all(
      Array.from({ length: 24 }, (_, i) => (i % 3 === 0 ? client.createUserTag(tagBody(i / 3 % 4, ts)) : client.createUserTag(tagBody(100 + i, ts)))),
    );
    burst.forEach((answer, i) => {
      if (i % 3 === 0) expect(answer.activity.id).toBe(earlier[(i / 3) % 4].activity.id);
      else expect(answer.activity.intent).toEqual({ createUserTagIntent: tagBody(100 + i, ts).parameters });
    });
    const fresh = burst.filter((_, i) => i % 3 !== 0).map((a) => a.activity.id);
    expect(new Set(fresh).size).toBe(fresh.length);
    for (const id of fresh) expect(earlier.map((e) => e.activity.id)).not.toContain(id);
  });

  it('accepts older type values as aliases and ignores unknown fields', async () => {
    const body = {
      type: 'ACTIVITY_TYPE_CREATE_USERS_V3',
      timestampMs: String(Date.now()),
      organizationId: sigil.root.organizationId,
      generateAppProofs: false,
      someFutureField: { nested: true },
      parameters: {
        users: [{ userName: 'legacy', userEmail: 'legacy@example.com', apiKeys: [], authenticators: [], oauthProviders: [], userTags: [], extra: 1 }],
      },
    };
    const res = await rawPost(`${sigil.url}/public/v1/submit/create_users`, body, { key: sigil.root });
    expect(res.status).toBe(200);
    expect(res.body.activity.type).toBe('ACTIVITY_TYPE_CREATE_USERS_V3');
    expect(Object.keys(res.body.activity.intent)).toEqual(['createUsersIntentV3']);
    expect(res.body.activity.result.createUsersResult.userIds).toHaveLength(1);
  });

  it('get_organization shows users, tags and the root quorum', async () => {
    const org = await httpClient(sigil).getOrganization({ organizationId: sigil.root.organizationId });
    expect(org.organizationData.organizationId).toBe(sigil.root.organizationId);
    expect(org.organizationData.rootQuorum).toEqual({ threshold: 1, userIds: [sigil.root.userId] });
    expect(org.organizationData.users?.some((u) => u.userId === sigil.root.userId)).toBe(true);
  });

  it('update_organization_name by the root user', async () => {
    const api = sdkServerClient(sigil);
    const r = await api.updateOrganizationName({ organizationName: 'Acme custody' });
    expect(r).toMatchObject({ organizationId: sigil.root.organizationId, organizationName: 'Acme custody' });
    expect((await api.getWhoami({})).organizationName).toBe('Acme custody');
  });
});
