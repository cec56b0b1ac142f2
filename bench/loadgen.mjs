// The bench's own load generator (docs/operator-guide.md "Benchmarks"): requests stamped before the
// clock starts and sent over keep-alive connections, the way high-volume clients send, so the figures
// measure the server and not the client. Each connection writes a request's bytes (built when it was
// stamped) in one write and reads its answer by Content-Length, as wrk does; node:http's client costs
// ~100 µs more CPU per request, which on a 2-core machine is taken from the server it measures. Runs
// start after a warm-up (a serving process is warm; a cold one spends its first seconds compiling).
// Alongside throughput and latency it reads what the work cost: the server's CPU time (every thread of
// every `sigil serve` process, from /proc/<pid>/task/*/schedstat), what those processes wrote
// (/proc/<pid>/io), the CPU of the PostgreSQL backends serving it (same machine), and Sigil's own count
// of SQL round trips (`sigil_database_round_trips_total` on /metrics).
import http from 'node:http';
import net from 'node:net';
import { createECDH, createPrivateKey, sign as cryptoSign } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';

/** A stamper for the P-256 API key `{apiPublicKey, apiPrivateKey}` (hex), as @turnkey/api-key-stamper stamps. */
export function stamperFor(key) {
  const d = Buffer.from(key.apiPrivateKey, 'hex');
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  const pub = ecdh.getPublicKey();
  const b64 = (b) => b.toString('base64url');
  const privateKey = createPrivateKey({ key: { kty: 'EC', crv: 'P-256', d: b64(d), x: b64(pub.subarray(1, 33)), y: b64(pub.subarray(33)) }, format: 'jwk' });
  return (body) => {
    const signature = cryptoSign('sha256', Buffer.from(body), { key: privateKey, dsaEncoding: 'der' }).toString('hex');
    return Buffer.from(JSON.stringify({ publicKey: key.apiPublicKey, scheme: 'SIGNATURE_SCHEME_TK_API_P256', signature })).toString('base64url');
  };
}

/** `count` requests for `path`, each body made by `bodyOf(i)` and stamped now. */
export function prestamp(key, path, count, bodyOf) {
  const stamp = stamperFor(key);
  const out = new Array(count);
  for (let i = 0; i < count; i++) {
    const body = Buffer.from(bodyOf(i));
    out[i] = { path, body, stamp: stamp(body) };
  }
  return out;
}

/** The bytes of `r` (from prestamp) as one HTTP/1.1 keep-alive request to `host`. */
export function requestBytes(r, host) {
  const head = `POST ${r.path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nX-Stamp: ${r.stamp}\r\nContent-Length: ${r.body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), r.body]);
}

/**
 * Unmeasured load before each run (BENCH_WARMUP_MS), per serving process: a server is measured warm,
 * as it serves. A fresh process's CPU per signature falls for its first ~20 s of load while V8
 * optimizes the request path and sizes its heap, and SQLite's log file reaches the size it is then
 * reused at. SQLite, 3 s windows from the first request, two runs: 872, 572, 565, 556, 514, 610, 713,
 * 499, 471, 517 and 860, 579, 514, 505, 497, 485, 502, 476, 481, 473 µs. With `--workers 2` each
 * process gets half the load, so the warm-up is twice as long for each to have served as many
 * requests as one process alone (at 8 s for both, the two-process row measured processes still
 * warming: 1,068 µs per signature against 636 once warm).
 */
export const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 15000);

/** The processes that answer requests: the workers of `serve --workers N`, or the one process. */
export function servingProcesses(pid) {
  const pids = processTree(pid);
  // With workers, the primary only supervises; the workers answer.
  return pids.length > 1 ? pids.slice(1) : pids;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * One keep-alive connection sending one request at a time. An answer is framed by its
 * Content-Length (every answer of Sigil's JSON API has one); anything else fails the request and
 * closes the connection rather than guess.
 */
export class Connection {
  constructor(port, host) {
    this.socket = net.connect(port, host);
    this.socket.setNoDelay(true);
    this.buffered = Buffer.alloc(0);
    this.waiting = undefined;
    this.ready = new Promise((resolve, reject) => {
      this.socket.once('connect', resolve);
      this.socket.once('error', reject);
    });
    this.socket.on('data', (chunk) => this.onData(chunk));
    this.socket.on('error', (err) => this.fail(err));
    this.socket.on('close', () => this.fail(new Error('connection closed by the server')));
  }

  send(bytes) {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.write(bytes);
    });
  }

  fail(err) {
    const w = this.waiting;
    this.waiting = undefined;
    this.socket.destroy();
    w?.reject(err);
  }

  onData(chunk) {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    const end = this.buffered.indexOf(HEADER_END);
    if (end < 0) return;
    const head = this.buffered.toString('latin1', 0, end);
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
    if (!length) return this.fail(new Error(`HTTP ${status} without Content-Length`));
    const total = end + HEADER_END.length + Number(length[1]);
    if (this.buffered.length < total) return;
    if (this.buffered.length > total) return this.fail(new Error('bytes after the answer to the only request sent'));
    const body = this.buffered.subarray(end + HEADER_END.length);
    this.buffered = Buffer.alloc(0);
    const w = this.waiting;
    this.waiting = undefined;
    if (status === 200) w?.resolve(body);
    else w?.reject(new Error(`HTTP ${status}: ${body.toString('utf8').slice(0, 200)}`));
  }

  close() {
    this.socket.destroy();
  }
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Nanoseconds of CPU every thread of `pid` has used (schedstat's first field, per task). */
export function cpuNs(pid) {
  let total = 0;
  let tasks = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  for (const tid of tasks) {
    try {
      total += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between listing and reading.
    }
  }
  return total;
}

/**
 * What `pid` has written so far (/proc/<pid>/io): write system calls of every thread (sockets and
 * files alike) and bytes sent towards storage (the log, checkpoints, the database file). Unlike CPU
 * time, neither depends on how busy the machine is, so a change to the write path (grouping, schema)
 * shows in them from one run where CPU per request needs many.
 */
export function ioOf(pid) {
  try {
    const fields = Object.fromEntries(
      readFileSync(`/proc/${pid}/io`, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(': ')),
    );
    return { writeCalls: Number(fields.syscw), storageBytes: Number(fields.write_bytes) };
  } catch {
    // Gone, or not ours to read.
    return { writeCalls: 0, storageBytes: 0 };
  }
}

/** `pid` and its descendants (the workers of `serve --workers N`). */
export function processTree(pid) {
  const children = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(entry));
    } catch {
      // Gone already.
    }
  }
  const out = [];
  const walk = (p) => {
    out.push(p);
    for (const c of children.get(p) ?? []) walk(c);
  };
  walk(pid);
  return out;
}

/** The pids of PostgreSQL backends whose application_name names one of `sigilPids` (see src/store/db.ts). */
/**
 * CPU (ns) so far of the PostgreSQL backends this process opened (application_name `sigil <pid>`,
 * src/store/db.ts): the database's share of an in-process bench's work.
 */
export async function ownPostgresCpuNs(databaseUrl) {
  const { default: pg } = await import('pg');
  const u = new URL(databaseUrl);
  u.searchParams.delete('schema');
  const c = new pg.Client({ connectionString: u.toString() });
  await c.connect();
  const { rows } = await c.query('select pid from pg_stat_activity where application_name = $1', [`sigil ${process.pid}`]);
  await c.end();
  return rows.reduce((a, r) => a + Number(readFileSync(`/proc/${r.pid}/schedstat`, 'utf8').split(' ')[0]), 0);
}

export async function postgresBackends(pgClient, sigilPids) {
  const names = sigilPids.map((p) => `sigil ${p}`);
  const r = await pgClient.query('select pid from pg_stat_activity where application_name = any($1)', [names]);
  return r.rows.map((row) => row.pid);
}

/** The largest value of a per-process gauge over `pids`. */
export async function metricMax(url, name, pids) {
  return Math.max(0, ...(await perProcess(url, name, pids)).values());
}

/**
 * Sums a per-process counter of Sigil's /metrics over `pids` (the serving processes): each request
 * is answered by one worker, so it asks on fresh connections until every pid has answered.
 */
export async function metric(url, name, pids) {
  return [...(await perProcess(url, name, pids)).values()].reduce((a, b) => a + b, 0);
}

/** A per-process value of Sigil's /metrics for each of `pids`, asked on fresh connections until each answered. */
async function perProcess(url, name, pids) {
  const seen = new Map();
  for (let i = 0; i < 50 && seen.size < pids.length; i++) {
    const text = await new Promise((resolve, reject) => {
      http.get(`${url}/metrics`, { agent: false, headers: { connection: 'close' } }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve(body));
      }).on('error', reject);
    });
    const m = new RegExp(`^${name}\\{pid="(\\d+)"\\} ([0-9.eE+-]+)$`, 'm').exec(text);
    // A process's first answer is its reading: a later one would follow a reset of the stall gauge.
    if (m && !seen.has(m[1])) seen.set(m[1], Number(m[2]));
  }
  return seen;
}

/**
 * Sends `requests` (from prestamp) at `concurrency` over keep-alive connections: first for `warmupMs`
 * unmeasured, then for `durationMs` (or until they run out), bracketed by readings of server and
 * database cost. With `repeat` (queries: a query's stamp stays valid) the requests are sent again in
 * turn and never run out.
 */
export async function runLoad({ url, requests, concurrency, durationMs, sigilPid, warmupMs = WARMUP_MS * servingProcesses(sigilPid).length, pgClient, ratePerSecond, repeat = false }) {
  const target = new URL(url);
  const bytes = requests.map((r) => requestBytes(r, target.host));
  const connections = Array.from({ length: concurrency }, () => new Connection(Number(target.port), target.hostname));
  await Promise.all(connections.map((c) => c.ready));
  let next = 0;
  // Every connection sends until `until`, each request timed; `onDone` hears each outcome.
  // With `ratePerSecond`, each connection sends at its share of that rate (never faster than answers come).
  const gap = ratePerSecond ? (1000 * concurrency) / ratePerSecond : 0;
  const drive = (until, onDone) =>
    Promise.all(
      connections.map(async (c, k) => {
        let due = performance.now() + (gap * k) / concurrency;
        while (performance.now() < until && (repeat || next < bytes.length)) {
          if (gap) {
            const wait = due - performance.now();
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
            due += gap;
          }
          const r = bytes[next++ % bytes.length];
          const t0 = performance.now();
          try {
            await c.send(r);
            onDone(performance.now() - t0);
          } catch (e) {
            onDone(undefined, e);
          }
        }
      }),
    );
  let warmErrors = 0;
  let warmError;
  await drive(performance.now() + warmupMs, (ms, e) => {
    if (e) (warmErrors++, (warmError ??= e.message));
  });
  if (warmErrors > 0 && warmErrors === next) throw new Error(`every warm-up request failed: ${warmError}`);

  const pids = processTree(sigilPid);
  const servers = servingProcesses(sigilPid);
  const backends = pgClient ? await postgresBackends(pgClient, pids) : [];
  const trips = () => (pgClient ? metric(url, 'sigil_database_round_trips_total', servers) : Promise.resolve(0));
  // The grouped commits of the serving processes: units per group is what commit grouping achieved.
  const groups = async () => ({ groups: await metric(url, 'sigil_commit_groups_total', servers), units: await metric(url, 'sigil_commit_group_units_total', servers) });
  const groupsBefore = await groups();
  const tripsBefore = await trips();
  // Every /metrics answer reads the stall gauge, and reading it resets it: this read, the last before
  // the run, starts the interval the run is measured over.
  await metric(url, 'sigil_event_loop_delay_max_seconds', servers);
  // Backends are counted one by one: one that opened during the run counts whole, and one that closed
  // during it (a pool connection idle for its timeout, so doing nothing) is left out rather than
  // subtracted.
  const pgBefore = new Map(backends.map((p) => [p, cpuNs(p)]));
  const ioTotal = (ps) => ps.map(ioOf).reduce((a, b) => ({ writeCalls: a.writeCalls + b.writeCalls, storageBytes: a.storageBytes + b.storageBytes }), { writeCalls: 0, storageBytes: 0 });
  const before = { server: pids.reduce((a, p) => a + cpuNs(p), 0), trips: tripsBefore, io: ioTotal(pids) };
  const latencies = [];
  let errors = 0;
  let firstError;
  const started = performance.now();
  await drive(started + durationMs, (ms, e) => {
    if (e) (errors++, (firstError ??= e.message));
    else latencies.push(ms);
  });
  const elapsed = (performance.now() - started) / 1000;
  // Read before the metrics requests below, which cost the server a little.
  const pidsAfter = processTree(sigilPid);
  const after = { server: pidsAfter.reduce((a, p) => a + cpuNs(p), 0), io: ioTotal(pidsAfter) };
  const pgNs = (pgClient ? await postgresBackends(pgClient, pids) : []).reduce((a, p) => a + Math.max(0, cpuNs(p) - (pgBefore.get(p) ?? 0)), 0);
  // The stall gauge first: any other /metrics request would reset it. The metrics requests themselves
  // cost no database work.
  const stallMs = Math.round((await metricMax(url, 'sigil_event_loop_delay_max_seconds', servers)) * 1000 * 10) / 10;
  const tripsDone = (await trips()) - before.trips;
  const groupsAfter = await groups();
  const grouped = { groups: groupsAfter.groups - groupsBefore.groups, units: groupsAfter.units - groupsBefore.units };
  for (const c of connections) c.close();
  latencies.sort((a, b) => a - b);
  const done = latencies.length;
  return {
    requests: done,
    errors,
    firstError,
    exhausted: !repeat && next >= requests.length,
    perSecond: Math.round(done / elapsed),
    p50ms: Number(percentile(latencies, 50).toFixed(2)),
    p99ms: Number(percentile(latencies, 99).toFixed(2)),
    serverCpuUs: done ? Math.round((after.server - before.server) / 1000 / done) : NaN,
    writeCalls: done ? Number(((after.io.writeCalls - before.io.writeCalls) / done).toFixed(2)) : NaN,
    storageKB: done ? Number(((after.io.storageBytes - before.io.storageBytes) / 1024 / done).toFixed(1)) : NaN,
    postgresCpuUs: pgClient && done ? Math.round(pgNs / 1000 / done) : undefined,
    roundTrips: pgClient && done ? Number((tripsDone / done).toFixed(2)) : undefined,
    unitsPerGroup: grouped.groups > 0 ? Number((grouped.units / grouped.groups).toFixed(1)) : undefined,
    maxStallMs: stallMs,
  };
}

/** Drops the PostgreSQL schema a `?schema=` URL names (a bench deployment's tables). */
export async function dropPostgresSchema(url) {
  const { default: pg } = await import('pg');
  const u = new URL(url);
  const schema = u.searchParams.get('schema');
  u.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: u.toString() });
  await client.connect();
  await client.query(`drop schema if exists "${schema}" cascade`);
  await client.end();
}
