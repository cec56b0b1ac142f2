// Audit sinks (src/audit/sinks.ts, README "Audit trail and metrics"): every signed checkpoint is also
// appended to SIGIL_AUDIT_SINK_FILE, outside the database, including the one written at a clean
// shutdown. Someone with write access to the database cuts a stream's tail together with the
// checkpoints covering it: `sigil audit verify` alone cannot tell, `--checkpoints <sink file>` can.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import BetterSqlite3 from '../../src/store/sqlite-driver.js';
import { sdkServerClient } from '../helpers/clients.js';
import { dropSchema, runSigil, startSigil, terminate, type SigilInstance } from '../helpers/sigil.js';

let sigil: SigilInstance | undefined;
const dir = mkdtempSync(join(tmpdir(), 'sigil-audit-sink-'));
afterAll(async () => {
  if (sigil) {
    await terminate(sigil.process);
    rmSync(sigil.dataDir, { recursive: true, force: true });
    if (sigil.databaseUrl) await dropSchema(sigil.databaseUrl);
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Runs statements on the raw store, as an attacker with database access would. */
async function raw(s: SigilInstance, statements: string[]): Promise<void> {
  if (!s.databaseUrl) {
    const db = new BetterSqlite3(join(s.dataDir, 'sigil.sqlite'));
    for (const q of statements) db.prepare(q).run();
    db.close();
    return;
  }
  const u = new URL(s.databaseUrl);
  const schema = u.searchParams.get('schema')!;
  u.searchParams.delete('schema');
  const c = new pg.Client({ connectionString: u.toString() });
  await c.connect();
  try {
    await c.query(`set search_path to "${schema}"`);
    for (const q of statements) await c.query(q);
  } finally {
    await c.end();
  }
}

describe('the audit file sink', () => {
  it('holds the checkpoints, including the one at clean shutdown, and reveals a tail cut with its checkpoints', async () => {
    const sinkFile = join(dir, 'checkpoints.jsonl');
    sigil = await startSigil({ SIGIL_AUDIT_SINK_FILE: sinkFile });
    const api = sdkServerClient(sigil);
    for (const name of ['one', 'two', 'three', 'four']) await api.createUserTag({ userTagName: `sink ${name}`, userIds: [] });
    await terminate(sigil.process);

    const sunk = readFileSync(sinkFile, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l).checkpoint as { stream: string; seq: number });
    expect(sunk.length).toBeGreaterThan(0);
    // The last checkpoint (written at shutdown) covers the stream's end.
    const last = sunk.reduce((a, b) => (b.seq > a.seq ? b : a));
    expect(last.seq).toBeGreaterThanOrEqual(4);

    const intact = runSigil(['audit', 'verify', '--data-dir', sigil.dataDir, '--checkpoints', sinkFile], sigil.env);
    expect(intact.status, intact.stdout + intact.stderr).toBe(0);

    // Cut the stream's last two entries and every checkpoint of theirs from the database.
    const keep = last.seq - 2;
    await raw(sigil, [`delete from audit_entries where stream = '${last.stream}' and seq > ${keep}`, `delete from audit_checkpoints where stream = '${last.stream}' and seq > ${keep}`]);
    const blind = runSigil(['audit', 'verify', '--data-dir', sigil.dataDir], sigil.env);
    // The database alone still looks whole (the weakness the sink answers)…
    expect(blind.stdout).not.toMatch(/entries were cut from its end/);
    // …the sink's copy does not.
    const seen = runSigil(['audit', 'verify', '--data-dir', sigil.dataDir, '--checkpoints', sinkFile], sigil.env);
    expect(seen.status).toBe(1);
    expect(seen.stdout).toMatch(new RegExp(`checkpoint of stream ${last.stream} at seq ${last.seq}: the stream ends before it \\(${keep} entries\\): entries were cut from its end`));
  });
});
