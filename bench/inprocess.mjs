// `node bench/inprocess.mjs [sign_raw_payload|get_whoami|create_wallet] [count] [postgres]`: drives the
// request pipeline of an in-process Sigil (SQLite in a fresh data directory, or a fresh schema of the
// local PostgreSQL) with pre-stamped requests, no HTTP,
// 16 at a time, and prints the CPU this process spent per request — the pipeline's own cost, apart from
// HTTP and the client. Add --cpu-prof to node's flags to see where it goes.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { loadConfig } from '../dist/config/config.js';
import { startApp } from '../dist/cli/app.js';
import { dropPostgresSchema, ownPostgresCpuNs, prestamp } from './loadgen.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const scenario = process.argv[2] ?? 'sign_raw_payload';
const count = Number(process.argv[3] ?? 20000);
const dataDir = mkdtempSync(join(tmpdir(), 'sigil-inprocess-'));
const env = { ...process.env, SIGIL_QUOTAS: 'wallets=1000000' };
delete env.DATABASE_URL;
const postgres = process.argv[4] === 'postgres';
let schemaUrl;
if (postgres) {
  schemaUrl = new URL(process.env.SIGIL_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  schemaUrl.searchParams.set('schema', `sigil_inprocess_${Date.now()}`);
  env.DATABASE_URL = schemaUrl.toString();
}
const init = spawnSync(process.execPath, [join(ROOT, 'bin', 'sigil.js'), 'init', '--data-dir', dataDir, '--json'], { env, encoding: 'utf8' });
const root = JSON.parse(init.stdout);
const app = await startApp(loadConfig({ 'data-dir': dataDir, port: '0', 'auth-proxy-port': '0' }, env), pino({ level: 'warn' }, pino.destination(2)));
// PostgreSQL's own CPU for the run: the backends this process opened (application_name, src/store/db.ts).
const pgCpu = async () => (postgres ? ownPostgresCpuNs(env.DATABASE_URL) : 0);

const call = async (r) => {
  const res = await app.pipeline.handle({ kind: r.path.includes('/submit/') ? 'submit' : 'query', operation: r.path.split('/').pop(), rawBody: r.body, headers: { 'x-stamp': r.stamp }, clientAddress: '127.0.0.1', identity: {}, responseHeaders: {} });
  return JSON.stringify(res.body);
};
const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' };
const now = Date.now();
const [walletReq] = prestamp(root, '/public/v1/submit/create_wallet', 1, () => JSON.stringify({ type: 'ACTIVITY_TYPE_CREATE_WALLET', timestampMs: String(now), organizationId: root.organizationId, parameters: { walletName: 'inprocess', accounts: [ETH] } }));
const signWith = JSON.parse(await call(walletReq)).activity.result.createWalletResult.addresses[0];
const bodies = {
  sign_raw_payload: (i) => JSON.stringify({ type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', timestampMs: String(now + i), organizationId: root.organizationId, parameters: { signWith, payload: i.toString(16).padStart(64, '0'), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' } }),
  get_whoami: () => JSON.stringify({ organizationId: root.organizationId }),
  create_wallet: (i) => JSON.stringify({ type: 'ACTIVITY_TYPE_CREATE_WALLET', timestampMs: String(now + i), organizationId: root.organizationId, parameters: { walletName: `w-${i}`, accounts: [ETH] } }),
};
const path = { sign_raw_payload: '/public/v1/submit/sign_raw_payload', get_whoami: '/public/v1/query/get_whoami', create_wallet: '/public/v1/submit/create_wallet' }[scenario];
const requests = prestamp(root, path, count, bodies[scenario]);
let next = 0;
for (let i = 0; i < 200; i++) await call(requests[next++]);
const pg0 = await pgCpu();
const c0 = process.cpuUsage();
const t0 = performance.now();
const done0 = next;
await Promise.all(Array.from({ length: 16 }, async () => { while (next < requests.length) await call(requests[next++]); }));
const n = next - done0;
const c = process.cpuUsage(c0);
const pgUs = postgres ? ((await pgCpu()) - pg0) / 1000 / n : 0;
console.log(`${scenario}${postgres ? ' (PostgreSQL)' : ''}: ${n} requests, ${Math.round(n / ((performance.now() - t0) / 1000))}/s, ${((c.user + c.system) / n).toFixed(0)} µs CPU each (pipeline only, this process)${postgres ? `, PostgreSQL ${pgUs.toFixed(0)} µs` : ''}`);
await app.close();
rmSync(dataDir, { recursive: true, force: true });
if (schemaUrl) await dropPostgresSchema(schemaUrl.toString());
