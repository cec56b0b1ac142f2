// Webhook endpoints and the webhook outbox: SQL for `webhook_endpoints` and `webhook_deliveries`
// (migration 023).
//
// Claiming (the dispatcher, src/domain/governance/webhook-dispatcher.ts): a row is tried by one process at a
// time. `claim` sets a lease on due pending rows in one statement; on PostgreSQL the rows are picked
// `FOR UPDATE SKIP LOCKED`, so two processes claiming at once take different rows, and a row whose
// lease has not expired is nobody else's. A process that dies mid-delivery leaves a lease that
// expires, after which another process (or it, restarted) tries the row again: delivery is at least
// once. On SQLite one process writes, and its write transaction excludes every other writer.
//
// Order: a row is due only when no earlier row of the same endpoint and subject (an activity) is
// still pending, so one activity's events reach an endpoint in the order they happened.
import { SqliteAdapter, sql, type Kysely, type Selectable } from 'kysely';
import type { Database, WebhookDeliveryTable, WebhookEndpointTable } from '../schema.js';

export type WebhookEndpointRow = Selectable<WebhookEndpointTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveryTable>;

/** The outbox's state for /metrics: rows waiting, and the oldest one's creation time. */
export interface OutboxState {
  pending: number;
  oldestPendingAt: number | null;
}

export class WebhooksRepo {
  constructor(private readonly db: Kysely<Database>) {}

  private get sqlite(): boolean {
    return this.db.getExecutor().adapter instanceof SqliteAdapter;
  }

  async insertEndpoint(row: WebhookEndpointRow): Promise<void> {
    await this.db.insertInto('webhook_endpoints').values(row).execute();
  }

  async getEndpoint(organizationId: string, id: string): Promise<WebhookEndpointRow | undefined> {
    return this.db.selectFrom('webhook_endpoints').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  /** Every endpoint of the organization, oldest first. */
  async listEndpoints(organizationId: string): Promise<WebhookEndpointRow[]> {
    return this.db.selectFrom('webhook_endpoints').selectAll().where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
  }

  /**
   * The organization's active endpoints, configuration only (what the request path reads through the
   * read cache to know whether an event has anywhere to go).
   */
  async activeEndpoints(organizationId: string): Promise<Pick<WebhookEndpointRow, 'id' | 'organization_id' | 'subscriptions'>[]> {
    return this.db
      .selectFrom('webhook_endpoints')
      .select(['id', 'organization_id', 'subscriptions'])
      .where('organization_id', '=', organizationId)
      .where('is_active', '=', 1)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async updateEndpoint(organizationId: string, id: string, changes: Partial<Pick<WebhookEndpointRow, 'name' | 'url' | 'is_active' | 'updated_at'>>): Promise<void> {
    await this.db.updateTable('webhook_endpoints').set(changes).where('organization_id', '=', organizationId).where('id', '=', id).execute();
  }

  /** Deletes the endpoint and its outbox rows. */
  async deleteEndpoint(organizationId: string, id: string): Promise<void> {
    await this.db.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).where('organization_id', '=', organizationId).execute();
    await this.db.deleteFrom('webhook_endpoints').where('organization_id', '=', organizationId).where('id', '=', id).execute();
  }

  /**
   * Drops outbox rows whose endpoint is gone (deleted after a request read it, or with its
   * organization): no one can receive them.
   */
  async deleteOrphans(): Promise<number> {
    const r = await this.db
      .deleteFrom('webhook_deliveries')
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('webhook_endpoints').select('webhook_endpoints.id').whereRef('webhook_endpoints.id', '=', 'webhook_deliveries.endpoint_id'))))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Writes outbox rows inside the caller's transaction. */
  async insertDeliveries(rows: WebhookDeliveryRow[]): Promise<void> {
    if (rows.length > 0) await this.db.insertInto('webhook_deliveries').values(rows).execute();
  }

  /**
   * Leases up to `limit` due rows to `owner` until `leaseUntil` and answers them with their
   * endpoint's URL (rows of inactive endpoints wait, pending, until the endpoint is active again).
   */
  async claim(owner: string, now: number, leaseUntil: number, limit: number): Promise<(WebhookDeliveryRow & { url: string })[]> {
    if (this.sqlite) {
      // SQLite: an UPDATE takes the write lock even when it changes nothing; a poll that finds
      // nothing due (the usual case) only reads.
      const due = await this.db.selectFrom('webhook_deliveries').select('id').where('state', '=', 'pending').where('next_attempt_at', '<=', now).limit(1).executeTakeFirst();
      if (!due) return [];
    }
    const lock = this.sqlite ? sql`` : sql`FOR UPDATE OF d SKIP LOCKED`;
    const picked = sql`SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE d.state = 'pending' AND d.next_attempt_at <= ${now} AND (d.lease_until IS NULL OR d.lease_until < ${now}) AND w.is_active = 1
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e WHERE e.endpoint_id = d.endpoint_id AND e.subject = d.subject AND e.state = 'pending' AND e.sequence < d.sequence)
      ORDER BY d.next_attempt_at, d.created_at LIMIT ${limit} ${lock}`;
    // The lease condition is checked again by the UPDATE: on PostgreSQL a row another process
    // leased after this statement's snapshot is re-read under its lock and skipped.
    const { rows } = await sql<WebhookDeliveryRow>`UPDATE webhook_deliveries SET lease_owner = ${owner}, lease_until = ${leaseUntil}, attempts = attempts + 1
      WHERE id IN (${picked}) AND state = 'pending' AND (lease_until IS NULL OR lease_until < ${now})
      RETURNING *`.execute(this.db);
    if (rows.length === 0) return [];
    const urls = await this.db
      .selectFrom('webhook_endpoints')
      .select(['id', 'url'])
      .where('id', 'in', [...new Set(rows.map((r) => r.endpoint_id))])
      .execute();
    const byId = new Map(urls.map((u) => [u.id, u.url]));
    return rows
      .map((r) => ({ ...r, sequence: Number(r.sequence), next_attempt_at: Number(r.next_attempt_at), created_at: Number(r.created_at), url: byId.get(r.endpoint_id) ?? '' }))
      .sort((a, b) => a.next_attempt_at - b.next_attempt_at || a.created_at - b.created_at);
  }

  /** The row reached its endpoint; false when this owner's lease was lost (another process has it). */
  async delivered(id: string, owner: string, now: number): Promise<boolean> {
    const r = await this.db
      .updateTable('webhook_deliveries')
      .set({ state: 'delivered', delivered_at: now, lease_owner: null, lease_until: null, last_error: null })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** An attempt failed: try again at `nextAttemptAt`, or give up (`dead`) when it is null. */
  async failed(id: string, owner: string, error: string, nextAttemptAt: number | null): Promise<void> {
    await this.db
      .updateTable('webhook_deliveries')
      .set({ state: nextAttemptAt === null ? 'dead' : 'pending', next_attempt_at: nextAttemptAt ?? 0, lease_owner: null, lease_until: null, last_error: error })
      .where('id', '=', id)
      .where('lease_owner', '=', owner)
      .where('state', '=', 'pending')
      .execute();
  }

  /** An endpoint answered: it is healthy again. */
  async endpointSucceeded(endpointId: string, now: number): Promise<void> {
    await this.db
      .updateTable('webhook_endpoints')
      .set({ consecutive_failures: 0, failing_since: null, last_error: null, last_delivered_at: now })
      .where('id', '=', endpointId)
      .execute();
  }

  /** An endpoint failed an attempt: counted, and `failing_since` set once it reaches `failingAfter` in a row. */
  async endpointFailed(endpointId: string, error: string, now: number, failingAfter: number): Promise<void> {
    await this.db
      .updateTable('webhook_endpoints')
      .set((eb) => ({
        consecutive_failures: eb('consecutive_failures', '+', 1),
        last_error: error,
        failing_since: eb
          .case()
          .when('failing_since', 'is not', null)
          .then(eb.ref('failing_since'))
          .when('consecutive_failures', '>=', failingAfter - 1)
          .then(now)
          .else(null)
          .end(),
      }))
      .where('id', '=', endpointId)
      .execute();
  }

  /** Forgets delivered and given-up rows finished before `before` (the outbox keeps a week of history). */
  async deleteFinishedBefore(before: number): Promise<number> {
    const r = await this.db
      .deleteFrom('webhook_deliveries')
      .where('state', 'in', ['delivered', 'dead'])
      .where((eb) => eb.or([eb('delivered_at', '<', before), eb.and([eb('delivered_at', 'is', null), eb('created_at', '<', before)])]))
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  /** Delivered, pending and dead rows of an endpoint's outbox, for list_webhook_endpoints' health. */
  async deliveryCounts(endpointIds: string[]): Promise<Map<string, { pending: number; delivered: number; dead: number }>> {
    const out = new Map<string, { pending: number; delivered: number; dead: number }>();
    if (endpointIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .select(['endpoint_id', 'state', (eb) => eb.fn.countAll<number>().as('n')])
      .where('endpoint_id', 'in', endpointIds)
      .groupBy(['endpoint_id', 'state'])
      .execute();
    for (const r of rows) {
      const c = out.get(r.endpoint_id) ?? { pending: 0, delivered: 0, dead: 0 };
      c[r.state] = Number(r.n);
      out.set(r.endpoint_id, c);
    }
    return out;
  }

  /** The latest `limit` deliveries of each endpoint, newest first (list_webhook_endpoints' recent deliveries). */
  async recentDeliveries(endpointIds: string[], limit: number): Promise<Map<string, WebhookDeliveryRow[]>> {
    const out = new Map<string, WebhookDeliveryRow[]>();
    // One indexed read per endpoint; an organization holds few endpoints (MAX_WEBHOOK_ENDPOINTS).
    for (const id of endpointIds) {
      out.set(id, await this.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', id).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute());
    }
    return out;
  }

  async outboxState(): Promise<OutboxState> {
    const r = await this.db
      .selectFrom('webhook_deliveries')
      .innerJoin('webhook_endpoints', 'webhook_endpoints.id', 'webhook_deliveries.endpoint_id')
      .select([(eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.min('webhook_deliveries.created_at').as('oldest')])
      .where('webhook_deliveries.state', '=', 'pending')
      .executeTakeFirst();
    return { pending: Number(r?.n ?? 0), oldestPendingAt: r?.oldest == null ? null : Number(r.oldest) };
  }
}
