// `node bench/velocity-history.mjs [count] [postgres]`: the cost of a velocity-controlled signature
// as history grows (docs/velocity-controls.md "Velocity controls": a signature at 1,000,000 recorded
// transfers should cost within 10% of one at 0). Drives the request pipeline of an in-process Sigil
// (as bench/inprocess.mjs does: pre-stamped requests, no HTTP, 16 at a time) with `sign_transaction` of
// Ethereum transfers on chain 1, each counted by a chainAssetTransfer SUM control (ether, rolling day,
// per wallet) that a DENY policy reads, so every request measures the control, reserves under the
// group's lock and records. It prints the CPU per request of this process (and, on PostgreSQL, of its
// backends):
//   1. at 0: a wallet whose group has no history;
//   2. at 1,000,000: after 1,000,000 transfers' worth of history is written straight into the store
//      (setup, not the path under test): the signing wallet's group holds 1,000,000 transfers in the
//      100 buckets of its day (10,000 each), and 9,999 other wallets' groups hold 100 buckets each,
//      so the counts table has ~1,000,000 rows;
//   3. at 1,000,000 in one bucket: another wallet whose 1,000,000 transfers all fall in the current
//      bucket (a burst), on the same table: history and table size without the window's spread;
//   4. a fresh wallet on the full table, measured in turn with 2 and 3, so that what a busy machine
//      drifts by over the run can be told from what the history costs;
// after a warm-up run that is not compared; each figure is the median of three rounds, since a
// shared machine moves single runs by several percent.
// Why it holds: a rolling window's group keeps a running total beside its buckets, so a check reads
// the total and the few buckets that fell out since the last record, by primary key; neither the
// group's history, nor the window's 100 buckets, nor the table's size is read.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { serializeTransaction } from 'viem';
import { loadConfig } from '../dist/config/config.js';
import { startApp } from '../dist/cli/app.js';
import { dropPostgresSchema, ownPostgresCpuNs, prestamp } from './loadgen.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const count = Number(process.argv[2] ?? 3000);
const postgres = process.argv[3] === 'postgres';
const dataDir = mkdtempSync(join(tmpdir(), 'sigil-velocity-bench-'));
const env = { ...process.env };
delete env.DATABASE_URL;
let schemaUrl;
if (postgres) {
  schemaUrl = new URL(process.env.SIGIL_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  schemaUrl.searchParams.set('schema', `sigil_velocity_bench_${Date.now()}`);
  env.DATABASE_URL = schemaUrl.toString();
}
const init = spawnSync(process.execPath, [join(ROOT, 'bin', 'sigil.js'), 'init', '--data-dir', dataDir, '--json'], { env, encoding: 'utf8' });
const root = JSON.parse(init.stdout);
const app = await startApp(loadConfig({ 'data-dir': dataDir, port: '0', 'auth-proxy-port': '0' }, env), pino({ level: 'warn' }, pino.destination(2)));

/** Runs SQL on a connection of its own (setup only): better-sqlite3 on the data directory's file, or pg. */
async function withDb(fn) {
  if (!postgres) {
    // The driver build this Node.js loads (src/store/sqlite-driver.ts; better-sqlite3 13 crashes on Node 20).
    const { default: Sqlite } = await import('../dist/store/sqlite-driver.js');
    const db = new Sqlite(join(dataDir, 'sigil.sqlite'));
    try {
      return await fn({ run: (text, params = []) => db.prepare(text).run(...params), all: (text, params = []) => db.prepare(text).all(...params), tx: (f) => db.transaction(f)() });
    } finally {
      db.close();
    }
  }
  const { default: pg } = await import('pg');
  const u = new URL(env.DATABASE_URL);
  const schema = u.searchParams.get('schema');
  u.searchParams.delete('schema');
  const c = new pg.Client({ connectionString: u.toString(), options: `-c search_path=${schema}` });
  await c.connect();
  const dollar = (text) => {
    let n = 0;
    return text.replace(/\?/g, () => `$${++n}`);
  };
  try {
    return await fn({ run: (text, params = []) => c.query(dollar(text), params), all: async (text, params = []) => (await c.query(dollar(text), params)).rows, tx: async (f) => f() });
  } finally {
    await c.end();
  }
}

// PostgreSQL's own CPU: the backends this process opened (application_name, src/store/db.ts).
const pgCpu = async () => (postgres ? ownPostgresCpuNs(env.DATABASE_URL) : 0);

const call = async (r) => {
  const res = await app.pipeline.handle({ kind: r.path.includes('/submit/') ? 'submit' : 'query', operation: r.path.split('/').pop(), rawBody: r.body, headers: { 'x-stamp': r.stamp }, clientAddress: '127.0.0.1', identity: {}, responseHeaders: {} });
  // Errors answer a body with a code; every request here must complete.
  if (res.body?.activity?.status !== 'ACTIVITY_STATUS_COMPLETED') throw new Error(`${r.path}: ${JSON.stringify(res.body).slice(0, 400)}`);
  return res.body;
};
let stampTime = Date.now();
const submit = (path, type, parameters) =>
  call(prestamp(root, `/public/v1/submit/${path}`, 1, () => JSON.stringify({ type, timestampMs: String(stampTime++), organizationId: root.organizationId, parameters }))[0]);

const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' };
const newWallet = async (name) => {
  const r = (await submit('create_wallet', 'ACTIVITY_TYPE_CREATE_WALLET', { walletName: name, accounts: [ETH] })).activity.result.createWalletResult;
  return { id: r.walletId, address: r.addresses[0] };
};
const DAY = 86_400;
const controlId = (
  await submit('create_velocity_control', 'ACTIVITY_TYPE_CREATE_VELOCITY_CONTROL', {
    name: 'ether a day per wallet',
    identifier: 'daily_eth',
    dataSource: { chainAssetTransfer: { definition: [{ caip19: 'eip155:1/slip44:60', decimals: '18' }] } },
    aggregation: {
      method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM',
      operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL',
      threshold: '100000000',
      window: { rolling: { duration: String(DAY) } },
      groupBy: { wallet: {} },
    },
  })
).activity.result.createVelocityControlResult.velocityControlId;
await submit('create_policy', 'ACTIVITY_TYPE_CREATE_POLICY_V3', {
  policyName: 'daily ether limit',
  effect: 'EFFECT_DENY',
  condition: "activity.kind == 'SIGN_TRANSACTION' && !controls.daily_eth",
  notes: '',
});

const unsigned = (nonce) =>
  serializeTransaction({ type: 'eip1559', chainId: 1, nonce, to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', value: 10n ** 15n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n, gas: 21_000n });

/** CPU µs per signature with `wallet`, `count` of them after 200 to warm up. */
async function measureSigning(wallet, label) {
  const requests = prestamp(root, '/public/v1/submit/sign_transaction', count + 200, (i) =>
    JSON.stringify({ type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2', timestampMs: String(stampTime++), organizationId: root.organizationId, parameters: { signWith: wallet.address, unsignedTransaction: unsigned(i), type: 'TRANSACTION_TYPE_ETHEREUM' } }),
  );
  let next = 0;
  for (let i = 0; i < 200; i++) await call(requests[next++]);
  const pg0 = await pgCpu();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: 16 }, async () => { while (next < requests.length) await call(requests[next++]); }));
  const c = process.cpuUsage(c0);
  const pgUs = postgres ? ((await pgCpu()) - pg0) / 1000 / count : 0;
  const us = (c.user + c.system) / count;
  const rows = await withDb(async (db) => (await db.all('select count(*) as n from velocity_counts'))[0].n);
  console.log(`${label}: ${count} signatures, ${Math.round(count / ((performance.now() - t0) / 1000))}/s, ${us.toFixed(0)} µs CPU each${postgres ? `, PostgreSQL ${pgUs.toFixed(0)} µs` : ''} (velocity_counts rows: ${rows})`);
  return us + pgUs;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ROUNDS = 3;
// Warm-up: the first thousands of signatures of a process cost more (JIT, caches), whatever the history.
await measureSigning(await newWallet('warm-up'), 'warm-up (not compared)');
const at0 = [];
for (let r = 0; r < ROUNDS; r++) at0.push(await measureSigning(await newWallet(`fresh ${r}`), `at 0 recorded transfers, round ${r + 1}`));

// Setup of the history, straight into the store: time buckets only, as the first slice wrote them;
// the warm-up signatures of each measurement write the group's running total (velocity-limits.ts).
const heavy = await newWallet('heavy');
const burst = await newWallet('burst');
const bucketWidth = Math.floor(DAY / 100) * 1000;
const current = Math.floor(Date.now() / bucketWidth);
const perBucket = 10_000n;
const wei = 10n ** 15n;
const seeded = Date.now();
await withDb(async (db) => {
  if (!postgres) {
    await db.tx(() => {
      const group = 'insert into velocity_groups (control_id, group_key, organization_id) values (?, ?, ?)';
      const bucket = 'insert into velocity_counts (control_id, group_key, bucket, amount) values (?, ?, ?, ?)';
      db.run(group, [controlId, `wallet:${heavy.id}`, root.organizationId]);
      db.run(group, [controlId, `wallet:${burst.id}`, root.organizationId]);
      db.run(bucket, [controlId, `wallet:${burst.id}`, current, String(1_000_000n * wei)]);
      for (let b = current - 99; b <= current; b++) db.run(bucket, [controlId, `wallet:${heavy.id}`, b, String(perBucket * wei)]);
      for (let g = 0; g < 9_999; g++) {
        const key = `wallet:other-${g}`;
        db.run(group, [controlId, key, root.organizationId]);
        for (let b = current - 99; b <= current; b++) db.run(bucket, [controlId, key, b, String(wei)]);
      }
    });
  } else {
    await db.run('insert into velocity_groups (control_id, group_key, organization_id) values (?, ?, ?)', [controlId, `wallet:${heavy.id}`, root.organizationId]);
    await db.run('insert into velocity_counts (control_id, group_key, bucket, amount) select ?, ?, b, ? from generate_series(?::bigint, ?::bigint) b', [controlId, `wallet:${heavy.id}`, String(perBucket * wei), current - 99, current]);
    await db.run('insert into velocity_groups (control_id, group_key, organization_id) values (?, ?, ?)', [controlId, `wallet:${burst.id}`, root.organizationId]);
    await db.run('insert into velocity_counts (control_id, group_key, bucket, amount) values (?, ?, ?, ?)', [controlId, `wallet:${burst.id}`, current, String(1_000_000n * wei)]);
    await db.run("insert into velocity_groups (control_id, group_key, organization_id) select ?, 'wallet:other-' || g, ? from generate_series(0, 9998) g", [controlId, root.organizationId]);
    await db.run("insert into velocity_counts (control_id, group_key, bucket, amount) select ?, 'wallet:other-' || g, b, ? from generate_series(0, 9998) g, generate_series(?::bigint, ?::bigint) b", [controlId, String(wei), current - 99, current]);
    await db.run('analyze velocity_counts');
  }
});
console.log(`seeded 1,000,000 transfers (100 buckets × 10,000 for the signing wallet, 999,900 more rows for 9,999 other wallets) and 1,000,000 in one bucket for another, in ${((Date.now() - seeded) / 1000).toFixed(1)} s`);
// Interleaved, so the drift of a busy machine (or of PostgreSQL's own housekeeping) over the run
// falls on each the same: the spread history, the burst, and a fresh wallet on the same full table.
const at1m = [];
const atBurst = [];
const fresh = [];
for (let r = 0; r < ROUNDS; r++) {
  at1m.push(await measureSigning(heavy, `at 1,000,000 recorded transfers, round ${r + 1}`));
  atBurst.push(await measureSigning(burst, `at 1,000,000 recorded transfers in one bucket (a burst), round ${r + 1}`));
  fresh.push(await measureSigning(await newWallet(`fresh after ${r}`), `a fresh wallet (0 of its own) on the full table, round ${r + 1}`));
}
const [m0, m1, mb, mf] = [median(at0), median(at1m), median(atBurst), median(fresh)];
const pct = (x, base = m0) => `${x >= base ? '+' : ''}${(((x - base) / base) * 100).toFixed(1)}%`;
console.log(
  `median CPU per signature: ${m0.toFixed(0)} µs at 0 (empty table); ${m1.toFixed(0)} µs (${pct(m1)}) at 1,000,000 spread over the day's 100 buckets; ` +
    `${mb.toFixed(0)} µs (${pct(mb)}) at 1,000,000 in one bucket; ${mf.toFixed(0)} µs (${pct(mf)}) for a fresh wallet on the full table, ` +
    `against which the spread history is ${pct(m1, mf)} and the burst ${pct(mb, mf)}`,
);
await app.close();
rmSync(dataDir, { recursive: true, force: true });
if (schemaUrl) await dropPostgresSchema(schemaUrl.toString());
