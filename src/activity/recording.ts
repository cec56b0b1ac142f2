// What an activity leaves behind (docs/reference/activities.md, docs/webhooks.md "Webhooks", docs/operator-guide.md "Audit trail and metrics"): its row,
// the votes cast on it, the policy evaluations of each vote, its audit entry and the ACTIVITY_UPDATES
// events of its status. Every path that records an activity (a submission, a vote's own record, a
// vote's effect on its target) builds these rows here, once, so they cannot drift apart.
import { activityEntry, appendAudit, type AuditEntryContent } from '../audit/record.js';
import { credentialPublicKey, type Caller } from '../domain/context.js';
import { webhookDeliveryRows, type EventEndpoint } from '../domain/governance/webhooks.js';
import { newId } from '../domain/ids.js';
import type { SigilError } from '../errors/errors.js';
import type { ActivityDeclaration } from '../operations/define.js';
import type { ActivityTypeBinding } from '../operations/registry.js';
import { redactSecrets } from '../operations/secret-fields.js';
import type { ActivityRow, Repositories, VoteRow, WebhookDeliveryRow } from '../store/index.js';
import type { PolicyEvaluationRow } from '../store/repositories/policies.js';
import type { PolicyEvaluation } from './policy-engine.js';
import { renderActivity } from './record.js';
import { ActivityStatus } from './status.js';

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

/** Where a waiting activity's sealed parameters live (the barrier binds the ciphertext to it). */
export const PENDING_AT = (activityId: string) => ({ table: 'activities', rowId: activityId, column: 'pending_parameters' });

/**
 * The outbox rows of an activity's status change (ACTIVITY_UPDATES): the activity record as
 * get_activity shows it, for each endpoint subscribed. None, and no work, without endpoints.
 */
export function activityEvents(endpoints: EventEndpoint[], row: ActivityRow, votes: VoteRow[], users: Map<string, unknown>, now: number): WebhookDeliveryRow[] {
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

/**
 * The stored result of an activity: its result member with the declared secret fields redacted
 * (src/operations/secret-fields.ts), and the same unredacted for the submit response alone.
 */
export function resultBodies(decl: ActivityDeclaration, binding: Pick<ActivityTypeBinding, 'result' | 'adaptResult'>, executed: unknown): { stored: string; answered: string } {
  const member = binding.result;
  if (!member) return { stored: '{}', answered: '{}' };
  const result = binding.adaptResult ? binding.adaptResult(executed) : executed;
  const answered = JSON.stringify({ [member]: result ?? {} });
  if (!decl.resultSecretFields?.length) return { stored: answered, answered };
  return { stored: JSON.stringify({ [member]: redactSecrets(result ?? {}, decl.resultSecretFields) }), answered };
}

/** How many signatures a completed signing result holds (sign_raw_payloads holds several). */
export function signatureCount(result: string | null): number {
  if (!result) return 0;
  const member = Object.values(JSON.parse(result) as Record<string, unknown>)[0] as { signatures?: unknown } | undefined;
  return Array.isArray(member?.signatures) ? member.signatures.length : 1;
}

export const actorOf = (caller: Caller) => ({ userId: caller.user.id, publicKey: credentialPublicKey(caller.credential) });

export function failureOf(err: SigilError): string {
  return JSON.stringify(err.toBody());
}

/** A vote by `caller` on an activity: the signed message and the stamp's signature that proves it. */
export function voteOf(activityId: string, caller: Caller, selection: string, message: string, now: number): VoteRow {
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

/** The policy evaluations of one vote, as the rows get_policy_evaluations reads. */
export function evaluationRows(row: ActivityRow, vote: VoteRow, evaluations: PolicyEvaluation[]): PolicyEvaluationRow[] {
  if (evaluations.length === 0) return [];
  return [{ id: newId(), organization_id: row.organization_id, activity_id: row.id, vote_id: vote.id, evaluations: JSON.stringify(evaluations), created_at: vote.created_at }];
}

/** The rows of one recorded activity, as a grouped commit (store.commitRecords) or a transaction writes them. */
export interface ActivityRecordSet {
  activities: ActivityRow[];
  votes: VoteRow[];
  evaluations: PolicyEvaluationRow[];
  audit: AuditEntryContent[];
  webhookDeliveries: WebhookDeliveryRow[];
  writes?: (repos: Repositories) => Promise<void>;
}

/**
 * The records of an activity as it stands (`row`, in its present status): the row, the vote it was
 * submitted with and that vote's evaluations, its audit entry, and the event of its status.
 */
export function recordsOf(r: {
  row: ActivityRow;
  /** The path it was submitted on (the audit entry's operation). */
  operation: string;
  vote: VoteRow;
  evaluations?: PolicyEvaluation[];
  caller: Caller;
  endpoints: EventEndpoint[];
  /** The voter rendered as it was when voting (the activity may delete it). */
  voters: Map<string, unknown>;
  now: number;
  writes?: (repos: Repositories) => Promise<void>;
}): ActivityRecordSet {
  return {
    activities: [r.row],
    votes: [r.vote],
    evaluations: evaluationRows(r.row, r.vote, r.evaluations ?? []),
    audit: [activityEntry({ row: r.row, operation: r.operation, vote: r.vote, actor: actorOf(r.caller) })],
    webhookDeliveries: activityEvents(r.endpoints, r.row, [r.vote], r.voters, r.now),
    writes: r.writes,
  };
}

/**
 * Inside an open transaction: the rows that exist before the activity executes (its row, vote and
 * evaluations, and its own writes), so its execution sees itself recorded.
 */
export async function insertRecords(repos: Repositories, set: ActivityRecordSet): Promise<void> {
  for (const a of set.activities) await repos.activities.insert(a);
  for (const v of set.votes) await repos.activities.insertVote(v);
  for (const e of set.evaluations) await repos.policyEvaluations.insert(e);
  await set.writes?.(repos);
}

/** Inside an open transaction: what describes the activity once finished (its audit entry and events). */
export async function appendOutcome(repos: Repositories, set: Pick<ActivityRecordSet, 'audit' | 'webhookDeliveries'>): Promise<void> {
  for (const entry of set.audit) appendAudit(repos, entry);
  if (set.webhookDeliveries.length > 0) await repos.webhooks.insertDeliveries(set.webhookDeliveries);
}
