// The cold path's one read (src/store/cold-reads.ts; docs/design.md "The cold path"): on PostgreSQL a
// request from an organization the process holds nothing for reads what authentication, policy and
// signing need in one statement besides the generation read, and what it keeps is exactly what the
// repositories answer; a value read at another generation than the one the request observed is never
// served. On the embedded SQLite store the same values come from statements prepared once, read
// together, with the same answers.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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
const address = '0x00000000000000000000000000000000000000aA';

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
    const walletId = randomUUID();
    await r.wallets.insertWithAccounts({ id: walletId, organization_id: subId, name: 'default', mnemonic: 'sealed', exported: 0, imported: 0, created_at: T0, updated_at: T0 }, [
      { id: randomUUID(), organization_id: subId, wallet_id: walletId, curve: 'CURVE_SECP256K1', path_format: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", path_key: "m/44'/60'/0'/0/0", address_format: 'ADDRESS_FORMAT_ETHEREUM', address, public_key: '02ff', private_key: 'sealed', exported: 0, name: null, created_at: T0, updated_at: T0 },
    ]);
    await r.organizationKeys.insertIfAbsent({ organization_id: subId, key_id: randomUUID(), wrapped_key: 'wrapped', created_at: T0 });
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
    account: await repos.wallets.accountsByAddress(subId, address),
    organizationKey: await repos.organizationKeys.get(subId),
  };
}

describe('the cold read', () => {
  it('answers what the repositories answer, in one statement besides the generations', async () => {
    const expected = await requestPathReads(store.repos);
    expect(expected.caller).toHaveLength(1);
    expect(expected.voter?.apiKeys).toHaveLength(1);
    expect(expected.policies.map((p) => p.name)).toEqual(['a', 'b']);
    expect(expected.account).toHaveLength(1);
    expect(expected.organizationKey?.wrapped_key).toBe('wrapped');
    const before = store.stats.roundTrips;
    // On either store, none of the repositories' own reads runs: every value came with the cold read.
    const r = store.repos;
    const loads = [
      vi.spyOn(r.organizations, 'get'),
      vi.spyOn(r.apiKeys, 'findWithOwner'),
      vi.spyOn(r.ipAllowlists, 'forCredential'),
      vi.spyOn(r.policies, 'list'),
      vi.spyOn(r.velocityControls, 'list'),
      vi.spyOn(r.organizations, 'rootQuorumUserIds'),
      vi.spyOn(r.mfaPolicies, 'list'),
      vi.spyOn(r.webhooks, 'activeEndpoints'),
      vi.spyOn(r.users, 'recordRows'),
      vi.spyOn(r.wallets, 'accountsByAddress'),
      vi.spyOn(r.organizationKeys, 'get'),
    ];
    const { repos } = await store.requestReads(subId, undefined, publicKey, address);
    const afterReads = store.stats.roundTrips;
    const served = await requestPathReads(repos);
    for (const spy of loads) {
      expect(spy).not.toHaveBeenCalled();
      spy.mockRestore();
    }
    expect(JSON.stringify(served)).toBe(JSON.stringify(expected));
    if (databaseUrl) {
      // The cold read comes with the generation read, one statement; then nothing more (before: a
      // dozen statements, then two).
      expect(afterReads - before).toBe(1);
      expect(store.stats.roundTrips - afterReads).toBe(0);
    }
  });

  it('finds a submission already recorded and serves each request of a mixed batch its own values', async () => {
    // A fresh store: nothing of subId is held, so its request is cold; parentId's is then hot.
    const other = await Store.open({ dataDir, databaseUrl });
    try {
      const activityId = randomUUID();
      const fingerprint = `sha256:${'cd'.repeat(32)}`;
      await other.transaction(async (r) => {
        await r.activities.insert({
          id: activityId, organization_id: subId, type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', status: 'ACTIVITY_STATUS_COMPLETED', fingerprint, intent: '{}', result: '{}', failure: null,
          pending_parameters: null, app_proofs: null, simulation: null, user_id: userId, timestamp_ms: T0, created_at: T0, updated_at: T0,
        });
      });
      await other.requestReads(parentId, undefined, undefined);
      const before = other.stats.roundTrips;
      // Issued in one turn of the event loop: on PostgreSQL one statement carries the three.
      const [cold, replay, hot] = await Promise.all([
        other.requestReads(subId, undefined, publicKey, address),
        other.requestReads(subId, { organizationId: subId, fingerprint, timestampMs: T0 }, publicKey),
        other.requestReads(parentId, { organizationId: parentId, fingerprint, timestampMs: T0 }, publicKey),
      ]);
      if (databaseUrl) expect(other.stats.roundTrips - before).toBe(1);
      expect(replay.existing?.id).toBe(activityId);
      // The fingerprint names an activity of subId: not the parent's request's.
      expect(hot.existing).toBeUndefined();
      expect(cold.existing).toBeUndefined();
      expect((await cold.repos.wallets.accountsByAddress(subId, address)).map((a) => a.address)).toEqual([address]);
      expect((await cold.repos.apiKeys.findWithOwner([subId, parentId], publicKey)).map((k) => k.user.id)).toEqual([userId]);
      expect(await hot.repos.policies.list(parentId)).toEqual([]);
    } finally {
      await other.close();
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
