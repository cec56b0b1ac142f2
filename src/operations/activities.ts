// Activity queries: get_activity (returns v1ActivityResponse) and list_activities (swagger
// v1GetActivitiesRequest: status/type filters and cursor pagination, newest first).
import { pageLimit, timestamp } from '../domain/records.js';
import { notFound } from '../errors/errors.js';
import { defineQuery } from './define.js';

export const getActivityOp = defineQuery<{ organizationId: string; activityId: string }, unknown>({
  path: 'get_activity',
  request: 'v1GetActivityRequest',
  execute: async (ctx, b) => {
    const activity = await ctx.services.activities.get(ctx.organization.id, b.activityId, ctx);
    if (!activity) throw notFound(`activity not found: ${b.activityId}`);
    return { activity };
  },
});

export const listActivitiesOp = defineQuery<
  {
    organizationId: string;
    filterByStatus?: string[];
    filterByType?: string[];
    paginationOptions?: { limit?: string; before?: string; after?: string };
  },
  unknown
>({
  path: 'list_activities',
  request: 'v1GetActivitiesRequest',
  execute: async (ctx, b) => {
    const page = b.paginationOptions ?? {};
    const activities = await ctx.services.activities.list(
      ctx.organization.id,
      {
        limit: pageLimit(page.limit),
        before: page.before || undefined,
        after: page.after || undefined,
        statuses: b.filterByStatus,
        types: b.filterByType,
      },
      ctx,
    );
    return { activities };
  },
});

// Which policies were evaluated for an activity and their outcomes, one record per vote
// (docs/reference/policies.md "Evaluation of one policy": evaluation re-runs on every vote).
export const getPolicyEvaluationsOp = defineQuery<{ organizationId: string; activityId: string }, unknown>({
  path: 'get_policy_evaluations',
  request: 'v1GetPolicyEvaluationsRequest',
  execute: async (ctx, b) => {
    const activity = await ctx.repos.activities.get(ctx.organization.id, b.activityId);
    if (!activity) throw notFound(`activity not found: ${b.activityId}`);
    const rows = await ctx.repos.policyEvaluations.listForActivity(ctx.organization.id, b.activityId);
    return {
      policyEvaluations: rows.map((r) => ({
        id: r.id,
        activityId: r.activity_id,
        organizationId: r.organization_id,
        voteId: r.vote_id ?? '',
        policyEvaluations: JSON.parse(r.evaluations),
        createdAt: timestamp(r.created_at),
      })),
    };
  },
});
