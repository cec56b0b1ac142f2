// Velocity control operations (issue 17; @turnkey/http 6.6.0: createVelocityControl,
// deleteVelocityControl, getVelocityControl, listVelocityControls): create_velocity_control,
// delete_velocity_control, get_velocity_control, list_velocity_controls. Their schemas are the
// client's types, which the bundled swagger lacks (scripts/swagger-supplement.json).
//
// Policy resource and action: POLICY / CREATE and POLICY / DELETE. The reference's resource list
// (turnkey-semantics.md §1.3) has no velocity control resource; a control changes what policies
// decide, so whoever may change policies may change controls, and a policy guarding policy changes
// (say, two approvers for POLICY) guards the limits too. Recorded as deliberate in
// test/vectors/activity-resources.json.
import {
  createVelocityControl,
  deleteVelocityControl,
  requireVelocityControl,
  velocityControlRecord,
} from '../domain/velocity-controls.js';
import { invalid } from '../errors/errors.js';
import { pageLimit } from '../domain/records.js';
import { ACTIVITY_TYPES } from '../schemas/index.js';
import { defineActivity, defineQuery } from './define.js';

const KNOWN_TYPES: ReadonlySet<string> = new Set(ACTIVITY_TYPES);

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
  execute: async (ctx, b) => ({ velocityControl: velocityControlRecord(await requireVelocityControl(ctx.repos, ctx.organization.id, b.velocityControlId)) }),
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
    for (const cursor of [page.before, page.after]) {
      if (cursor && !(await ctx.repos.velocityControls.get(orgId, cursor))) {
        throw invalid(`pagination cursor ${cursor} is not a velocity control of this organization`);
      }
    }
    const limit = pageLimit(page.limit);
    // One more than the page tells whether another page follows.
    const rows = await ctx.repos.velocityControls.page(orgId, { limit: limit + 1, before: page.before || undefined, after: page.after || undefined, order: 'asc' });
    const backwards = Boolean(page.before) && !page.after;
    const more = rows.length > limit;
    const shown = more ? (backwards ? rows.slice(1) : rows.slice(0, limit)) : rows;
    return {
      velocityControls: shown.map(velocityControlRecord),
      pageInfo: {
        hasNextPage: backwards ? Boolean(page.before) : more,
        hasPreviousPage: backwards ? more : Boolean(page.after),
        startCursor: shown[0]?.id ?? '',
        endCursor: shown[shown.length - 1]?.id ?? '',
      },
    };
  },
});
