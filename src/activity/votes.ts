// Votes on a waiting activity (docs/policies.md "Policies and approvals", docs/mfa.md "MFA policies"): an approve_activity, a
// reject_activity, or the same body submitted again by another user. Each vote is recorded under the
// target's row lock and decides the activity again as its submitter's: the approval that completes
// consensus (or the submitter's last MFA method) runs it, a rejection ends it, and otherwise it waits.
import { voteEntry, appendAudit } from '../audit/record.js';
import type { ActivityContext, OperationContext, Services } from '../domain/context.js';
import { endpointsFor, type EventEndpoint } from '../domain/governance/webhooks.js';
import { record } from '../domain/keys/velocity-limits.js';
import { SigilError, notAuthorized } from '../errors/errors.js';
import type { ActivityRow, Repositories, Store, VoteRow } from '../store/index.js';
import { decide, includedInConsensus, mfaContexts, type Decision, type Loaded } from './authorize.js';
import { mfaOf, presentMethod } from './mfa.js';
import type { ActivityRecords } from './reader.js';
import { activityEvents, actorOf, appendOutcome, evaluationRows, insertRecords, failureOf, resultBodies, voteOf, type ActivityRecordSet } from './recording.js';
import { ActivityStatus } from './status.js';
import type { VelocityDecisions } from './velocity.js';
import type { Operation, OperationOf, WaitingActivities, WaitingInput } from './waiting.js';

type Base = Omit<OperationContext, 'repos'>;

/** A vote's decision on its target, as its submitter's, with velocity controls measured under lock. */
interface Decided {
  decision: WaitingInput;
  measured?: Awaited<ReturnType<VelocityDecisions['measureLocked']>>;
}

export interface VoteDeps {
  store: Store;
  services: Services;
  records: ActivityRecords;
  operationOf: OperationOf;
  waiting: WaitingActivities;
  velocity: VelocityDecisions;
}

export class Votes {
  constructor(private readonly deps: VoteDeps) {}

  /**
   * Records a vote on a waiting activity and decides it again; in one transaction with `ownRecord`
   * (the vote activity's own rows, when the vote is an approve_activity or reject_activity). An
   * activity waiting for its submitter's authenticators (MFA) takes only the submitter's votes.
   */
  async cast(
    target: ActivityRow,
    base: Base,
    reads: Repositories,
    selection: string,
    message: string,
    ownRecord?: (endpoints: EventEndpoint[], repos: Repositories) => Promise<ActivityRecordSet>,
  ): Promise<void> {
    const { store } = this.deps;
    const waiting = target.status;
    const operation = await this.checkVoter(target, base);
    const loaded = await this.loadTarget(target, operation, base, selection);
    // Webhook endpoints the vote's status changes go to (read before the transaction, from the cache).
    const endpoints = await endpointsFor(reads, base.organization);
    await store.transaction(async (repos) => {
      // Locked and read again inside the transaction: of two final approvals arriving at once (two
      // processes on one PostgreSQL), the second sees the first's outcome and runs nothing.
      const current = await repos.activities.lockForVote(target.organization_id, target.id);
      if (current?.status !== waiting) {
        throw new SigilError('REQUEST_INVALID', `activity ${target.id} is not awaiting ${waiting === ActivityStatus.AUTHENTICATORS_NEEDED ? 'authenticators' : 'consensus'} (status ${current?.status ?? 'gone'})`);
      }
      if (ownRecord) {
        const set = await ownRecord(endpoints, repos);
        await insertRecords(repos, set);
        await appendOutcome(repos, set);
      }
      const vote =
        waiting === ActivityStatus.AUTHENTICATORS_NEEDED
          ? await this.applyAuthenticator(repos, current, operation, base, selection, message, loaded)
          : await this.applyVote(repos, current, operation, base, selection, message, loaded);
      // The entry describes the activity as the vote left it (its status, result or failure).
      // An activity that deleted its own organization (delete_sub_organization, run by this vote)
      // took its rows with it: it completed, and the organization's endpoints went with them.
      const kept = await repos.activities.get(target.organization_id, target.id);
      const after = kept ?? { ...current, status: ActivityStatus.COMPLETED };
      appendAudit(repos, voteEntry({ target: after, vote, actor: actorOf(base.caller), time: base.now }));
      // The vote that ends the wait changes the activity's status: its event commits with it.
      if (kept && endpoints.length > 0 && after.status !== current.status) {
        const votes = await repos.activities.votes([after.id]);
        await repos.webhooks.insertDeliveries(activityEvents(endpoints, after, votes, await this.deps.records.voters(votes, repos), base.now));
      }
    });
    if (endpoints.length > 0) this.deps.services.webhooks?.wake();
  }

  /** Who may vote on `target` at all, before anything is locked; the target's operation. */
  private async checkVoter(target: ActivityRow, base: Base): Promise<Operation> {
    if (base.caller.organizationId !== target.organization_id) {
      throw new SigilError(
        'REQUEST_INVALID',
        `organization mismatch: request is targeting organization ("${target.organization_id}"), but voters are in organization ("${base.caller.organizationId}")`,
      );
    }
    const waiting = target.status;
    if (waiting !== ActivityStatus.CONSENSUS_NEEDED && waiting !== ActivityStatus.AUTHENTICATORS_NEEDED) {
      throw new SigilError('REQUEST_INVALID', `activity ${target.id} is not awaiting consensus (status ${target.status})`);
    }
    const operation = this.deps.operationOf(target.type);
    if (!operation || !target.pending_parameters) throw new SigilError('REQUEST_INVALID', `activity ${target.id} cannot be resumed`);
    if (waiting === ActivityStatus.AUTHENTICATORS_NEEDED && base.caller.user.id !== target.user_id) {
      throw notAuthorized(
        `request not authorized: activity ${target.id} is waiting for the authentication methods its submitter's MFA policy requires (ACTIVITY_STATUS_AUTHENTICATORS_NEEDED); only its submitter, user ${target.user_id}, can approve or reject it until they are met`,
      );
    }
    if (operation.decl.authorization === 'root_quorum_only') {
      const quorum = await this.deps.store.repos.organizations.rootQuorumUserIds(target.organization_id);
      if (!quorum.includes(base.caller.user.id)) {
        throw new SigilError('REQUEST_NOT_AUTHORIZED', `request not authorized: only root quorum members can vote on ${target.type}`);
      }
    }
    return operation;
  }

  /**
   * The waiting activity's target (its declaration's `load`), loaded before the vote's transaction
   * opens: loading may ask a chain's node (a send), and nothing waits on the network while a
   * transaction holds the database. A rejection of an activity waiting for authenticators decides
   * nothing and loads nothing.
   */
  private async loadTarget(target: ActivityRow, operation: Operation, base: Base, selection: string): Promise<Loaded> {
    if (!operation.decl.load || (target.status === ActivityStatus.AUTHENTICATORS_NEEDED && selection === 'VOTE_SELECTION_REJECTED')) return async () => undefined;
    const repos = this.deps.store.repos;
    const { loaded } = await this.deps.waiting.input(repos, target, operation.decl, base, await repos.activities.votes([target.id]));
    const value = await loaded();
    return async () => value;
  }

  /** Inside a vote's transaction: the decision on a waiting activity, as its submitter, with its velocity controls measured under lock. */
  private async decisionFor(repos: Repositories, target: ActivityRow, operation: Operation, base: Base, votes: VoteRow[], loaded: Loaded): Promise<Decided> {
    const decision = await this.deps.waiting.input(repos, target, operation.decl, base, votes, loaded);
    // Velocity controls: measured under their groups' locks, held until this transaction ends, so
    // the activity is judged and, if it executes, counted as one step.
    const measured = await this.deps.velocity.measureLocked(decision);
    if (measured) decision.contexts = measured.contexts;
    return { decision, measured };
  }

  /** A vote by a user included in the consensus: recorded, and the target decided again. */
  private async applyVote(repos: Repositories, target: ActivityRow, operation: Operation, base: Base, selection: string, message: string, loaded: Loaded): Promise<VoteRow> {
    const votes = await repos.activities.votes([target.id]);
    if (votes.some((v) => v.user_id === base.caller.user.id)) {
      throw new SigilError('CONFLICT', `duplicate vote: user ${base.caller.user.id} has already voted on activity ${target.id}`);
    }
    const vote = voteOf(target.id, base.caller, selection, message, base.now);
    const decided = await this.decisionFor(repos, target, operation, base, [...votes, vote], loaded);
    const { decision } = decided;
    // Voting, approving or rejecting, belongs to the users included in the consensus.
    if (!(await includedInConsensus({ ...decision, votes, voter: vote }))) {
      throw notAuthorized(
        `request not authorized: user ${base.caller.user.id} is not included in the consensus of activity ${target.id}; only the root quorum and users whose approval can count toward a consensus policy may approve or reject it`,
      );
    }
    // The voter's own MFA ("each approver's vote only counts after that approver's MFA is
    // satisfied"): an approval whose voter's MFA policy matches counts once its steps are met, by
    // this stamp or by the voter's later approvals. A rejection only stops the activity: not gated.
    if (selection === 'VOTE_SELECTION_APPROVED') {
      const state = (await repos.mfaPolicies.activityMfa(target.organization_id, target.id)).find((r) => r.user_id === base.caller.user.id);
      if (state) {
        if (!(await presentMethod(repos, target, state, base.caller, base.now))) return vote;
      } else {
        const mfa = await mfaOf(repos, base.organization.id, target.organization_id, base.caller, target.id, base.now, () =>
          mfaContexts({ repos, decl: operation.decl, type: target.type, params: decision.params, now: base.now, hookContext: decision.hookContext, loaded, contexts: decision.contexts }),
          target.created_at,
        );
        if (mfa) await repos.mfaPolicies.insertActivityMfa(mfa.row);
        if (mfa && !mfa.met) return vote;
      }
    }
    await repos.activities.insertVote(vote);
    if (selection === 'VOTE_SELECTION_REJECTED') {
      await repos.activities.finishWaiting(target.id, ActivityStatus.CONSENSUS_NEEDED, { status: ActivityStatus.REJECTED }, base.now);
      return vote;
    }
    await this.runDecided(repos, target, operation, base, decided, vote, ActivityStatus.CONSENSUS_NEEDED);
    return vote;
  }

  /**
   * An approval (or rejection) by the submitter of an activity waiting for the authentication
   * methods of their MFA policy. The approval's stamp must meet a step not met yet, or it is
   * refused and nothing changes; the approval that meets the last step decides the activity as a
   * vote would (it runs, fails, or waits for consensus). Its vote is the approve_activity's own
   * record: the submitter's vote on the target is their submission.
   */
  private async applyAuthenticator(repos: Repositories, target: ActivityRow, operation: Operation, base: Base, selection: string, message: string, loaded: Loaded): Promise<VoteRow> {
    const waiting = ActivityStatus.AUTHENTICATORS_NEEDED;
    const vote = voteOf(target.id, base.caller, selection, message, base.now);
    if (selection === 'VOTE_SELECTION_REJECTED') {
      await repos.activities.finishWaiting(target.id, waiting, { status: ActivityStatus.REJECTED }, base.now);
      return vote;
    }
    const state = (await repos.mfaPolicies.activityMfa(target.organization_id, target.id)).find((r) => r.user_id === target.user_id);
    if (!state) throw new SigilError('REQUEST_INVALID', `activity ${target.id} cannot be resumed: its MFA state is missing`);
    if (!(await presentMethod(repos, target, state, base.caller, base.now))) return vote;
    // Every step met: decided again as of now (policies may have changed while it waited).
    const votes = await repos.activities.votes([target.id]);
    await this.runDecided(repos, target, operation, base, await this.decisionFor(repos, target, operation, base, votes, loaded), votes[0] ?? vote, waiting);
    return vote;
  }

  /**
   * Inside a vote's transaction: the decision on a waiting activity carried out. Allowed, it runs
   * as its submitter inside a savepoint, so a failing execution leaves the vote recorded and the
   * activity FAILED with its reason; denied, it fails; still short of approvals, it waits for them.
   */
  private async runDecided(
    repos: Repositories,
    target: ActivityRow,
    operation: Operation,
    base: Base,
    { decision, measured }: Decided,
    /** The vote the policy evaluations are recorded under. */
    vote: VoteRow,
    waiting: string,
  ): Promise<void> {
    const outcome: Decision = await decide(decision);
    for (const e of evaluationRows(target, vote, outcome.evaluations)) await repos.policyEvaluations.insert(e);
    if (outcome.outcome === 'consensus_needed') {
      if (waiting !== ActivityStatus.CONSENSUS_NEEDED) await repos.activities.moveWaiting(target.id, waiting, ActivityStatus.CONSENSUS_NEEDED, base.now);
      return;
    }
    if (outcome.outcome === 'deny') {
      await repos.activities.finishWaiting(target.id, waiting, { status: ActivityStatus.FAILED, failure: failureOf(outcome.error) }, base.now);
      return;
    }
    const ctx: ActivityContext = { ...base, caller: decision.submitter, repos, activityId: target.id, activityType: target.type, fingerprint: target.fingerprint };
    try {
      const loaded = await decision.loaded();
      const result = await repos.savepoint(() => operation.decl.execute(ctx, decision.params, loaded));
      // It executed: it counts (a failed execution, caught below, does not).
      if (measured) await record(repos, measured.measurement);
      const body = resultBodies(operation.decl, operation.binding, result).stored;
      await repos.activities.finishWaiting(target.id, waiting, { status: ActivityStatus.COMPLETED, result: body }, base.now);
    } catch (err) {
      if (!(err instanceof SigilError) && !(err instanceof Error && /Crypto|Transaction/.test(err.name))) throw err;
      const failure = err instanceof SigilError ? err : new SigilError('REQUEST_INVALID', (err as Error).message);
      await repos.activities.finishWaiting(target.id, waiting, { status: ActivityStatus.FAILED, failure: failureOf(failure) }, base.now);
    }
  }
}
