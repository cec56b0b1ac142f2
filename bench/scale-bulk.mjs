// The scale bench's bulk build (bench/scale.mjs `--bulk M`; docs/operator-guide.md "A million end
// users (`bench/scale.mjs`)"): M end users signed up through the same code path as the measured ones (stamped
// create_sub_organization V7 requests through Sigil's one request pipeline, each prepared outside any
// transaction and recorded in a grouped commit, activity and audit included), without HTTP: the
// pipeline is driven in-process by `processes` processes opened on the deployment, 32 requests in
// flight each. Run before the deployment's server starts, so on SQLite the builder is its only writer.
//
// Each end user's API key is derived from the run's seed and the user's index, so the bench can stamp
// as any of them later without keeping a million keys: it keeps only a random sample of the users
// built (their sub-organization and address) for the cold signatures and the lookups.
import { fork } from 'node:child_process';
import { createECDH, createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { ownPostgresCpuNs, stamperFor } from './loadgen.mjs';

const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' };
const IN_FLIGHT = 32;
const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

/** End user `i`'s API key, derived from `seed` (hex P-256 keys, as @turnkey/crypto gives them). */
export function bulkKey(seed, i) {
  let d = createHash('sha256').update(`${seed}:${i}`).digest();
  // A hash at or past the curve's order (odds 2^-32) is hashed again.
  while (BigInt(`0x${d.toString('hex')}`) >= P256_ORDER || d.every((b) => b === 0)) d = createHash('sha256').update(d).digest();
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  return { apiPublicKey: ecdh.getPublicKey('hex', 'compressed'), apiPrivateKey: d.toString('hex') };
}

/** What end user `i` of a bulk run is created with (sub-organization name, user name, contacts). */
export function bulkUser(tag, i) {
  return { name: `bulk ${tag} ${i}`, userName: `bulk user ${tag} ${i}`, email: `b${i}.${tag}@example.com`, phone: `+1666${String(i).padStart(8, '0')}` };
}

/** The signup body of end user `i` (the measured signups' shape). */
export function signupBody(organizationId, u, key, timestampMs) {
  return JSON.stringify({
    type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7',
    timestampMs: String(timestampMs),
    organizationId,
    parameters: {
      subOrganizationName: u.name,
      rootUsers: [{ userName: u.userName, userEmail: u.email, userPhoneNumber: u.phone, apiKeys: [{ apiKeyName: 'device', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
      wallet: { walletName: 'default', accounts: [ETH] },
    },
  });
}

/** One builder process: end users from, from + step, ... below `count`. */
async function child({ dataDir, root, seed, tag, from, step, count, sample }) {
  const { loadConfig } = await import('../dist/config/config.js');
  const { startApp } = await import('../dist/cli/app.js');
  const app = await startApp(loadConfig({ 'data-dir': dataDir, port: '0', 'auth-proxy-port': '0' }, process.env), pino({ level: 'warn' }, pino.destination(2)));
  const sampled = new Set(sample);
  const kept = [];
  // One signing key for every request: the root user's (what prestamp would import per call).
  const stamp = stamperFor(root);
  let next = from;
  let done = 0;
  // PostgreSQL's share: the CPU of the backends this process opened.
  const pgCpu = async () => (process.env.DATABASE_URL ? ownPostgresCpuNs(process.env.DATABASE_URL) : 0);
  const pg0 = await pgCpu();
  const c0 = process.cpuUsage();
  const report = () => process.send({ progress: done, at: Date.now() });
  // Often enough that each tenth of the whole run is seen apart, rarely enough to cost nothing.
  const every = Math.max(1, Math.min(500, Math.floor(count / step / 40)));
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) {
        const i = next;
        next += step;
        const key = bulkKey(seed, i);
        const u = bulkUser(tag, i);
        const body = Buffer.from(signupBody(root.organizationId, u, key, Date.now()));
        const res = await app.pipeline.handle({ kind: 'submit', operation: 'create_sub_organization', rawBody: body, headers: { 'x-stamp': stamp(body) }, clientAddress: '127.0.0.1', identity: {}, responseHeaders: {} });
        const result = res.body?.activity?.result?.createSubOrganizationResultV7;
        if (!result) throw new Error(`bulk signup ${i} failed: ${JSON.stringify(res.body).slice(0, 300)}`);
        if (sampled.has(i)) kept.push({ i, organizationId: result.subOrganizationId, address: result.wallet.addresses[0] });
        if (++done % every === 0) report();
      }
    }),
  );
  report();
  const cpu = process.cpuUsage(c0);
  process.send({ finished: true, kept, cpuUs: cpu.user + cpu.system, postgresCpuUs: ((await pgCpu()) - pg0) / 1000 });
  await app.close();
  process.exit(0);
}

/**
 * Builds `count` end users on the (initialized, not serving) deployment in `dataDir` with `processes`
 * processes; resolves with the users built per second by tenths of `count`, the overall rate, the
 * builders' and their PostgreSQL backends' CPU per user, and the sampled users with their keys.
 */
export async function bulkBuild({ dataDir, env, root, count, processes = 1, sampleSize = 2000, log = (m) => console.error(m) }) {
  const seed = Math.random().toString(16).slice(2);
  const tag = Math.random().toString(16).slice(2, 8);
  const sample = [...new Set(Array.from({ length: Math.min(sampleSize, count) }, () => Math.floor(Math.random() * count)))];
  const progress = new Array(processes).fill(0);
  const tenths = [];
  const t0 = Date.now();
  let cpuUs = 0;
  let postgresCpuUs = 0;
  const kept = [];
  await Promise.all(
    Array.from({ length: processes }, (_, k) => {
      const p = fork(fileURLToPath(import.meta.url), [], {
        env: { ...env, SIGIL_BULK_CHILD: JSON.stringify({ dataDir, root, seed, tag, from: k, step: processes, count, sample }) },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      return new Promise((resolve, reject) => {
        p.on('message', (m) => {
          if (m.progress !== undefined) {
            progress[k] = m.progress;
            const total = progress.reduce((a, b) => a + b, 0);
            while (tenths.length < 10 && total >= ((tenths.length + 1) * count) / 10) {
              tenths.push(m.at - t0);
              log(`bulk build: ${total} of ${count} end users, ${Math.round(total / ((m.at - t0) / 1000))}/s so far`);
            }
          }
          if (m.finished) {
            cpuUs += m.cpuUs;
            postgresCpuUs += m.postgresCpuUs;
            kept.push(...m.kept);
          }
        });
        p.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`bulk builder ${k} exited ${code}`))));
      });
    }),
  );
  const elapsedMs = Date.now() - t0;
  const perSlice = tenths.map((ms, s) => Math.round(count / 10 / ((ms - (s === 0 ? 0 : tenths[s - 1])) / 1000)));
  return {
    perSecond: Math.round(count / (elapsedMs / 1000)),
    perSlice,
    elapsedMs,
    builderCpuUs: Math.round(cpuUs / count),
    postgresCpuUs: Math.round(postgresCpuUs / count),
    users: kept.map((k) => ({ ...bulkUser(tag, k.i), key: bulkKey(seed, k.i), organizationId: k.organizationId, address: k.address })),
  };
}

if (process.env.SIGIL_BULK_CHILD) {
  child(JSON.parse(process.env.SIGIL_BULK_CHILD)).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
