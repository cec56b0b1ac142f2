// Webhook endpoints and their events (newest swagger v1CreateWebhookEndpointIntent,
// v1UpdateWebhookEndpointIntent, v1DeleteWebhookEndpointIntent, v1WebhookEndpointData,
// v1WebhookSubscriptionParams; docs.turnkey.com/features/webhooks/overview).
//
// Endpoints: a non-empty name, a URL whose destination src/delivery/webhook-http.ts accepts, and at
// least one subscription. Event types: ACTIVITY_UPDATES (every activity status change, for the
// organization's own activities and, for a parent's endpoints, its sub-organizations') and
// SEND_TRANSACTION_STATUS_UPDATES (broadcast transactions; managed from the parent organization
// only, as Turnkey's "billing organization scoped" types are). `filtersJson` (Sigil's reading, the
// docs leave it open; docs/webhooks.md "Webhooks"): for ACTIVITY_UPDATES a JSON object with `filterByType`
// and/or `filterByStatus` arrays, the names get_activities filters by; an event passes when each
// given list holds its value. Other event types take no filters.
//
// Events: `enqueueWebhookEvent` writes one outbox row per matching endpoint through the repositories
// it is given, so a caller inside a transaction makes the event part of it. The activity pipeline
// builds its rows with `webhookDeliveryRows` from endpoints it read through the read cache: an
// organization and parent without active endpoints cost no query.
import { SigilError, invalid, notFound } from '../../errors/errors.js';
import type { OrganizationRow, Repositories, WebhookDeliveryRow, WebhookEndpointRow } from '../../store/index.js';
import { checkName } from '../identity/contacts.js';
import type { ActivityContext, OperationContext, Prepared } from '../context.js';
import { newId } from '../ids.js';
import { timestamp } from '../records.js';

export const WEBHOOK_EVENT_TYPES = ['ACTIVITY_UPDATES', 'SEND_TRANSACTION_STATUS_UPDATES'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** Endpoints one organization may have. */
export const MAX_WEBHOOK_ENDPOINTS = 20;
const MAX_SUBSCRIPTIONS = 10;
const MAX_URL_CHARS = 2048;

export interface SubscriptionParams {
  eventType: string;
  filtersJson?: string;
  isActive?: boolean;
}

interface Filters {
  filterByType?: string[];
  filterByStatus?: string[];
}

/** The activity types and statuses filters may name (the operations layer knows the schema). */
export interface KnownValues {
  types: ReadonlySet<string>;
  statuses: ReadonlySet<string>;
}

function parseFilters(eventType: string, filtersJson: string | undefined, known: KnownValues | undefined, at: string): Filters {
  if (filtersJson === undefined || filtersJson.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(filtersJson);
  } catch {
    throw invalid(`${at}.filtersJson is not valid JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid(`${at}.filtersJson must be a JSON object`);
  const entries = Object.entries(value as Record<string, unknown>);
  if (eventType !== 'ACTIVITY_UPDATES' && entries.length > 0) throw invalid(`${at}.filtersJson: ${eventType} takes no filters`);
  const out: Filters = {};
  for (const [key, list] of entries) {
    if (key !== 'filterByType' && key !== 'filterByStatus') throw invalid(`${at}.filtersJson: unknown filter "${key}" (filterByType and filterByStatus are known)`);
    if (!Array.isArray(list) || list.length === 0 || list.length > 200 || !list.every((v) => typeof v === 'string')) {
      throw invalid(`${at}.filtersJson.${key} must be a non-empty array of strings`);
    }
    const allowed = key === 'filterByType' ? known?.types : known?.statuses;
    const unknown = allowed ? list.find((v) => !allowed.has(v)) : undefined;
    if (unknown !== undefined) throw invalid(`${at}.filtersJson.${key}: "${unknown}" is not an activity ${key === 'filterByType' ? 'type' : 'status'}`);
    out[key] = list as string[];
  }
  return out;
}

/** Validated subscriptions, stored as given (with isActive made explicit). */
function checkSubscriptions(subscriptions: SubscriptionParams[] | undefined, org: OrganizationRow, known: KnownValues): SubscriptionParams[] {
  if (!subscriptions || subscriptions.length === 0) throw invalid('subscriptions must name at least one event type (ACTIVITY_UPDATES or SEND_TRANSACTION_STATUS_UPDATES)');
  if (subscriptions.length > MAX_SUBSCRIPTIONS) throw invalid(`an endpoint has at most ${MAX_SUBSCRIPTIONS} subscriptions`);
  const seen = new Set<string>();
  return subscriptions.map((s, i) => {
    const at = `subscriptions[${i}]`;
    if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(s.eventType)) {
      throw invalid(`${at}.eventType "${s.eventType}" is not an event type this deployment delivers (${WEBHOOK_EVENT_TYPES.join(', ')})`);
    }
    if (seen.has(s.eventType)) throw invalid(`${at}.eventType ${s.eventType} is subscribed twice`);
    seen.add(s.eventType);
    if (s.eventType === 'SEND_TRANSACTION_STATUS_UPDATES' && org.parent_organization_id) {
      throw new SigilError('REQUEST_NOT_AUTHORIZED', 'SEND_TRANSACTION_STATUS_UPDATES endpoints are managed from the parent organization, not a sub-organization');
    }
    parseFilters(s.eventType, s.filtersJson, known, at);
    const out: SubscriptionParams & { isActive: boolean } = { eventType: s.eventType, isActive: s.isActive !== false };
    if (s.filtersJson !== undefined) out.filtersJson = s.filtersJson;
    return out;
  });
}

function checkUrl(url: string): string {
  if (url.length > MAX_URL_CHARS) throw invalid(`url must be at most ${MAX_URL_CHARS} characters`);
  return url;
}

async function checkDestination(ctx: OperationContext, url: string): Promise<void> {
  const webhooks = ctx.services.webhooks;
  if (!webhooks) throw new SigilError('REQUEST_INVALID', 'this process delivers no webhooks');
  try {
    await webhooks.checkDestination(url);
  } catch (err) {
    throw invalid((err as Error).message);
  }
}

/** v1WebhookEndpointData. */
export function webhookEndpointRecord(row: WebhookEndpointRow) {
  return {
    endpointId: row.id,
    organizationId: row.organization_id,
    url: row.url,
    name: row.name,
    isActive: Boolean(row.is_active),
    subscriptions: JSON.parse(row.subscriptions) as SubscriptionParams[],
    createdAt: timestamp(Number(row.created_at)),
    updatedAt: timestamp(Number(row.updated_at)),
  };
}

/**
 * Sigil's addition to v1WebhookEndpointData in list_webhook_endpoints (docs/webhooks.md "Webhooks"): how
 * deliveries to the endpoint go. FAILING once `failingSince` is set (that many attempts in a row failed).
 */
export function deliveryStatusOf(
  row: WebhookEndpointRow,
  counts: { pending: number; delivered: number; dead: number } | undefined,
  recent: WebhookDeliveryRow[] = [],
) {
  return {
    status: row.failing_since != null ? 'FAILING' : 'HEALTHY',
    consecutiveFailures: Number(row.consecutive_failures),
    ...(row.failing_since != null ? { failingSince: timestamp(Number(row.failing_since)) } : {}),
    ...(row.last_error ? { lastError: row.last_error } : {}),
    ...(row.last_delivered_at != null ? { lastDeliveredAt: timestamp(Number(row.last_delivered_at)) } : {}),
    pendingDeliveries: counts?.pending ?? 0,
    deliveredDeliveries: counts?.delivered ?? 0,
    abandonedDeliveries: counts?.dead ?? 0,
    recentDeliveries: recent.map(recentDelivery),
  };
}

/** How many of an endpoint's latest deliveries list_webhook_endpoints shows. */
export const RECENT_DELIVERIES = 10;

const DELIVERY_STATES = { pending: 'PENDING', delivered: 'DELIVERED', dead: 'GIVEN_UP' } as const;

/** One delivery as list_webhook_endpoints shows it: what, about which thing, and how it went; never its body. */
function recentDelivery(d: WebhookDeliveryRow) {
  return {
    deliveryId: d.id,
    eventType: d.event_type,
    subject: d.subject,
    state: DELIVERY_STATES[d.state],
    attempts: Number(d.attempts),
    ...(d.last_error ? { lastError: d.last_error } : {}),
    createdAt: timestamp(Number(d.created_at)),
    ...(d.delivered_at != null ? { deliveredAt: timestamp(Number(d.delivered_at)) } : {}),
    ...(d.state === 'pending' ? { nextAttemptAt: timestamp(Number(d.next_attempt_at)) } : {}),
  };
}

export interface CreateWebhookEndpointParams {
  url: string;
  name: string;
  subscriptions?: SubscriptionParams[];
}

async function newEndpoint(ctx: OperationContext, p: CreateWebhookEndpointParams, known: KnownValues): Promise<WebhookEndpointRow> {
  const name = checkName(p.name, 'name');
  const url = checkUrl(p.url);
  const subscriptions = checkSubscriptions(p.subscriptions, ctx.organization, known);
  if ((await ctx.repos.webhooks.listEndpoints(ctx.organization.id)).length >= MAX_WEBHOOK_ENDPOINTS) {
    throw new SigilError('REQUEST_INVALID', `an organization has at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints`);
  }
  await checkDestination(ctx, url);
  return {
    id: ctx.newId(),
    organization_id: ctx.organization.id,
    name,
    url,
    is_active: 1,
    subscriptions: JSON.stringify(subscriptions),
    created_at: ctx.now,
    updated_at: ctx.now,
    consecutive_failures: 0,
    failing_since: null,
    last_error: null,
    last_delivered_at: null,
  };
}

const created = (row: WebhookEndpointRow) => ({ endpointId: row.id, webhookEndpoint: webhookEndpointRecord(row) });

/** create_webhook_endpoint, its checks (the destination's resolution too) outside the write transaction. */
export async function prepareCreateWebhookEndpoint(ctx: ActivityContext, p: CreateWebhookEndpointParams, known: KnownValues): Promise<Prepared<ReturnType<typeof created>>> {
  const row = await newEndpoint(ctx, p, known);
  return { result: created(row), writes: (repos) => repos.webhooks.insertEndpoint(row) };
}

export async function createWebhookEndpoint(ctx: ActivityContext, p: CreateWebhookEndpointParams, known: KnownValues) {
  const row = await newEndpoint(ctx, p, known);
  await ctx.repos.webhooks.insertEndpoint(row);
  return created(row);
}

export interface UpdateWebhookEndpointParams {
  endpointId: string;
  url?: string;
  name?: string;
  isActive?: boolean;
}

async function requireEndpoint(repos: Repositories, organizationId: string, endpointId: string): Promise<WebhookEndpointRow> {
  const row = await repos.webhooks.getEndpoint(organizationId, endpointId);
  if (!row) throw notFound(`webhook endpoint ${endpointId} not found in organization ${organizationId}`);
  return row;
}

async function updatedEndpoint(ctx: OperationContext, p: UpdateWebhookEndpointParams): Promise<WebhookEndpointRow> {
  const row = await requireEndpoint(ctx.repos, ctx.organization.id, p.endpointId);
  const next = { ...row, updated_at: ctx.now };
  if (p.name !== undefined) next.name = checkName(p.name, 'name');
  if (p.url !== undefined) {
    next.url = checkUrl(p.url);
    await checkDestination(ctx, next.url);
  }
  if (p.isActive !== undefined) next.is_active = p.isActive ? 1 : 0;
  return next;
}

const writeUpdate = (repos: Repositories, row: WebhookEndpointRow) =>
  repos.webhooks.updateEndpoint(row.organization_id, row.id, { name: row.name, url: row.url, is_active: row.is_active, updated_at: row.updated_at });

export async function prepareUpdateWebhookEndpoint(ctx: ActivityContext, p: UpdateWebhookEndpointParams): Promise<Prepared<ReturnType<typeof created>>> {
  const row = await updatedEndpoint(ctx, p);
  return {
    result: created(row),
    writes: async (repos) => {
      // Deleted between the checks and this commit: nothing to update, and the activity says so.
      await requireEndpoint(repos, row.organization_id, row.id);
      await writeUpdate(repos, row);
    },
  };
}

export async function updateWebhookEndpoint(ctx: ActivityContext, p: UpdateWebhookEndpointParams) {
  const row = await updatedEndpoint(ctx, p);
  await writeUpdate(ctx.repos, row);
  return created(row);
}

export async function deleteWebhookEndpoint(ctx: ActivityContext, endpointId: string) {
  await requireEndpoint(ctx.repos, ctx.organization.id, endpointId);
  await ctx.repos.webhooks.deleteEndpoint(ctx.organization.id, endpointId);
  return { endpointId };
}

/** An active endpoint as events are routed to it: its subscriptions parsed once per cached row. */
export interface EventEndpoint {
  id: string;
  organizationId: string;
  subscriptions: (SubscriptionParams & { filters: Filters })[];
}

const parsedEndpoints = new WeakMap<object, EventEndpoint>();

function eventEndpoint(row: Pick<WebhookEndpointRow, 'id' | 'organization_id' | 'subscriptions'>): EventEndpoint {
  let e = parsedEndpoints.get(row);
  if (!e) {
    const subs = JSON.parse(row.subscriptions) as SubscriptionParams[];
    e = { id: row.id, organizationId: row.organization_id, subscriptions: subs.map((s) => ({ ...s, filters: parseFilters(s.eventType, s.filtersJson, undefined, 'subscription') })) };
    parsedEndpoints.set(row, e);
  }
  return e;
}

/**
 * The active endpoints an event of `org` may go to: its own and its parent's (a parent's endpoints
 * hear of its sub-organizations; a sub-organization's only of itself). Read through `repos`: the
 * request's reads serve both lists from the read cache.
 */
export async function endpointsFor(repos: Repositories, org: Pick<OrganizationRow, 'id' | 'parent_organization_id'>): Promise<EventEndpoint[]> {
  const own = await repos.webhooks.activeEndpoints(org.id);
  const parent = org.parent_organization_id ? await repos.webhooks.activeEndpoints(org.parent_organization_id) : [];
  if (own.length === 0 && parent.length === 0) return [];
  return [...own, ...parent].map(eventEndpoint);
}

export interface WebhookEvent {
  /** The organization the event happened in. */
  organizationId: string;
  eventType: WebhookEventType;
  /** What the event's order is kept within, per endpoint (an activity, a transaction). */
  subject: string;
  /** Its place among the subject's events: later events have larger numbers. */
  sequence: number;
  /** The JSON body delivered. */
  payload: string;
  /** What ACTIVITY_UPDATES filters read. */
  facts?: { type?: string; status?: string };
}

function passes(s: EventEndpoint['subscriptions'][number], e: WebhookEvent): boolean {
  if (s.eventType !== e.eventType || s.isActive === false) return false;
  if (s.filters.filterByType && !s.filters.filterByType.includes(e.facts?.type ?? '')) return false;
  if (s.filters.filterByStatus && !s.filters.filterByStatus.includes(e.facts?.status ?? '')) return false;
  return true;
}

/** The outbox rows of one event: one per endpoint subscribed to it. */
export function webhookDeliveryRows(endpoints: EventEndpoint[], e: WebhookEvent, now: number): WebhookDeliveryRow[] {
  const rows: WebhookDeliveryRow[] = [];
  for (const endpoint of endpoints) {
    if (!endpoint.subscriptions.some((s) => passes(s, e))) continue;
    rows.push({
      id: newId(),
      endpoint_id: endpoint.id,
      organization_id: endpoint.organizationId,
      event_organization_id: e.organizationId,
      event_type: e.eventType,
      subject: e.subject,
      sequence: e.sequence,
      payload: e.payload,
      state: 'pending',
      attempts: 0,
      next_attempt_at: now,
      lease_until: null,
      lease_owner: null,
      last_error: null,
      created_at: now,
      delivered_at: null,
    });
  }
  return rows;
}

/**
 * Puts an event in the outbox for every active endpoint of `organizationId` (and of its parent)
 * subscribed to `eventType`. Call it with the repositories of the transaction that makes the event
 * true, so the event commits with it. `subject` orders events per endpoint (default: none shared);
 * `sequence` defaults to now. Answers how many deliveries were queued. For example, a broadcast
 * transaction's status change, with the body Turnkey's docs give for that event type
 * (`{type: 'transaction:status', organizationId, parentOrganizationId, msg: {sendTransactionStatusId,
 * activityId, status, caip2, idempotencyKey, timestamp, txHash?, error?}}`) and its statuses in order
 * (BROADCASTING 0, then INCLUDED or FAILED 1):
 *   await enqueueWebhookEvent(repos, orgId, 'SEND_TRANSACTION_STATUS_UPDATES', body, { subject: `send-transaction:${id}`, sequence: 1 });
 */
export async function enqueueWebhookEvent(
  repos: Repositories,
  organizationId: string,
  eventType: WebhookEventType,
  payload: unknown,
  opts: { subject?: string; sequence?: number; now?: number; facts?: WebhookEvent['facts'] } = {},
): Promise<number> {
  const org = await repos.organizations.get(organizationId);
  if (!org) return 0;
  const endpoints = await endpointsFor(repos, org);
  if (endpoints.length === 0) return 0;
  const now = opts.now ?? Date.now();
  const rows = webhookDeliveryRows(
    endpoints,
    {
      organizationId,
      eventType,
      subject: opts.subject ?? `event:${newId()}`,
      sequence: opts.sequence ?? now,
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
      facts: opts.facts,
    },
    now,
  );
  await repos.webhooks.insertDeliveries(rows);
  return rows.length;
}
