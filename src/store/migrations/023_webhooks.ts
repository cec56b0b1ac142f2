// Migration 023: webhooks (newest swagger v1WebhookEndpointData, v1WebhookSubscriptionParams).
// Two tables:
//
// - `webhook_endpoints`: an organization's endpoints with their subscriptions (the JSON array of
//   v1WebhookSubscriptionParams as validated by src/domain/governance/webhooks.ts). The request path reads an
//   organization's active endpoints from the read cache, so the table bumps its organization's cache
//   generation like every cached table (migration 015): an organization (and parent) without
//   endpoints pays no query to find that out. Only changes of configuration bump it — the delivery
//   health columns (consecutive_failures, failing_since, last_error, last_delivered_at) change with
//   every delivery and are not what the cache holds.
// - `webhook_deliveries`: the durable outbox. One row per event and endpoint, written in the
//   transaction that makes the event true (an activity's status change), so a commit and its event
//   stand or fall together. `subject` and `sequence` order the events of one subject (an activity)
//   for one endpoint; `lease_until`/`lease_owner` let one process at a time try a row
//   (src/store/repositories/webhooks.ts), and `state` is pending, delivered or dead (gave up).
//   `endpoint_id` has no foreign key on purpose: an event is written with the endpoints the request
//   read from its cache, and an endpoint deleted meanwhile (by another request, or by the very
//   activity whose event it is) must not make that activity's commit fail. Such rows are never
//   claimed (the claim joins the endpoint) and are swept away (`deleteOrphans`).
import type { Kysely } from 'kysely';
import { cacheGenerationTriggers } from './trigger-helpers.js';

/** The endpoint columns the read cache holds: changing one of them bumps the generation. */
const CONFIGURATION = ['organization_id', 'name', 'url', 'is_active', 'subscriptions'];

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('is_active', 'integer', (c) => c.notNull())
    .addColumn('subscriptions', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failing_since', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('last_delivered_at', 'bigint')
    .execute();
  await db.schema.createIndex('webhook_endpoints_by_organization').on('webhook_endpoints').columns(['organization_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('event_organization_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('sequence', 'bigint', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('lease_until', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('delivered_at', 'bigint')
    .execute();
  // What the dispatcher scans: due pending rows; and the predecessor check of one subject's order.
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_order').on('webhook_deliveries').columns(['endpoint_id', 'subject', 'sequence']).execute();

  // Cache generations (migration 015's scheme), bumped only by configuration changes: a delivery's
  // health update must not empty the caches.
  await cacheGenerationTriggers(db, 'webhook_endpoints', CONFIGURATION);
}
