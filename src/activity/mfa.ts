// The MFA state of an activity (docs/mfa.md "MFA policies"; the rules are
// src/domain/identity/mfa-policies.ts): which methods the submitter's, or an approver's, matching MFA
// policy asks for, and the stamps presented toward them so far.
import type { Caller } from '../domain/context.js';
import { assignMethods, matchingMfaPolicy, presentedMethod, type PresentedMethod, type RequiredStep } from '../domain/identity/mfa-policies.js';
import { notAuthorized } from '../errors/errors.js';
import type { PolicyContext } from '../policy/index.js';
import type { ActivityMfaRow, ActivityRow, Repositories } from '../store/index.js';

/**
 * The MFA state of a submission: the first of the caller's MFA policies whose condition holds, with
 * the method the submission's stamp presents; undefined when none matches (an organization without
 * MFA policies costs one cached read).
 */
export async function mfaOf(
  repos: Repositories,
  /** The organization whose users' MFA policies apply (the deciding one). */
  organizationId: string,
  /** The organization the activity is recorded in. */
  activityOrganizationId: string,
  caller: Caller,
  activityId: string,
  now: number,
  contexts: () => Promise<PolicyContext[]>,
  /** When the activity was submitted (a vote's); a credential created later meets nothing. */
  submittedAt = now,
): Promise<{ row: ActivityMfaRow; met: boolean } | undefined> {
  const policy = await matchingMfaPolicy(repos, organizationId, caller.user.id, contexts);
  if (!policy) return undefined;
  const steps = JSON.parse(policy.required_methods) as RequiredStep[];
  const method = presentedMethod(caller.credential, submittedAt);
  const presented = method && assignMethods(steps, [method]).some(Boolean) ? [method] : [];
  return {
    row: {
      activity_id: activityId,
      user_id: caller.user.id,
      organization_id: activityOrganizationId,
      mfa_policy_id: policy.id,
      required_methods: policy.required_methods,
      satisfied_methods: JSON.stringify(presented),
      created_at: now,
      updated_at: now,
    },
    met: assignMethods(steps, presented).every(Boolean),
  };
}

/**
 * The method the caller's approval stamp presents, counted toward the caller's MFA state on the
 * activity; true once every step is met. A stamp that meets no step still unmet (the wrong kind,
 * or a credential already counted) is refused with what would meet one, and nothing changes.
 */
export async function presentMethod(repos: Repositories, target: ActivityRow, state: ActivityMfaRow, caller: Caller, now: number): Promise<boolean> {
  const steps = JSON.parse(state.required_methods) as RequiredStep[];
  const presented = JSON.parse(state.satisfied_methods) as PresentedMethod[];
  const before = assignMethods(steps, presented);
  // A credential created after the activity was submitted meets nothing (docs/mfa.md "MFA policies").
  const method = presentedMethod(caller.credential, target.created_at);
  const after = method ? assignMethods(steps, [...presented, method]) : [];
  if (!method || after.filter(Boolean).length === before.filter(Boolean).length) {
    const unmet = before.map((m, i) => (m ? undefined : steps[i].any.map((r) => (r.id ? `${r.type} (${r.id})` : r.type)).join(' or '))).filter(Boolean);
    const why = method?.createdAfterSubmission ? ' from a credential created after the activity was submitted' : method && presented.some((p) => p.publicKey === method.publicKey) ? ' from a credential already counted' : '';
    const what = method ? `a ${method.type} stamp${why}` : 'an attested stamp';
    throw notAuthorized(
      `request not authorized: approving activity ${target.id} with ${what} meets none of the steps of MFA policy ${state.mfa_policy_id} still unmet: ${unmet.map((u) => `[${u}]`).join(', ')}; approve it stamped with one of those methods`,
    );
  }
  await repos.mfaPolicies.setSatisfied(target.id, state.user_id, JSON.stringify([...presented, method]), now);
  return after.every(Boolean);
}
