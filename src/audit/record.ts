// Appending to the audit log (issue 8 part 5): what an entry says about an activity, a vote, or a
// refused request, and the append itself through the store's repository, chained by
// src/audit/chain.ts. Entries name who (user id, credential public key), what (operation, type,
// status, fingerprint, error code) and when — never parameters, bodies, stamps or secrets.
import type { AuditLogRow, Repositories } from '../store/index.js';
import { GENESIS, canonicalJson, entryHash, type AuditKind } from './chain.js';

export interface AuditEntryContent {
  kind: AuditKind;
  organizationId: string | null;
  activityId: string | null;
  time: number;
  [field: string]: unknown;
}

/** Appends one entry inside the caller's transaction (Store.transaction or groupCommit). */
export function appendAudit(repos: Repositories, content: AuditEntryContent): Promise<AuditLogRow> {
  return repos.auditLog.append((seq, prevHash) => {
    const prev = prevHash ?? GENESIS;
    const entry = canonicalJson({ ...content, seq });
    return {
      seq,
      organization_id: content.organizationId,
      kind: content.kind,
      activity_id: content.activityId,
      entry,
      prev_hash: prev,
      hash: entryHash(prev, entry),
      created_at: content.time,
    };
  });
}

export interface AuditActor {
  userId?: string;
  publicKey?: string;
}

export function activityEntry(a: {
  organizationId: string;
  activityId: string;
  operation: string;
  type: string;
  status: string;
  fingerprint: string;
  actor: AuditActor;
  time: number;
}): AuditEntryContent {
  return {
    kind: 'activity',
    organizationId: a.organizationId,
    activityId: a.activityId,
    operation: a.operation,
    type: a.type,
    status: a.status,
    fingerprint: a.fingerprint,
    userId: a.actor.userId,
    publicKey: a.actor.publicKey,
    time: a.time,
  };
}

export function voteEntry(v: {
  organizationId: string;
  activityId: string;
  type: string;
  selection: string;
  /** The voted-on activity's status after the vote. */
  status: string;
  fingerprint: string;
  actor: AuditActor;
  time: number;
}): AuditEntryContent {
  return {
    kind: 'vote',
    organizationId: v.organizationId,
    activityId: v.activityId,
    type: v.type,
    selection: v.selection,
    status: v.status,
    fingerprint: v.fingerprint,
    userId: v.actor.userId,
    publicKey: v.actor.publicKey,
    time: v.time,
  };
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
