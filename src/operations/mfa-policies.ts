// MFA policy operations (swagger "MFA Policies": create_mfa_policy, update_mfa_policy,
// delete_mfa_policy, get_mfa_policy, get_mfa_policies, get_mfa_status; v1MfaPolicy, v1MfaStatus).
// The enforcement is the pipeline's (src/activity/lifecycle.ts and src/activity/votes.ts, ACTIVITY_STATUS_AUTHENTICATORS_NEEDED);
// these declare the records and what the policy engine sees.
//
// Policy resource and action: MFA_POLICY / CREATE, UPDATE, DELETE (docs/reference/policies.md "Keywords" lists
// the MFA_POLICY resource; the reference's MFA examples use MFA_POLICY CREATE/DELETE), with
// `activity.params.user_id` naming whose policy it is. A user manages their own MFA policies unless a
// policy says otherwise (selfService, as for their own API keys and passkeys); another user's need a
// policy or the root quorum. An MFA policy whose condition matches its own removal then guards it.
import {
  assignMethods,
  createMfaPolicy,
  deleteMfaPolicy,
  mfaPoliciesOf,
  mfaPolicyRecord,
  requireMfaPolicy,
  shownMethod,
  updateMfaPolicy,
  type CreateMfaPolicyParams,
  type PresentedMethod,
  type RequiredStep,
  type UpdateMfaPolicyParams,
} from '../domain/identity/mfa-policies.js';
import { requireUser } from '../domain/lookup.js';
import { notFound } from '../errors/errors.js';
import { defineActivity, defineQuery } from './define.js';

export const createMfaPolicyOp = defineActivity<CreateMfaPolicyParams, { mfaPolicyId: string }>({
  path: 'create_mfa_policy',
  type: 'ACTIVITY_TYPE_CREATE_MFA_POLICY',
  result: 'createMfaPolicyResult',
  policy: { resource: 'MFA_POLICY', action: 'CREATE' },
  policyParams: (p) => ({ user_id: p.userId }),
  selfService: (caller, p) => caller.user.id === p.userId,
  execute: (ctx, p) => createMfaPolicy(ctx, p),
});

export const updateMfaPolicyOp = defineActivity<UpdateMfaPolicyParams, { mfaPolicyId: string }>({
  path: 'update_mfa_policy',
  type: 'ACTIVITY_TYPE_UPDATE_MFA_POLICY',
  result: 'updateMfaPolicyResult',
  policy: { resource: 'MFA_POLICY', action: 'UPDATE' },
  policyParams: (p) => ({ user_id: p.userId, mfa_policy_id: p.mfaPolicyId }),
  selfService: (caller, p) => caller.user.id === p.userId,
  execute: (ctx, p) => updateMfaPolicy(ctx, p),
});

export const deleteMfaPolicyOp = defineActivity<{ userId: string; mfaPolicyId: string }, { mfaPolicyId: string }>({
  path: 'delete_mfa_policy',
  type: 'ACTIVITY_TYPE_DELETE_MFA_POLICY',
  result: 'deleteMfaPolicyResult',
  policy: { resource: 'MFA_POLICY', action: 'DELETE' },
  policyParams: (p) => ({ user_id: p.userId, mfa_policy_id: p.mfaPolicyId }),
  selfService: (caller, p) => caller.user.id === p.userId,
  execute: (ctx, p) => deleteMfaPolicy(ctx, p),
});

export const getMfaPolicyOp = defineQuery<{ organizationId: string; userId: string; mfaPolicyId: string }, unknown>({
  path: 'get_mfa_policy',
  request: 'v1GetMfaPolicyRequest',
  execute: async (ctx, b) => ({ mfaPolicy: mfaPolicyRecord(await requireMfaPolicy(ctx.repos, ctx.organization.id, b.userId, b.mfaPolicyId)) }),
});

export const getMfaPoliciesOp = defineQuery<{ organizationId: string; userId: string }, unknown>({
  path: 'get_mfa_policies',
  request: 'v1GetMfaPoliciesRequest',
  execute: async (ctx, b) => {
    await requireUser(ctx.repos, ctx.organization.id, b.userId);
    return { mfaPolicies: (await mfaPoliciesOf(ctx.repos, ctx.organization.id, b.userId)).map(mfaPolicyRecord) };
  },
});

/**
 * One v1MfaStatus per user an MFA policy matched the activity for (only `userId`'s when given): the
 * steps as they were when the activity was submitted, the methods that met them so far, and whether
 * all are met. An activity no MFA policy matched has none.
 */
export const getMfaStatusOp = defineQuery<{ organizationId: string; activityId: string; userId?: string }, unknown>({
  path: 'get_mfa_status',
  request: 'v1GetMfaStatusRequest',
  execute: async (ctx, b) => {
    const orgId = ctx.organization.id;
    const activity = await ctx.repos.activities.get(orgId, b.activityId);
    if (!activity) throw notFound(`activity not found: ${b.activityId}`);
    if (b.userId) await requireUser(ctx.repos, orgId, b.userId);
    const rows = (await ctx.repos.mfaPolicies.activityMfa(orgId, activity.id)).filter((r) => !b.userId || r.user_id === b.userId);
    return {
      mfaStatuses: rows.map((r) => {
        const steps = JSON.parse(r.required_methods) as RequiredStep[];
        const assigned = assignMethods(steps, JSON.parse(r.satisfied_methods) as PresentedMethod[]);
        return {
          mfaPolicyId: r.mfa_policy_id,
          userId: r.user_id,
          satisfied: assigned.every(Boolean),
          satisfiedMethods: assigned.filter((m): m is PresentedMethod => m !== undefined).map(shownMethod),
          requiredMethods: steps,
        };
      }),
    };
  },
});
