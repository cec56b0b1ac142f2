// The activity half of the pipeline (turnkey-semantics.md §1.4, §3): idempotency by fingerprint,
// authorization, recording, execution, and consensus. A submission that needs more approvals is
// recorded as ACTIVITY_STATUS_CONSENSUS_NEEDED with its parameters sealed; every vote (an
// approve_activity, a reject_activity, or the same body submitted by another user) re-runs the
// decision, and the vote that completes consensus runs the activity in the vote's own transaction.
// MFA policies (issue 19, src/domain/identity/mfa-policies.ts) ride on the same machinery: a submission that
// lacks the methods its submitter's matching MFA policy requires is recorded as
// ACTIVITY_STATUS_AUTHENTICATORS_NEEDED, sealed the same way, and the submitter's approvals stamped
// with those methods complete it under the same row lock; an approver's vote counts once the
// approver's own matching MFA policy is met.
import { ActivityStatus } from '../activity/status.js';
import type { ActivityRecords } from '../activity/reader.js';
import { WEBAUTHN_VOTE_SCHEME, credentialPublicKey, type ActivityContext, type Caller, type OperationContext, type Services } from '../domain/context.js';
import { newId } from '../domain/ids.js';
import { policyOutcomeFact, proveFacts } from '../domain/keys/app-proofs.js';
import { SigilError, notAuthorized, permissionDenied } from '../errors/errors.js';
import type { ActivityDeclaration } from '../operations/define.js';
import type { ActivityTypeBinding, Registry } from '../operations/registry.js';
import { type ActivityRow, type PendingAuditEntry, type Repositories, type Store, type VoteRow } from '../store/index.js';
import { checkSessionScope, decide, decidingOrganization, includedInConsensus, mfaContexts, ownContexts, type Decision, type DecisionInput } from './authorize.js';
import { assignMethods, matchingMfaPolicy, presentedMethod, type PresentedMethod, type RequiredStep } from '../domain/identity/mfa-policies.js';
import type { ActivityMfaRow } from '../store/index.js';
import type { PolicyContext } from '../policy/index.js';
import { loadCompiledPolicies } from '../domain/governance/policies.js';
import { controlsOf, measure, needsReservation, record, release, reserve, type Measurement, type Reservation } from '../domain/keys/velocity-limits.js';
import type { PolicyEvaluation } from './policy-engine.js';
import { activityEntry, appendAudit, voteEntry } from '../audit/record.js';
import type { PolicyEvaluationRow } from '../store/repositories/policies.js';
import type { PipelineResponse } from './pipeline.js';
import { redactSecrets } from '../operations/secret-fields.js';
import { renderActivity } from '../activity/record.js';
import { endpointsFor, webhookDeliveryRows, type EventEndpoint } from '../domain/governance/webhooks.js';
import type { WebhookDeliveryRow } from '../store/index.js';

/**
 * An activity's place in its own history, the order its ACTIVITY_UPDATES events are delivered in:
 * created, then waiting, then finished. Each status is recorded once per activity.
 */
const STATUS_ORDER: Record<string, number> = {
  [ActivityStatus.CREATED]: 0,
  [ActivityStatus.PENDING]: 1,
  [ActivityStatus.CONSENSUS_NEEDED]: 2,
  [ActivityStatus.AUTHENTICATORS_NEEDED]: 2,
  [ActivityStatus.COMPLETED]: 3,
  [ActivityStatus.FAILED]: 3,
  [ActivityStatus.REJECTED]: 3,
};

/**
 * The outbox rows of an activity's status change (issue 18, ACTIVITY_UPDATES): the activity record as
 * get_activity shows it, for each endpoint subscribed. None, and no work, without endpoints.
 */
function activityEvents(endpoints: EventEndpoint[], row: ActivityRow, votes: VoteRow[], users: Map<string, unknown>, now: number): WebhookDeliveryRow[] {
  if (endpoints.length === 0) return [];
  return webhookDeliveryRows(
    endpoints,
    {
      organizationId: row.organization_id,
      eventType: 'ACTIVITY_UPDATES',
      subject: `activity:${row.id}`,
      sequence: STATUS_ORDER[row.status] ?? 3,
      payload: JSON.stringify(renderActivity(row, votes, users)),
      facts: { type: row.type, status: row.status },
    },
    now,
  );
}

const PENDING_AT = (activityId: string) => ({ table: 'activities', rowId: activityId, column: 'pending_parameters' });

/**
 * The stored result of an activity: its result member with the declared secret fields redacted
 * (src/operations/secret-fields.ts), and the same unredacted for the submit response alone.
 */
function resultBodies(decl: ActivityDeclaration, binding: ActivityTypeBinding, executed: unknown): { stored: string; answered: string } {
  const member = binding.result;
  if (!member) return { stored: '{}', answered: '{}' };
  const result = binding.adaptResult ? binding.adaptResult(executed) : executed;
  const answered = JSON.stringify({ [member]: result ?? {} });
  if (!decl.resultSecretFields?.length) return { stored: answered, answered };
  return { stored: JSON.stringify({ [member]: redactSecrets(result ?? {}, decl.resultSecretFields) }), answered };
}

/** How many signatures a completed signing result holds (sign_raw_payloads holds several). */
function signatureCount(result: string | null): number {
  if (!result) return 0;
  const member = Object.values(JSON.parse(result) as Record<string, unknown>)[0] as { signatures?: unknown } | undefined;
  return Array.isArray(member?.signatures) ? member.signatures.length : 1;
}

const actorOf = (caller: Caller) => ({ userId: caller.user.id, publicKey: credentialPublicKey(caller.credential) });

function failureOf(err: SigilError) {
  return JSON.stringify(err.toBody());
}

interface Submission {
  /** What the request reads through (the read cache), and the activity its fingerprint already names. */
  reads: Repositories;
  existing?: ActivityRow | null;
  decl: ActivityDeclaration;
  binding: ActivityTypeBinding;
  params: Record<string, unknown>;
  /** The parameters as submitted (an older version's, before `adapt`): what the record shows. */
  intentParams: Record<string, unknown>;
  fingerprint: string;
  rawBody: Buffer;
  timestampMs: number;
  base: Omit<OperationContext, 'repos'>;
  /** The submission set generateAppProofs. */
  appProofs: boolean;
}

/** Measure-decide-reserve rounds before a submission gives up (each lost round means a control flipped). */
const VELOCITY_ATTEMPTS = 20;

export class ActivityRunner {
  constructor(
    private readonly deps: {
      store: Store;
      registry: Registry;
      services: Services;
      records: ActivityRecords;
      /** The clock of velocity control windows (a test clock when one is configured); defaults to the request's time. */
      velocityClock?: () => number;
    },
  ) {}

  /** The velocity controls the deciding organization's policies read (compiled policies are cached). */
  private async controlsRead(repos: Repositories, organizationId: string): Promise<Set<string>> {
    const reading = new Set<string>();
    for (const p of await loadCompiledPolicies(repos, organizationId)) for (const c of p.controls) reading.add(c);
    return reading;
  }

  /**
   * The decision on a submission, with its velocity control counts reserved when it is allowed
   * (src/domain/keys/velocity-limits.ts). An organization with no controls, whose policies read none,
   * costs nothing here: both lists come from the read cache.
   */
  private async decideAndReserve(input: DecisionInput): Promise<{ decision: Decision; reservation?: Reservation }> {
    const orgId = input.org.id;
    const reading = await this.controlsRead(input.repos, orgId);
    if (reading.size === 0 && (await controlsOf(input.repos, orgId)).length === 0) return { decision: await decide(input) };
    const contexts = await ownContexts(input);
    for (let attempt = 0; attempt < VELOCITY_ATTEMPTS; attempt++) {
      const at = this.deps.velocityClock?.() ?? input.now;
      const m = (await measure({ cached: input.repos, repos: this.deps.store.repos, organizationId: orgId, type: input.type, userId: input.submitter.user.id, contexts, reading, at }))!;
      const decision = await decide({ ...input, contexts: contexts.map((c, i) => ({ ...c, controls: m.controls[i] })) });
      if (decision.outcome !== 'allow' || !needsReservation(m)) return { decision };
      // Not synced on its own: the activity's record, committed after it in the same log, is, and
      // the answer waits for that (a crash before then loses a reservation nobody was answered on).
      const reservation = await this.deps.store.transaction((tx) => reserve(tx, orgId, m), { durable: false });
      if (reservation !== 'changed') return { decision, reservation };
    }
    throw new SigilError('CONFLICT', 'the velocity controls this activity is judged by kept changing while it was decided; submit it again');
  }

  private voteOf(activityId: string, caller: Caller, selection: string, message: string, now: number): VoteRow {
    return {
      id: newId(),
      activity_id: activityId,
      organization_id: caller.organizationId,
      user_id: caller.user.id,
      selection,
      message,
      public_key: credentialPublicKey(caller.credential),
      signature: caller.credential.signature,
      scheme: caller.credential.scheme,
      created_at: now,
    };
  }

  async submit(s: Submission) {
    const { store } = this.deps;
    const { decl, binding, params, fingerprint, base, reads } = s;
    const orgId = base.organization.id;
    // The context the declaration's hooks see (policy keywords, organization rules): one per submission.
    const hookContext: OperationContext = { ...base, repos: reads };
    const deciding = await decidingOrganization({ repos: reads, decl, type: binding.type, org: base.organization, caller: base.caller, params, hookContext });
    await checkSessionScope({ repos: reads, decl, type: binding.type, caller: base.caller, params, now: base.now, hookContext });

    // Idempotency: the same bytes are the same activity (turnkey-semantics.md §3); the same bytes
    // from another user of the organization count as that user's approval. The pipeline looked the
    // fingerprint up with its first read when it knew the organization.
    const existing = s.existing !== undefined ? (s.existing ?? undefined) : await store.repos.activities.findByFingerprint(orgId, fingerprint, s.timestampMs);
    if (existing) {
      if (existing.status === ActivityStatus.CONSENSUS_NEEDED && existing.user_id !== base.caller.user.id) {
        const voted = (await store.repos.activities.votes([existing.id])).some((v) => v.user_id === base.caller.user.id);
        if (!voted) await this.castVote(existing, base, reads, 'VOTE_SELECTION_APPROVED', fingerprint);
        return this.respond(decl.path, (await store.repos.activities.get(orgId, existing.id))!, base.caller);
      }
      return this.respond(decl.path, existing, base.caller);
    }

    // Votes are activities too: they act on their target inside their own transaction.
    if (decl.authorization === 'vote') return this.submitVote(s);

    const activityId = newId();
    const row: ActivityRow = {
      id: activityId,
      organization_id: orgId,
      type: binding.type,
      status: ActivityStatus.CREATED,
      fingerprint,
      intent: JSON.stringify({ [binding.intentMember]: redactSecrets(s.intentParams, decl.secretFields) }),
      result: null,
      failure: null,
      pending_parameters: null,
      app_proofs: null,
      user_id: base.caller.user.id,
      timestamp_ms: s.timestampMs,
      created_at: base.now,
      updated_at: base.now,
    };
    // The signed message is the request body; bodies carrying secrets keep only their fingerprint.
    const vote = this.voteOf(activityId, base.caller, 'VOTE_SELECTION_APPROVED', decl.secretFields?.length ? fingerprint : s.rawBody.toString('utf8'), base.now);
    const { decision, reservation } = await this.decideAndReserve({
      repos: reads,
      decl,
      type: binding.type,
      org: deciding,
      submitter: base.caller,
      params,
      votes: [vote],
      now: base.now,
      hookContext,
    });
    if (decision.outcome === 'deny') throw decision.error;
    // MFA (issue 19): the submitter's first matching MFA policy names the methods the activity must
    // carry; the submission's stamp is the first. (Votes returned above: exempt, or nothing could satisfy one.)
    const mfa = await this.mfaOf(reads, deciding.id, orgId, base.caller, activityId, base.now, () => mfaContexts({ repos: reads, decl, type: binding.type, params, now: base.now, hookContext }));
    if (mfa && !mfa.met && (deciding.id !== orgId || base.caller.credential.kind === 'attested')) {
      // It could not wait: a parent's credential votes in another organization, and an attested key
      // is no registered credential the approved activity could later run as.
      const why =
        deciding.id !== orgId
          ? 'an activity a parent organization submits for a sub-organization cannot wait for them (approvals are cast in the sub-organization)'
          : 'a login stamped by an attested key (X-Stamp-Attested) cannot wait for them';
      throw permissionDenied(
        `${binding.type} needs the authentication methods of MFA policy ${mfa.row.mfa_policy_id} of user ${base.caller.user.id}; ${why}: submit it stamped with a required method`,
        decision.evaluations,
      );
    }
    const mfaWrite = mfa ? (repos: Repositories) => repos.mfaPolicies.insertActivityMfa(mfa.row) : undefined;
    // From here on the activity's velocity counts are reserved: any failure gives them back.
    // A release that itself fails (the database went away) leaves the counts taken: the limit errs
    // on the safe side, and the activity's own error is what the client hears.
    const giveBack = async () => {
      if (reservation) await store.transaction((tx) => release(tx, deciding.id, reservation)).catch(() => undefined);
    };
    let asVoted: Map<string, unknown>;
    let endpoints: EventEndpoint[];
    let outcomeFact: Awaited<ReturnType<typeof policyOutcomeFact>> | undefined;
    try {
      // The voter as it was when voting: the activity may delete it (delete_sub_organization).
      asVoted = await this.deps.records.voters([vote], reads);
      // Webhook endpoints its events go to; from the read cache (none costs no query).
      endpoints = await endpointsFor(reads, base.organization);
      // Proofs state the decision that lets the activity run (its derivations are added once it has).
      outcomeFact = s.appProofs && decision.outcome === 'allow' ? await policyOutcomeFact(reads, base.organization, fingerprint, [vote]) : undefined;
    } catch (err) {
      await giveBack();
      throw err;
    }
    // The submit response is the one place a result's secret fields are shown.
    let answered: string | null = null;
    const complete = (result: unknown, ctx: ActivityContext) => {
      row.status = ActivityStatus.COMPLETED;
      const bodies = resultBodies(decl, binding, result);
      row.result = bodies.stored;
      answered = bodies.answered;
      if (outcomeFact) {
        const facts = [...(decl.appProofFacts?.(ctx, params, result) ?? []), outcomeFact];
        row.app_proofs = JSON.stringify(proveFacts(this.deps.services.appProofKey, facts, base.now));
      }
    };
    const evaluations = this.evaluationRows(row, vote, decision.evaluations);
    // The records of a finished (or waiting) activity, with its audit entry, in one grouped commit.
    const records = (writes?: (repos: Repositories) => Promise<void>) => ({
      activities: [row],
      votes: [vote],
      evaluations,
      audit: [activityEntry({ row, operation: decl.path, vote, actor: actorOf(base.caller) }) as PendingAuditEntry],
      webhookDeliveries: activityEvents(endpoints, row, [vote], asVoted, base.now),
      writes,
    });
    let waitsForAuthenticators = false;
    try {
      if ((mfa && !mfa.met) || decision.outcome === 'consensus_needed') {
        // Waiting: for the submitter's authenticators first (MFA), then for approvals if the
        // policies ask for them (decided again when the MFA is met).
        waitsForAuthenticators = Boolean(mfa && !mfa.met);
        row.status = waitsForAuthenticators ? ActivityStatus.AUTHENTICATORS_NEEDED : ActivityStatus.CONSENSUS_NEEDED;
        row.pending_parameters = this.deps.services.barrier.seal(Buffer.from(JSON.stringify(params)), PENDING_AT(activityId));
        await store.commitRecords(records(mfaWrite));
      } else if (decl.prepare) {
        // The slow part reads only; its writes join the grouped commit that records the activity.
        const ctx: ActivityContext = { ...base, repos: reads, activityId, activityType: binding.type, fingerprint };
        const prepared = await decl.prepare(ctx, params);
        complete(prepared.result, ctx);
        await store.commitRecords(
          records(async (repos) => {
            await prepared.writes(repos);
            await mfaWrite?.(repos);
          }),
        );
      } else if (decl.execution === 'pure') {
        // Reads and computation happen first; the finished activity is then recorded durably
        // before the answer leaves. A crash in between loses a result nobody has seen.
        const ctx: ActivityContext = { ...base, repos: reads, activityId, activityType: binding.type, fingerprint };
        complete(await decl.execute(ctx, params), ctx);
        await store.commitRecords(records(mfaWrite));
      } else {
        await store.transaction(async (repos) => {
          // Recorded before execution; its status and result after, in the same transaction, so a
          // crash leaves either nothing or the finished activity.
          await repos.activities.insert(row);
          await repos.activities.insertVote(vote);
          for (const e of evaluations) await repos.policyEvaluations.insert(e);
          await mfaWrite?.(repos);
          const ctx: ActivityContext = { ...base, repos, activityId, activityType: binding.type, fingerprint };
          complete(await decl.execute(ctx, params), ctx);
          await repos.activities.finish(activityId, { status: row.status, result: row.result, appProofs: row.app_proofs }, base.now);
          appendAudit(repos, activityEntry({ row, operation: decl.path, vote, actor: actorOf(base.caller) }));
          const events = activityEvents(endpoints, row, [vote], asVoted, base.now);
          if (events.length > 0) await repos.webhooks.insertDeliveries(events);
        });
      }
    } catch (err) {
      // It did not execute (or its record did not commit): it does not count.
      await giveBack();
      // A concurrent identical submission (another process, or the same group) won: whatever this
      // one tripped over (the fingerprint, or a wallet name the winner took first), the answer is
      // the winner's activity.
      const winner = await store.repos.activities.findByFingerprint(orgId, fingerprint, s.timestampMs);
      if (winner) return this.respond(decl.path, winner, base.caller);
      throw err;
    }
    // A waiting activity counts when it executes: the approval that completes it measures again.
    if (waitsForAuthenticators) await giveBack();
    if (endpoints.length > 0) this.deps.services.webhooks?.wake();
    const response = await this.respond(decl.path, answered === null ? row : { ...row, result: answered }, base.caller, [vote], reads, asVoted);
    if (decl.policy.action === 'SIGN' && row.status === ActivityStatus.COMPLETED) response.log.signatures = signatureCount(row.result);
    return response;
  }

  /** approve_activity / reject_activity: the vote, its effect on the target, and the vote's own record. */
  private async submitVote(s: Submission) {
    const { store } = this.deps;
    const { decl, binding, params, fingerprint, base } = s;
    const orgId = base.organization.id;
    const targetFingerprint = String(params.fingerprint ?? '');
    const target = await store.repos.activities.findVoteTarget(orgId, targetFingerprint);
    if (!target) {
      throw new SigilError('NOT_FOUND', 'No activity found with fingerprint. Consensus activities must target an existing activity by fingerprint');
    }
    const selection = binding.type === 'ACTIVITY_TYPE_REJECT_ACTIVITY' ? 'VOTE_SELECTION_REJECTED' : 'VOTE_SELECTION_APPROVED';
    const row: ActivityRow = {
      id: newId(),
      organization_id: orgId,
      type: binding.type,
      status: ActivityStatus.COMPLETED,
      fingerprint,
      intent: JSON.stringify({ [binding.intentMember]: params }),
      result: '{}',
      failure: null,
      pending_parameters: null,
      app_proofs: null,
      user_id: base.caller.user.id,
      timestamp_ms: s.timestampMs,
      created_at: base.now,
      updated_at: base.now,
    };
    const ownVote = this.voteOf(row.id, base.caller, 'VOTE_SELECTION_APPROVED', s.rawBody.toString('utf8'), base.now);
    await this.castVote(
      target,
      base,
      s.reads,
      selection,
      s.rawBody.toString('utf8'),
      async (repos, endpoints) => {
        await repos.activities.insert(row);
        await repos.activities.insertVote(ownVote);
        appendAudit(repos, activityEntry({ row, operation: decl.path, vote: ownVote, actor: actorOf(base.caller) }));
        if (endpoints.length > 0) await repos.webhooks.insertDeliveries(activityEvents(endpoints, row, [ownVote], await this.deps.records.voters([ownVote], repos), base.now));
      },
    );
    return this.respond(decl.path, row, base.caller, [ownVote]);
  }

  /**
   * Records a vote on a waiting activity and re-decides it; in one transaction with `alsoRecord`.
   * The deciding approval runs the activity; a rejection ends it. An activity waiting for its
   * submitter's authenticators (MFA) takes only the submitter's votes, each approval a method.
   */
  private async castVote(
    target: ActivityRow,
    base: Omit<OperationContext, 'repos'>,
    reads: Repositories,
    selection: string,
    message: string,
    alsoRecord?: (repos: Repositories, endpoints: EventEndpoint[]) => Promise<void>,
  ): Promise<void> {
    const { store, registry } = this.deps;
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
    const operation = registry.byType.get(target.type);
    if (!operation || !target.pending_parameters) throw new SigilError('REQUEST_INVALID', `activity ${target.id} cannot be resumed`);
    if (waiting === ActivityStatus.AUTHENTICATORS_NEEDED && base.caller.user.id !== target.user_id) {
      throw notAuthorized(
        `request not authorized: activity ${target.id} is waiting for the authentication methods its submitter's MFA policy requires (ACTIVITY_STATUS_AUTHENTICATORS_NEEDED); only its submitter, user ${target.user_id}, can approve or reject it until they are met`,
      );
    }
    if (operation.decl.authorization === 'root_quorum_only') {
      const quorum = await store.repos.organizations.rootQuorumUserIds(target.organization_id);
      if (!quorum.includes(base.caller.user.id)) {
        throw new SigilError('REQUEST_NOT_AUTHORIZED', `request not authorized: only root quorum members can vote on ${target.type}`);
      }
    }
    // Webhook endpoints the vote's status changes go to (read before the transaction, from the cache).
    const endpoints = await endpointsFor(reads, base.organization);
    await store.transaction(async (repos) => {
      // Locked and read again inside the transaction: of two final approvals arriving at once (two
      // processes on one PostgreSQL), the second sees the first's outcome and runs nothing.
      const current = await repos.activities.lockForVote(target.organization_id, target.id);
      if (current?.status !== waiting) {
        throw new SigilError('REQUEST_INVALID', `activity ${target.id} is not awaiting ${waiting === ActivityStatus.AUTHENTICATORS_NEEDED ? 'authenticators' : 'consensus'} (status ${current?.status ?? 'gone'})`);
      }
      await alsoRecord?.(repos, endpoints);
      const vote =
        waiting === ActivityStatus.AUTHENTICATORS_NEEDED
          ? await this.applyAuthenticator(repos, current, operation, base, selection, message)
          : await this.applyVote(repos, current, operation, base, selection, message);
      // The entry describes the activity as the vote left it (its status, result or failure).
      const after = (await repos.activities.get(target.organization_id, target.id))!;
      appendAudit(repos, voteEntry({ target: after, vote, actor: actorOf(base.caller), time: base.now }));
      // The vote that ends the wait changes the activity's status: its event commits with it.
      if (endpoints.length > 0 && after.status !== current.status) {
        const votes = await repos.activities.votes([after.id]);
        await repos.webhooks.insertDeliveries(activityEvents(endpoints, after, votes, await this.deps.records.voters(votes, repos), base.now));
      }
    });
    if (endpoints.length > 0) this.deps.services.webhooks?.wake();
  }

  /**
   * For reads (canApprove/canReject, the dashboard's Pending page): whether the reading user is
   * included in the consensus of `target`, waiting for it, as a vote by them would find now. The same
   * rule castVote applies, read outside a transaction; the vote itself checks again under its lock.
   */
  async mayVote(target: ActivityRow, votes: VoteRow[], ctx: OperationContext): Promise<boolean> {
    const operation = this.deps.registry.byType.get(target.type);
    if (!operation || !target.pending_parameters || ctx.caller.organizationId !== target.organization_id) return false;
    try {
      const input = await this.waitingInput(ctx.repos, target, operation.decl, ctx, votes);
      return await includedInConsensus({ ...input, voter: this.voteOf(target.id, ctx.caller, 'VOTE_SELECTION_APPROVED', '', ctx.now) });
    } catch {
      // A submitter's credential gone, say: a vote would be refused too.
      return false;
    }
  }

  /** A waiting activity judged as its submitter's, with its sealed parameters opened and `votes` so far. */
  private async waitingInput(
    repos: Repositories,
    target: ActivityRow,
    decl: ActivityDeclaration,
    base: Omit<OperationContext, 'repos'>,
    votes: VoteRow[],
  ): Promise<DecisionInput & { params: Record<string, unknown>; submitter: Caller }> {
    const params = JSON.parse(this.deps.services.barrier.open(target.pending_parameters!, PENDING_AT(target.id)).toString('utf8'));
    const submitter = await this.submitterOf(repos, target, votes);
    return { repos, decl, type: target.type, org: base.organization, submitter, params, votes, now: base.now, hookContext: { ...base, caller: submitter, repos } };
  }

  /** Inside a vote's transaction: the decision on a waiting activity, as its submitter, with its velocity controls measured under lock. */
  private async decisionFor(
    repos: Repositories,
    target: ActivityRow,
    operation: { decl: ActivityDeclaration; binding: ActivityTypeBinding },
    base: Omit<OperationContext, 'repos'>,
    votes: VoteRow[],
  ) {
    const decision = await this.waitingInput(repos, target, operation.decl, base, votes);
    const { params, submitter } = decision;
    // Velocity controls: measured under their groups' locks, held until this transaction ends, so
    // the activity is judged and, if it executes, counted as one step (velocity-limits.ts).
    const measured = await this.measureLocked(decision);
    if (measured) decision.contexts = measured.contexts;
    return { decision, measured, params, submitter };
  }

  /** The vote's writes and their effect on the target; returns the target's status afterwards. */
  private async applyVote(
    repos: Repositories,
    target: ActivityRow,
    operation: { decl: ActivityDeclaration; binding: ActivityTypeBinding },
    base: Omit<OperationContext, 'repos'>,
    selection: string,
    message: string,
  ): Promise<VoteRow> {
    const votes = await repos.activities.votes([target.id]);
    if (votes.some((v) => v.user_id === base.caller.user.id)) {
      throw new SigilError('CONFLICT', `duplicate vote: user ${base.caller.user.id} has already voted on activity ${target.id}`);
    }
    const vote = this.voteOf(target.id, base.caller, selection, message, base.now);
    const { decision, measured, params, submitter } = await this.decisionFor(repos, target, operation, base, [...votes, vote]);
    // Voting, approving or rejecting, belongs to the users included in the consensus (§1.4).
    if (!(await includedInConsensus({ ...decision, votes, voter: vote }))) {
      throw notAuthorized(
        `request not authorized: user ${base.caller.user.id} is not included in the consensus of activity ${target.id}; only the root quorum and users whose approval can count toward a consensus policy may approve or reject it`,
      );
    }
    // The voter's own MFA (semantics §3 "each approver's vote only counts after that approver's MFA
    // is satisfied"): an approval whose voter's MFA policy matches counts once its steps are met,
    // by this stamp or by the voter's later approvals. A rejection only stops the activity: not gated.
    if (selection === 'VOTE_SELECTION_APPROVED') {
      const state = (await repos.mfaPolicies.activityMfa(target.organization_id, target.id)).find((r) => r.user_id === base.caller.user.id);
      if (state) {
        if (!(await this.presentMethod(repos, target, state, base))) return vote;
      } else {
        const mfa = await this.mfaOf(
          repos, base.organization.id, target.organization_id, base.caller, target.id, base.now,
          () => mfaContexts({ repos, decl: operation.decl, type: target.type, params, now: base.now, hookContext: decision.hookContext, contexts: decision.contexts }),
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
    await this.runDecided(repos, target, operation, base, { decision, measured, params, submitter }, vote, ActivityStatus.CONSENSUS_NEEDED);
    return vote;
  }

  /**
   * An approval (or rejection) by the submitter of an activity waiting for the authentication
   * methods of their MFA policy. The approval's stamp must meet a step not met yet, or it is
   * refused and nothing changes; the approval that meets the last step decides the activity as a
   * vote would (it runs, fails, or waits for consensus). Its vote is the approve_activity's own
   * record: the submitter's vote on the target is their submission.
   */
  private async applyAuthenticator(
    repos: Repositories,
    target: ActivityRow,
    operation: { decl: ActivityDeclaration; binding: ActivityTypeBinding },
    base: Omit<OperationContext, 'repos'>,
    selection: string,
    message: string,
  ): Promise<VoteRow> {
    const waiting = ActivityStatus.AUTHENTICATORS_NEEDED;
    const vote = this.voteOf(target.id, base.caller, selection, message, base.now);
    if (selection === 'VOTE_SELECTION_REJECTED') {
      await repos.activities.finishWaiting(target.id, waiting, { status: ActivityStatus.REJECTED }, base.now);
      return vote;
    }
    const state = (await repos.mfaPolicies.activityMfa(target.organization_id, target.id)).find((r) => r.user_id === target.user_id);
    if (!state) throw new SigilError('REQUEST_INVALID', `activity ${target.id} cannot be resumed: its MFA state is missing`);
    if (!(await this.presentMethod(repos, target, state, base))) return vote;
    // Every step met: decided again as of now (policies may have changed while it waited).
    const votes = await repos.activities.votes([target.id]);
    await this.runDecided(repos, target, operation, base, await this.decisionFor(repos, target, operation, base, votes), votes[0] ?? vote, waiting);
    return vote;
  }

  /**
   * The method the caller's approval stamp presents, counted toward the caller's MFA state on the
   * activity; true once every step is met. A stamp that meets no step still unmet (the wrong kind,
   * or a credential already counted) is refused with what would meet one, and nothing changes.
   */
  private async presentMethod(repos: Repositories, target: ActivityRow, state: ActivityMfaRow, base: Omit<OperationContext, 'repos'>): Promise<boolean> {
    const steps = JSON.parse(state.required_methods) as RequiredStep[];
    const presented = JSON.parse(state.satisfied_methods) as PresentedMethod[];
    const before = assignMethods(steps, presented);
    // A credential created after the activity was submitted meets nothing (issue 32, flaw 2).
    const method = presentedMethod(base.caller.credential, target.created_at);
    const after = method ? assignMethods(steps, [...presented, method]) : [];
    if (!method || after.filter(Boolean).length === before.filter(Boolean).length) {
      const unmet = before.map((m, i) => (m ? undefined : steps[i].any.map((r) => (r.id ? `${r.type} (${r.id})` : r.type)).join(' or '))).filter(Boolean);
      const why = method?.createdAfterSubmission ? ' from a credential created after the activity was submitted' : method && presented.some((p) => p.publicKey === method.publicKey) ? ' from a credential already counted' : '';
      const what = method ? `a ${method.type} stamp${why}` : 'an attested stamp';
      throw notAuthorized(
        `request not authorized: approving activity ${target.id} with ${what} meets none of the steps of MFA policy ${state.mfa_policy_id} still unmet: ${unmet.map((u) => `[${u}]`).join(', ')}; approve it stamped with one of those methods`,
      );
    }
    await repos.mfaPolicies.setSatisfied(target.id, state.user_id, JSON.stringify([...presented, method]), base.now);
    return after.every(Boolean);
  }

  /**
   * Inside a vote's transaction: the decision on a waiting activity carried out. Allowed, it runs
   * as its submitter inside a savepoint, so a failing execution leaves the vote recorded and the
   * activity FAILED with its reason; denied, it fails; still short of approvals, it waits for them.
   */
  private async runDecided(
    repos: Repositories,
    target: ActivityRow,
    operation: { decl: ActivityDeclaration; binding: ActivityTypeBinding },
    base: Omit<OperationContext, 'repos'>,
    decided: Awaited<ReturnType<ActivityRunner['decisionFor']>>,
    /** The vote the policy evaluations are recorded under. */
    vote: VoteRow,
    waiting: string,
  ): Promise<void> {
    const { decision, measured, params, submitter } = decided;
    const outcome: Decision = await decide(decision);
    for (const e of this.evaluationRows(target, vote, outcome.evaluations)) await repos.policyEvaluations.insert(e);
    if (outcome.outcome === 'consensus_needed') {
      if (waiting !== ActivityStatus.CONSENSUS_NEEDED) await repos.activities.moveWaiting(target.id, waiting, ActivityStatus.CONSENSUS_NEEDED, base.now);
      return;
    }
    if (outcome.outcome === 'deny') {
      await repos.activities.finishWaiting(target.id, waiting, { status: ActivityStatus.FAILED, failure: failureOf(outcome.error) }, base.now);
      return;
    }
    const ctx: ActivityContext = { ...base, caller: submitter, repos, activityId: target.id, activityType: target.type, fingerprint: target.fingerprint };
    try {
      const result = await repos.savepoint(() => operation.decl.execute(ctx, params));
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

  /**
   * The MFA state of a submission (src/domain/identity/mfa-policies.ts): the first of the submitter's MFA
   * policies whose condition holds, with the method the submission's stamp presents; undefined when
   * none matches (an organization without MFA policies costs one cached read).
   */
  private async mfaOf(
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

  /** Inside a transaction: the velocity controls of a deciding vote, measured with their groups locked. */
  private async measureLocked(input: DecisionInput): Promise<{ measurement: Measurement; contexts: DecisionInput['contexts'] } | undefined> {
    const orgId = input.org.id;
    const reading = await this.controlsRead(input.repos, orgId);
    const contexts = await ownContexts(input);
    const at = this.deps.velocityClock?.() ?? input.now;
    const m = await measure({ cached: input.repos, repos: input.repos, organizationId: orgId, type: input.type, userId: input.submitter.user.id, contexts, reading, at, lock: true });
    if (!m) return undefined;
    return { measurement: m, contexts: contexts.map((c, i) => ({ ...c, controls: m.controls[i] })) };
  }

  /** The submitter of a waiting activity, with the credential that submitted it. */
  private async submitterOf(repos: Repositories, target: ActivityRow, votes: VoteRow[]): Promise<Caller> {
    const first = votes.find((v) => v.user_id === target.user_id);
    const gone = () => new SigilError('REQUEST_INVALID', `the credential that submitted activity ${target.id} no longer exists`);
    if (!first) throw gone();
    if (first.scheme === WEBAUTHN_VOTE_SCHEME) {
      const found = await repos.authenticators.findByPublicKeyWithOwner(target.organization_id, first.public_key);
      const match = found.find((f) => f.user.id === target.user_id);
      if (!match) throw gone();
      return {
        organizationId: target.organization_id,
        user: match.user,
        credential: { kind: 'webauthn', authenticator: match.authenticator, scheme: WEBAUTHN_VOTE_SCHEME, signature: first.signature },
      };
    }
    const found = await repos.apiKeys.findWithOwner([target.organization_id], first.public_key);
    const match = found.find((f) => f.user.id === target.user_id);
    if (!match) throw gone();
    return {
      organizationId: target.organization_id,
      user: match.user,
      credential: { kind: 'api_key', apiKey: match.key, scheme: first.scheme, signature: first.signature },
    };
  }

  /** The policy evaluations of one vote, as the rows get_policy_evaluations reads. */
  private evaluationRows(row: ActivityRow, vote: VoteRow, evaluations: PolicyEvaluation[]): PolicyEvaluationRow[] {
    if (evaluations.length === 0) return [];
    return [{ id: newId(), organization_id: row.organization_id, activity_id: row.id, vote_id: vote.id, evaluations: JSON.stringify(evaluations), created_at: vote.created_at }];
  }

  private async respond(operation: string, row: ActivityRow, caller: Caller, votes?: VoteRow[], reads?: Repositories, asVoted?: Map<string, unknown>): Promise<PipelineResponse> {
    const [activity] = await this.deps.records.render([row], { userId: caller.user.id }, votes, reads, asVoted);
    return {
      body: { activity },
      log: { operation, organizationId: row.organization_id, activityId: row.id, status: row.status, type: row.type },
    };
  }
}
