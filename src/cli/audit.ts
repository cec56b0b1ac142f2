// `sigil audit export` and `sigil audit verify` (docs/operator-guide.md; docs/design.md "The hot path"). Export writes the audit log
// as JSON lines: the entries of every process's stream (`{"stream", "seq", …, "mac"}`), the signed
// checkpoints (`{"checkpoint": {…}}`) and the entries of the first single chain (`{"seq", …,
// "hash"}`). Verify checks the streams with the deployment's audit key and signer key
// (src/audit/chain.ts), the first chain by its hashes, and — on the live database — every activity
// and vote against the entries describing them (src/audit/record.ts), naming each problem found.
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { verifyChain, verifyStreams, type AuditExportLine, type AuditKind, type CheckpointLine, type StreamEntryLine } from '../audit/chain.js';
import { AUDIT_KEY_PURPOSE, crossCheck } from '../audit/record.js';
import type { Config } from '../config/config.js';
import { verifyP256Der } from '../crypto/p256.js';
import { loadDeployment } from '../domain/governance/deployment.js';
import { withAutomaticSeal } from './seal.js';
import { Store } from '../store/index.js';

const PAGE = 1000;

type ExportLine = StreamEntryLine | { checkpoint: CheckpointLine } | AuditExportLine;

/** Every line of the log, streams first, then checkpoints, then the first chain. */
async function* exportLines(store: Store): AsyncGenerator<ExportLine> {
  let after: { stream: string; seq: number } | undefined;
  for (;;) {
    const rows = await store.repos.auditLog.listEntries(after, PAGE);
    if (rows.length === 0) break;
    for (const r of rows) {
      yield { stream: r.stream, seq: r.seq, organizationId: r.organization_id, kind: r.kind, activityId: r.activity_id, entry: r.entry, mac: r.mac, createdAt: r.created_at };
    }
    const last = rows[rows.length - 1];
    after = { stream: last.stream, seq: last.seq };
  }
  for (const c of await store.repos.auditLog.listCheckpoints()) {
    yield { checkpoint: { stream: c.stream, seq: c.seq, mac: c.mac, signature: c.signature, createdAt: c.created_at } };
  }
  let legacy = 0;
  for (;;) {
    const rows = await store.repos.auditLog.listLegacy(legacy, PAGE);
    if (rows.length === 0) break;
    for (const r of rows) {
      yield { seq: r.seq, organizationId: r.organization_id, kind: r.kind as AuditKind, activityId: r.activity_id, entry: r.entry, prevHash: r.prev_hash, hash: r.hash, createdAt: r.created_at };
    }
    legacy = rows[rows.length - 1].seq;
  }
}

/** Writes every entry to `out` (a file path) or stdout; returns how many lines were written. */
export async function auditExport(config: Config, out: string | undefined): Promise<number> {
  const store = await Store.open({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  const fd = out ? openSync(out, 'w', 0o600) : 1;
  let count = 0;
  try {
    let text = '';
    for await (const line of exportLines(store)) {
      text += JSON.stringify(line) + '\n';
      count++;
      if (text.length > 1 << 16) {
        writeSync(fd, text);
        text = '';
      }
    }
    if (text) writeSync(fd, text);
  } finally {
    if (out) closeSync(fd);
    await store.close();
  }
  return count;
}

function sortLines(lines: unknown[]) {
  const streams: StreamEntryLine[] = [];
  const checkpoints: CheckpointLine[] = [];
  const legacy: unknown[] = [];
  for (const l of lines) {
    const o = l as Record<string, unknown>;
    if (o && typeof o === 'object' && 'checkpoint' in o) checkpoints.push(o.checkpoint as CheckpointLine);
    else if (o && typeof o === 'object' && 'stream' in o) streams.push(o as unknown as StreamEntryLine);
    else legacy.push(l);
  }
  return { streams, checkpoints, legacy };
}

/**
 * Verifies the audit log — an export `file`, or the live database with every activity and vote
 * cross-checked — with the deployment's keys (the data directory's or SIGIL_MASTER_KEY). Prints one
 * verdict line, then each problem; returns the exit code (0 intact, 1 not).
 */
export async function auditVerify(config: Config, file: string | undefined, sinkFile?: string): Promise<number> {
  const store = await Store.open({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    const deployment = await withAutomaticSeal(config, (seal) => loadDeployment(store.repos, seal));
    const key = deployment.barrier.deriveKey(AUDIT_KEY_PURPOSE);
    const signerKey = deployment.signer.publicKeyUncompressed;
    let lines: unknown[];
    const problems: string[] = [];
    if (file) {
      lines = readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l, i) => {
          try {
            return JSON.parse(l) as unknown;
          } catch {
            problems.push(`line ${i + 1}: not valid JSON`);
            return null;
          }
        })
        .filter((l) => l !== null);
    } else {
      lines = [];
      for await (const l of exportLines(store)) lines.push(l);
    }
    // Checkpoints copied to an audit sink (src/audit/sinks.ts) are checked like the database's: one the
    // streams end before shows entries cut together with the database's own checkpoints.
    if (sinkFile) {
      const sinkLines = readFileSync(sinkFile, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l, i) => {
          try {
            return JSON.parse(l) as unknown;
          } catch {
            problems.push(`${sinkFile} line ${i + 1}: not valid JSON`);
            return null;
          }
        })
        .filter((l): l is { checkpoint: unknown } => l !== null && typeof l === 'object' && 'checkpoint' in l);
      const seen = new Set(lines.map((l) => JSON.stringify((l as { checkpoint?: unknown }).checkpoint ?? null)));
      lines.push(...sinkLines.filter((l) => !seen.has(JSON.stringify(l.checkpoint))));
    }
    const { streams, checkpoints, legacy } = sortLines(lines);
    const report = verifyStreams(key, streams, checkpoints, (message, signature) => {
      try {
        return verifyP256Der(signerKey, Buffer.from(message, 'utf8'), signature);
      } catch {
        return false;
      }
    });
    problems.push(...report.problems);
    const chain = verifyChain(legacy);
    if (!chain.ok) problems.push(`first chain, entry ${chain.seq === null ? `line ${chain.line}` : `seq ${chain.seq}`}: ${chain.reason}`);
    let summary = `${streams.length} entries in ${report.streams.size} streams, ${report.checkpoints} checkpoints, ${legacy.length} entries of the first chain`;
    if (!file) {
      const legacyIds = new Set(legacy.map((l) => (l as { activityId?: string | null }).activityId).filter((x): x is string => typeof x === 'string'));
      const entries = streams.map((e) => ({ activityId: e.activityId, content: JSON.parse(e.entry) as Record<string, unknown> }));
      const live = crossCheck(entries, await store.repos.activities.listAll(), await store.repos.activities.listAllVotes(), legacyIds);
      problems.push(...live.problems);
      summary += `; ${live.activities} activities and ${live.votes} votes checked against their entries${live.legacy ? ` (${live.legacy} recorded before streams, not cross-checked)` : ''}`;
    }
    if (problems.length > 0) {
      process.stdout.write(`FAIL ${problems.length} problem${problems.length === 1 ? '' : 's'} (${summary})\n${problems.map((p) => `  ${p}\n`).join('')}`);
      return 1;
    }
    process.stdout.write(`ok ${summary}\n`);
    return 0;
  } finally {
    await store.close();
  }
}
