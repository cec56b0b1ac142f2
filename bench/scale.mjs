// The scale bench (docs/operator-guide.md "A million end users"): one sub-organization per end user, the
// shape an embedded-wallet deployment has. For each store (embedded SQLite, PostgreSQL) it
//  1. signs up N end users over HTTP with stamped requests (create_sub_organization V7: a root user
//     with an email, a phone number and an API key, and a wallet with one Ethereum account) at
//     concurrency 16, and reports signups/s by slices of 10% of N (flat is the target) and the
//     server's CPU per signup;
//  2. measures what one end user costs at rest: bytes per end user of every table and index (SQLite:
//     dbstat, the database file's pages as a checkpoint leaves them; PostgreSQL: the relations' sizes),
//     the difference between before and after the signups divided by N;
//  3. signs (sign_raw_payload, pre-stamped keep-alive requests, bench/loadgen.mjs) for one hot
//     organization and for random end users, each end user signing once, so each request comes from
//     an organization no request has touched since its signup (the cold path), and reports the
//     cold/hot ratio of server CPU per request (with PostgreSQL's own CPU on that store);
//  4. answers each lookup (list_suborgs by email, phone number, public key, wallet address, name and
//     user name; list_verified_suborgs by email; whoami of an end user) at concurrency 16 and
//     reports its p99, then again one at a time, paced (the p99 of the lookup itself, next to the
//     host's floor: an empty answer measured the same way), and on PostgreSQL prints the plan of each
//     list_suborgs filter;
//  5. reports the serving process's RSS;
// and, in the same run, the reference server (bench/reference-server.mjs: stamp verify, secp256k1 sign,
// one grouped durable SQLite write, a small answer) under the same hot load, so Sigil's hot sign rows
// are also given as a ratio to it, and then under a cold load of as many end users as Sigil's cold
// row (each end user's sealed key found by one index read), whose cold/hot ratio is what the stack
// itself charges for a request nothing is cached for.
//
// `node bench/scale.mjs [--n 3000] [--bulk 0] [--bulk-processes 2] [--keep | --reuse <state>] [--stores sqlite,postgres]
// [--duration-ms 5000] [--warmup-ms 10000]` runs it in full and writes bench/results/scale-<date>.json;
// `npm run bench` runs a short form (bench/run.mjs, `scale` rows). PostgreSQL: SIGIL_BENCH_DATABASE_URL
// (default the local test database). `--bulk M` first builds M end users through the same pipeline
// in-process, without HTTP (bench/scale-bulk.mjs), before the server starts; the N measured signups,
// the signatures and the lookups then run over HTTP on top of them, the cold signers and looked-up
// users drawn from both. `--keep` leaves the PostgreSQL schema in place and writes a state file (its
// path is printed); `--reuse <state file>` measures that deployment again (PostgreSQL only) without
// building its end users again. Drop a kept schema when done: it holds every end user's rows.
//
// The full run, a million end users on PostgreSQL (docs/operator-guide.md "A million end users (`bench/scale.mjs`)"):
//   npm run build && node bench/scale.mjs --stores postgres --bulk 1000000 --n 5000
import { spawn } from 'node:child_process';
import { createECDH, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { Connection, cpuNs, postgresBackends, prestamp, processTree, requestBytes, runLoad, servingProcesses } from './loadgen.mjs';
import { dropBenchSchema, initOnly, postgresDeployment, serveOnly, stop } from './deployments.mjs';
import { bulkBuild } from './scale-bulk.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' };
const CONCURRENCY = 16;
/** Lookups per second of the paced lookup rows: well under what one process answers. */
const LOOKUP_PACE = 200;

/**
 * Requests sent one at a time on one connection, LOOKUP_PACE per second (at least 1,000 of them, so
 * the p99 is not the single worst), each timed alone: a request's own latency, with no other request
 * of the client's in flight.
 */
function pacedAlone(url, requests, { durationMs, sigilPid, pgClient }) {
  return runLoad({ url, requests, concurrency: 1, durationMs: Math.max(durationMs, 5000), warmupMs: 500, sigilPid, pgClient, repeat: true, ratePerSecond: LOOKUP_PACE });
}

/** Server CPU per request of a runLoad result, with PostgreSQL's own on that store (Node + PostgreSQL). */
const cpuOf = (r) => r.serverCpuUs + (r.postgresCpuUs ?? 0);

/** A fresh P-256 API key, hex, as @turnkey/crypto's generateP256KeyPair gives it. */
function apiKey() {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { apiPublicKey: ecdh.getPublicKey('hex', 'compressed'), apiPrivateKey: ecdh.getPrivateKey('hex').padStart(64, '0') };
}

const activity = (type, organizationId, parameters, i) => JSON.stringify({ type, timestampMs: String(Date.now() + i), organizationId, parameters });

const signBody = (organizationId, signWith, i, tag) =>
  activity('ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', organizationId, { signWith, payload: (tag + i.toString(16)).padStart(64, '0').slice(-64), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' }, i);

/**
 * Sends `requests` (from prestamp) once each at CONCURRENCY and returns the answers in request order
 * with the time each completed (ms since the start) and the serving processes' CPU over the whole.
 */
async function sendEach(url, requests, sigilPid, pgClient) {
  const target = new URL(url);
  const bytes = requests.map((r) => requestBytes(r, target.host));
  const connections = Array.from({ length: CONCURRENCY }, () => new Connection(Number(target.port), target.hostname));
  await Promise.all(connections.map((c) => c.ready));
  const pids = processTree(sigilPid);
  // PostgreSQL's share: its backends at the start, and those the server's pools open during the run
  // (a grouped commit with writes of its own takes a connection of its own), counted from zero.
  const pgAt = async () => new Map((pgClient ? await postgresBackends(pgClient, pids) : []).map((b) => [b, cpuNs(b)]));
  const cpu = () => pids.reduce((a, p) => a + cpuNs(p), 0);
  const before = { server: cpu(), pg: await pgAt() };
  const answers = new Array(bytes.length);
  const doneAt = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    connections.map(async (c) => {
      while (next < bytes.length) {
        const k = next++;
        answers[k] = JSON.parse((await c.send(bytes[k])).toString());
        doneAt.push(performance.now() - t0);
      }
    }),
  );
  const elapsedMs = performance.now() - t0;
  for (const c of connections) c.close();
  const serverNs = cpu() - before.server;
  let pgNs = 0;
  for (const [b, ns] of await pgAt()) pgNs += ns - (before.pg.get(b) ?? 0);
  return { answers, doneAt, elapsedMs, serverCpuUs: serverNs / 1000 / bytes.length, postgresCpuUs: pgClient ? pgNs / 1000 / bytes.length : undefined };
}

/** Signups per second in each tenth of the run, by completion order. */
function slices(doneAt) {
  const n = doneAt.length;
  const out = [];
  for (let s = 0; s < 10; s++) {
    const from = Math.floor((s * n) / 10);
    const to = Math.floor(((s + 1) * n) / 10);
    const start = from === 0 ? 0 : doneAt[from - 1];
    out.push(Math.round((to - from) / ((doneAt[to - 1] - start) / 1000)));
  }
  return out;
}

/** Bytes of every table and index of the deployment's store, by name. */
async function storeBytes(store) {
  if (store.kind === 'sqlite') {
    const { default: BetterSqlite3 } = await import('../dist/store/sqlite-driver.js');
    const db = new BetterSqlite3(join(store.dir, 'sigil.sqlite'), { readonly: true });
    try {
      const rows = db.prepare('SELECT name, SUM(pgsize) AS bytes FROM dbstat GROUP BY name').all();
      return Object.fromEntries(rows.map((r) => [r.name, Number(r.bytes)]));
    } finally {
      db.close();
    }
  }
  const { rows } = await store.pgClient.query(
    `SELECT c.relname AS name, CASE WHEN c.relkind = 'i' THEN pg_relation_size(c.oid) ELSE pg_table_size(c.oid) END AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'i')`,
    [store.schema],
  );
  return Object.fromEntries(rows.map((r) => [r.name, Number(r.bytes)]));
}

/** What each table and index grew by per end user, largest first, and the total. */
function perEndUser(before, after, n) {
  const rows = Object.keys(after)
    .map((name) => ({ name, bytes: Math.round(((after[name] ?? 0) - (before[name] ?? 0)) / n) }))
    .filter((r) => r.bytes > 0)
    .sort((a, b) => b.bytes - a.bytes);
  return { total: rows.reduce((a, r) => a + r.bytes, 0), rows };
}

function rssMb(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

/** The reference server (bench/reference-server.mjs) on its own data directory; resolves once it listens. */
function startReference(dir, apiPublicKey, endUsersFile) {
  const child = spawn(process.execPath, [join(ROOT, 'bench', 'reference-server.mjs'), dir, apiPublicKey, endUsersFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /^listening (\S+) /m.exec(out);
      if (m) resolve({ url: m[1], child });
    });
    child.on('exit', (c) => reject(new Error(`reference server exited ${c}`)));
  });
}

/** The plan of each list_suborgs filter on the deployment's PostgreSQL schema (src/store: childrenPlan). */
async function lookupPlans(store, parentId, user) {
  const { Store } = await import('../dist/store/index.js');
  const s = await Store.open({ dataDir: store.dir, databaseUrl: store.databaseUrl });
  try {
    const out = {};
    for (const [type, value] of Object.entries(user.filters)) out[type] = await s.repos.organizations.childrenPlan(parentId, { type, value });
    return out;
  } finally {
    await s.close();
  }
}

/** One store's run; returns its rows and figures. */
async function storeRun(kind, { n, bulk, bulkProcesses, keep, reuse, durationMs, warmupMs, log }) {
  const env = { ...process.env, SIGIL_QUOTAS: 'wallets=1000000,users=1000000' };
  let deployment;
  let sigil;
  let store;
  let root;
  let builtUsers = [];
  // A kept PostgreSQL deployment (`--keep` wrote its state file): measured again on the end users it
  // holds, without building them again.
  const kept = reuse ? JSON.parse(readFileSync(reuse, 'utf8')) : undefined;
  if (kind === 'sqlite' && !kept) {
    delete env.DATABASE_URL;
    const dir = mkdtempSync(join(tmpdir(), 'sigil-scale-'));
    root = initOnly(dir, env);
    store = { kind, dir };
  } else {
    deployment = kept ? { ...kept.deployment, url: new URL(kept.deployment.url) } : postgresDeployment('scale');
    Object.assign(env, deployment.env, { SIGIL_QUOTAS: env.SIGIL_QUOTAS });
    root = deployment.root;
    const admin = new URL(deployment.url);
    admin.searchParams.delete('schema');
    const pgClient = new pg.Client({ connectionString: admin.toString() });
    await pgClient.connect();
    store = { kind, dir: deployment.dir, schema: deployment.schema, databaseUrl: deployment.url.toString(), pgClient };
  }
  const label = kind === 'sqlite' ? 'SQLite' : 'PostgreSQL';
  const rows = [];
  const figures = { store: label, n, bulk };
  let child;
  try {
    // 0. The bulk build, before the server starts (on SQLite the builders are then its only writers).
    let built = { users: [] };
    if (kept) {
      built = kept.built;
      Object.assign(figures, kept.bulkFigures, { bulk: kept.bulkFigures.bulk, reused: reuse });
      bulk = kept.bulkFigures.bulk + kept.measured;
      log(`${label}: reusing the kept schema ${deployment.schema} (${bulk} end users)`);
    } else if (bulk > 0) {
      const before = await storeBytes(store);
      log(`${label}: building ${bulk} end users in bulk (${bulkProcesses[kind]} process(es))`);
      built = await bulkBuild({ dataDir: store.dir, env, root, count: bulk, processes: bulkProcesses[kind], log });
      figures.bulkPerSecond = built.perSecond;
      figures.bulkPerSecondBySlice = built.perSlice;
      figures.bulkBuilderCpuUs = built.builderCpuUs;
      if (kind === 'postgres') figures.bulkPostgresCpuUs = built.postgresCpuUs;
      figures.bulkMinutes = Number((built.elapsedMs / 60000).toFixed(1));
      figures.bulkBytesPerEndUser = perEndUser(before, await storeBytes(store), bulk).total;
      figures.bulkBytesByObject = Object.fromEntries(perEndUser(before, await storeBytes(store), bulk).rows.map((r) => [r.name, r.bytes]));
      rows.push({
        scenario: `bulk build: create_sub_organization V7 through the pipeline in-process, ${label}, ${bulk} end users`,
        concurrency: 32 * bulkProcesses[kind],
        requests: bulk,
        errors: 0,
        perSecond: built.perSecond,
        serverCpuUs: built.builderCpuUs,
        postgresCpuUs: kind === 'postgres' ? built.postgresCpuUs : '',
        note: `per 10% slices: ${built.perSlice.join(' ')}`,
      });
    }
    const served = await serveOnly(store.dir, env);
    child = served.child;
    const url = served.url;
    const pid = child.pid;
    // The hot organization's account: the root organization's wallet.
    const [wallet] = (await sendEach(url, prestamp(root, '/public/v1/submit/create_wallet', 1, (i) => activity('ACTIVITY_TYPE_CREATE_WALLET', root.organizationId, { walletName: `hot ${Date.now()}`, accounts: [ETH] }, i)), pid)).answers;
    const hotAddress = wallet.activity.result.createWalletResult.addresses[0];

    // 1. Signups.
    const bytesBefore = await storeBytes(store);
    const tag = Math.random().toString(16).slice(2, 8);
    const users = Array.from({ length: n }, (_, i) => ({
      key: apiKey(),
      email: `u${i}.${tag}@example.com`,
      phone: `+1555${String(i).padStart(7, '0')}`,
      name: `end user ${tag} ${i}`,
      userName: `user ${tag} ${i}`,
    }));
    const signups = prestamp(root, '/public/v1/submit/create_sub_organization', n, (i) =>
      activity(
        'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7',
        root.organizationId,
        {
          subOrganizationName: users[i].name,
          rootUsers: [{ userName: users[i].userName, userEmail: users[i].email, userPhoneNumber: users[i].phone, apiKeys: [{ apiKeyName: 'device', publicKey: users[i].key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] }],
          rootQuorumThreshold: 1,
          wallet: { walletName: 'default', accounts: [ETH] },
        },
        i,
      ),
    );
    log(`${label}: signing up ${n} end users`);
    const signed = await sendEach(url, signups, pid, store.pgClient);
    signed.answers.forEach((a, i) => {
      const r = a.activity.result.createSubOrganizationResultV7;
      users[i].organizationId = r.subOrganizationId;
      users[i].address = r.wallet.addresses[0];
    });
    const perSlice = slices(signed.doneAt);
    figures.signupsPerSecondBySlice = perSlice;
    figures.signupLastOverFirst = Number((perSlice[9] / perSlice[0]).toFixed(2));
    rows.push({
      scenario: `create_sub_organization V7 (root user, API key, wallet with 1 ETH account), ${label}, ${n} end users`,
      concurrency: CONCURRENCY,
      requests: n,
      errors: 0,
      perSecond: Math.round(n / (signed.elapsedMs / 1000)),
      p50ms: NaN,
      p99ms: NaN,
      serverCpuUs: Math.round(signed.serverCpuUs),
      postgresCpuUs: signed.postgresCpuUs === undefined ? '' : Math.round(signed.postgresCpuUs),
      note: `signups/s by 10% slices: ${perSlice.join(' ')}`,
    });

    // 2. Bytes per end user at rest. On PostgreSQL a row updated after its insert leaves a dead
    // version behind until vacuum: updates per end user by table say where they come from.
    const bytes = perEndUser(bytesBefore, await storeBytes(store), n);
    if (store.pgClient) {
      await new Promise((r) => setTimeout(r, 600)); // the statistics collector's flush interval (500 ms)
      const { rows: upd } = await store.pgClient.query('SELECT relname, n_tup_upd FROM pg_stat_user_tables WHERE schemaname = $1 AND n_tup_upd > 0 ORDER BY n_tup_upd DESC', [store.schema]);
      figures.updatesPerEndUser = Object.fromEntries(upd.map((r) => [r.relname, Number((Number(r.n_tup_upd) / n).toFixed(2))]));
    }
    figures.bytesPerEndUser = bytes.total;
    figures.bytesPerEndUserByObject = Object.fromEntries(bytes.rows.map((r) => [r.name, r.bytes]));
    if (kind === 'sqlite') figures.sqliteLogMb = Number((statSync(join(store.dir, 'sigil.sqlite-wal')).size / 2 ** 20).toFixed(1));

    // 3. Signing: one hot organization, then random end users (each once: cold).
    const hotTag = Math.random().toString(16).slice(2, 10);
    const hotCount = Math.ceil(((durationMs + warmupMs) / 1000) * 5000);
    const hot = await runLoad({
      url,
      requests: prestamp(root, '/public/v1/submit/sign_raw_payload', hotCount, (i) => signBody(root.organizationId, hotAddress, i, hotTag)),
      concurrency: CONCURRENCY,
      durationMs,
      warmupMs,
      sigilPid: pid,
      pgClient: store.pgClient,
    });
    // The cold signers and the looked-up users: the measured ones and the bulk build's sample.
    builtUsers = built.users;
    const pool = [...users, ...built.users];
    const order = pool.map((_, i) => i).sort(() => Math.random() - 0.5);
    const coldRequests = order.map((i, k) => {
      const u = pool[i];
      return prestamp(u.key, '/public/v1/submit/sign_raw_payload', 1, () => signBody(u.organizationId, u.address, k, 'c01d'))[0];
    });
    const cold = await runLoad({ url, requests: coldRequests, concurrency: CONCURRENCY, durationMs, warmupMs: 0, sigilPid: pid, pgClient: store.pgClient });
    for (const [name, r] of [
      ['one hot organization', hot],
      [`a random end user of ${n + bulk}, each once (cold)`, cold],
    ]) {
      if (r.errors) log(`${label} sign, ${name}: ${r.errors} errors, first: ${r.firstError}`);
      rows.push({
        scenario: `sign_raw_payload, ${name}, ${label}${r.exhausted ? ' (every end user signed)' : ''}`,
        concurrency: CONCURRENCY,
        requests: r.requests,
        errors: r.errors,
        perSecond: r.perSecond,
        p50ms: r.p50ms,
        p99ms: r.p99ms,
        serverCpuUs: r.serverCpuUs,
        postgresCpuUs: r.postgresCpuUs ?? '',
        roundTrips: r.roundTrips ?? '',
      });
    }
    figures.hotCpuUs = cpuOf(hot);
    figures.coldCpuUs = cpuOf(cold);
    figures.coldOverHot = Number((cpuOf(cold) / cpuOf(hot)).toFixed(2));
    rows.push({ scenario: `sign_raw_payload, ${label}: cold / hot server CPU per request${kind === 'postgres' ? ' (Node + PostgreSQL)' : ''}`, concurrency: CONCURRENCY, serverCpuUs: figures.coldOverHot });

    // 4. Lookups.
    const sample = order.slice(0, Math.min(200, pool.length)).map((i) => pool[i]);
    for (const u of sample) u.filters = { EMAIL: u.email, PHONE_NUMBER: u.phone, PUBLIC_KEY: u.key.apiPublicKey, WALLET_ACCOUNT_ADDRESS: u.address, NAME: u.name, USERNAME: u.userName };
    const lookups = [
      ...Object.keys(sample[0].filters).map((type) => ({
        name: `list_suborgs by ${type}`,
        requests: prestamp(root, '/public/v1/query/list_suborgs', sample.length, (i) => JSON.stringify({ organizationId: root.organizationId, filterType: type, filterValue: sample[i].filters[type] })),
      })),
      {
        name: 'list_verified_suborgs by EMAIL',
        requests: prestamp(root, '/public/v1/query/list_verified_suborgs', sample.length, (i) => JSON.stringify({ organizationId: root.organizationId, filterType: 'EMAIL', filterValue: sample[i].email })),
      },
      { name: 'whoami of an end user', requests: sample.map((u) => prestamp(u.key, '/public/v1/query/whoami', 1, () => JSON.stringify({ organizationId: u.organizationId }))[0]) },
    ];
    figures.lookupP99ms = {};
    figures.lookupP99msPaced = {};
    for (const l of lookups) {
      const r = await runLoad({ url, requests: l.requests, concurrency: CONCURRENCY, durationMs: Math.min(durationMs, 2000), warmupMs: 1000, sigilPid: pid, pgClient: store.pgClient, repeat: true });
      if (r.errors) log(`${label} ${l.name}: ${r.errors} errors, first: ${r.firstError}`);
      figures.lookupP99ms[l.name] = r.p99ms;
      // At c16 a closed loop keeps 16 lookups queued on two cores: its latency is mostly the wait
      // behind the other 15 (16 / answers per second). Paced, one connection sends LOOKUP_PACE per
      // second and never two at once, so each lookup runs alone: its own latency, the figure an index
      // read is judged by. (Sixteen paced connections bunch whenever the client's timers fire late,
      // and then queue again.) The host's floor for the same measurement is in the reference's row.
      const paced = await pacedAlone(url, l.requests, { durationMs, sigilPid: pid, pgClient: store.pgClient });
      figures.lookupP99msPaced[l.name] = paced.p99ms;
      rows.push({ scenario: `${l.name}, ${label}, ${n + bulk} end users`, concurrency: CONCURRENCY, requests: r.requests, errors: r.errors, perSecond: r.perSecond, p50ms: r.p50ms, p99ms: r.p99ms, serverCpuUs: r.serverCpuUs, postgresCpuUs: r.postgresCpuUs ?? '', roundTrips: r.roundTrips ?? '', note: `alone, paced at ${LOOKUP_PACE}/s: p50 ${paced.p50ms} ms, p99 ${paced.p99ms} ms` });
    }
    if (kind === 'postgres') figures.plans = await lookupPlans(store, root.organizationId, sample[0]);

    // 5. Memory.
    figures.rssMb = Object.fromEntries(servingProcesses(pid).map((p) => [p, rssMb(p)]));
    return { rows, figures, hot, cold, coldSigners: pool.length, root };
  } finally {
    if (child) await stop(child);
    if (store.pgClient) await store.pgClient.end();
    if (deployment && (keep || kept)) {
      // What `--reuse` needs to measure this deployment again. It holds the root's and a sample of end
      // users' API private keys: it stays in the temporary directory, next to the deployment's own.
      if (!kept) {
        const state = join(deployment.dir, 'scale-state.json');
        const { plans, ...bulkFigures } = figures;
        writeFileSync(state, JSON.stringify({ deployment: { ...deployment, env: { DATABASE_URL: deployment.env.DATABASE_URL }, url: deployment.url.toString() }, built: { users: builtUsers }, bulkFigures: { bulk, bulkPerSecond: bulkFigures.bulkPerSecond, bulkPerSecondBySlice: bulkFigures.bulkPerSecondBySlice, bulkMinutes: bulkFigures.bulkMinutes, bulkBytesPerEndUser: bulkFigures.bulkBytesPerEndUser }, measured: n }), { mode: 0o600 });
        log(`${label}: kept schema ${deployment.schema}; measure it again with --reuse ${state}`);
      } else log(`${label}: kept schema ${deployment.schema}`);
    }
    else if (deployment) await dropBenchSchema(deployment);
    else rmSync(store.dir, { recursive: true, force: true });
  }
}

/**
 * The reference server under the hot load of the Sigil rows, then its cold load: `endUsers` end users
 * of their own organizations, each signing once, as Sigil's cold row.
 */
async function referenceRun({ durationMs, warmupMs, endUsers }) {
  const dir = mkdtempSync(join(tmpdir(), 'sigil-reference-'));
  const key = apiKey();
  const users = Array.from({ length: endUsers }, () => ({ key: apiKey(), organizationId: randomUUID() }));
  const usersFile = join(dir, 'end-users.json');
  writeFileSync(usersFile, JSON.stringify(users.map((u) => ({ apiPublicKey: u.key.apiPublicKey, organizationId: u.organizationId }))));
  const ref = await startReference(dir, key.apiPublicKey, usersFile);
  try {
    const orgId = randomUUID();
    const count = Math.ceil(((durationMs + warmupMs) / 1000) * 6000);
    const r = await runLoad({ url: ref.url, requests: prestamp(key, '/public/v1/submit/sign_raw_payload', count, (i) => signBody(orgId, '0x', i, 'feed')), concurrency: CONCURRENCY, durationMs, warmupMs, sigilPid: ref.child.pid });
    const coldRequests = users.map((u, k) => prestamp(u.key, '/public/v1/submit/sign_raw_payload', 1, () => signBody(u.organizationId, '0x', k, 'c01d'))[0]);
    const cold = await runLoad({ url: ref.url, requests: coldRequests, concurrency: CONCURRENCY, durationMs, warmupMs: 0, sigilPid: ref.child.pid });
    // The host's floor for a lookup's latency: the reference server's empty answer (`/noop`),
    // measured as the lookups are (pacedAlone). No request here can answer faster than this.
    const floor = await pacedAlone(ref.url, prestamp(key, '/noop', 1, () => '{}'), { durationMs, sigilPid: ref.child.pid });
    return { ...r, cold, floor };
  } finally {
    await stop(ref.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The whole bench: `stores` in turn, then the reference server; returns the rows (for console.table
 * and bench/run.mjs) and the figures of each store.
 */
export async function scaleRun({ n = 3000, bulk = 0, bulkProcesses = { sqlite: 1, postgres: 2 }, keep = false, reuse, stores = ['sqlite', 'postgres'], durationMs = 5000, warmupMs = 10000, log = (m) => console.error(m) } = {}) {
  const rows = [];
  const figures = [];
  const hots = {};
  const colds = {};
  let coldSigners = 0;
  for (const kind of stores) {
    const r = await storeRun(kind, { n, bulk, bulkProcesses, keep, reuse, durationMs, warmupMs, log });
    rows.push(...r.rows);
    figures.push(r.figures);
    hots[kind] = r.hot;
    colds[kind] = r.cold;
    coldSigners = Math.max(coldSigners, r.coldSigners);
  }
  const ref = await referenceRun({ durationMs, warmupMs, endUsers: coldSigners });
  rows.push({ scenario: 'sign_raw_payload, reference server (stamp verify, secp256k1 sign, grouped durable SQLite write)', concurrency: CONCURRENCY, requests: ref.requests, errors: ref.errors, perSecond: ref.perSecond, p50ms: ref.p50ms, p99ms: ref.p99ms, serverCpuUs: ref.serverCpuUs });
  if (ref.cold.errors) log(`reference server, cold: ${ref.cold.errors} errors, first: ${ref.cold.firstError}`);
  rows.push({ scenario: `sign_raw_payload, reference server, a random end user of ${coldSigners}, each once (cold: index read, key import, two AES-GCM opens)`, concurrency: CONCURRENCY, requests: ref.cold.requests, errors: ref.cold.errors, perSecond: ref.cold.perSecond, p50ms: ref.cold.p50ms, p99ms: ref.cold.p99ms, serverCpuUs: ref.cold.serverCpuUs });
  const referenceColdOverHot = Number((ref.cold.serverCpuUs / ref.serverCpuUs).toFixed(2));
  rows.push({ scenario: 'sign_raw_payload, reference server: cold / hot server CPU per request (the stack\'s own cost of a request nothing is cached for)', concurrency: CONCURRENCY, serverCpuUs: referenceColdOverHot });
  rows.push({ scenario: `the host's floor: an empty HTTP answer, alone, paced at ${LOOKUP_PACE}/s (as the lookups)`, concurrency: 1, requests: ref.floor.requests, errors: ref.floor.errors, p50ms: ref.floor.p50ms, p99ms: ref.floor.p99ms, serverCpuUs: ref.floor.serverCpuUs });
  for (const f of figures) f.hostFloorP99ms = ref.floor.p99ms;
  for (const [kind, hot] of Object.entries(hots)) {
    const f = figures.find((x) => x.store === (kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'));
    const storeName = kind === 'sqlite' ? 'SQLite' : 'PostgreSQL (Node + PostgreSQL)';
    f.hotOverReference = Number((cpuOf(hot) / ref.serverCpuUs).toFixed(2));
    f.coldOverReferenceCold = Number((cpuOf(colds[kind]) / ref.cold.serverCpuUs).toFixed(2));
    f.referenceColdOverHot = referenceColdOverHot;
    rows.push({ scenario: `sign_raw_payload, one hot organization, ${storeName} / reference server, server CPU per request`, concurrency: CONCURRENCY, serverCpuUs: f.hotOverReference });
    rows.push({ scenario: `sign_raw_payload, a random end user (cold), ${storeName} / the reference server's cold row, server CPU per request`, concurrency: CONCURRENCY, serverCpuUs: f.coldOverReferenceCold });
  }
  return { rows, figures, reference: { serverCpuUs: ref.serverCpuUs, coldServerCpuUs: ref.cold.serverCpuUs, coldOverHot: referenceColdOverHot, perSecond: ref.perSecond, floorP99ms: ref.floor.p99ms } };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      n: { type: 'string', default: '3000' },
      bulk: { type: 'string', default: '0' },
      'bulk-processes': { type: 'string' },
      keep: { type: 'boolean', default: false },
      reuse: { type: 'string' },
      stores: { type: 'string', default: 'sqlite,postgres' },
      'duration-ms': { type: 'string', default: '5000' },
      'warmup-ms': { type: 'string', default: '10000' },
    },
  });
  const started = new Date();
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const bulkProcesses = values['bulk-processes'] ? { sqlite: 1, postgres: Number(values['bulk-processes']) } : undefined;
  const out = await scaleRun({ n: Number(values.n), bulk: Number(values.bulk), bulkProcesses, keep: values.keep, reuse: values.reuse, stores: values.reuse ? ['postgres'] : values.stores.split(','), durationMs: Number(values['duration-ms']), warmupMs: Number(values['warmup-ms']) });
  console.log(`\nSigil scale bench: ${values.n} end users measured${Number(values.bulk) ? ` on ${values.bulk} built in bulk` : ''}, concurrency ${CONCURRENCY}, load average at the start ${load}, at the end ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  console.table(out.rows);
  for (const f of out.figures) {
    const { plans, bytesPerEndUserByObject, ...rest } = f;
    console.log(`\n${f.store}:`, JSON.stringify(rest, null, 1));
    console.log(`${f.store} bytes per end user by table and index:`, bytesPerEndUserByObject);
    for (const [type, plan] of Object.entries(plans ?? {})) console.log(`\nPostgreSQL plan, list_suborgs by ${type}:\n${plan}`);
  }
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  const file = join(ROOT, 'bench', 'results', `scale-${started.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ when: started.toISOString(), n: Number(values.n), bulk: Number(values.bulk), ...out }, null, 2));
  console.log(`written to ${file}`);
}
