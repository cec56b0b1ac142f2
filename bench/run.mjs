// `npm run bench`: starts a real Sigil (embedded SQLite, durable commits) and drives it through the
// official @turnkey/sdk-server client, reporting requests/s and p50/p99 latency per scenario and
// concurrency. Figures are printed and written to bench/results/<date>.json; no test asserts them.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Turnkey } from '@turnkey/sdk-server';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'sigil.js');
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);

function startSigil(dataDir, env) {
  const init = spawnSync(process.execPath, [BIN, 'init', '--data-dir', dataDir, '--json'], { env, encoding: 'utf8' });
  if (init.status !== 0) throw new Error(init.stderr);
  const root = JSON.parse(init.stdout);
  const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dataDir, '--port', '0', '--auth-proxy-port', '0'], {
    env: { ...env, SIGIL_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /^listening (\S+) /m.exec(out);
      if (m) resolve({ url: m[1], root, child });
    });
    child.on('exit', (c) => reject(new Error(`serve exited ${c}`)));
  });
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function measure(name, concurrency, fn) {
  const latencies = [];
  let errors = 0;
  const deadline = performance.now() + DURATION_MS;
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

const dataDir = mkdtempSync(join(tmpdir(), 'sigil-bench-'));
const env = { ...process.env };
delete env.DATABASE_URL;
const { url, root, child } = await startSigil(dataDir, env);
const api = new Turnkey({
  apiBaseUrl: url,
  apiPublicKey: root.apiPublicKey,
  apiPrivateKey: root.apiPrivateKey,
  defaultOrganizationId: root.organizationId,
}).apiClient();

const results = [];
const run = Date.now();
for (const concurrency of [1, 16]) {
  results.push(await measure('get_whoami', concurrency, () => api.getWhoami({})));
  results.push(
    await measure('create_users', concurrency, (i) =>
      api.createUsers({
        users: [{ userName: `bench-${run}-${concurrency}-${i}`, userEmail: `b${i}@example.com`, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }],
      }),
    ),
  );
}
child.kill('SIGTERM');
rmSync(dataDir, { recursive: true, force: true });

console.log(`\nSigil bench (SQLite, durable commits, ${DURATION_MS} ms per row, official @turnkey/sdk-server client in one process)`);
console.table(results);
mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
const file = join(ROOT, 'bench', 'results', `${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(file, JSON.stringify({ when: new Date().toISOString(), durationMs: DURATION_MS, results }, null, 2));
console.log(`written to ${file}`);
