// Webhook endpoint operations (newest swagger: create_webhook_endpoint,
// update_webhook_endpoint, delete_webhook_endpoint, list_webhook_endpoints). Policy resource
// WEBHOOK_ENDPOINT with CREATE / UPDATE / DELETE (docs/reference/policies.md "Keywords"). Create and update check
// the URL's destination (its host's resolution included) in `prepare`, outside the write transaction.
//
// `deliveryStatus` (a Sigil addition to v1WebhookEndpointData in list_webhook_endpoints, docs/webhooks.md
// "Webhooks"; clients that do not know it ignore it): whether deliveries to the endpoint succeed,
// FAILING after several failed attempts in a row, with the last error and the outbox counts.
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  deliveryStatusOf,
  RECENT_DELIVERIES,
  prepareCreateWebhookEndpoint,
  prepareUpdateWebhookEndpoint,
  updateWebhookEndpoint,
  webhookEndpointRecord,
  type CreateWebhookEndpointParams,
  type KnownValues,
  type UpdateWebhookEndpointParams,
} from '../domain/governance/webhooks.js';
import { ACTIVITY_TYPES, definitions } from '../schemas/index.js';
import { defineActivity, defineQuery } from './define.js';

const KNOWN: KnownValues = { types: new Set(ACTIVITY_TYPES), statuses: new Set(definitions.v1ActivityStatus.enum as string[]) };

export const createWebhookEndpointOp = defineActivity<CreateWebhookEndpointParams, unknown>({
  path: 'create_webhook_endpoint',
  type: 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT',
  result: 'createWebhookEndpointResult',
  policy: { resource: 'WEBHOOK_ENDPOINT', action: 'CREATE' },
  prepare: (ctx, p) => prepareCreateWebhookEndpoint(ctx, p, KNOWN),
  execute: (ctx, p) => createWebhookEndpoint(ctx, p, KNOWN),
});

export const updateWebhookEndpointOp = defineActivity<UpdateWebhookEndpointParams, unknown>({
  path: 'update_webhook_endpoint',
  type: 'ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT',
  result: 'updateWebhookEndpointResult',
  policy: { resource: 'WEBHOOK_ENDPOINT', action: 'UPDATE' },
  prepare: (ctx, p) => prepareUpdateWebhookEndpoint(ctx, p),
  execute: (ctx, p) => updateWebhookEndpoint(ctx, p),
});

export const deleteWebhookEndpointOp = defineActivity<{ endpointId: string }, { endpointId: string }>({
  path: 'delete_webhook_endpoint',
  type: 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT',
  result: 'deleteWebhookEndpointResult',
  policy: { resource: 'WEBHOOK_ENDPOINT', action: 'DELETE' },
  execute: (ctx, p) => deleteWebhookEndpoint(ctx, p.endpointId),
});

export const listWebhookEndpointsOp = defineQuery<{ organizationId: string }, unknown>({
  path: 'list_webhook_endpoints',
  request: 'v1ListWebhookEndpointsRequest',
  execute: async (ctx) => {
    const rows = await ctx.repos.webhooks.listEndpoints(ctx.organization.id);
    const ids = rows.map((r) => r.id);
    const [counts, recent] = [await ctx.repos.webhooks.deliveryCounts(ids), await ctx.repos.webhooks.recentDeliveries(ids, RECENT_DELIVERIES)];
    return { webhookEndpoints: rows.map((r) => ({ ...webhookEndpointRecord(r), deliveryStatus: deliveryStatusOf(r, counts.get(r.id), recent.get(r.id)) })) };
  },
});
