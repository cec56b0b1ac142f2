// `npm run bench`: starts a real Sigil (embedded SQLite, durable commits) and drives it through the
// official clients, printing requests/s and p50/p99 latency per scenario and concurrency, plus the
// raw-crypto ceiling of one signing request (stamp verify + sign, no HTTP, no database) measured in
// the same run. Results are also written to bench/results/<date>.json; no test asserts them.
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Turnkey } from '@turnkey/sdk-server';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { serializeTransaction, parseEther } from 'viem';
import pg from 'pg';
import { prestampedRows } from './prestamped.mjs';
import { inprocessRun } from './inprocess.mjs';
import { dropBenchSchema, postgresDeployment, serveOnly, startSigil, stop } from './deployments.mjs';
import { scaleRun } from './scale.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 4000);
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : undefined;


function signRequest(client, orgId, signWith, i) {
  return client.signRawPayload({
    type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
    timestampMs: String(Date.now()),
    organizationId: orgId,
    parameters: { signWith, payload: (i.toString(16) + 'ef'.repeat(32)).slice(0, 64).padStart(64, '0'), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' },
  });
}

const PRESTAMPED = ['sign_raw_payload', 'get_whoami', 'create_wallet'];

/** Each process's share of the paced comparison: this fraction of what one process answered at c16. */
const PACED_SHARE = 0.4;

/**
 * The pre-stamped rows on PostgreSQL with `serve --workers 1` and `--workers 2` (docs/operator-guide.md "Benchmarks"): the
 * server's and the database's CPU per request, round trips per request, and the ratios of two
 * processes to one, twice: at c16 as fast as answers come, and paced so that each process carries
 * the same load (PACED_SHARE of one process's c16 throughput each; two processes get twice the
 * rate). At c16 on this 2-core machine the second process halves each process's load and shares the
 * cores with the first, the client and the database, and a process's CPU per request depends
 * strongly on its load (more requests per wake-up); the paced pair compares the processes
 * themselves: what a second process adds per request (locks, retries, invalidations).
 */
async function postgresPrestamped() {
  const out = [];
  const byWorkers = {};
  const pacedByWorkers = {};
  let paceOf;
  for (const workers of [1, 2]) {
    const d = postgresDeployment(`p${workers}`);
    const { url: u, child: c } = await serveOnly(d.dir, { ...d.env, SIGIL_QUOTAS: 'wallets=1000000' }, ['--workers', String(workers)]);
    const sdk = new Turnkey({ apiBaseUrl: u, apiPublicKey: d.root.apiPublicKey, apiPrivateKey: d.root.apiPrivateKey, defaultOrganizationId: d.root.organizationId }).apiClient();
    const { addresses: a } = await sdk.createWallet({ walletName: 'bench', accounts: [ETH] });
    const client = new pg.Client({ connectionString: (() => { const x = new URL(d.url); x.searchParams.delete('schema'); return x.toString(); })() });
    await client.connect();
    const sigil = { url: u, pid: c.pid, root: d.root, signWith: a[0] };
    const rows = await prestampedRows({ label: `PostgreSQL, --workers ${workers}`, sigil, names: PRESTAMPED, durationMs: DURATION_MS, pgClient: client });
    paceOf ??= Object.fromEntries(PRESTAMPED.map((name, i) => [name, Math.max(10, Math.round(PACED_SHARE * rows[i].perSecond))]));
    const paced = await prestampedRows({
      label: `PostgreSQL, --workers ${workers}`,
      sigil,
      names: PRESTAMPED,
      durationMs: DURATION_MS,
      pgClient: client,
      ratePerSecond: Object.fromEntries(PRESTAMPED.map((name) => [name, paceOf[name] * workers])),
    });
    await client.end();
    byWorkers[workers] = rows;
    pacedByWorkers[workers] = paced;
    out.push(...rows, ...paced);
    await stop(c);
    await dropBenchSchema(d);
  }
  PRESTAMPED.forEach((name, i) => {
    const [one, two] = [byWorkers[1][i], byWorkers[2][i]];
    out.push({
      scenario: `${name}: --workers 2 / --workers 1 at c16 (throughput, CPU per request)`,
      concurrency: 16,
      perSecond: Number((two.perSecond / one.perSecond).toFixed(2)),
      serverCpuUs: Number(((two.serverCpuUs + two.postgresCpuUs) / (one.serverCpuUs + one.postgresCpuUs)).toFixed(2)),
    });
    const [pacedOne, pacedTwo] = [pacedByWorkers[1][i], pacedByWorkers[2][i]];
    out.push({
      scenario: `${name}: --workers 2 / --workers 1 at ${paceOf[name]}/s per process (throughput, CPU per request)`,
      concurrency: 16,
      perSecond: Number((pacedTwo.perSecond / pacedOne.perSecond).toFixed(2)),
      serverCpuUs: Number(((pacedTwo.serverCpuUs + pacedTwo.postgresCpuUs) / (pacedOne.serverCpuUs + pacedOne.postgresCpuUs)).toFixed(2)),
    });
  });
  return out;
}

/**
 * The scale-out question again without HTTP (bench/inprocess.mjs): the request pipeline of one
 * process, then of two on the same PostgreSQL deployment sharing 16 requests in flight. Here no load
 * generator takes a share of the two cores, so what a second process costs is Sigil's alone: any
 * serialization between the processes shows as lost throughput.
 */
async function pipelineScaling() {
  const [one, two] = [await inprocessRun({ postgres: true, processes: 1 }), await inprocessRun({ postgres: true, processes: 2 })];
  const row = (r) => ({ scenario: `sign_raw_payload pipeline only (no HTTP), PostgreSQL, ${r.processes} process${r.processes > 1 ? 'es' : ''}`, concurrency: 16, requests: r.requests, errors: 0, perSecond: r.perSecond, serverCpuUs: r.cpuUs, postgresCpuUs: r.postgresCpuUs });
  return [
    row(one),
    row(two),
    {
      scenario: 'sign_raw_payload pipeline only: 2 processes / 1 (throughput, CPU per request)',
      concurrency: 16,
      perSecond: Number((two.perSecond / one.perSecond).toFixed(2)),
      serverCpuUs: Number(((two.cpuUs + two.postgresCpuUs) / (one.cpuUs + one.postgresCpuUs)).toFixed(2)),
    },
  ];
}

/** sign_raw_payload on PostgreSQL with `serve --workers 1` and `--workers 2`: the ratio is the cost of a second process. */
async function workerScaling() {
  const out = [];
  const perSecond = {};
  for (const workers of [1, 2]) {
    const d = postgresDeployment(`w${workers}`);
    const { url: u, child: c } = await serveOnly(d.dir, d.env, ['--workers', String(workers)]);
    const stamper = new ApiKeyStamper({ apiPublicKey: d.root.apiPublicKey, apiPrivateKey: d.root.apiPrivateKey });
    const sdk = new Turnkey({ apiBaseUrl: u, apiPublicKey: d.root.apiPublicKey, apiPrivateKey: d.root.apiPrivateKey, defaultOrganizationId: d.root.organizationId }).apiClient();
    const { addresses: a } = await sdk.createWallet({ walletName: 'bench', accounts: [ETH] });
    const client = new TurnkeyClient({ baseUrl: u }, stamper);
    const r = await measure(`sign_raw_payload on PostgreSQL, --workers ${workers}`, 16, (i) => signRequest(client, d.root.organizationId, a[0], i));
    perSecond[workers] = r.perSecond;
    out.push(r);
    await stop(c);
    await dropBenchSchema(d);
  }
  out.push({ scenario: 'workers 2 / workers 1 throughput ratio', concurrency: 16, requests: NaN, errors: 0, perSecond: Number((perSecond[2] / perSecond[1]).toFixed(2)), p50ms: NaN, p99ms: NaN });
  return out;
}

/**
 * p99 of sign_raw_payload while two processes on one PostgreSQL are restarted one after the other
 * (SIGTERM drains, then a new process starts); the client sends to either and retries on the other
 * when one refuses the connection, as a load balancer would.
 */
async function rollingRestart() {
  const d = postgresDeployment('rolling');
  const procs = [await serveOnly(d.dir, d.env), await serveOnly(d.dir, d.env)];
  const stamper = new ApiKeyStamper({ apiPublicKey: d.root.apiPublicKey, apiPrivateKey: d.root.apiPrivateKey });
  const sdk = new Turnkey({ apiBaseUrl: procs[0].url, apiPublicKey: d.root.apiPublicKey, apiPrivateKey: d.root.apiPrivateKey, defaultOrganizationId: d.root.organizationId }).apiClient();
  const { addresses: a } = await sdk.createWallet({ walletName: 'bench', accounts: [ETH] });
  const up = [true, true];
  let retries = 0;
  const send = async (i) => {
    for (let attempt = 0; ; attempt++) {
      const which = (i + attempt) % 2;
      if (!up[which] && attempt < 4) continue;
      try {
        return await signRequest(new TurnkeyClient({ baseUrl: procs[which].url }, stamper), d.root.organizationId, a[0], i);
      } catch (e) {
        if (attempt >= 4) throw e;
        retries++;
      }
    }
  };
  const duration = Math.max(DURATION_MS, 6000);
  const restarts = (async () => {
    for (const which of [0, 1]) {
      await new Promise((r) => setTimeout(r, duration / 4));
      up[which] = false;
      await stop(procs[which].child);
      procs[which] = await serveOnly(d.dir, d.env);
      up[which] = true;
    }
  })();
  const r = await measure('sign_raw_payload during a rolling restart of 2 processes (PostgreSQL)', 16, send, duration);
  await restarts;
  r.retries = retries;
  await Promise.all(procs.map((p) => stop(p.child)));
  await dropBenchSchema(d);
  return [r];
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function measure(name, concurrency, fn, durationMs = DURATION_MS) {
  const latencies = [];
  let errors = 0;
  const deadline = performance.now() + durationMs;
  const started = performance.now();
  let seq = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          await fn(seq++);
          latencies.push(performance.now() - t0);
        } catch (e) {
          errors++;
          if (errors === 1) console.error(`${name}: ${e.message}`);
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    scenario: name,
    concurrency,
    requests: latencies.length,
    errors,
    perSecond: Math.round(latencies.length / elapsed),
    p50ms: Number(percentile(latencies, 50).toFixed(2)),
    p99ms: Number(percentile(latencies, 99).toFixed(2)),
  };
}

/** What one signing request costs in crypto alone: stamp verification plus an ECDSA signature. */
async function rawCryptoCeiling(root, when = '') {
  const { verifyP256Der } = await import('../dist/crypto/p256.js');
  const { getSigningKey } = await import('../dist/crypto/sign.js');
  const { randomBytes, createHash } = await import('node:crypto');
  const stamper = new ApiKeyStamper({ apiPublicKey: root.apiPublicKey, apiPrivateKey: root.apiPrivateKey });
  const body = JSON.stringify({ type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', timestampMs: String(Date.now()), organizationId: root.organizationId, parameters: { signWith: '0x', payload: '00'.repeat(32) } });
  const stamp = JSON.parse(Buffer.from((await stamper.stamp(body)).stampHeaderValue, 'base64url').toString());
  const key = getSigningKey('CURVE_SECP256K1', new Uint8Array(randomBytes(32)));
  const bytes = Buffer.from(body);
  const n = 5000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    if (!verifyP256Der(stamp.publicKey, bytes, stamp.signature)) throw new Error('stamp did not verify');
    key.signPayload(createHash('sha256').update(bytes).update(String(i)).digest(), 'HASH_FUNCTION_NO_OP');
  }
  const perSecond = Math.round(n / ((performance.now() - t0) / 1000));
  return { scenario: `raw crypto ceiling (stamp verify + secp256k1 sign, one core)${when}`, concurrency: 1, requests: n, errors: 0, perSecond, p50ms: NaN, p99ms: NaN };
}

const dataDir = mkdtempSync(join(tmpdir(), 'sigil-bench-'));
// The bench creates more wallets and users than the default quotas allow one organization.
const env = { ...process.env, SIGIL_QUOTAS: 'wallets=1000000,users=1000000,policies=1000' };
delete env.DATABASE_URL;
const { url, root, child } = await startSigil(dataDir, env);
const api = new Turnkey({ apiBaseUrl: url, apiPublicKey: root.apiPublicKey, apiPrivateKey: root.apiPrivateKey, defaultOrganizationId: root.organizationId }).apiClient();
const http = new TurnkeyClient({ baseUrl: url }, new ApiKeyStamper({ apiPublicKey: root.apiPublicKey, apiPrivateKey: root.apiPrivateKey }));
const orgId = root.organizationId;
const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' };
const { addresses } = await api.createWallet({ walletName: 'bench', accounts: [ETH] });
const signWith = addresses[0];
const unsignedTx = serializeTransaction({ type: 'eip1559', chainId: 1, nonce: 1, to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', value: parseEther('1'), maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n, gas: 21000n }).slice(2);

const want = (name) => !ONLY || ONLY.has(name);
const results = [];
const run = Date.now();
if (want('raw')) results.push(await rawCryptoCeiling(root));
if (want('prestamped')) results.push(...(await prestampedRows({ label: 'SQLite', sigil: { url, pid: child.pid, root, signWith }, names: PRESTAMPED, durationMs: DURATION_MS })));
for (const concurrency of [1, 16]) {
  if (want('get_whoami')) results.push(await measure('get_whoami (sdk-server)', concurrency, () => api.getWhoami({})));
  if (want('create_users'))
    results.push(
      await measure('create_users (sdk-server)', concurrency, (i) =>
        api.createUsers({ users: [{ userName: `bench-${run}-${concurrency}-${i}`, userEmail: `b${i}@example.com`, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }] }),
      ),
    );
}
for (const concurrency of [1, 16, 64]) {
  if (want('sign_raw_payload'))
    results.push(
      await measure('sign_raw_payload secp256k1 ETH (@turnkey/http)', concurrency, (i) =>
        http.signRawPayload({
          type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
          timestampMs: String(Date.now()),
          organizationId: orgId,
          parameters: { signWith, payload: (i.toString(16) + 'ab'.repeat(32)).slice(0, 64).padStart(64, '0'), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' },
        }),
      ),
    );
  if (want('sign_transaction'))
    results.push(
      await measure('sign_transaction EIP-1559 (@turnkey/http)', concurrency, () =>
        http.signTransaction({
          type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
          timestampMs: String(Date.now()),
          organizationId: orgId,
          parameters: { signWith, unsignedTransaction: unsignedTx, type: 'TRANSACTION_TYPE_ETHEREUM' },
        }),
      ),
    );
}
if (want('policies')) {
  // Policy evaluation cost: a non-root signer allowed by one policy, among 10 and 100 policies.
  const { generateP256KeyPair } = await import('@turnkey/crypto');
  const k = generateP256KeyPair();
  const signerKey = { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
  const { userIds } = await api.createUsers({ users: [{ userName: `policy-signer-${run}`, apiKeys: [{ apiKeyName: 'bench', publicKey: k.publicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }] });
  const signerHttp = new TurnkeyClient({ baseUrl: url }, new ApiKeyStamper(signerKey));
  const sign = (client) => (i) =>
    client.signRawPayload({
      type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
      timestampMs: String(Date.now()),
      organizationId: orgId,
      parameters: { signWith, payload: (i.toString(16) + 'cd'.repeat(32)).slice(0, 64).padStart(64, '0'), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' },
    });
  results.push(await measure('sign_raw_payload, 0 policies (root user)', 16, sign(http)));
  await api.createPolicy({
    policyName: `bench allow ${run}`,
    effect: 'EFFECT_ALLOW',
    consensus: `approvers.any(user, user.id == '${userIds[0]}')`,
    condition: `activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN' && wallet_account.address == '${signWith}'`,
    notes: 'bench',
  });
  let count = 1;
  for (const target of [10, 100]) {
    for (; count < target; count++) {
      await api.createPolicy({
        policyName: `bench filler ${run} ${count}`,
        effect: count % 2 ? 'EFFECT_DENY' : 'EFFECT_ALLOW',
        condition: `activity.type == 'ACTIVITY_TYPE_DELETE_WALLETS' && activity.resource == 'WALLET' && activity.action in ['DELETE', 'EXPORT'] || activity.kind == 'FILLER_${count}'`,
        notes: 'bench filler',
      });
    }
    results.push(await measure(`sign_raw_payload, ${target} policies (non-root user)`, 16, sign(signerHttp)));
  }
}
if (want('create_wallet')) {
  for (const count of [1, 100]) {
    const accounts = Array.from({ length: count }, (_, i) => ({ ...ETH, path: `m/44'/60'/0'/0/${i}` }));
    const r = await measure(`create_wallet with ${count} account(s) (sdk-server)`, 1, (i) => api.createWallet({ walletName: `w-${run}-${count}-${i}`, accounts }), Math.min(DURATION_MS, 3000));
    results.push(r);
  }
}
// The log's file after the SQLite rows' minutes of steady writes: it starts over past ~16 MB
// (src/store/wal-sync.ts), so it stays near that plus what 250 ms of load writes, however long
// the load lasts.
const sqliteLogMb = Math.round(statSync(join(dataDir, 'sigil.sqlite-wal')).size / 2 ** 20);
child.kill('SIGTERM');
rmSync(dataDir, { recursive: true, force: true });
if (want('prestamped_pg')) results.push(...(await postgresPrestamped()));
if (want('workers')) results.push(...(await workerScaling()));
if (want('pipeline_workers')) results.push(...(await pipelineScaling()));
if (want('rolling_restart')) results.push(...(await rollingRestart()));
// The scale bench's short form (bench/scale.mjs; run it on its own for the full one): a few hundred
// end users on each store, signups, cold and hot signatures, lookups, bytes per end user, and the
// reference server's hot row in the same run.
let scale;
if (want('scale')) {
  scale = await scaleRun({ n: Number(process.env.BENCH_SCALE_N ?? 300), durationMs: Math.min(DURATION_MS, 3000), warmupMs: 3000 });
  results.push(...scale.rows);
}

// The same pure computation again: how much the machine's own speed moved during the run (on a
// shared virtual machine it drifts; compare it with the first row before comparing other rows).
if (want('raw')) results.push(await rawCryptoCeiling(root, ', at the end of the run'));

console.log(`\nSigil bench: SQLite with durable commits (PostgreSQL where a row says so), ${DURATION_MS} ms per row, clients in one separate process`);
console.table(results);
mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
const file = join(ROOT, 'bench', 'results', `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
console.log(`SQLite write-ahead log after the SQLite rows: ${sqliteLogMb} MB`);
if (scale) for (const f of scale.figures) console.log(`scale, ${f.store}: ${f.bytesPerEndUser} bytes per end user at rest; cold/hot ${f.coldOverHot} (the reference's own ${f.referenceColdOverHot}); hot/reference ${f.hotOverReference}; cold/reference cold ${f.coldOverReferenceCold}; lookup p99 alone ${Math.max(...Object.values(f.lookupP99msPaced))} ms at most (host floor ${f.hostFloorP99ms} ms); RSS ${Object.values(f.rssMb).join(', ')} MB`);
writeFileSync(file, JSON.stringify({ when: new Date().toISOString(), durationMs: DURATION_MS, sqliteLogMb, results, scale: scale?.figures }, null, 2));
console.log(`written to ${file}`);
