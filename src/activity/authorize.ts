// Authorization of an activity (docs/reference/policies.md "Evaluation of one policy"), run at submission and again on
// every vote: a parent organization's credential may read a sub-organization but not write to it,
// but for the authentication activities that target its users, which the parent decides;
// the root quorum's threshold of root approvals allows anything; root-quorum-only activities admit
// nothing else; otherwise the organization's policies decide over the activity, its resources and
// the approvals so far. Users may manage their own credentials when no policy speaks to it, and a
// root user below the threshold waits for the other root users. A session made with a session
// profile may submit only the activities its profile's scope allows (checkSessionScope).
import { activityKeyword, consensusKeywords, consensusKeywordsFrom, loadConsensusRecords } from '../domain/governance/policy-context.js';
import type { Caller, OperationContext } from '../domain/context.js';
import { loadCompiledPolicies, type CompiledPolicy } from '../domain/governance/policies.js';
import { sessionScope } from '../domain/identity/session-profiles.js';
import { ADDS_CREDENTIAL, type AddedCredential } from '../domain/identity/mfa-policies.js';
import { SigilError, notAuthorized, permissionDenied } from '../errors/errors.js';
import type { ActivityDeclaration } from '../operations/define.js';
import { evaluatePolicyExpression, fieldMatches, type PolicyContext } from '../policy/index.js';
import type { OrganizationRow, Repositories, VoteRow } from '../store/index.js';
import { evaluatePoliciesForEach, type PolicyEvaluation } from './policy-engine.js';

export type Decision =
  | { outcome: 'allow'; evaluations: PolicyEvaluation[] }
  | { outcome: 'consensus_needed'; evaluations: PolicyEvaluation[] }
  | { outcome: 'deny'; error: SigilError; evaluations: PolicyEvaluation[] };

export type Approval = Pick<VoteRow, 'user_id' | 'public_key' | 'selection'>;

/** The activity's target, loaded at most once however many times it is judged (the declaration's `load`). */
export type Loaded = () => Promise<unknown>;

/** The declaration's `load` for one submission (or one vote), run on first use and then shared. */
export function loaderOf(decl: ActivityDeclaration, ctx: OperationContext, params: Record<string, unknown>): Loaded {
  let loading: Promise<unknown> | undefined;
  return () => (loading ??= decl.load ? decl.load(ctx, params) : Promise.resolve(undefined));
}

/** The refusal the SDKs snapshot for an explicit DENY (docs/reference/policies.md "The decision for an activity"). */
export function explicitDenial(): SigilError {
  return new SigilError('REQUEST_NOT_AUTHORIZED', 'policy engine denied request explicitly', { bareDetails: true });
}

/**
 * The organization whose root quorum and policies decide a submission to `org` (docs/reference/policies.md
 * docs/reference/organizations.md): the organization itself for its own users. A parent organization's credential may read a
 * sub-organization but write to it only through the authentication activities its declaration
 * marks (`parentOrganizationMaySubmit`, with any condition of its own): those are decided by the
 * parent, whose user submits them, and recorded in the sub-organization. Anything else is refused.
 */
export async function decidingOrganization(input: {
  repos: Repositories;
  decl: ActivityDeclaration;
  type: string;
  org: OrganizationRow;
  caller: Caller;
  params: Record<string, unknown>;
  hookContext: OperationContext;
}): Promise<OrganizationRow> {
  const { repos, decl, type, org, caller } = input;
  if (caller.organizationId === org.id) return org;
  const rule = decl.parentOrganizationMaySubmit;
  if (!rule || caller.organizationId !== org.parent_organization_id) {
    throw notAuthorized(
      `request not authorized: a credential of the parent organization cannot submit activities to a sub-organization (${type} is not one of the authentication activities a parent runs for its sub-organizations' users)`,
    );
  }
  if (typeof rule === 'function') await rule(input.hookContext, input.params);
  const parent = await repos.organizations.get(caller.organizationId);
  if (!parent) throw notAuthorized('request not authorized: the parent organization no longer exists');
  return parent;
}

/**
 * A session made with a session profile (its login key records the profile) may submit only the
 * activities the profile's `scope` allows (docs/reference/policies.md "Evaluation of one policy": session profile scope is
 * evaluated on every request made with that session). The scope is a policy condition over the
 * same keywords a policy condition sees (the activity, its resources, the time); like an ALLOW
 * policy's condition it must evaluate to true, so an error (a keyword the activity does not carry)
 * refuses. A batch must be in scope in every element. Run at submission, before idempotency, so a
 * re-submission that would count as an approval is held to the scope too.
 */
export async function checkSessionScope(input: {
  repos: Repositories;
  decl: ActivityDeclaration;
  type: string;
  caller: Caller;
  params: Record<string, unknown>;
  now: number;
  hookContext: OperationContext;
  loaded: Loaded;
}): Promise<void> {
  const scoped = await sessionScope(input.repos, input.caller.credential);
  if (!scoped) return;
  const refuse = (why: string) =>
    new SigilError('REQUEST_NOT_AUTHORIZED', `request not authorized: ${input.type} is outside the scope of session profile ${scoped.profileId}, which this session was created with (${why})`);
  if (!scoped.scope) throw refuse('the profile no longer exists or its scope cannot be evaluated');
  const shared = { activity: activityOf(input), time: { now: new Date(input.now) } };
  for (const own of await ownContexts(input)) {
    const r = evaluatePolicyExpression(scoped.scope, { ...own, ...shared });
    if (!fieldMatches('EFFECT_ALLOW', r)) throw refuse(r.ok ? 'its scope is false for this activity' : `its scope could not be evaluated on this activity: ${r.error.message}`);
  }
}

export interface DecisionInput {
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
  /** The activity's target, as its declaration's `load` resolved it. */
  loaded: Loaded;
  /**
   * The activity's own contexts, already computed (with the `controls` keyword the velocity
   * measurement filled in); otherwise they are built from the declaration's hook.
   */
  contexts?: PolicyContext[];
}

/** The activity's own keywords, one context per element it is judged on (a batch has several). */
export async function ownContexts(input: Omit<DecisionInput, 'votes' | 'submitter' | 'now' | 'org'>): Promise<PolicyContext[]> {
  if (input.contexts) return input.contexts;
  const own = input.decl.policyContext ? [await input.decl.policyContext(input.hookContext, input.params, await input.loaded())].flat() : [];
  // A batch with no elements is judged as the activity alone.
  return own.length > 0 ? own : [{}];
}

/**
 * The contexts an MFA policy's condition is judged in: the activity's own keywords, `activity` and
 * `time`, as policies see them (src/domain/identity/mfa-policies.ts), marked when the activity adds
 * a credential to a user (the declaration's `addsCredential`), which MFA policies guard whatever
 * their conditions.
 */
export async function mfaContexts(input: Omit<DecisionInput, 'votes' | 'submitter' | 'org'>): Promise<PolicyContext[]> {
  const shared = { activity: activityOf(input), time: { now: new Date(input.now) } };
  const adds = input.decl.addsCredential;
  const userId = adds?.userId(input.hookContext.caller, input.params);
  const added: AddedCredential | undefined = adds && userId ? { method: adds.method, userId } : undefined;
  return (await ownContexts(input)).map((c) => ({ ...c, ...shared, ...(added ? { [ADDS_CREDENTIAL]: added } : {}) }));
}

/**
 * The `activity` keyword. An older type value submitted on the path is judged as the current type
 * (`activity.type` is the declaration's, so `activity.type` and `activity.kind` name one activity):
 * a DENY written for the current type cannot be passed by submitting an older version.
 */
function activityOf(input: Pick<DecisionInput, 'decl' | 'type' | 'params'>) {
  const { decl, params } = input;
  return activityKeyword(decl.type, decl.policy.resource, decl.policy.action, decl.policyParams?.(params) ?? {});
}

/**
 * The decision on an activity. `org` is the deciding organization; when it is not the one the
 * activity is recorded in (`hookContext.organization`: a parent deciding for a sub-organization),
 * the activity cannot wait for approvals, since votes are cast in the activity's own organization:
 * it must be allowed outright.
 */
export async function decide(input: DecisionInput): Promise<Decision> {
  const decision = await decideIn(input);
  if (decision.outcome !== 'consensus_needed' || input.org.id === input.hookContext.organization.id) return decision;
  return {
    outcome: 'deny',
    error: permissionDenied(
      `${input.type} needs more approvals in organization ${input.org.id}; an activity a parent organization submits for a sub-organization must be allowed outright (by a policy without consensus or the root quorum), as approvals are cast in the sub-organization`,
      decision.evaluations,
    ),
    evaluations: decision.evaluations,
  };
}

async function decideIn(input: DecisionInput): Promise<Decision> {
  const { repos, decl, type, org, votes } = input;
  const none: PolicyEvaluation[] = [];
  if (decl.authorization === 'vote') return { outcome: 'allow', evaluations: none };

  const quorum = new Set(await repos.organizations.rootQuorumUserIds(org.id));
  const approvers = new Set(votes.filter((v) => v.selection === 'VOTE_SELECTION_APPROVED').map((v) => v.user_id));
  const rootApprovals = [...approvers].filter((u) => quorum.has(u)).length;
  // The root quorum bypasses the policy engine (docs/reference/policies.md "Evaluation of one policy").
  if (rootApprovals >= org.root_quorum_threshold) return { outcome: 'allow', evaluations: none };
  if (decl.authorization === 'root_quorum_only') {
    if (rootApprovals > 0) return { outcome: 'consensus_needed', evaluations: none };
    return { outcome: 'deny', error: permissionDenied(`only the root quorum can run ${type}`, none), evaluations: none };
  }

  const policies = await loadCompiledPolicies(repos, org.id);
  let decision: 'allow' | 'deny' | 'consensus' | 'none' = 'none';
  let evaluations = none;
  let contexts: PolicyContext[] = [];
  if (policies.length > 0) {
    const shared = { activity: activityOf(input), ...(await consensusKeywords(repos, org.id, votes)), time: { now: new Date(input.now) } };
    contexts = (await ownContexts(input)).map((c) => ({ ...c, ...shared }));
    ({ decision, evaluations } = evaluatePoliciesForEach(policies, contexts));
  }
  if (decision === 'deny' || decision === 'none') {
    const unsimulated = withoutSimulation(policies, evaluations, contexts);
    if (unsimulated) return { outcome: 'deny', error: permissionDenied(unsimulated, evaluations), evaluations };
  }
  if (decision === 'deny') return { outcome: 'deny', error: explicitDenial(), evaluations };
  if (decision === 'allow') return { outcome: 'allow', evaluations };
  if (decision === 'consensus') return { outcome: 'consensus_needed', evaluations };
  if (decl.selfService?.(input.submitter, input.params)) return { outcome: 'allow', evaluations };
  if (rootApprovals > 0) return { outcome: 'consensus_needed', evaluations };
  return {
    outcome: 'deny',
    error: permissionDenied(`no policy allows ${type} for user ${input.submitter.user.id}`, evaluations),
    evaluations,
  };
}

/**
 * Why the activity is refused when a policy that reads `simulation.*` failed on a transaction that
 * was not simulated (docs/policies.md "Simulation before approval"): the refusal names the policy and
 * the simulation's status and reason, rather than a bare denial. Undefined otherwise.
 */
function withoutSimulation(policies: CompiledPolicy[], evaluations: PolicyEvaluation[], contexts: PolicyContext[]): string | undefined {
  const missing = contexts.map((c) => c.simulation).find((s) => s !== undefined && s.status !== 'SIMULATED');
  if (!missing) return undefined;
  const reads = (p: CompiledPolicy) => [p.condition, p.consensus, p.time].some((e) => e?.keywords.has('simulation'));
  const failed = policies.find((p, i) => reads(p) && (evaluations[i]?.outcome === 'OUTCOME_ERROR' || evaluations[i]?.outcome === 'OUTCOME_DENY_EXPLICIT'));
  if (!failed) return undefined;
  return `policy ${failed.id} (${failed.name}) reads simulation.*, and this transaction's simulation is ${missing.status}${missing.reason ? `: ${missing.reason}` : ''}; a policy on the simulation never passes without one`;
}

/**
 * Whether `voter` may vote on a waiting activity (docs/reference/policies.md "Evaluation of one policy": "All users have implicit permission
 * to approve an activity if they were included in consensus"; a rejection belongs to the same
 * users). Included are the root quorum's members, whose approvals count toward its threshold, and
 * users whose approval can be what completes the consensus the organization's policies ask for:
 * some set of the organization's users that contains every approval so far would allow the activity
 * with the voter's approval and not without it. The set is found greedily from all users, dropping
 * each user whose approval the rest do without (exact for the consensus rules of the reference docs,
 * which count approvers or name them by id, tag or credential).
 */
export async function includedInConsensus(input: DecisionInput & { voter: Approval }): Promise<boolean> {
  const { repos, decl, org, voter } = input;
  if (decl.authorization === 'vote') return true;
  const quorum = new Set(await repos.organizations.rootQuorumUserIds(org.id));
  if (quorum.has(voter.user_id)) return true;
  if (decl.authorization === 'root_quorum_only') return false;
  const policies = await loadCompiledPolicies(repos, org.id);
  if (policies.length === 0) return false;

  const own = await ownContexts(input);
  const records = await loadConsensusRecords(repos, org.id);
  const fixed = { activity: activityOf(input), time: { now: new Date(input.now) } };
  const approved = input.votes.filter((v) => v.selection === 'VOTE_SELECTION_APPROVED' && v.user_id !== voter.user_id);
  const approving = new Set(approved.map((v) => v.user_id));
  const asVoter: Approval = { ...voter, selection: 'VOTE_SELECTION_APPROVED' };
  // Users who have not voted approve, hypothetically, with every credential they have.
  const hypothetical = (userId: string): Approval[] => {
    const keys = records.credentials.filter((c) => c.user_id === userId);
    return (keys.length > 0 ? keys : [{ public_key: '' }]).map((c) => ({ user_id: userId, public_key: c.public_key, selection: 'VOTE_SELECTION_APPROVED' }));
  };
  const allows = (others: Set<string>, withVoter: boolean) => {
    const votes = [...approved, ...[...others].filter((id) => !approving.has(id)).flatMap(hypothetical), ...(withVoter ? [asVoter] : [])];
    const consensus = consensusKeywordsFrom(records, votes);
    return evaluatePoliciesForEach(policies, own.map((c) => ({ ...c, ...fixed, ...consensus }))).decision === 'allow';
  };
  const others = new Set([...records.users.keys()].filter((id) => id !== voter.user_id));
  if (!allows(others, true)) return false;
  for (const id of [...others]) {
    if (approving.has(id)) continue;
    others.delete(id);
    if (!allows(others, true)) others.add(id);
  }
  return !allows(others, false);
}
