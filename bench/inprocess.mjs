// `node bench/inprocess.mjs [sign_raw_payload|get_whoami|create_wallet] [count] [postgres] [--processes N] [--json]`:
// drives the request pipeline of Sigil with pre-stamped requests, no HTTP, 16 at a time, and prints
// the CPU spent per request: the pipeline's own cost, apart from HTTP and the client. The deployment
// is SQLite in a fresh data directory, or a fresh schema of the local PostgreSQL.
//
// With --processes N (PostgreSQL), N processes open the same deployment and share the 16 requests in
// flight, as `serve --workers N` shares the load generator's connections: the question of the
// scale-out row (does a second process make each request dearer?) without the HTTP load generator
// competing for the same two cores. The CPU is every process's and their PostgreSQL backends'.
// Add --cpu-prof to node's flags to see where the time goes (each process writes its own profile).
import { fork, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { loadConfig } from '../dist/config/config.js';
import { startApp } from '../dist/cli/app.js';
import { dropPostgresSchema, ownPostgresCpuNs, prestamp } from './loadgen.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CONCURRENCY = 16;
const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' };
const PATHS = { sign_raw_payload: '/public/v1/submit/sign_raw_payload', get_whoami: '/public/v1/query/get_whoami', create_wallet: '/public/v1/submit/create_wallet' };

/** One process's part: opens the deployment, prepares its requests, and runs them when told to. */
async function child({ scenario, count, concurrency, dataDir, env, signWith: given, index }) {
  const app = await startApp(loadConfig({ 'data-dir': dataDir, port: '0', 'auth-proxy-port': '0' }, env), pino({ level: 'warn' }, pino.destination(2)));
  const root = JSON.parse(env.SIGIL_INPROCESS_ROOT);
  const call = async (r) => {
    const res = await app.pipeline.handle({ kind: r.path.includes('/submit/') ? 'submit' : 'query', operation: r.path.split('/').pop(), rawBody: r.body, headers: { 'x-stamp': r.stamp }, clientAddress: '127.0.0.1', identity: {}, responseHeaders: {} });
    return JSON.stringify(res.body);
  };
  // Every process's bodies differ (their own fingerprints): its index is in each payload and name.
  const now = Date.now();
  let signWith = given;
  if (!signWith) {
    const [walletReq] = prestamp(root, PATHS.create_wallet, 1, () => JSON.stringify({ type: 'ACTIVITY_TYPE_CREATE_WALLET', timestampMs: String(Date.now()), organizationId: root.organizationId, parameters: { walletName: 'inprocess', accounts: [ETH] } }));
    signWith = JSON.parse(await call(walletReq)).activity.result.createWalletResult.addresses[0];
  }
  const bodies = {
    sign_raw_payload: (i) => JSON.stringify({ type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', timestampMs: String(now + i), organizationId: root.organizationId, parameters: { signWith, payload: (index * 1e9 + i).toString(16).padStart(64, '0'), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' } }),
    get_whoami: () => JSON.stringify({ organizationId: root.organizationId }),
    create_wallet: (i) => JSON.stringify({ type: 'ACTIVITY_TYPE_CREATE_WALLET', timestampMs: String(now + i), organizationId: root.organizationId, parameters: { walletName: `w-${index}-${i}`, accounts: [ETH] } }),
  };
  const warmup = 200;
  const requests = prestamp(root, PATHS[scenario], count + warmup, bodies[scenario]);
  let next = 0;
  for (let i = 0; i < warmup; i++) await call(requests[next++]);
  process.send({ ready: true, signWith });
  await new Promise((resolve) => process.once('message', resolve));
  const pgCpu = async () => (env.DATABASE_URL ? ownPostgresCpuNs(env.DATABASE_URL) : 0);
  const pg0 = await pgCpu();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => { while (next < requests.length) await call(requests[next++]); }));
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const pgNs = (await pgCpu()) - pg0;
  process.send({ requests: count, ms, cpuUs: c.user + c.system, postgresCpuUs: pgNs / 1000 });
  await app.close();
  process.exit(0);
}

/** Starts process `index` of the run and resolves once it is ready to send. */
function start(args, index, signWith) {
  const p = fork(fileURLToPath(import.meta.url), [], { env: { ...args.env, SIGIL_INPROCESS_CHILD: JSON.stringify({ ...args, index, signWith }) }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    p.once('message', (m) => resolve({ p, signWith: m.signWith }));
    p.once('exit', (code) => reject(new Error(`in-process bench child exited ${code}`)));
  });
}

/**
 * Runs `scenario` in `processes` processes on one fresh deployment; resolves with requests/s and
 * the CPU µs per request of the processes and of their PostgreSQL backends.
 */
export async function inprocessRun({ scenario = 'sign_raw_payload', count = 20000, postgres = false, processes = 1 }) {
  if (processes > 1 && !postgres) throw new Error('several processes share a deployment on PostgreSQL only');
  const dataDir = mkdtempSync(join(tmpdir(), 'sigil-inprocess-'));
  const env = { ...process.env, SIGIL_QUOTAS: 'wallets=1000000' };
  delete env.DATABASE_URL;
  if (postgres) {
    const schemaUrl = new URL(process.env.SIGIL_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
    schemaUrl.searchParams.set('schema', `sigil_inprocess_${Date.now()}`);
    env.DATABASE_URL = schemaUrl.toString();
  }
  try {
    const init = spawnSync(process.execPath, [join(ROOT, 'bin', 'sigil.js'), 'init', '--data-dir', dataDir, '--json'], { env, encoding: 'utf8' });
    if (init.status !== 0) throw new Error(init.stderr);
    env.SIGIL_INPROCESS_ROOT = init.stdout;
    const args = { scenario, count: Math.floor(count / processes), concurrency: CONCURRENCY / processes, dataDir, env };
    // The first process creates the wallet the others sign with.
    const first = await start(args, 0);
    const children = [first, ...(await Promise.all(Array.from({ length: processes - 1 }, (_, i) => start(args, i + 1, first.signWith))))];
    const results = await Promise.all(
      children.map(
        ({ p }) =>
          new Promise((resolve, reject) => {
            p.once('message', resolve);
            // A process that fails during its run ends the run instead of leaving it waiting.
            p.once('exit', (code) => reject(new Error(`in-process bench child exited ${code} before it reported`)));
            p.send({ go: true });
          }),
      ),
    );
    await Promise.all(children.map(({ p }) => (p.exitCode !== null ? undefined : new Promise((r) => p.once('exit', r)))));
    const n = results.reduce((a, r) => a + r.requests, 0);
    return {
      scenario,
      store: postgres ? 'PostgreSQL' : 'SQLite',
      processes,
      requests: n,
      perSecond: Math.round(n / (Math.max(...results.map((r) => r.ms)) / 1000)),
      cpuUs: Math.round(results.reduce((a, r) => a + r.cpuUs, 0) / n),
      postgresCpuUs: Math.round(results.reduce((a, r) => a + r.postgresCpuUs, 0) / n),
    };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    if (env.DATABASE_URL) await dropPostgresSchema(env.DATABASE_URL);
  }
}

if (process.env.SIGIL_INPROCESS_CHILD) {
  await child(JSON.parse(process.env.SIGIL_INPROCESS_CHILD));
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const flag = (name) => {
    const i = argv.indexOf(name);
    return i === -1 ? undefined : argv.splice(i, name === '--json' ? 1 : 2).at(-1);
  };
  const json = flag('--json') !== undefined;
  const processes = Number(flag('--processes') ?? 1);
  const [scenario = 'sign_raw_payload', count = '20000', store] = argv;
  const r = await inprocessRun({ scenario, count: Number(count), postgres: store === 'postgres', processes });
  if (json) console.log(JSON.stringify(r));
  else
    console.log(
      `${r.scenario} (${r.store}${processes > 1 ? `, ${processes} processes` : ''}): ${r.requests} requests, ${r.perSecond}/s, ${r.cpuUs} µs CPU each (pipeline only)${r.store === 'PostgreSQL' ? `, PostgreSQL ${r.postgresCpuUs} µs` : ''}`,
    );
}
