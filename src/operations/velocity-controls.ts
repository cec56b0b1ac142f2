// Velocity control operations (docs/velocity-controls.md; @turnkey/http 6.6.0: createVelocityControl,
// deleteVelocityControl, getVelocityControl, listVelocityControls): create_velocity_control,
// delete_velocity_control, get_velocity_control, list_velocity_controls. Their schemas are the
// client's types, which the bundled swagger lacks (scripts/swagger-supplement.json).
//
// Policy resource and action: POLICY / CREATE and POLICY / DELETE. The reference's resource list
// (docs/reference/policies.md "Keywords") has no velocity control resource; a control changes what policies
// decide, so whoever may change policies may change controls, and a policy guarding policy changes
// (say, two approvers for POLICY) guards the limits too. Recorded as deliberate in
// test/vectors/activity-resources.json.
//
// `usage` (a Sigil addition to v1VelocityControl, docs/velocity-controls.md "Velocity controls"; clients that do not
// know it ignore it): each group of the control with an aggregate above zero in its window now,
// beside the threshold, so an operator (the dashboard's Velocity controls page) sees how close each
// group is to its limit. The aggregate is read as a policy check reads it (velocity-limits.ts).
import type { OperationContext } from '../domain/context.js';
import { groupAggregates } from '../domain/keys/velocity-limits.js';
import type { VelocityControlRow } from '../store/repositories/velocity-controls.js';
import {
  controlOf,
  formatAmount,
  createVelocityControl,
  deleteVelocityControl,
  requireVelocityControl,
  velocityControlRecord,
} from '../domain/keys/velocity-controls.js';
import { invalid } from '../errors/errors.js';
import { pageLimit, requireCursors } from '../domain/records.js';
import { ACTIVITY_TYPES } from '../schemas/index.js';
import { defineActivity, defineQuery } from './define.js';

const KNOWN_TYPES: ReadonlySet<string> = new Set(ACTIVITY_TYPES);

async function mapInOrder<T, R>(items: T[], f: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (const item of items) out.push(await f(item));
  return out;
}

/** The v1VelocityControl record with `usage`: the groups counted in the window now, nearest their threshold first. */
async function withUsage(ctx: OperationContext, row: VelocityControlRow) {
  const control = controlOf(row);
  const at = ctx.velocityNow?.() ?? ctx.now;
  const groups = await groupAggregates(ctx.repos, control, at);
  groups.sort((a, b) => (a.aggregate > b.aggregate ? -1 : a.aggregate < b.aggregate ? 1 : a.groupKey < b.groupKey ? -1 : 1));
  const threshold = formatAmount(control.threshold);
  return {
    ...velocityControlRecord(row),
    usage: groups.map((g) => {
      const [kind, id] = g.groupKey === 'organization' ? ['organization', row.organization_id] : g.groupKey.split(/:(.*)/s);
      return {
        groupBy: kind,
        groupId: id,
        aggregate: formatAmount(g.aggregate),
        threshold,
        remaining: formatAmount(control.threshold > g.aggregate ? control.threshold - g.aggregate : 0n),
      };
    }),
  };
}

export const createVelocityControlOp = defineActivity<Record<string, unknown>, { velocityControlId: string }>({
  path: 'create_velocity_control',
  type: 'ACTIVITY_TYPE_CREATE_VELOCITY_CONTROL',
  result: 'createVelocityControlResult',
  policy: { resource: 'POLICY', action: 'CREATE' },
  execute: (ctx, p) => createVelocityControl(ctx, p, KNOWN_TYPES),
});

export const deleteVelocityControlOp = defineActivity<{ velocityControlId: string }, { velocityControlId: string }>({
  path: 'delete_velocity_control',
  type: 'ACTIVITY_TYPE_DELETE_VELOCITY_CONTROL',
  result: 'deleteVelocityControlResult',
  policy: { resource: 'POLICY', action: 'DELETE' },
  execute: (ctx, p) => deleteVelocityControl(ctx, p.velocityControlId),
});

export const getVelocityControlOp = defineQuery<{ organizationId: string; velocityControlId: string }, unknown>({
  path: 'get_velocity_control',
  request: 'v1GetVelocityControlRequest',
  execute: async (ctx, b) => ({ velocityControl: await withUsage(ctx, await requireVelocityControl(ctx.repos, ctx.organization.id, b.velocityControlId)) }),
});

export const listVelocityControlsOp = defineQuery<
  { organizationId: string; paginationOptions?: { limit?: string; before?: string; after?: string } },
  unknown
>({
  path: 'list_velocity_controls',
  request: 'v1ListVelocityControlsRequest',
  execute: async (ctx, b) => {
    const orgId = ctx.organization.id;
    const page = b.paginationOptions ?? {};
    await requireCursors(page, (id) => ctx.repos.velocityControls.get(orgId, id), 'a velocity control');
    const limit = pageLimit(page.limit);
    // One more than the page tells whether another page follows.
    const rows = await ctx.repos.velocityControls.page(orgId, { limit: limit + 1, before: page.before || undefined, after: page.after || undefined, order: 'asc' });
    const backwards = Boolean(page.before) && !page.after;
    const more = rows.length > limit;
    const shown = more ? (backwards ? rows.slice(1) : rows.slice(0, limit)) : rows;
    return {
      velocityControls: await mapInOrder(shown, (row) => withUsage(ctx, row)),
      pageInfo: {
        hasNextPage: backwards ? Boolean(page.before) : more,
        hasPreviousPage: backwards ? more : Boolean(page.after),
        startCursor: shown[0]?.id ?? '',
        endCursor: shown[shown.length - 1]?.id ?? '',
      },
    };
  },
});
