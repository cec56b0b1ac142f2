// `sigil audit export` and `sigil audit verify` (issue 8 part 5). Export writes the audit log as JSON
// lines in seq order with every field, hashes included; verify checks an export offline with
// src/audit/chain.ts and names the first changed, removed or reordered entry.
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { verifyChain, type AuditExportLine, type AuditKind } from '../audit/chain.js';
import type { Config } from '../config/config.js';
import { Store } from '../store/index.js';

const PAGE = 1000;

/** Writes every entry to `out` (a file path) or stdout; returns how many were written. */
export async function auditExport(config: Config, out: string | undefined): Promise<number> {
  const store = await Store.open({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  const fd = out ? openSync(out, 'w', 0o600) : 1;
  let count = 0;
  try {
    let after = 0;
    for (;;) {
      const rows = await store.repos.auditLog.list(after, PAGE);
      if (rows.length === 0) break;
      const text = rows
        .map((r) => {
          const line: AuditExportLine = {
            seq: r.seq,
            organizationId: r.organization_id,
            kind: r.kind as AuditKind,
            activityId: r.activity_id,
            entry: r.entry,
            prevHash: r.prev_hash,
            hash: r.hash,
            createdAt: r.created_at,
          };
          return JSON.stringify(line) + '\n';
        })
        .join('');
      writeSync(fd, text);
      count += rows.length;
      after = rows[rows.length - 1].seq;
    }
  } finally {
    if (out) closeSync(fd);
    await store.close();
  }
  return count;
}

/** Verifies an export file; prints the verdict and returns the exit code (0 intact, 1 not). */
export function auditVerify(file: string): number {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  let bad: { line: number; reason: string } | undefined;
  const parsed = lines.map((l, i) => {
    try {
      return JSON.parse(l) as unknown;
    } catch {
      bad ??= { line: i + 1, reason: 'not valid JSON' };
      return null;
    }
  });
  const result = verifyChain(parsed);
  if (bad && (result.ok || result.line >= bad.line)) {
    process.stdout.write(`FAIL line ${bad.line}: ${bad.reason}\n`);
    return 1;
  }
  if (!result.ok) {
    const which = result.seq === null ? `line ${result.line}` : `entry seq ${result.seq} (line ${result.line})`;
    process.stdout.write(`FAIL ${which}: ${result.reason}; ${result.count} entries before it verified\n`);
    return 1;
  }
  process.stdout.write(`ok ${result.count} entries verified; head seq ${result.headSeq} hash ${result.headHash}\n`);
  return 0;
}
