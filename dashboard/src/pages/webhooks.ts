// Webhooks page (docs/webhooks.md "Webhooks"): every webhook endpoint of the organization
// (list_webhook_endpoints) with its URL, subscriptions and filters, and how its deliveries go, from
// the record's `deliveryStatus` (a Sigil addition, docs/webhooks.md "Webhooks"): healthy or failing
// (said in words, not by colour alone), failed attempts in a row, the last error, the last delivery, and
// the deliveries pending, delivered and given up, and the latest deliveries one by one (event, subject,
// state, attempts, error).
import type { Json } from '../api.js';
import type { PageContext } from './context.js';
import { empty, facts, h, heading, loading, mono, pretty, replace, time } from '../dom.js';

function subscriptionText(s: Json): string {
  const paused = s.isActive === false ? ' (paused)' : '';
  return s.filtersJson ? `${s.eventType}${paused}, filtered by ${s.filtersJson}` : `${s.eventType}${paused}`;
}

/** The endpoint's latest deliveries, newest first (deliveryStatus.recentDeliveries). */
function recentDeliveries(recent: Json[]): HTMLElement {
  if (!recent.length) return empty('No deliveries yet.');
  const cols = ['Event', 'Subject', 'State', 'Attempts', 'Created', 'Last error'];
  const rows = recent.map((r) =>
    h(
      'tr',
      { className: 'webhook-delivery', 'data-delivery-id': r.deliveryId },
      h('td', { 'data-label': 'Event' }, r.eventType),
      h('td', { 'data-label': 'Subject' }, mono(r.subject)),
      h('td', { 'data-label': 'State', className: 'webhook-delivery-state' }, pretty(r.state, '')),
      h('td', { 'data-label': 'Attempts' }, String(r.attempts)),
      h('td', { 'data-label': 'Created' }, time(r.createdAt)),
      h('td', { 'data-label': 'Last error' }, r.lastError ?? ''),
    ),
  );
  return h('div', { className: 'table-wrap' }, h('table', {}, h('thead', {}, h('tr', {}, ...cols.map((c) => h('th', { scope: 'col' }, c)))), h('tbody', {}, ...rows)));
}

export async function webhooksPage(ctx: PageContext): Promise<void> {
  const body = h('div', {}, loading());
  ctx.main.append(heading('Webhooks'), body);
  const { webhookEndpoints } = await ctx.api.query<Json>('list_webhook_endpoints');
  if (!webhookEndpoints.length) {
    return replace(body, empty('No webhook endpoints yet.', 'Create them with create_webhook_endpoint (docs/webhooks.md).'));
  }
  const list = h('ul', { className: 'cards' });
  for (const e of webhookEndpoints as Json[]) {
    const d = (e.deliveryStatus ?? {}) as Json;
    const failing = d.status === 'FAILING';
    list.append(
      h(
        'li',
        { className: `card webhook-card${failing ? ' webhook-failing' : ''}`, 'data-endpoint-id': e.endpointId },
        h('h2', {}, e.name, ' ', h('span', { className: `badge ${failing ? 'badge-failed' : 'badge-completed'} webhook-status` }, failing ? 'Failing' : 'Healthy'), e.isActive ? null : h('span', { className: 'badge' }, 'Paused')),
        facts([
          ['URL', mono(e.url)],
          ['Events', h('ul', { className: 'plain' }, ...((e.subscriptions ?? []) as Json[]).map((s) => h('li', {}, subscriptionText(s))))],
          ['Deliveries', h('span', { className: 'webhook-counts' }, `${d.deliveredDeliveries ?? 0} delivered, ${d.pendingDeliveries ?? 0} pending, ${d.abandonedDeliveries ?? 0} given up`)],
          ['Last delivered', time(d.lastDeliveredAt) || 'never'],
          ...(failing ? ([['Failing since', time(d.failingSince)]] as [string, string][]) : []),
          ...(d.consecutiveFailures ? ([['Failed attempts in a row', String(d.consecutiveFailures)]] as [string, string][]) : []),
          ...(d.lastError ? ([['Last error', h('span', { className: 'webhook-error' }, d.lastError)]] as [string, HTMLElement][]) : []),
          ['ID', mono(e.endpointId)],
        ]),
        h('h3', {}, 'Recent deliveries'),
        recentDeliveries((d.recentDeliveries ?? []) as Json[]),
      ),
    );
  }
  replace(body, list);
}
