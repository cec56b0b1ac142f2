// Appending to the audit log (docs/operator-guide.md; docs/design.md "The hot path"): what an entry says about an activity, a vote,
// or a refused request, how this process seals entries into its stream (src/audit/chain.ts), and the
// cross-check of entries against the live activity and vote rows. Entries name who (user id,
// credential public key), what (operation, type, status, fingerprint, error code, and digests of the
// activity's intent, result and failure and of votes) and when — never parameters, bodies, stamps or
// secrets.
import type { ActivityRow, AuditCheckpointRow, AuditEntryRow, AuditHead, AuditSealer, PendingAuditEntry, Repositories, VoteRow } from '../store/index.js';
import { STREAM_GENESIS, checkpointMessage, digestOf, entryMac, type AuditKind } from './chain.js';

export interface AuditEntryContent extends PendingAuditEntry {
  kind: AuditKind;
}

/** Records an entry in the caller's transaction; it is sealed into the stream when that commits. */
export function appendAudit(repos: Repositories, content: AuditEntryContent): void {
  repos.auditLog.append(content);
}

/** The barrier purpose the audit MAC key is derived for (Barrier.deriveKey). */
export const AUDIT_KEY_PURPOSE = 'audit-log';

/**
 * Seals entries with the audit key and signs stream heads with the deployment signer
 * (`signDer(bytes)` → DER hex): what the store's audit lane calls at commit time.
 */
export function auditSealer(key: Uint8Array, signer: { signDer(message: Uint8Array): string }, onCheckpoint?: (row: AuditCheckpointRow) => void): AuditSealer {
  return {
    genesis: STREAM_GENESIS,
    seal(head: AuditHead, entries: PendingAuditEntry[]) {
      let { seq, mac } = head;
      const rows: AuditEntryRow[] = entries.map((content) => {
        seq += 1;
        // The stored text is what the mac covers; verification never rebuilds it, so plain JSON in
        // the order the entry was built suffices (no sorting on the hot path).
        const entry = JSON.stringify({ ...content, stream: head.stream, seq });
        mac = entryMac(key, mac, entry);
        return {
          stream: head.stream,
          seq,
          organization_id: content.organizationId,
          kind: content.kind,
          activity_id: content.activityId,
          entry,
          mac,
          created_at: content.time,
        };
      });
      return { rows, head: { stream: head.stream, seq, mac } };
    },
    checkpoint(head: AuditHead, now: number): AuditCheckpointRow {
      const message = checkpointMessage({ stream: head.stream, seq: head.seq, mac: head.mac, createdAt: now });
      return { stream: head.stream, seq: head.seq, mac: head.mac, signature: signer.signDer(Buffer.from(message, 'utf8')), created_at: now };
    },
    onCheckpoint,
  };
}

export interface AuditActor {
  userId?: string;
  publicKey?: string;
}

/** A vote's digest: what its entry commits to of the row (who, which way, the signed message and signature). */
export function voteDigest(v: Pick<VoteRow, 'id' | 'activity_id' | 'user_id' | 'selection' | 'message' | 'public_key' | 'signature' | 'scheme'>): string {
  // A fixed field order: the digest of the same row is always the same text's.
  return digestOf(JSON.stringify([v.id, v.activity_id, v.user_id, v.selection, v.message, v.public_key, v.signature, v.scheme]))!;
}

/** What an activity row's entry commits to: its intent, result and failure. */
export function activityDigests(row: Pick<ActivityRow, 'intent' | 'result' | 'failure'>) {
  return { intentDigest: digestOf(row.intent), resultDigest: digestOf(row.result), failureDigest: digestOf(row.failure) };
}

export function activityEntry(a: {
  row: ActivityRow;
  operation: string;
  /** The submitter's own vote, recorded with the activity. */
  vote?: VoteRow;
  actor: AuditActor;
}): AuditEntryContent {
  return {
    kind: 'activity',
    organizationId: a.row.organization_id,
    activityId: a.row.id,
    operation: a.operation,
    type: a.row.type,
    status: a.row.status,
    fingerprint: a.row.fingerprint,
    ...activityDigests(a.row),
    voteDigest: a.vote ? voteDigest(a.vote) : undefined,
    userId: a.actor.userId,
    publicKey: a.actor.publicKey,
    time: a.row.updated_at,
  };
}

export function voteEntry(v: {
  /** The voted-on activity as the vote left it. */
  target: ActivityRow;
  vote: VoteRow;
  actor: AuditActor;
  time: number;
}): AuditEntryContent {
  return {
    kind: 'vote',
    organizationId: v.target.organization_id,
    activityId: v.target.id,
    type: v.target.type,
    selection: v.vote.selection,
    status: v.target.status,
    fingerprint: v.target.fingerprint,
    ...activityDigests(v.target),
    voteDigest: voteDigest(v.vote),
    userId: v.actor.userId,
    publicKey: v.actor.publicKey,
    time: v.time,
  };
}

/**
 * An invitation accepted (src/domain/identity/invitations.ts): not an activity, since the invitee had no
 * credential yet, so the log says who joined, through which invitation and with which passkey.
 */
export function invitationAcceptedEntry(a: { organizationId: string; invitationId: string; userId: string; authenticatorPublicKey: string; time: number }): AuditEntryContent {
  return {
    kind: 'invitation',
    organizationId: a.organizationId,
    activityId: null,
    operation: 'accept_invitation',
    status: 'INVITATION_STATUS_ACCEPTED',
    invitationId: a.invitationId,
    userId: a.userId,
    publicKey: a.authenticatorPublicKey,
    time: a.time,
  };
}

/**
 * A process sealing (an emergency seal, written before its key is overwritten) or unsealing (written
 * with the key it just opened), so the log shows each process's keyless interval and who caused it.
 */
export function sealEntry(e: { event: 'sealed' | 'unsealed'; seal: string; by: string | undefined; generation: number; time: number }): AuditEntryContent {
  return { kind: 'seal', organizationId: null, activityId: null, operation: e.event, seal: e.seal, by: e.by, generation: e.generation, time: e.time };
}

export function refusedEntry(r: {
  organizationId?: string;
  requestKind: string;
  operation: string;
  code: string;
  message: string;
  httpStatus?: number;
  fingerprint?: string;
  actor: AuditActor;
  time: number;
}): AuditEntryContent {
  return {
    kind: 'refused',
    organizationId: r.organizationId ?? null,
    activityId: null,
    requestKind: r.requestKind,
    operation: r.operation,
    status: 'REFUSED',
    code: r.code,
    message: r.message,
    httpStatus: r.httpStatus,
    fingerprint: r.fingerprint,
    userId: r.actor.userId,
    publicKey: r.actor.publicKey,
    time: r.time,
  };
}

/**
 * Entries against the live rows: every activity must be described, in its present state (status,
 * intent, result, failure), by one of the entries naming it, and every vote by an entry's vote
 * digest; every entry's activity and vote must still exist. Activities recorded before streams (only
 * in the first chain) are counted apart. Answers the problems found, each naming the row.
 */
export function crossCheck(
  entries: Iterable<{ activityId: string | null; content: Record<string, unknown> }>,
  activities: Iterable<Pick<ActivityRow, 'id' | 'status' | 'intent' | 'result' | 'failure' | 'created_at'>>,
  votes: Iterable<Pick<VoteRow, 'id' | 'activity_id' | 'user_id' | 'selection' | 'message' | 'public_key' | 'signature' | 'scheme'>>,
  /** Activities the first chain describes (before streams): not cross-checked. */
  legacyActivityIds: Set<string>,
): { problems: string[]; activities: number; votes: number; legacy: number } {
  const states = new Map<string, Set<string>>();
  const voteDigests = new Set<string>();
  for (const e of entries) {
    if (!e.activityId) continue;
    const c = e.content;
    const state = `${c.status} ${c.intentDigest} ${c.resultDigest} ${c.failureDigest}`;
    if (!states.has(e.activityId)) states.set(e.activityId, new Set());
    states.get(e.activityId)!.add(state);
    if (typeof c.voteDigest === 'string') voteDigests.add(c.voteDigest);
  }
  const problems: string[] = [];
  const liveActivities = new Set<string>();
  let checked = 0;
  let legacy = 0;
  const liveVotes = new Set<string>();
  for (const a of activities) {
    liveActivities.add(a.id);
    const seen = states.get(a.id);
    if (!seen) {
      if (legacyActivityIds.has(a.id)) legacy++;
      else problems.push(`activity ${a.id}: no audit entry describes it (recorded without the log, or its entries were removed)`);
      continue;
    }
    const { intentDigest, resultDigest, failureDigest } = activityDigests(a);
    if (!seen.has(`${a.status} ${intentDigest} ${resultDigest} ${failureDigest}`)) {
      problems.push(`activity ${a.id}: its status (${a.status}), intent, result or failure differs from every audit entry about it: the row was changed`);
    }
    checked++;
  }
  let votesChecked = 0;
  for (const v of votes) {
    const d = voteDigest(v);
    liveVotes.add(d);
    if (!voteDigests.has(d) && !legacyActivityIds.has(v.activity_id)) problems.push(`vote ${v.id} on activity ${v.activity_id}: no audit entry describes it: the vote was changed or added`);
    votesChecked++;
  }
  for (const id of states.keys()) if (!liveActivities.has(id)) problems.push(`activity ${id}: audit entries describe it, but it is gone: the activity was deleted`);
  for (const d of voteDigests) if (!liveVotes.has(d)) problems.push(`a vote with digest ${d.slice(0, 16)}… is described by the audit log but gone: a vote was deleted or changed`);
  return { problems, activities: checked, votes: votesChecked, legacy };
}
