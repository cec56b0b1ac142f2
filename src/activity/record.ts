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

/**
 * Voters' records as JSON text, by record: the records the read cache keeps are frozen and shared
 * between requests, so each is serialized once while it is kept (a submit answer shows its voter
 * twice: in the record and in its nested copy).
 */
const frozenText = new WeakMap<object, string>();

function userText(user: unknown): string {
  if (user === null || typeof user !== 'object' || !Object.isFrozen(user)) return JSON.stringify(user);
  let text = frozenText.get(user);
  if (text === undefined) {
    text = JSON.stringify(user);
    frozenText.set(user, text);
  }
  return text;
}

/** `{"k":v,...}` from pairs of a key and its JSON text, leaving out undefined values as JSON.stringify does. */
function objectText(fields: [string, string | undefined][]): string {
  let out = '';
  for (const [k, v] of fields) if (v !== undefined) out += `${out ? ',' : ''}"${k}":${v}`;
  return `{${out}}`;
}

const str = (v: unknown): string | undefined => (v === undefined ? undefined : JSON.stringify(v));
const tsText = (ms: number) => `{"seconds":"${Math.floor(ms / 1000)}","nanos":"${(ms % 1000) * 1_000_000}"}`;

function voteText(v: VoteRow, users: Map<string, unknown>): string {
  return objectText([
    ['id', str(v.id)],
    ['userId', str(v.user_id)],
    ['user', userText(users.get(v.user_id) ?? absentUser(v))],
    ['activityId', str(v.activity_id)],
    ['selection', str(v.selection)],
    ['message', str(v.message)],
    ['publicKey', str(v.public_key)],
    ['signature', str(v.signature)],
    ['scheme', str(v.scheme)],
    ['createdAt', tsText(v.created_at)],
  ]);
}

/**
 * The text of JSON.stringify(renderActivity(...)), written from the row's stored JSON texts (intent,
 * result, app proofs, failure: each JSON.stringify output, so its text is what parsing and
 * serializing it again would give) without building the record and its copy as objects: the answer
 * of every submission is this (docs/design.md "The hot path").
 */
export function renderActivityText(row: ActivityRow, votes: VoteRow[], users: Map<string, unknown>, viewer?: Viewer): string {
  const result = row.result || '{}';
  // A result with a member named `activity` keeps that member's place when the copy replaces it: the
  // object path renders that exactly.
  if (!result.startsWith('{') || result.includes('"activity"') || !Number.isSafeInteger(row.created_at) || !Number.isSafeInteger(row.updated_at)) {
    return JSON.stringify(renderActivity(row, votes, users, viewer));
  }
  const voted = viewer ? votes.some((v) => v.user_id === viewer.userId) : true;
  const open = row.status === ActivityStatus.CONSENSUS_NEEDED;
  const awaitingOwnMfa = row.status === ActivityStatus.AUTHENTICATORS_NEEDED && viewer !== undefined && viewer.userId === row.user_id;
  const can = String((open && !voted) || awaitingOwnMfa);
  const head: [string, string | undefined][] = [
    ['id', str(row.id)],
    ['organizationId', str(row.organization_id)],
    ['status', str(row.status)],
    ['type', str(row.type)],
    ['intent', row.intent],
  ];
  const tail: [string, string | undefined][] = [
    ['votes', `[${votes.map((v) => voteText(v, users)).join(',')}]`],
    ['appProofs', row.app_proofs || '[]'],
    ['fingerprint', str(row.fingerprint)],
    ['canApprove', can],
    ['canReject', can],
    ['createdAt', tsText(row.created_at)],
    ['updatedAt', tsText(row.updated_at)],
    ['timestampMs', `"${row.created_at}"`],
    ['failure', row.failure || undefined],
  ];
  const copy = objectText([...head, ['result', result], ...tail]);
  const withCopy = `${result.slice(0, -1)}${result === '{}' ? '' : ','}"activity":${copy}}`;
  return objectText([...head, ['result', withCopy], ...tail]);
}
