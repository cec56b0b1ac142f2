// create_api_only_users through @turnkey/http's TurnkeyClient (swagger
// v1CreateApiOnlyUsersIntent → v1CreateApiOnlyUsersResult; @turnkey/sdk-server 8.2.1 has no method
// for it; docs/policies.md "API-only users"): users made with API keys, tags and an optional contact
// email, no passkeys or OAuth providers; their keys stamp at once; policies see USER / CREATE. A user
// with no API key, an unknown tag, a key listed twice or a bad key are refused, and the whole batch
// changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, httpClient, newKey, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot, expectRefusedUnchanged } from '../helpers/db-snapshot.js';

let sigil: SigilInstance;
beforeAll(async () => {
  sigil = await startSigil();
});
afterAll(async () => {
  await sigil?.stop();
});

type ApiOnlyUser = { userName: string; userEmail?: string; userTags: string[]; apiKeys: { apiKeyName: string; publicKey: string; curveType: 'API_KEY_CURVE_P256'; expirationSeconds?: string }[] };

const keyParams = (name: string, key: KeyPair) => ({ apiKeyName: name, publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' as const });

function createApiOnlyUsers(apiOnlyUsers: ApiOnlyUser[], key: KeyPair = sigil.root) {
  return httpClient(sigil, key).createApiOnlyUsers({
    type: 'ACTIVITY_TYPE_CREATE_API_ONLY_USERS',
    timestampMs: String(Date.now()),
    organizationId: sigil.root.organizationId,
    parameters: { apiOnlyUsers },
  });
}

const submit = (apiOnlyUsers: unknown, key: KeyPair = sigil.root) =>
  rawPost(`${sigil.url}/public/v1/submit/create_api_only_users`, activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_API_ONLY_USERS', { apiOnlyUsers }), { key });

describe('create_api_only_users', () => {
  it('creates users whose only credentials are their API keys, with tags and a contact email', async () => {
    const api = sdkServerClient(sigil);
    const { userTagId } = await api.createUserTag({ userTagName: 'bots', userIds: [] });
    const [k1, k2, k3] = [newKey(), newKey(), newKey()];
    const res = await createApiOnlyUsers([
      { userName: 'indexer', userTags: [userTagId], apiKeys: [keyParams('indexer key', k1), { ...keyParams('rotating', k2), expirationSeconds: '3600' }] },
      { userName: 'billing bot', userEmail: 'billing@example.com', userTags: [], apiKeys: [keyParams('billing key', k3)] },
    ]);
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(res.activity.type).toBe('ACTIVITY_TYPE_CREATE_API_ONLY_USERS');
    const { userIds } = res.activity.result.createApiOnlyUsersResult!;
    expect(userIds).toHaveLength(2);

    const { user } = await api.getUser({ userId: userIds[0] });
    expect(user).toMatchObject({ userId: userIds[0], userName: 'indexer', userTags: [userTagId], authenticators: [], oauthProviders: [] });
    expect(user.userEmail).toBeUndefined();
    expect(user.apiKeys.map((k) => [k.apiKeyName, k.credential.type, k.expirationSeconds])).toEqual([
      ['indexer key', 'CREDENTIAL_TYPE_API_KEY_P256', undefined],
      ['rotating', 'CREDENTIAL_TYPE_API_KEY_P256', '3600'],
    ]);
    const second = (await api.getUser({ userId: userIds[1] })).user;
    expect(second).toMatchObject({ userName: 'billing bot', userEmail: 'billing@example.com', authenticators: [], oauthProviders: [] });

    // Their keys stamp at once, as those users.
    expect((await sdkServerClient(sigil, k1).getWhoami({})).userId).toBe(userIds[0]);
    expect((await sdkServerClient(sigil, k3).getWhoami({})).userId).toBe(userIds[1]);
    // The activity reads back with its intent.
    const { activity } = await api.getActivity({ activityId: res.activity.id });
    expect(activity.intent.createApiOnlyUsersIntent?.apiOnlyUsers.map((u) => u.userName)).toEqual(['indexer', 'billing bot']);
  });

  it('refuses bad input and changes nothing, the whole batch included', async () => {
    const good = { userName: 'fine', userTags: [], apiKeys: [keyParams('k', newKey())] };
    const taken = newKey();
    await createApiOnlyUsers([{ userName: 'holder', userTags: [], apiKeys: [keyParams('k', taken)] }]);
    const twice = newKey();
    const before = await dbSnapshot(sigil);
    await expectRefusedUnchanged(sigil, before, await submit([good, { userName: 'keyless', userTags: [], apiKeys: [] }]), 400, 3, 'REQUEST_INVALID', /apiOnlyUsers\[1\]: an API-only user needs at least one API key/);
    await expectRefusedUnchanged(sigil, before, await submit([]), 400, 3, 'REQUEST_INVALID', /apiOnlyUsers must list at least one user/);
    await expectRefusedUnchanged(sigil, before, await submit([good, { userName: 'tagged', userTags: ['no-such-tag'], apiKeys: [keyParams('k', newKey())] }]), 404, 5, 'NOT_FOUND', /apiOnlyUsers\[1\]\.userTags: user tag not found/);
    await expectRefusedUnchanged(sigil, before, await submit([{ userName: 'dup', userTags: [], apiKeys: [keyParams('a', twice), keyParams('b', twice)] }]), 400, 3, 'REQUEST_INVALID', /listed twice/);
    await expectRefusedUnchanged(sigil, before, await submit([good, { userName: 'clash', userTags: [], apiKeys: [keyParams('k', taken)] }]), 409, 6, 'CONFLICT', /already exists in this organization/);
    await expectRefusedUnchanged(sigil, before, await submit([{ userName: ' ', userTags: [], apiKeys: [keyParams('k', newKey())] }]), 400, 3, 'REQUEST_INVALID', /apiOnlyUsers\[0\]\.userName must not be empty/);
    await expectRefusedUnchanged(sigil, before, await submit([{ ...good, userEmail: 'not an email' }]), 400, 3, 'INVALID_EMAIL', /apiOnlyUsers\[0\]\.userEmail/);
    await expectRefusedUnchanged(sigil, before, await submit([{ userName: 'no tags field', apiKeys: [keyParams('k', newKey())] }]), 400, 3, 'REQUEST_INVALID', /^bad request body: missing parameter: parameters\.apiOnlyUsers\[0\]\.userTags$/);
  });

  it('is USER / CREATE for policies', async () => {
    const api = sdkServerClient(sigil);
    const maker = newKey();
    const { userIds } = await createApiOnlyUsers([{ userName: 'provisioner', userTags: [], apiKeys: [keyParams('k', maker)] }]).then((r) => r.activity.result.createApiOnlyUsersResult!);
    const before = await dbSnapshot(sigil);
    const refused = await submit([{ userName: 'made without a policy', userTags: [], apiKeys: [keyParams('k', newKey())] }], maker);
    await expectRefusedUnchanged(sigil, before, refused, 403, 7, 'REQUEST_NOT_AUTHORIZED', /Please add a policy granting this user permissions/);
    expect(refused.body.details[2].reason).toMatch(/^no policy allows ACTIVITY_TYPE_CREATE_API_ONLY_USERS/);
    await api.createPolicy({
      policyName: 'provisioner makes users',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'USER' && activity.action == 'CREATE' && activity.kind == 'CREATE_API_ONLY_USERS'",
      consensus: `approvers.any(user, user.id == '${userIds[0]}')`,
      notes: '',
    });
    const made = await createApiOnlyUsers([{ userName: 'made with a policy', userTags: [], apiKeys: [keyParams('k', newKey())] }], maker);
    expect(made.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  });
});
