// The bench's own load generator (issue 14): requests stamped before the clock starts and sent over
// keep-alive connections, the way high-volume clients send, so the figures measure the server and
// not the client. Alongside throughput and latency it reads what the work cost: the server's CPU
// time (every thread of every `sigil serve` process, from /proc/<pid>/task/*/schedstat), the CPU of
// the PostgreSQL backends serving it (same machine), and Sigil's own count of SQL round trips
// (`sigil_database_round_trips_total` on /metrics).
import http from 'node:http';
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

function percentile(sorted, p) {
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
    if (m) seen.set(m[1], Number(m[2]));
  }
  return seen;
}

/**
 * Sends `requests` (from prestamp) at `concurrency` over keep-alive connections for `durationMs`
 * (or until they run out); `measure` brackets the run with readings of server and database cost.
 */
export async function runLoad({ url, requests, concurrency, durationMs, sigilPid, pgClient }) {
  const target = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const send = (r) =>
    new Promise((resolve, reject) => {
      const req = http.request(
        { host: target.hostname, port: target.port, path: r.path, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': r.body.length, 'x-stamp': r.stamp } },
        (res) => {
          let size = 0;
          res.on('data', (d) => (size += d.length));
          res.on('end', () => (res.statusCode === 200 ? resolve(size) : reject(new Error(`HTTP ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end(r.body);
    });
  // Warm the connections and the server's caches with a few requests, outside the measurement.
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, () => send(requests[next++])));

  const pids = processTree(sigilPid);
  // With workers, the primary only supervises; the workers answer.
  const servers = pids.length > 1 ? pids.slice(1) : pids;
  const backends = pgClient ? await postgresBackends(pgClient, pids) : [];
  const trips = () => (pgClient ? metric(url, 'sigil_database_round_trips_total', servers) : Promise.resolve(0));
  // Reading the stall gauge resets it: this read starts the interval the run is measured over.
  await metric(url, 'sigil_event_loop_delay_max_seconds', servers);
  const before = { server: pids.reduce((a, p) => a + cpuNs(p), 0), pg: backends.reduce((a, p) => a + cpuNs(p), 0), trips: await trips() };
  const latencies = [];
  let errors = 0;
  let firstError;
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline && next < requests.length) {
        const r = requests[next++];
        const t0 = performance.now();
        try {
          await send(r);
          latencies.push(performance.now() - t0);
        } catch (e) {
          errors++;
          firstError ??= e.message;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  // The metrics requests themselves cost no database work.
  const tripsDone = (await trips()) - before.trips;
  const after = { server: processTree(sigilPid).reduce((a, p) => a + cpuNs(p), 0), pg: (pgClient ? await postgresBackends(pgClient, pids) : []).reduce((a, p) => a + cpuNs(p), 0) };
  const stallMs = Math.round((await metricMax(url, 'sigil_event_loop_delay_max_seconds', servers)) * 1000 * 10) / 10;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const done = latencies.length;
  return {
    requests: done,
    errors,
    firstError,
    exhausted: next >= requests.length,
    perSecond: Math.round(done / elapsed),
    p50ms: Number(percentile(latencies, 50).toFixed(2)),
    p99ms: Number(percentile(latencies, 99).toFixed(2)),
    serverCpuUs: done ? Math.round((after.server - before.server) / 1000 / done) : NaN,
    postgresCpuUs: pgClient && done ? Math.round((after.pg - before.pg) / 1000 / done) : undefined,
    roundTrips: pgClient && done ? Number((tripsDone / done).toFixed(2)) : undefined,
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
