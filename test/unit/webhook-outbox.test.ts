// The webhook outbox on a real database (embedded SQLite, or PostgreSQL when SIGIL_TEST_DATABASE_URL
// is set), with explicit clock values: enqueueWebhookEvent (src/domain/governance/webhooks.ts, the one call
// other features make) routes an event to the organization's and its parent's subscribed endpoints
// inside the caller's transaction, so a rolled-back transaction leaves no event; a claimed row is
// leased to one dispatcher until its lease expires; one subject's events are claimed in order; a
// row given up is dead and frees the next; rows of a deleted endpoint are swept away.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store, type WebhookEndpointRow } from '../../src/store/index.js';
import { enqueueWebhookEvent } from '../../src/domain/governance/webhooks.js';
import { dropSchema, freshDeploymentEnv } from '../helpers/sigil.js';
import { execSql } from '../helpers/db-snapshot.js';

let store: Store;
let databaseUrl: string | undefined;
let dataDir: string;

const T0 = 1_700_000_000_000;

function endpoint(id: string, organizationId: string, subscriptions: unknown[], active = 1): WebhookEndpointRow {
  return {
    id,
    organization_id: organizationId,
    name: id,
    url: `https://hooks.example.com/${id}`,
    is_active: active,
    subscriptions: JSON.stringify(subscriptions),
    created_at: T0,
    updated_at: T0,
    consecutive_failures: 0,
    failing_since: null,
    last_error: null,
    last_delivered_at: null,
  };
}

beforeAll(async () => {
  const fresh = freshDeploymentEnv();
  databaseUrl = fresh.databaseUrl;
  dataDir = fresh.dataDir;
  store = await Store.open({ dataDir: fresh.dataDir, databaseUrl });
  const org = (id: string, parent: string | null) => store.repos.organizations.insert({ id, name: id, parent_organization_id: parent, root_quorum_threshold: 1, created_at: T0, updated_at: T0 });
  await org('parent', null);
  await org('sub', 'parent');
  await org('other', null);
  const tx = [{ eventType: 'SEND_TRANSACTION_STATUS_UPDATES', isActive: true }];
  await store.repos.webhooks.insertEndpoint(endpoint('parent-tx', 'parent', tx));
  await store.repos.webhooks.insertEndpoint(endpoint('sub-tx', 'sub', tx));
  await store.repos.webhooks.insertEndpoint(endpoint('parent-activities', 'parent', [{ eventType: 'ACTIVITY_UPDATES', isActive: true }]));
  await store.repos.webhooks.insertEndpoint(endpoint('paused-sub', 'sub', tx, 0));
  await store.repos.webhooks.insertEndpoint(endpoint('sub-inactive-subscription', 'sub', [{ eventType: 'SEND_TRANSACTION_STATUS_UPDATES', isActive: false }]));
  await store.repos.webhooks.insertEndpoint(endpoint('other-tx', 'other', tx));
});
afterAll(async () => {
  await store?.close();
  if (databaseUrl) await dropSchema(databaseUrl);
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const pending = async () => (await store.repos.webhooks.outboxState()).pending;

describe('enqueueWebhookEvent', () => {
  it("writes one row per subscribed active endpoint of the organization and its parent, inside the caller's transaction", async () => {
    const queued = await store.transaction((repos) =>
      enqueueWebhookEvent(repos, 'sub', 'SEND_TRANSACTION_STATUS_UPDATES', { type: 'transaction:status', organizationId: 'sub', msg: { status: 'BROADCASTING' } }, { subject: 'tx:1', sequence: 1, now: T0 }),
    );
    expect(queued).toBe(2);
    const rows = await store.repos.webhooks.claim('a', T0, T0 + 10_000, 10);
    expect(rows.map((r) => r.endpoint_id).sort()).toEqual(['parent-tx', 'sub-tx']);
    expect(rows.every((r) => r.event_organization_id === 'sub' && r.event_type === 'SEND_TRANSACTION_STATUS_UPDATES' && JSON.parse(r.payload).msg.status === 'BROADCASTING')).toBe(true);
    expect(rows.map((r) => r.url).sort()).toEqual(['https://hooks.example.com/parent-tx', 'https://hooks.example.com/sub-tx']);
    for (const r of rows) expect(await store.repos.webhooks.delivered(r.id, 'a', T0)).toBe(true);
  });

  it('leaves no event when the transaction rolls back', async () => {
    const before = await pending();
    await expect(
      store.transaction(async (repos) => {
        await enqueueWebhookEvent(repos, 'other', 'SEND_TRANSACTION_STATUS_UPDATES', { n: 1 }, { now: T0 });
        throw new Error('the status change failed');
      }),
    ).rejects.toThrow(/status change failed/);
    expect(await pending()).toBe(before);
  });
});

describe('claims', () => {
  it('lease a row to one dispatcher until the lease expires, then another may try it', async () => {
    await store.transaction((repos) => enqueueWebhookEvent(repos, 'other', 'SEND_TRANSACTION_STATUS_UPDATES', { n: 2 }, { subject: 'tx:2', now: T0 }));
    const [row] = await store.repos.webhooks.claim('a', T0, T0 + 1_000, 10);
    expect(row).toMatchObject({ endpoint_id: 'other-tx', attempts: 1, lease_owner: 'a' });
    expect(await store.repos.webhooks.claim('b', T0 + 999, T0 + 2_000, 10)).toEqual([]);
    const [again] = await store.repos.webhooks.claim('b', T0 + 1_001, T0 + 3_000, 10);
    expect(again).toMatchObject({ id: row.id, attempts: 2, lease_owner: 'b' });
    // The first dispatcher lost its lease: its late answer changes nothing.
    expect(await store.repos.webhooks.delivered(row.id, 'a', T0 + 1_500)).toBe(false);
    expect(await store.repos.webhooks.delivered(row.id, 'b', T0 + 1_500)).toBe(true);
  });

  it("keep one subject's events in order, a failed one retried at its time, a dead one freeing the next", async () => {
    for (const sequence of [1, 2]) {
      await store.transaction((repos) => enqueueWebhookEvent(repos, 'other', 'SEND_TRANSACTION_STATUS_UPDATES', { sequence }, { subject: 'tx:3', sequence, now: T0 }));
    }
    const first = await store.repos.webhooks.claim('a', T0, T0 + 1_000, 10);
    expect(first.map((r) => JSON.parse(r.payload).sequence)).toEqual([1]);
    await store.repos.webhooks.failed(first[0].id, 'a', 'HTTP 503', T0 + 5_000);
    // Not due yet, and the second waits behind it.
    expect(await store.repos.webhooks.claim('a', T0 + 4_000, T0 + 6_000, 10)).toEqual([]);
    const retried = await store.repos.webhooks.claim('a', T0 + 5_000, T0 + 6_000, 10);
    expect(retried.map((r) => [JSON.parse(r.payload).sequence, r.attempts, r.last_error])).toEqual([[1, 2, 'HTTP 503']]);
    await store.repos.webhooks.failed(retried[0].id, 'a', 'HTTP 410', null);
    const next = await store.repos.webhooks.claim('a', T0 + 5_000, T0 + 6_000, 10);
    expect(next.map((r) => JSON.parse(r.payload).sequence)).toEqual([2]);
    await store.repos.webhooks.delivered(next[0].id, 'a', T0 + 5_000);
    expect(await store.repos.webhooks.deliveryCounts(['other-tx'])).toEqual(new Map([['other-tx', { pending: 0, delivered: 2, dead: 1 }]]));
    // History is forgotten once it is older than the cut-off: delivered rows by delivery time (the
    // first test's two, delivered at T0), dead ones by creation (the one given up above).
    expect(await store.repos.webhooks.deleteFinishedBefore(T0 + 1_500)).toBe(3);
    expect(await store.repos.webhooks.deliveryCounts(['other-tx'])).toEqual(new Map([['other-tx', { pending: 0, delivered: 2, dead: 0 }]]));
  });

  it('marks an endpoint failing after enough failures in a row, and healthy after a success', async () => {
    for (let i = 0; i < 3; i++) await store.repos.webhooks.endpointFailed('other-tx', 'HTTP 503', T0 + i, 3);
    expect(await store.repos.webhooks.getEndpoint('other', 'other-tx')).toMatchObject({ consecutive_failures: 3, failing_since: T0 + 2, last_error: 'HTTP 503' });
    await store.repos.webhooks.endpointFailed('other-tx', 'HTTP 502', T0 + 9, 3);
    expect(await store.repos.webhooks.getEndpoint('other', 'other-tx')).toMatchObject({ consecutive_failures: 4, failing_since: T0 + 2, last_error: 'HTTP 502' });
    await store.repos.webhooks.endpointSucceeded('other-tx', T0 + 10);
    expect(await store.repos.webhooks.getEndpoint('other', 'other-tx')).toMatchObject({ consecutive_failures: 0, failing_since: null, last_error: null, last_delivered_at: T0 + 10 });
  });

  it('sweeps rows whose endpoint is gone, and deletes an endpoint with its rows', async () => {
    await store.transaction((repos) => enqueueWebhookEvent(repos, 'parent', 'ACTIVITY_UPDATES', { id: 'x' }, { now: T0 }));
    expect(await pending()).toBe(1);
    await store.repos.webhooks.insertEndpoint(endpoint('doomed', 'parent', [{ eventType: 'ACTIVITY_UPDATES', isActive: true }]));
    await store.transaction((repos) => enqueueWebhookEvent(repos, 'parent', 'ACTIVITY_UPDATES', { id: 'y' }, { now: T0 }));
    expect(await pending()).toBe(3);
    // Gone by a path that leaves its rows behind (as an organization's cascade does).
    await execSql({ dataDir, databaseUrl }, "delete from webhook_endpoints where id = 'doomed'");
    expect(await pending()).toBe(2);
    expect(await store.repos.webhooks.deleteOrphans()).toBe(1);
    await store.repos.webhooks.deleteEndpoint('parent', 'parent-activities');
    expect(await pending()).toBe(0);
    expect(await store.repos.webhooks.deleteOrphans()).toBe(0);
  });
});
