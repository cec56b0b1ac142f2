// The audit log's integrity (docs/operator-guide.md; docs/design.md "The hot path"). Pure: canonical JSON, entry MACs and hashes,
// and verification of exported or stored entries, so `sigil audit verify` needs nothing but the
// entries and the deployment's keys.
//
// Streams (docs/design.md "The hot path", migration 016). Each serving process appends to a stream of its own, so no
// writer waits for a deployment-wide head:
//   mac(n) = hex HMAC-SHA256(K, mac(n-1) ‖ entry(n)), mac(0) = STREAM_GENESIS, seq 1, 2, 3… per stream;
//   K = the barrier's key for purpose `audit-log` (HKDF from the data key: a database alone cannot
//   recompute a stream, and master-key rotation does not change it).
// entry(n) is the JSON text of the entry's content as stored (the mac covers that text; nothing
// rebuilds it) and repeats stream, seq, kind,
// organizationId, activityId and time, so every stored column is covered. Activity entries commit
// to sha256 of the activity's intent, result and failure, vote entries to a hash of the vote, so an
// edited activity or vote row no longer matches its entry. A checkpoint is a stream's (seq, mac)
// signed by the deployment signer: entries cut from a stream's end before its last checkpoint are
// detected.
//
// The first, single chain (migration 009), kept for entries written before streams:
import { createHash, createHmac, hash } from 'node:crypto';
import { canonicalJson } from '../crypto/canonical-json.js';

export const GENESIS = '0'.repeat(64);

// Shared with the app proofs' data digests; re-exported for the audit code that reads it from here.
export { canonicalJson };

export function entryHash(prevHash: string, entry: string): string {
  return createHash('sha256').update(prevHash, 'utf8').update(entry, 'utf8').digest('hex');
}

/** `invitation`: an invitation accepted by its invitee, who had no credential to stamp an activity with. */
/** `seal`: this process sealed or unsealed (docs/operator-guide.md "Custody"), with who asked and through which seal. */
export type AuditKind = 'activity' | 'vote' | 'refused' | 'invitation' | 'seal';

/** One exported audit entry: a line of `sigil audit export`. */
export interface AuditExportLine {
  seq: number;
  organizationId: string | null;
  kind: AuditKind;
  activityId: string | null;
  /** The canonical JSON text that was hashed, exactly as stored. */
  entry: string;
  prevHash: string;
  hash: string;
  createdAt: number;
}

export type VerifyResult =
  | { ok: true; count: number; headHash: string; headSeq: number }
  | { ok: false; count: number; line: number; seq: number | null; reason: string };

const HEX64 = /^[0-9a-f]{64}$/;

function checkLine(raw: unknown, expectedSeq: number, prevHash: string): string | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return 'not a JSON object';
  const l = raw as Partial<AuditExportLine>;
  if (typeof l.seq !== 'number' || !Number.isSafeInteger(l.seq)) return 'seq is missing or not an integer';
  if (typeof l.entry !== 'string') return 'entry is missing';
  if (typeof l.hash !== 'string' || !HEX64.test(l.hash)) return 'hash is missing or not 64 hex digits';
  if (typeof l.prevHash !== 'string' || !HEX64.test(l.prevHash)) return 'prevHash is missing or not 64 hex digits';
  if (l.seq !== expectedSeq) {
    return l.seq > expectedSeq
      ? `seq ${l.seq} where ${expectedSeq} was expected: an entry was removed or reordered`
      : `seq ${l.seq} where ${expectedSeq} was expected: an entry was reordered or duplicated`;
  }
  if (entryHash(l.prevHash, l.entry) !== l.hash) return 'hash does not match prevHash ‖ entry: the entry was changed';
  if (l.prevHash !== prevHash) return "prevHash is not the previous entry's hash: an entry was removed, reordered or changed";
  let content: Record<string, unknown>;
  try {
    content = JSON.parse(l.entry) as Record<string, unknown>;
  } catch {
    return 'entry is not JSON';
  }
  if (canonicalJson(content) !== l.entry) return 'entry is not canonical JSON';
  // The columns beside the entry must say what the hashed entry says.
  const columns: [string, unknown, unknown][] = [
    ['seq', l.seq, content.seq],
    ['kind', l.kind, content.kind],
    ['organizationId', l.organizationId ?? null, content.organizationId ?? null],
    ['activityId', l.activityId ?? null, content.activityId ?? null],
    ['createdAt', l.createdAt, content.time],
  ];
  for (const [name, column, hashed] of columns) {
    if (column !== hashed) return `${name} ${JSON.stringify(column)} differs from the hashed entry's ${JSON.stringify(hashed)}: the entry was changed`;
  }
  return undefined;
}

/**
 * Verifies an exported sequence from the first entry: every hash recomputes, every prevHash is the
 * previous entry's hash (GENESIS for seq 1), seq increases by one. Stops at the first bad entry.
 * A chain cannot show that entries were cut off its end: compare `headHash` with one kept elsewhere.
 */
export function verifyChain(lines: Iterable<unknown>): VerifyResult {
  let prevHash = GENESIS;
  let expectedSeq = 1;
  let count = 0;
  for (const raw of lines) {
    const reason = checkLine(raw, expectedSeq, prevHash);
    const seq = raw && typeof raw === 'object' && typeof (raw as { seq?: unknown }).seq === 'number' ? (raw as { seq: number }).seq : null;
    if (reason) return { ok: false, count, line: count + 1, seq, reason };
    prevHash = (raw as AuditExportLine).hash;
    expectedSeq++;
    count++;
  }
  return { ok: true, count, headHash: prevHash, headSeq: expectedSeq - 1 };
}

// ---------------------------------------------------------------------------------------------------
// Streams

export const STREAM_GENESIS = '0'.repeat(64);

export function entryMac(key: Uint8Array, prevMac: string, entry: string): string {
  return createHmac('sha256', key).update(prevMac, 'utf8').update(entry, 'utf8').digest('hex');
}

/**
 * sha256 hex of a stored text, or null: what an entry commits to of an activity's columns. One-shot
 * hash() (strings are hashed as UTF-8): every activity's entry takes two or three of these.
 */
export function digestOf(text: string | null | undefined): string | null {
  return text === null || text === undefined ? null : hash('sha256', text, 'hex');
}

/** What a checkpoint's signature covers. */
export function checkpointMessage(c: { stream: string; seq: number; mac: string; createdAt: number }): string {
  return canonicalJson({ type: 'sigil.audit.checkpoint.v1', stream: c.stream, seq: c.seq, mac: c.mac, time: c.createdAt });
}

/** One stream entry as exported (`sigil audit export`) and verified. */
export interface StreamEntryLine {
  stream: string;
  seq: number;
  organizationId: string | null;
  kind: string;
  activityId: string | null;
  entry: string;
  mac: string;
  createdAt: number;
}

export interface CheckpointLine {
  stream: string;
  seq: number;
  mac: string;
  signature: string;
  createdAt: number;
}

export interface StreamReport {
  /** Entries that verified, per stream. */
  streams: Map<string, { count: number; seq: number; mac: string }>;
  checkpoints: number;
  /** Every problem found, each naming its stream and seq: empty when intact. */
  problems: string[];
}

/**
 * Verifies stream entries (any order; sorted here) with the audit key: every stream starts at seq 1,
 * has no gap, and every mac recomputes from the previous one; the columns beside each entry say what
 * its hashed text says; each checkpoint's signature verifies (`verifySignature`) and its mac is the
 * entry's at its seq, which must exist.
 */
export function verifyStreams(
  key: Uint8Array,
  entries: Iterable<StreamEntryLine>,
  checkpoints: Iterable<CheckpointLine>,
  verifySignature: (message: string, signature: string) => boolean,
): StreamReport {
  const byStream = new Map<string, StreamEntryLine[]>();
  for (const e of entries) {
    if (!byStream.has(e.stream)) byStream.set(e.stream, []);
    byStream.get(e.stream)!.push(e);
  }
  const problems: string[] = [];
  const streams = new Map<string, { count: number; seq: number; mac: string }>();
  const macAt = new Map<string, string>();
  for (const [stream, list] of byStream) {
    list.sort((a, b) => a.seq - b.seq);
    let prev = STREAM_GENESIS;
    let expected = 1;
    let count = 0;
    for (const e of list) {
      const at = `stream ${stream} seq ${e.seq}`;
      if (e.seq !== expected) {
        problems.push(`${at}: seq ${expected}${e.seq > expected + 1 ? `–${e.seq - 1}` : ''} missing: entries were removed`);
        break;
      }
      if (entryMac(key, prev, e.entry) !== e.mac) {
        problems.push(`${at}: the mac does not match: the entry was changed, or the stream rewritten without the deployment's key`);
        break;
      }
      let content: Record<string, unknown>;
      try {
        content = JSON.parse(e.entry) as Record<string, unknown>;
      } catch {
        problems.push(`${at}: the entry is not JSON`);
        break;
      }
      const columns: [string, unknown, unknown][] = [
        ['stream', e.stream, content.stream],
        ['seq', e.seq, content.seq],
        ['kind', e.kind, content.kind],
        ['organizationId', e.organizationId ?? null, content.organizationId ?? null],
        ['activityId', e.activityId ?? null, content.activityId ?? null],
        ['createdAt', e.createdAt, content.time],
      ];
      const bad = columns.find(([, column, hashed]) => column !== hashed);
      if (bad) {
        problems.push(`${at}: ${bad[0]} ${JSON.stringify(bad[1])} differs from the entry's ${JSON.stringify(bad[2])}: the row was changed`);
        break;
      }
      macAt.set(`${stream} ${e.seq}`, e.mac);
      prev = e.mac;
      expected++;
      count++;
    }
    streams.set(stream, { count, seq: expected - 1, mac: prev });
  }
  let checked = 0;
  for (const c of checkpoints) {
    checked++;
    const at = `checkpoint of stream ${c.stream} at seq ${c.seq}`;
    if (!verifySignature(checkpointMessage(c), c.signature)) {
      problems.push(`${at}: its signature does not verify with the deployment signer key`);
      continue;
    }
    const mac = macAt.get(`${c.stream} ${c.seq}`);
    if (mac === undefined) problems.push(`${at}: the stream ends before it (${streams.get(c.stream)?.seq ?? 0} entries): entries were cut from its end`);
    else if (mac !== c.mac) problems.push(`${at}: the entry at that seq is not the one signed`);
  }
  return { streams, checkpoints: checked, problems };
}
