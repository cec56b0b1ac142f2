// `node bench/profile.mjs [sign_raw_payload|get_whoami|create_wallet|sign_cold] [postgres]`: runs one
// pre-stamped scenario (bench/prestamped.mjs) against a `sigil serve` started with `--cpu-prof`,
// then prints where the server's main thread spent its time: self time by source file and the
// heaviest functions. The figures behind docs/design.md "The hot path". `sign_cold` is the cold path
// (docs/design.md "The cold path (one sub-organization per end user)"): PROFILE_END_USERS (default
// 1500) end users are signed up first, then each signs once, so no request finds its organization
// cached.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Turnkey } from '@turnkey/sdk-server';
import { prestampedRows } from './prestamped.mjs';
import { dropPostgresSchema, prestamp, runLoad } from './loadgen.mjs';
import { bulkKey } from './scale-bulk.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'sigil.js');
const scenario = process.argv[2] ?? 'sign_raw_payload';
const postgres = process.argv[3] === 'postgres';

const dataDir = mkdtempSync(join(tmpdir(), 'sigil-profile-'));
const profDir = join(dataDir, 'prof');
const env = { ...process.env, SIGIL_LOG_LEVEL: 'warn', SIGIL_QUOTAS: 'wallets=1000000' };
delete env.DATABASE_URL;
if (postgres) {
  const u = new URL(process.env.SIGIL_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  u.searchParams.set('schema', `sigil_profile_${Date.now()}`);
  env.DATABASE_URL = u.toString();
}
const init = spawnSync(process.execPath, [BIN, 'init', '--data-dir', dataDir, '--json'], { env, encoding: 'utf8' });
if (init.status !== 0) throw new Error(init.stderr);
const root = JSON.parse(init.stdout);
const child = spawn(process.execPath, [...(process.env.PROFILE_REQUIRE ? ['--require', process.env.PROFILE_REQUIRE] : []), '--cpu-prof', '--cpu-prof-dir', profDir, BIN, 'serve', '--data-dir', dataDir, '--port', '0', '--auth-proxy-port', '0'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
const url = await new Promise((resolve) => {
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
    const m = /^listening (\S+) /m.exec(out);
    if (m) resolve(m[1]);
  });
});
const api = new Turnkey({ apiBaseUrl: url, apiPublicKey: root.apiPublicKey, apiPrivateKey: root.apiPrivateKey, defaultOrganizationId: root.organizationId }).apiClient();
const { addresses } = await api.createWallet({ walletName: 'profile', accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] });
/** sign_cold: the end users are signed up before the load starts; the load is one signature by each. */
let coldRequests;
if (scenario === 'sign_cold') {
  const seed = Math.random().toString(16).slice(2);
  const users = Array.from({ length: Number(process.env.PROFILE_END_USERS ?? 1500) }, (_, i) => ({ key: bulkKey(seed, i) }));
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < users.length) {
        const u = users[next++];
        const r = await api.createSubOrganization({
          subOrganizationName: `cold ${seed} ${next}`,
          rootUsers: [{ userName: 'end user', apiKeys: [{ apiKeyName: 'device', publicKey: u.key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] }],
          rootQuorumThreshold: 1,
          wallet: { walletName: 'default', accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] },
        });
        u.organizationId = r.subOrganizationId;
        u.address = r.wallet.addresses[0];
      }
    }),
  );
  coldRequests = users.map((u, i) =>
    prestamp(u.key, '/public/v1/submit/sign_raw_payload', 1, () =>
      JSON.stringify({ type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', timestampMs: String(Date.now()), organizationId: u.organizationId, parameters: { signWith: u.address, payload: i.toString(16).padStart(64, '0'), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' } }),
    )[0],
  );
}
async function coldRow() {
  const r = await runLoad({ url, requests: coldRequests, concurrency: 16, durationMs: 600_000, warmupMs: 0, sigilPid: child.pid });
  if (r.errors) console.error(`sign_cold: ${r.errors} errors, first: ${r.firstError}`);
  return [{ scenario: `sign_cold (each of ${coldRequests.length} end users once), ${postgres ? 'PostgreSQL' : 'SQLite'}`, requests: r.requests, errors: r.errors, perSecond: r.perSecond, p50ms: r.p50ms, p99ms: r.p99ms, serverCpuUs: r.serverCpuUs }];
}

// CPU of each of the server's threads during the load, by thread name (main, GC, pool, workers).
const { readdirSync: ls } = await import('node:fs');
const threads = () => {
  const out = new Map();
  for (const tid of ls(`/proc/${child.pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${child.pid}/task/${tid}/comm`, 'utf8').trim();
      const ns = Number(readFileSync(`/proc/${child.pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      out.set(`${name} ${tid}`, ns);
    } catch {}
  }
  return out;
};
const threadsBefore = threads();
// The profile's timestamps are CLOCK_MONOTONIC microseconds, as process.hrtime here: only the load counts.
const loadStart = Number(process.hrtime.bigint() / 1000n);
const [row] = scenario === 'sign_cold' ? await coldRow() : await prestampedRows({ label: postgres ? 'PostgreSQL' : 'SQLite', sigil: { url, pid: child.pid, root, signWith: addresses[0] }, names: [scenario], durationMs: Number(process.env.BENCH_DURATION_MS ?? 5000) });
const loadEnd = Number(process.hrtime.bigint() / 1000n);
const threadsAfter = threads();
console.table([row]);
const perThread = new Map();
for (const [k, v] of threadsAfter) {
  const name = k.replace(/ \d+$/, '').replace(/\d+$/, '#');
  perThread.set(name, (perThread.get(name) ?? 0) + (v - (threadsBefore.get(k) ?? 0)));
}
console.table([...perThread.entries()].filter(([, v]) => v > 0).sort((a, b) => b[1] - a[1]).map(([thread, ns]) => ({ thread, usPerRequest: Math.round(ns / 1000 / row.requests) })));
await new Promise((resolve) => {
  child.once('exit', resolve);
  child.kill('SIGTERM');
});

const profile = JSON.parse(readFileSync(join(profDir, readdirSync(profDir)[0]), 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = profile.timeDeltas;
let at = profile.startTime;
profile.samples.forEach((id, i) => {
  at += dt[i] ?? 0;
  if (at >= loadStart && at <= loadEnd) self.set(id, (self.get(id) ?? 0) + (dt[i + 1] ?? 0));
});
const total = [...self.values()].reduce((a, b) => a + b, 0);
const byFile = new Map();
const byFn = new Map();
for (const [id, us] of self) {
  const f = byId.get(id).callFrame;
  const file = f.url ? f.url.replace(/^file:\/\//, '').replace(ROOT, '').replace(/^.*node_modules\//, 'node_modules/').split('/').slice(0, 3).join('/') : `(${f.functionName || 'native'})`;
  byFile.set(file, (byFile.get(file) ?? 0) + us);
  const fn = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
  byFn.set(fn, (byFn.get(fn) ?? 0) + us);
}
// Inclusive time of the request path's main steps (a function's samples and its callees').
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const inclusive = new Map();
for (const [id, us] of self) {
  const seen = new Set();
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const name = byId.get(at).callFrame.functionName;
    if (!name || seen.has(name)) continue;
    seen.add(name);
    inclusive.set(name, (inclusive.get(name) ?? 0) + us);
  }
}
const STEPS = (process.env.PROFILE_STEPS ?? 'handle,readsFor,reads,authenticate,stampCaller,readStamp,verifyApiKeyStamp,enforceIpAllowlist,runActivity,validate,submit,decide,execute,signRawPayloads,resolveSigningTarget,complete,commitRecords,commitBatch,attempt,respond,render,renderActivity,settled,serialize,onSendEnd,runPreParsing,handleRequest').split(',');
console.table(STEPS.filter((n) => inclusive.has(n)).map((n) => ({ step: n, usPerRequest: Math.round(inclusive.get(n) / row.requests) })));
const top = (m, n) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => ({ where: k, ms: Math.round(v / 1000), pct: ((100 * v) / total).toFixed(1) }));
console.log(`main thread: ${Math.round(total / 1000)} ms sampled during the load, ${row.requests} requests: ${Math.round(total / row.requests)} µs each`);
console.table(top(byFile, 25));
console.table(top(byFn, 30));
rmSync(dataDir, { recursive: true, force: true });
if (postgres) await dropPostgresSchema(env.DATABASE_URL);
