// The audit log's hash chain (issue 8 part 5: "entries are hash-chained (each entry carries the hash
// of the previous one)"). Pure: canonical JSON, the entry hash, and offline verification of an
// exported sequence, so `sigil audit verify` needs nothing but the export file.
//
// hash(n) = hex sha256( prev_hash(n) ‖ entry(n) ), both as UTF-8 text; prev_hash(1) is GENESIS.
// entry(n) is the canonical JSON of the entry's content and repeats seq, kind, organizationId,
// activityId and time, so every stored column but the hashes themselves is covered by the hash.
import { createHash } from 'node:crypto';

export const GENESIS = '0'.repeat(64);

/** JSON with object keys sorted at every level and no whitespace; undefined members are left out. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('canonical JSON has no representation for non-finite numbers');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

export function entryHash(prevHash: string, entry: string): string {
  return createHash('sha256').update(prevHash, 'utf8').update(entry, 'utf8').digest('hex');
}

export type AuditKind = 'activity' | 'vote' | 'refused';

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
