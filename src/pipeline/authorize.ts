// Authorization of an activity (turnkey-semantics.md §1.4, §2), run at submission and again on
// every vote: a parent organization's credential may read a sub-organization but not write to it;
// the root quorum's threshold of root approvals allows anything; root-quorum-only activities admit
// nothing else; otherwise the organization's policies decide over the activity, its resources and
// the approvals so far. Users may manage their own credentials when no policy speaks to it, and a
// root user below the threshold waits for the other root users.
import { activityKeyword, consensusKeywords } from '../domain/policy-context.js';
import type { Caller, OperationContext } from '../domain/context.js';
import { loadCompiledPolicies } from '../domain/policies.js';
import { SigilError, notAuthorized } from '../errors/errors.js';
import type { ActivityDeclaration } from '../operations/define.js';
import type { OrganizationRow, Repositories, VoteRow } from '../store/index.js';
import { evaluatePolicies, type PolicyEvaluation } from './policy-engine.js';

export type Decision =
  | { outcome: 'allow'; evaluations: PolicyEvaluation[] }
  | { outcome: 'consensus_needed'; evaluations: PolicyEvaluation[] }
  | { outcome: 'deny'; error: SigilError; evaluations: PolicyEvaluation[] };

export type Approval = Pick<VoteRow, 'user_id' | 'public_key' | 'selection'>;

/** The refusal the SDKs snapshot for an explicit DENY (turnkey-contract.md Traps 10). */
export function explicitDenial(): SigilError {
  return new SigilError('REQUEST_NOT_AUTHORIZED', 'policy engine denied request explicitly', { bareDetails: true });
}

export function checkWritesOwnOrganization(org: OrganizationRow, caller: Caller): void {
  if (caller.organizationId !== org.id) {
    throw notAuthorized('request not authorized: a credential of the parent organization cannot submit activities to a sub-organization');
  }
}

export async function decide(input: {
  repos: Repositories;
  decl: ActivityDeclaration;
  type: string;
  org: OrganizationRow;
  /** The user who submitted the activity. */
  submitter: Caller;
  params: Record<string, unknown>;
  /** Every vote cast so far, the submitter's included. */
  votes: Approval[];
  now: number;
  /** For the declaration's policy hooks (reads only). */
  hookContext: OperationContext;
}): Promise<Decision> {
  const { repos, decl, type, org, params, votes } = input;
  const none: PolicyEvaluation[] = [];
  if (decl.authorization === 'vote') return { outcome: 'allow', evaluations: none };

  const quorum = new Set(await repos.organizations.rootQuorumUserIds(org.id));
  const approvers = new Set(votes.filter((v) => v.selection === 'VOTE_SELECTION_APPROVED').map((v) => v.user_id));
  const rootApprovals = [...approvers].filter((u) => quorum.has(u)).length;
  // The root quorum bypasses the policy engine (§1.4 step 1).
  if (rootApprovals >= org.root_quorum_threshold) return { outcome: 'allow', evaluations: none };
  if (decl.authorization === 'root_quorum_only') {
    if (rootApprovals > 0) return { outcome: 'consensus_needed', evaluations: none };
    return { outcome: 'deny', error: notAuthorized(`request not authorized: only the root quorum can run ${type}`), evaluations: none };
  }

  const policies = await loadCompiledPolicies(repos, org.id);
  let decision: 'allow' | 'deny' | 'consensus' | 'none' = 'none';
  let evaluations = none;
  if (policies.length > 0) {
    const context = {
      ...(decl.policyContext ? await decl.policyContext(input.hookContext, params) : {}),
      activity: activityKeyword(type, decl.policy.resource, decl.policy.action, decl.policyParams?.(params) ?? {}),
      ...(await consensusKeywords(repos, org.id, votes)),
      time: { now: new Date(input.now) },
    };
    ({ decision, evaluations } = evaluatePolicies(policies, context));
  }
  if (decision === 'deny') return { outcome: 'deny', error: explicitDenial(), evaluations };
  if (decision === 'allow') return { outcome: 'allow', evaluations };
  if (decision === 'consensus') return { outcome: 'consensus_needed', evaluations };
  if (decl.selfService?.(input.submitter, params)) return { outcome: 'allow', evaluations };
  if (rootApprovals > 0) return { outcome: 'consensus_needed', evaluations };
  return {
    outcome: 'deny',
    error: notAuthorized(`request not authorized: no policy allows ${type} for user ${input.submitter.user.id}`),
    evaluations,
  };
}
