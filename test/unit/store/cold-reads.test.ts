// The cold path's one read (src/store/cold-reads.ts; docs/design.md "The cold path"): on PostgreSQL a
// request from an organization the process holds nothing for reads what authentication and policy need
// in one statement besides the generation read, and what it keeps is exactly what the repositories
// answer; a value read at another generation than the one the request observed is never served. On the
// embedded SQLite store (no round trips) the repositories' own reads serve, with the same answers.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../../src/store/index.js';
import { ReadCache } from '../../../src/store/read-cache.js';
import { dropSchema, freshDeploymentEnv } from '../../helpers/sigil.js';

const T0 = 1_700_000_000_000;
let store: Store;
let databaseUrl: string | undefined;
let dataDir: string;
const parentId = randomUUID();
const subId = randomUUID();
const userId = randomUUID();
const publicKey = `02${'ab'.repeat(32)}`;

beforeAll(async () => {
  const fresh = freshDeploymentEnv();
  databaseUrl = fresh.databaseUrl;
  dataDir = fresh.dataDir;
  store = await Store.open({ dataDir, databaseUrl });
  await store.transaction(async (r) => {
    await r.organizations.insert({ id: parentId, name: 'parent', parent_organization_id: null, root_quorum_threshold: 1, created_at: T0, updated_at: T0 });
    await r.organizations.insert({ id: subId, name: 'end user', parent_organization_id: parentId, root_quorum_threshold: 1, created_at: T0, updated_at: T0 });
    await r.users.insert({ id: userId, organization_id: subId, user_name: 'u', user_email: 'u@example.com', user_phone_number: null, email_verified_at: T0, phone_number_verified_at: null, created_at: T0, updated_at: T0 });
    await r.apiKeys.insert([
      { id: randomUUID(), organization_id: subId, user_id: userId, api_key_name: 'k', public_key: publicKey, curve_type: 'API_KEY_CURVE_P256', credential_type: 'CREDENTIAL_TYPE_API_KEY_P256', expiration_seconds: null, expires_at: null, created_at: T0, updated_at: T0, session_profile_id: null },
    ]);
    await r.organizations.setRootQuorum(subId, 1, [userId], T0);
    await r.policies.insert([
      { id: randomUUID(), organization_id: subId, name: 'b', effect: 'EFFECT_ALLOW', condition: "activity.type == 'x'", consensus: null, time: null, notes: '', created_at: T0 + 1, updated_at: T0 + 1 },
      { id: randomUUID(), organization_id: subId, name: 'a', effect: 'EFFECT_DENY', condition: null, consensus: 'true', time: null, notes: 'n', created_at: T0, updated_at: T0 },
    ]);
    await r.ipAllowlists.upsert({ organization_id: subId, public_key: publicKey, enabled: null, on_evaluation_error: 'DENY', rules: '[]', created_at: T0, updated_at: T0 });
  });
}, 60_000);

afterAll(async () => {
  await store?.close();
  if (databaseUrl) await dropSchema(databaseUrl);
  rmSync(dataDir, { recursive: true, force: true });
});

/** Every read the request path makes for a caller from `subId`, through `repos`. */
async function requestPathReads(repos: Store['repos']) {
  return {
    organization: await repos.organizations.get(subId),
    caller: await repos.apiKeys.findWithOwner([subId, parentId], publicKey),
    allowlists: await repos.ipAllowlists.forCredential(subId, publicKey),
    policies: await repos.policies.list(subId),
    velocityControls: await repos.velocityControls.list(subId),
    rootQuorum: await repos.organizations.rootQuorumUserIds(subId),
    mfaPolicies: await repos.mfaPolicies.list(subId),
    webhooks: await repos.webhooks.activeEndpoints(subId),
    voter: await repos.users.recordRows(subId, userId),
  };
}

describe('the cold read', () => {
  it('answers what the repositories answer, in one statement besides the generations', async () => {
    const expected = await requestPathReads(store.repos);
    expect(expected.caller).toHaveLength(1);
    expect(expected.voter?.apiKeys).toHaveLength(1);
    expect(expected.policies.map((p) => p.name)).toEqual(['a', 'b']);
    const before = store.stats.roundTrips;
    const { repos } = await store.requestReads(subId, undefined, publicKey);
    const afterReads = store.stats.roundTrips;
    const served = await requestPathReads(repos);
    expect(JSON.stringify(served)).toBe(JSON.stringify(expected));
    if (databaseUrl) {
      // The cold read and the generation read; then nothing more (before: a dozen statements).
      expect(afterReads - before).toBe(2);
      expect(store.stats.roundTrips - afterReads).toBe(0);
    }
  });

  it('is kept only at the generation the request observed', async () => {
    const cache = new ReadCache(async (ids) => new Map(ids.map((id) => [id, 7])));
    const view = await cache.view(['org']);
    cache.seed('org', 8, [['policies', ['read at 8']]]);
    expect(await view.memo('org', 'policies', async () => ['loaded'])).toEqual(['loaded']);
    const other = await cache.view(['org2']);
    cache.seed('org2', 7, [['policies', ['read at 7']]]);
    expect(await other.memo('org2', 'policies', async () => ['loaded'])).toEqual(['read at 7']);
  });
});
