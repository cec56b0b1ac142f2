// Velocity controls page (docs/velocity-controls.md "Velocity controls"): every control of the
// organization (list_velocity_controls) with what it measures, and for each group counted in its window
// a bar of the group's aggregate against the threshold, from the record's `usage` (a Sigil addition,
// docs/velocity-controls.md "Velocity controls"), so an operator sees at a glance how close a wallet, a
// user or the organization is to its limit. The bar is a <meter> (no inline style: the CSP forbids it);
// a group at or over its threshold is also named so in words, not by colour alone.
import type { Json } from '../api.js';
import type { PageContext } from './context.js';
import { empty, facts, h, heading, loading, mono, pretty, replace } from '../dom.js';

const UNITS: [number, string][] = [
  [86400, 'day'],
  [3600, 'hour'],
  [60, 'minute'],
  [1, 'second'],
];

/** "rolling 1 day", "rolling 90 seconds", "all time". */
function windowText(window: Json): string {
  const seconds = Number(window?.rolling?.duration);
  if (!Number.isFinite(seconds) || seconds <= 0) return 'all time (infinite)';
  const [size, unit] = UNITS.find(([s]) => seconds % s === 0)!;
  const n = seconds / size;
  return `rolling ${n} ${unit}${n === 1 ? '' : 's'}`;
}

function sourceText(dataSource: Json): string {
  if (dataSource.chainAssetTransfer) {
    return `Asset transfers: ${(dataSource.chainAssetTransfer.definition as Json[]).map((d) => `${d.caip19} (${d.decimals} decimals)`).join(', ')}`;
  }
  const types = (dataSource.activityExecution?.filter?.activity ?? []) as Json[];
  return `Activity executions: ${types.length ? types.map((t) => pretty(t.activityType, 'ACTIVITY_TYPE_')).join(', ') : 'every activity'}`;
}

const groupByOf = (aggregation: Json) => Object.keys(aggregation.groupBy ?? {})[0] ?? '';

/** One group's bar: aggregate / threshold, marked in words when the limit is reached or passed. */
function usageRow(u: Json, label: string): HTMLElement {
  const aggregate = Number(u.aggregate);
  const threshold = Number(u.threshold);
  const over = aggregate > threshold;
  const at = !over && u.remaining === '0';
  const state = over ? 'over the limit' : at ? 'at the limit' : `${u.remaining} left`;
  const percent = threshold > 0 ? Math.round((aggregate / threshold) * 100) : aggregate > 0 ? Infinity : 0;
  const text = `${u.aggregate} of ${u.threshold} (${Number.isFinite(percent) ? `${percent}%` : 'threshold 0'}, ${state})`;
  const labelId = `usage-${u.groupBy}-${u.groupId}`;
  return h(
    'li',
    { className: `usage${over ? ' usage-over' : at ? ' usage-at' : ''}`, 'data-group-id': u.groupId },
    h('div', { className: 'usage-head' }, h('span', { id: labelId }, h('span', { className: 'tag' }, pretty(u.groupBy.toUpperCase(), '')), label ? h('strong', {}, label, ' ') : null, mono(u.groupId)), h('span', { className: 'usage-text' }, text)),
    // A meter's red region starts at `high`: the last fifth before the threshold, and beyond it.
    h('meter', {
      className: 'usage-bar',
      min: 0,
      max: threshold > 0 ? threshold : 1,
      low: threshold * 0.6,
      high: threshold * 0.8,
      optimum: 0,
      value: aggregate,
      'aria-labelledby': labelId,
      'aria-valuetext': text,
    }),
  );
}

export async function velocityControlsPage(ctx: PageContext): Promise<void> {
  const body = h('div', {}, loading());
  ctx.main.append(heading('Velocity controls'), body);
  const [{ velocityControls }, { wallets }, { users }] = await Promise.all([
    ctx.api.query<Json>('list_velocity_controls', { paginationOptions: { limit: '100' } }),
    ctx.api.query<Json>('list_wallets'),
    ctx.api.query<Json>('list_users'),
  ]);
  if (!velocityControls.length) {
    return replace(body, empty('No velocity controls yet.', 'Create them with create_velocity_control (docs/velocity-controls.md); policies read them as controls.<identifier>.'));
  }
  // Wallet and user names beside their ids (the organization's group is named by its tag).
  const names = new Map<string, string>([
    ...(wallets as Json[]).map((w): [string, string] => [w.walletId, w.walletName]),
    ...(users as Json[]).map((u): [string, string] => [u.userId, u.userName]),
  ]);
  const list = h('ul', { className: 'cards' });
  for (const c of velocityControls as Json[]) {
    const a = c.aggregation as Json;
    const usage = (c.usage ?? []) as Json[];
    list.append(
      h(
        'li',
        { className: 'card velocity-card', 'data-velocity-control-id': c.velocityControlId },
        h('h2', {}, c.name),
        facts([
          ['Identifier', mono(`controls.${c.identifier}`)],
          ['Counts', sourceText(c.dataSource)],
          ['Limit', `${pretty(a.method, 'VELOCITY_CONTROL_AGGREGATION_METHOD_')} ${pretty(a.operator, 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_').toLowerCase()} ${a.threshold}`],
          ['Window', windowText(a.window)],
          ['Per', groupByOf(a)],
          ['ID', mono(c.velocityControlId)],
        ]),
        h('h3', {}, 'Usage in the window'),
        usage.length
          ? h('ul', { className: 'plain usage-list' }, ...usage.map((u) => usageRow(u, names.get(u.groupId) ?? '')))
          : h('p', { className: 'hint' }, 'Nothing counted in the window.'),
      ),
    );
  }
  replace(body, list);
}
