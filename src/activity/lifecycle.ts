// The activity lifecycle (docs/reference/activities.md, docs/policies.md "Policies and approvals", docs/mfa.md,
// docs/velocity-controls.md): a submission is looked up by fingerprint (the same bytes are the same activity; from
// another user, their approval), decided, and then recorded waiting (for approvals or for its
// submitter's authenticators, its parameters sealed) or executed and recorded finished. The pipeline
// (src/pipeline/) authenticates the request and validates it, then hands it here; votes on waiting
// activities are src/activity/votes.ts.
import { policyOutcomeFact, proveFacts } from '../domain/keys/app-proofs.js';
import { release, type Reservation } from '../domain/keys/velocity-limits.js';
import type { ActivityContext, OperationContext, Services } from '../domain/context.js';
import { endpointsFor, type EventEndpoint } from '../domain/governance/webhooks.js';
import { newId } from '../domain/ids.js';
import { sealForOrganization } from '../domain/keys/organization-keys.js';
import { SigilError, permissionDenied } from '../errors/errors.js';
import type { ActivityDeclaration } from '../operations/define.js';
import type { ActivityTypeBinding } from '../operations/registry.js';
import { redactSecrets } from '../operations/secret-fields.js';
import type { ActivityMfaRow, ActivityRow, Repositories, Store, VoteRow } from '../store/index.js';
import { checkSessionScope, decidingOrganization, loaderOf, mfaContexts, type Decision, type Loaded } from './authorize.js';
import { mfaOf } from './mfa.js';
import type { ActivityRecords } from './reader.js';
import { PENDING_AT, appendOutcome, insertRecords, recordsOf, resultBodies, signatureCount, voteOf, type ActivityRecordSet } from './recording.js';
import { ActivityStatus } from './status.js';
import { VelocityDecisions } from './velocity.js';
import { Votes } from './votes.js';
import { WaitingActivities, type OperationOf } from './waiting.js';

type Base = Omit<OperationContext, 'repos'>;

/** What an answered activity request gives back: the activity record, and what the access log may show. */
export interface ActivityResponse {
  body: { activity: unknown };
  log: { operation: string; organizationId?: string; activityId?: string; status?: string; type?: string; signatures?: number };
}

/** A validated activity request, as the pipeline hands it over. */
export interface Submission {
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
  base: Base;
  /** The submission set generateAppProofs. */
  appProofs: boolean;
}

export interface LifecycleDeps {
  store: Store;
  operationOf: OperationOf;
  services: Services;
  records: ActivityRecords;
  /** The clock of velocity control windows (a test clock when one is configured); defaults to the request's time. */
  velocityClock?: () => number;
}

/** A new activity on its way to being recorded: its row and vote, the decision, and what recording it needs. */
interface NewActivity {
  s: Submission;
  row: ActivityRow;
  vote: VoteRow;
  /** The context the declaration's hooks see (policy keywords, organization rules). */
  hookContext: OperationContext;
  /** Its target (the declaration's `load`), as the decision saw it: what it executes on. */
  loaded: Loaded;
  /** The organization whose policies and velocity controls decide it. */
  decidingId: string;
  decision: Decision;
  reservation?: Reservation;
  /** The submitter's MFA state, when one of their MFA policies matches. */
  mfa?: { row: ActivityMfaRow; met: boolean };
  /** The voter as it was when voting (the activity may delete it). */
  asVoted: Map<string, unknown>;
  endpoints: EventEndpoint[];
  outcomeFact?: Awaited<ReturnType<typeof policyOutcomeFact>>;
  /** The result as the submit response shows it (its secret fields too), once it executed. */
  answered?: string;
}

/** The row of a submission's activity, recorded by its submitter now, with `intent` under the type's intent member. */
function newRow(s: Submission, status: string, intent: unknown, result: string | null): ActivityRow {
  const { base, binding } = s;
  return {
    id: newId(),
    organization_id: base.organization.id,
    type: binding.type,
    status,
    fingerprint: s.fingerprint,
    intent: JSON.stringify({ [binding.intentMember]: intent }),
    result,
    failure: null,
    pending_parameters: null,
    app_proofs: null,
    simulation: null,
    user_id: base.caller.user.id,
    timestamp_ms: s.timestampMs,
    created_at: base.now,
    updated_at: base.now,
  };
}

export class ActivityLifecycle {
  private readonly votes: Votes;

  private readonly velocity: VelocityDecisions;

  constructor(private readonly deps: LifecycleDeps) {
    this.velocity = new VelocityDecisions(deps.store, deps.velocityClock);
    const waiting = new WaitingActivities(deps.operationOf, deps.services.barrier);
    this.votes = new Votes({ ...deps, waiting, velocity: this.velocity });
  }

  async submit(s: Submission): Promise<ActivityResponse> {
    const { decl, base } = s;
    const hookContext: OperationContext = { ...base, repos: s.reads };
    // The target it acts on, loaded on first use (a repeated body, answered from its record, needs none).
    const loaded = loaderOf(decl, hookContext, s.params);
    const deciding = await this.admit(s, hookContext, loaded);
    const repeated = await this.repeated(s);
    if (repeated) return repeated;
    // Votes are activities too: they act on their target inside their own transaction.
    if (decl.authorization === 'vote') return this.submitVote(s);
    const a = await this.decide(s, hookContext, loaded, deciding);
    try {
      await this.gather(a);
    } catch (err) {
      await this.giveBack(a);
      throw err;
    }
    try {
      await this.record(a);
    } catch (err) {
      // It did not execute (or its record did not commit): it does not count.
      await this.giveBack(a);
      // A concurrent identical submission (another process, or the same group) won: whatever this
      // one tripped over (the fingerprint, or a wallet name the winner took first), the answer is
      // the winner's activity.
      const winner = await this.deps.store.repos.activities.findByFingerprint(base.organization.id, s.fingerprint, s.timestampMs);
      if (winner) return this.respond(decl.path, winner, s);
      throw err;
    }
    return this.answer(a);
  }

  /** Who may submit it at all: the deciding organization (a parent's, for its users' logins), and a session profile's scope. */
  private async admit(s: Submission, hookContext: OperationContext, loaded: Loaded) {
    const { decl, binding, params, base, reads } = s;
    const deciding = await decidingOrganization({ repos: reads, decl, type: binding.type, org: base.organization, caller: base.caller, params, hookContext });
    await checkSessionScope({ repos: reads, decl, type: binding.type, caller: base.caller, params, now: base.now, hookContext, loaded });
    return deciding;
  }

  /**
   * Idempotency: the same bytes are the same activity; the same bytes from another user of the
   * organization count as that user's approval. The pipeline looked the fingerprint up with its
   * first read when it knew the organization.
   */
  private async repeated(s: Submission): Promise<ActivityResponse | undefined> {
    const { store } = this.deps;
    const { base } = s;
    const orgId = base.organization.id;
    const existing = s.existing !== undefined ? (s.existing ?? undefined) : await store.repos.activities.findByFingerprint(orgId, s.fingerprint, s.timestampMs);
    if (!existing) return undefined;
    if (existing.status === ActivityStatus.CONSENSUS_NEEDED && existing.user_id !== base.caller.user.id) {
      const voted = (await store.repos.activities.votes([existing.id])).some((v) => v.user_id === base.caller.user.id);
      if (!voted) await this.votes.cast(existing, base, s.reads, 'VOTE_SELECTION_APPROVED', s.fingerprint);
      return this.respond(s.decl.path, (await store.repos.activities.get(orgId, existing.id))!, s);
    }
    return this.respond(s.decl.path, existing, s);
  }

  /** The new activity's row and vote, decided (velocity counts reserved when allowed), with its submitter's MFA state. */
  private async decide(s: Submission, hookContext: OperationContext, loaded: Loaded, deciding: OperationContext['organization']): Promise<NewActivity> {
    const { decl, binding, params, fingerprint, base, reads } = s;
    const orgId = base.organization.id;
    const row = newRow(s, ActivityStatus.CREATED, redactSecrets(s.intentParams, decl.secretFields), null);
    // The signed message is the request body; bodies carrying secrets keep only their fingerprint.
    const vote = voteOf(row.id, base.caller, 'VOTE_SELECTION_APPROVED', decl.secretFields?.length ? fingerprint : s.rawBody.toString('utf8'), base.now);
    const { decision, reservation } = await this.velocity.decideAndReserve({ repos: reads, decl, type: binding.type, org: deciding, submitter: base.caller, params, votes: [vote], now: base.now, hookContext, loaded });
    if (decision.outcome === 'deny') throw decision.error;
    const a: NewActivity = { s, row, vote, hookContext, loaded, decidingId: deciding.id, decision, reservation, asVoted: new Map(), endpoints: [] };
    // MFA: the submitter's first matching MFA policy names the methods the activity must carry; the
    // submission's stamp is the first. (Votes returned before: exempt, or nothing could satisfy one.)
    a.mfa = await mfaOf(reads, deciding.id, orgId, base.caller, row.id, base.now, () => mfaContexts({ repos: reads, decl, type: binding.type, params, now: base.now, hookContext, loaded }));
    if (a.mfa && !a.mfa.met && (deciding.id !== orgId || base.caller.credential.kind === 'attested')) {
      await this.giveBack(a);
      // It could not wait: a parent's credential votes in another organization, and an attested key
      // is no registered credential the approved activity could later run as.
      const why =
        deciding.id !== orgId
          ? 'an activity a parent organization submits for a sub-organization cannot wait for them (approvals are cast in the sub-organization)'
          : 'a login stamped by an attested key (X-Stamp-Attested) cannot wait for them';
      throw permissionDenied(
        `${binding.type} needs the authentication methods of MFA policy ${a.mfa.row.mfa_policy_id} of user ${base.caller.user.id}; ${why}: submit it stamped with a required method`,
        decision.evaluations,
      );
    }
    return a;
  }

  /** What recording the activity reads first: its voter as now, its webhook endpoints, and the proof of its decision. */
  private async gather(a: NewActivity): Promise<void> {
    const { s, vote, decision } = a;
    a.asVoted = await this.deps.records.voters([vote], s.reads);
    // From the read cache (none costs no query).
    a.endpoints = await endpointsFor(s.reads, s.base.organization);
    // Proofs state the decision that lets the activity run (its derivations are added once it has).
    a.outcomeFact = s.appProofs && decision.outcome === 'allow' ? await policyOutcomeFact(s.reads, s.base.organization, s.fingerprint, [vote]) : undefined;
  }

  /** The activity's records as it stands now, with writes of its own to commit alongside. */
  private recordsOf(a: NewActivity, writes?: (repos: Repositories) => Promise<void>): ActivityRecordSet {
    const { s } = a;
    const mfaWrite = a.mfa ? (repos: Repositories) => repos.mfaPolicies.insertActivityMfa(a.mfa!.row) : undefined;
    return recordsOf({
      row: a.row,
      operation: s.decl.path,
      vote: a.vote,
      evaluations: a.decision.evaluations,
      caller: s.base.caller,
      endpoints: a.endpoints,
      voters: a.asVoted,
      now: s.base.now,
      writes:
        writes || mfaWrite
          ? async (repos) => {
              await writes?.(repos);
              await mfaWrite?.(repos);
            }
          : undefined,
    });
  }

  /** The context the activity executes in, reading and writing through `repos`. */
  private executionContext(a: NewActivity, repos: Repositories): ActivityContext {
    const { s } = a;
    return { ...s.base, repos, activityId: a.row.id, activityType: s.binding.type, fingerprint: s.fingerprint };
  }

  /** The activity executed: its row completed with the stored result, the answer kept, and its app proofs. */
  private complete(a: NewActivity, result: unknown, ctx: ActivityContext): void {
    const { s, row } = a;
    row.status = ActivityStatus.COMPLETED;
    const bodies = resultBodies(s.decl, s.binding, result);
    row.result = bodies.stored;
    a.answered = bodies.answered;
    if (a.outcomeFact) {
      const facts = [...(s.decl.appProofFacts?.(ctx, s.params, result) ?? []), a.outcomeFact];
      row.app_proofs = JSON.stringify(proveFacts(this.deps.services.appProofKey, facts, s.base.now));
    }
  }

  /** Whether it waits: for the submitter's authenticators first (MFA), then for approvals if the policies ask for them. */
  private waitsFor(a: NewActivity): string | undefined {
    if (a.mfa && !a.mfa.met) return ActivityStatus.AUTHENTICATORS_NEEDED;
    if (a.decision.outcome === 'consensus_needed') return ActivityStatus.CONSENSUS_NEEDED;
    return undefined;
  }

  /** Records the activity waiting, or executes it and records it finished, as its declaration says. */
  private async record(a: NewActivity): Promise<void> {
    const { s } = a;
    const { store } = this.deps;
    await this.recordSimulation(a);
    const waiting = this.waitsFor(a);
    if (waiting) return this.recordWaiting(a, waiting);
    if (s.decl.prepare) {
      // The slow part reads only; its writes join the grouped commit that records the activity.
      const ctx = this.executionContext(a, s.reads);
      const prepared = await s.decl.prepare(ctx, s.params, await a.loaded());
      this.complete(a, prepared.result, ctx);
      return store.commitRecords(this.recordsOf(a, prepared.writes));
    }
    if (s.decl.execution === 'pure') {
      // Reads and computation happen first; the finished activity is then recorded durably before
      // the answer leaves. A crash in between loses a result nobody has seen.
      const ctx = this.executionContext(a, s.reads);
      this.complete(a, await s.decl.execute(ctx, s.params, await a.loaded()), ctx);
      return store.commitRecords(this.recordsOf(a));
    }
    await store.transaction(async (repos) => {
      // Recorded before execution; its status and result after, in the same transaction, so a crash
      // leaves either nothing or the finished activity.
      await insertRecords(repos, this.recordsOf(a));
      const ctx = this.executionContext(a, repos);
      this.complete(a, await s.decl.execute(ctx, s.params, await a.loaded()), ctx);
      await repos.activities.finish(a.row.id, { status: a.row.status, result: a.row.result, appProofs: a.row.app_proofs }, s.base.now);
      await appendOutcome(repos, this.recordsOf(a));
    });
  }

  /**
   * The simulation of its target, kept in its row when one ran (docs/policies.md "Simulation before
   * approval"): approvers see what it was simulated to do when it was submitted, at which block.
   */
  private async recordSimulation(a: NewActivity): Promise<void> {
    const of = a.s.decl.simulation;
    if (!of) return;
    const simulation = of(await a.loaded());
    if (simulation && simulation.status !== 'NOT_SIMULATED') a.row.simulation = JSON.stringify(simulation);
  }

  /** Recorded waiting, its parameters sealed to its row; a wait for authenticators gives its velocity counts back (the approval that completes it measures again). */
  private async recordWaiting(a: NewActivity, status: string): Promise<void> {
    a.row.status = status;
    // Sealed with the organization's key: its waiting parameters (an import bundle, say) are shredded with it.
    a.row.pending_parameters = await sealForOrganization(this.deps.services.barrier, this.deps.store.repos, a.row.organization_id, a.row.created_at, Buffer.from(JSON.stringify(a.s.params)), PENDING_AT(a.row.id));
    await this.deps.store.commitRecords(this.recordsOf(a));
    if (status === ActivityStatus.AUTHENTICATORS_NEEDED) await this.giveBack(a);
  }

  /**
   * The activity's velocity counts given back (it did not execute). A release that itself fails (the
   * database went away) leaves the counts taken: the limit errs on the safe side, and the activity's
   * own error is what the client hears.
   */
  private async giveBack(a: NewActivity): Promise<void> {
    const reservation = a.reservation;
    if (!reservation) return;
    a.reservation = undefined;
    await this.deps.store.transaction((tx) => release(tx, a.decidingId, reservation)).catch(() => undefined);
  }

  /** The submit response: the record as committed (the result with its secret fields, this once). */
  private async answer(a: NewActivity): Promise<ActivityResponse> {
    const { s, row } = a;
    if (a.endpoints.length > 0) this.deps.services.webhooks?.wake();
    const response = await this.respond(s.decl.path, a.answered === undefined ? row : { ...row, result: a.answered }, s, { votes: [a.vote], reads: s.reads, asVoted: a.asVoted });
    if (s.decl.policy.action === 'SIGN' && row.status === ActivityStatus.COMPLETED) response.log.signatures = signatureCount(row.result);
    return response;
  }

  /** approve_activity / reject_activity: the vote, its effect on the target, and the vote's own record. */
  private async submitVote(s: Submission): Promise<ActivityResponse> {
    const { decl, params, base } = s;
    const orgId = base.organization.id;
    const target = await this.deps.store.repos.activities.findVoteTarget(orgId, String(params.fingerprint ?? ''));
    if (!target) {
      throw new SigilError('NOT_FOUND', 'No activity found with fingerprint. Consensus activities must target an existing activity by fingerprint');
    }
    const row = newRow(s, ActivityStatus.COMPLETED, params, '{}');
    const message = s.rawBody.toString('utf8');
    const ownVote = voteOf(row.id, base.caller, 'VOTE_SELECTION_APPROVED', message, base.now);
    await this.votes.cast(target, base, s.reads, decl.voteSelection ?? 'VOTE_SELECTION_APPROVED', message, async (endpoints, repos) =>
      recordsOf({ row, operation: decl.path, vote: ownVote, caller: base.caller, endpoints, voters: endpoints.length > 0 ? await this.deps.records.voters([ownVote], repos) : new Map(), now: base.now }),
    );
    return this.respond(decl.path, row, s, { votes: [ownVote] });
  }

  /** The activity record as the submit response shows it; `known` are its votes and voters when just recorded. */
  private async respond(operation: string, row: ActivityRow, s: Submission, known?: { votes: VoteRow[]; reads?: Repositories; asVoted?: Map<string, unknown> }): Promise<ActivityResponse> {
    const [activity] = await this.deps.records.render([row], { userId: s.base.caller.user.id }, known?.votes, known?.reads, known?.asVoted);
    return {
      body: { activity },
      log: { operation, organizationId: row.organization_id, activityId: row.id, status: row.status, type: row.type },
    };
  }
}
