// The activity record exactly as docs/reference/activities.md "The record" describe it:
// id, organizationId, status, type, intent{<member>}, result{<member>}, votes, fingerprint,
// canApprove, canReject, createdAt, updatedAt ({seconds, nanos} strings), failure when failed,
// plus `timestampMs` and the nested copy `result.activity` the interface spec asks for.
import type { ActivityRow, Repositories, VoteRow } from '../store/index.js';
import { ActivityStatus } from './status.js';

function ts(ms: number) {
  return { seconds: String(Math.floor(ms / 1000)), nanos: String((ms % 1000) * 1_000_000) };
}

/**
 * Renders users (v1User) by id for the `user` field of votes; supplied by the composition root. It
 * reads through `repos`: a request's reads serve them from the read cache.
 */
export type UserRenderer = (repos: Repositories, organizationId: string, userIds: string[]) => Promise<Map<string, unknown>>;

export interface Viewer {
  userId: string;
  /** The reading request's context, handed to the consensus check (ActivityRecords.mayVote). */
  request?: unknown;
}

/**
 * A voter whose record is gone (deleted since) and was not kept: a complete v1User with its id and
 * nothing else known, so clients reading the required fields of a vote's user still find them.
 */
function absentUser(v: VoteRow) {
  return { userId: v.user_id, userName: '', authenticators: [], apiKeys: [], userTags: [], oauthProviders: [], createdAt: ts(v.created_at), updatedAt: ts(v.created_at), mfaPolicies: [] };
}

export function renderVote(v: VoteRow, users: Map<string, unknown>) {
  return {
    id: v.id,
    userId: v.user_id,
    user: users.get(v.user_id) ?? absentUser(v),
    activityId: v.activity_id,
    selection: v.selection,
    message: v.message,
    publicKey: v.public_key,
    signature: v.signature,
    scheme: v.scheme,
    createdAt: ts(v.created_at),
  };
}

export function renderActivity(row: ActivityRow, votes: VoteRow[], users: Map<string, unknown>, viewer?: Viewer) {
  const voted = viewer ? votes.some((v) => v.user_id === viewer.userId) : true;
  const open = row.status === ActivityStatus.CONSENSUS_NEEDED;
  // Waiting for its submitter's MFA methods: the submitter approves (with a required method) or rejects.
  const awaitingOwnMfa = row.status === ActivityStatus.AUTHENTICATORS_NEEDED && viewer !== undefined && viewer.userId === row.user_id;
  const record: Record<string, unknown> = {
    id: row.id,
    organizationId: row.organization_id,
    status: row.status,
    type: row.type,
    intent: JSON.parse(row.intent),
    result: row.result ? JSON.parse(row.result) : {},
    votes: votes.map((v) => renderVote(v, users)),
    appProofs: row.app_proofs ? JSON.parse(row.app_proofs) : [],
    fingerprint: row.fingerprint,
    canApprove: (open && !voted) || awaitingOwnMfa,
    canReject: (open && !voted) || awaitingOwnMfa,
    createdAt: ts(row.created_at),
    updatedAt: ts(row.updated_at),
    timestampMs: String(row.created_at),
  };
  if (row.failure) record.failure = JSON.parse(row.failure);
  // The second copy lives beside the result member; it is a plain copy without its own nesting.
  record.result = { ...(record.result as object), activity: { ...record } };
  return record;
}
