// Audit sinks (src/audit/sinks.ts, docs/operator-guide.md "Audit trail and metrics"): every signed
// checkpoint is also appended to SIGIL_AUDIT_SINK_FILE, outside the database, including the one written
// at a clean shutdown. Someone with write access to the database cuts a stream's tail together with the
// checkpoints covering it: `sigil audit verify` alone cannot tell, `--checkpoints <sink file>` can.
// SIGIL_AUDIT_SINK_SYSLOG and SIGIL_AUDIT_SINK_HTTP send the same checkpoints to a syslog server (over
// UDP, or TCP with RFC 6587 octet counting) and an HTTP endpoint the test runs on loopback.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import http from 'node:http';
import { createSocket } from 'node:dgram';
import { createServer, type AddressInfo } from 'node:net';
import { execSql } from '../helpers/db-snapshot.js';
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
    sigil = await startSigil({ SIGIL_AUDIT_SINK_FILE: sinkFile }, { process: true });
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

describe('the syslog and HTTP audit sinks', () => {
  it('receive every checkpoint, the one at clean shutdown included: RFC 5424 over UDP, JSON POSTs', async () => {
    const posted: { stream: string; seq: number }[] = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        expect(req.method).toBe('POST');
        expect(req.headers['content-type']).toBe('application/json');
        posted.push(JSON.parse(body).checkpoint);
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const syslog = createSocket('udp4');
    const messages: string[] = [];
    syslog.on('message', (m) => messages.push(m.toString('utf8')));
    await new Promise<void>((r) => syslog.bind(0, '127.0.0.1', r));
    try {
      const s = await startSigil({
        SIGIL_AUDIT_SINK_HTTP: `http://127.0.0.1:${(server.address() as AddressInfo).port}/audit`,
        SIGIL_AUDIT_SINK_SYSLOG: `udp://127.0.0.1:${syslog.address().port}`,
      }, { process: true });
      try {
        const api = sdkServerClient(s);
        for (const name of ['one', 'two', 'three']) await api.createUserTag({ userTagName: `net ${name}`, userIds: [] });
        await terminate(s.process);
        // The shutdown checkpoint covers every entry the process wrote, and reached both sinks.
        const [{ n }] = await execSql(s, 'select max(seq) as n from audit_entries');
        const sent = messages.map((m) => {
          // RFC 5424: <PRI>VERSION TIMESTAMP HOSTNAME APP-NAME PROCID MSGID STRUCTURED-DATA MSG; PRI 110 = log audit, info.
          const parts = /^<110>1 (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) (\S+) sigil (\d+) audit - (\{.*\})$/.exec(m);
          expect(parts, m).not.toBeNull();
          return JSON.parse(parts![4]).checkpoint as { stream: string; seq: number };
        });
        for (const got of [posted, sent]) {
          expect(got.length).toBeGreaterThan(0);
          expect(Math.max(...got.map((c) => c.seq))).toBe(Number(n));
        }
        expect(sent).toEqual(posted);
      } finally {
        await s.stop();
      }
    } finally {
      server.close();
      syslog.close();
    }
  });
});

describe('the syslog sink over TCP', () => {
  it('frames each RFC 5424 message by octet counting (RFC 6587) on one connection, the shutdown checkpoint included', async () => {
    const frames: string[] = [];
    let connections = 0;
    // A receiver that reads frames as RFC 6587 defines them: MSG-LEN SP SYSLOG-MSG, across reads.
    const server = createServer((socket) => {
      connections++;
      let buffered = Buffer.alloc(0);
      socket.on('data', (d) => {
        buffered = Buffer.concat([buffered, d]);
        for (;;) {
          const space = buffered.indexOf(0x20);
          if (space < 0) break;
          const length = Number(buffered.subarray(0, space).toString('ascii'));
          expect(Number.isInteger(length) && length > 0).toBe(true);
          if (buffered.length < space + 1 + length) break;
          frames.push(buffered.subarray(space + 1, space + 1 + length).toString('utf8'));
          buffered = buffered.subarray(space + 1 + length);
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const s = await startSigil({ SIGIL_AUDIT_SINK_SYSLOG: `tcp://127.0.0.1:${(server.address() as AddressInfo).port}` }, { process: true });
      try {
        const api = sdkServerClient(s);
        for (const name of ['one', 'two', 'three']) await api.createUserTag({ userTagName: `tcp ${name}`, userIds: [] });
        await terminate(s.process);
        const [{ n }] = await execSql(s, 'select max(seq) as n from audit_entries');
        const sent = frames.map((m) => {
          const parts = /^<110>1 (\S+) (\S+) sigil (\d+) audit - (\{.*\})$/.exec(m);
          expect(parts, m).not.toBeNull();
          return JSON.parse(parts![4]).checkpoint as { stream: string; seq: number };
        });
        expect(sent.length).toBeGreaterThan(0);
        expect(Math.max(...sent.map((c) => c.seq))).toBe(Number(n));
        expect(connections).toBe(1);
      } finally {
        await s.stop();
      }
    } finally {
      server.close();
    }
  });
});

describe('a checkpoint every N entries', () => {
  it('a process killed (SIGKILL) within its first seconds leaves in the sink a checkpoint of every entry it wrote', async () => {
    const sinkFile = join(dir, 'every-entry.jsonl');
    const s = await startSigil({ SIGIL_AUDIT_SINK_FILE: sinkFile, SIGIL_AUDIT_CHECKPOINT_ENTRIES: '1' }, { process: true });
    try {
      const api = sdkServerClient(s);
      for (const name of ['one', 'two', 'three', 'four', 'five']) await api.createUserTag({ userTagName: `crash ${name}`, userIds: [] });
      const [{ stream, n }] = await execSql(s, 'select stream, max(seq) as n from audit_entries group by stream order by max(seq) desc limit 1');
      // One checkpoint per entry (the 5 s timer alone would sign only the head it finds), then the kill.
      const seqs = () =>
        new Set(
          readFileSync(sinkFile, 'utf8')
            .split('\n')
            .filter((l) => l.trim() !== '')
            .map((l) => JSON.parse(l).checkpoint)
            .filter((c) => c.stream === stream)
            .map((c) => c.seq),
        );
      await expect.poll(() => seqs().has(Number(n)), { timeout: 20_000 }).toBe(true);
      s.process.kill('SIGKILL');
      await new Promise((r) => s.process.once('exit', r));
      expect(seqs().size).toBeGreaterThanOrEqual(Number(n) - 1);
      const verified = runSigil(['audit', 'verify', '--data-dir', s.dataDir, '--checkpoints', sinkFile], s.env);
      expect(verified.status, verified.stdout + verified.stderr).toBe(0);
    } finally {
      await s.stop();
    }
  });
});

describe('fail closed', () => {
  it('while the only sink refuses checkpoints, requests get a clear 503; once it accepts again, they are served', async () => {
    let refuse = false;
    let accepted = 0;
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.statusCode = refuse ? 500 : 200;
        if (!refuse) accepted++;
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const s = await startSigil({
      SIGIL_AUDIT_SINK_HTTP: `http://127.0.0.1:${(server.address() as AddressInfo).port}/audit`,
      SIGIL_AUDIT_SINK_FAIL_CLOSED: '1',
      SIGIL_AUDIT_CHECKPOINT_ENTRIES: '1',
    });
    try {
      const api = sdkServerClient(s);
      const before = accepted;
      await api.createUserTag({ userTagName: 'accepted', userIds: [] });
      // Its checkpoint goes to the sink after the answer: refusing before it arrived would turn away
      // the next request already, which is right but not the order this test follows.
      await expect.poll(() => accepted, { timeout: 20_000 }).toBeGreaterThan(before);
      refuse = true;
      // The next entry's checkpoint is refused; from then on requests are turned away. That request
      // itself may be answered or refused, depending on whether a timed checkpoint came first.
      await api.createUserTag({ userTagName: 'its checkpoint is refused', userIds: [] }).catch((err: Error) => expect(err.message).toMatch(/no audit sink accepts checkpoints/));
      const refusal = async () => {
        const res = await fetch(`${s.url}/public/v1/query/get_whoami`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
        return { status: res.status, body: await res.json() };
      };
      await expect.poll(async () => (await refusal()).status, { timeout: 20_000 }).toBe(503);
      expect((await refusal()).body).toMatchObject({ code: 14, message: expect.stringMatching(/no audit sink accepts checkpoints \(SIGIL_AUDIT_SINK_FAIL_CLOSED\)/) });
      expect((await fetch(`${s.url}/readyz`)).status).toBe(503);
      await expect(api.getWhoami({})).rejects.toThrow(/no audit sink accepts checkpoints/);
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);

      // The sink accepts again: the refused checkpoint is delivered and requests are served.
      refuse = false;
      await expect.poll(async () => (await refusal()).status, { timeout: 20_000 }).not.toBe(503);
      expect((await api.getWhoami({})).organizationId).toBe(s.root.organizationId);
    } finally {
      await s.stop();
      server.close();
    }
  });
});
