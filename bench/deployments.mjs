// The deployments the bench runs against (bench/run.mjs, bench/scale.mjs): `sigil init` and
// `sigil serve` as child processes of the bench, on embedded SQLite in a temporary data directory or
// on a PostgreSQL schema of their own (SIGIL_BENCH_DATABASE_URL, default the local test database).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dropPostgresSchema } from './loadgen.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'sigil.js');

/** `sigil init` then `sigil serve` in `dataDir`; resolves with the URL, root credentials and process. */
export async function startSigil(dataDir, env) {
  return { root: initOnly(dataDir, env), ...(await serveOnly(dataDir, env)) };
}

/** `sigil init` in `dataDir`; returns the root credentials it prints. */
export function initOnly(dataDir, env) {
  const init = spawnSync(process.execPath, [BIN, 'init', '--data-dir', dataDir, '--json'], { env, encoding: 'utf8' });
  if (init.status !== 0) throw new Error(init.stderr);
  return JSON.parse(init.stdout);
}

/** `sigil serve` on an initialized deployment; resolves with its URL once it listens. */
export function serveOnly(dataDir, env, extraArgs = []) {
  const child = spawn(process.execPath, [BIN, 'serve', '--data-dir', dataDir, '--port', '0', '--auth-proxy-port', '0', ...extraArgs], {
    env: { ...env, SIGIL_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const m = /^listening (\S+) /m.exec(out);
      if (m) resolve({ url: m[1], child });
    });
    child.on('exit', (c) => reject(new Error(`serve exited ${c}`)));
  });
}

/** A fresh deployment in its own PostgreSQL schema (SIGIL_BENCH_DATABASE_URL, default the local test database). */
export function postgresDeployment(tag) {
  const base = new URL(process.env.SIGIL_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  base.searchParams.set('schema', `sigil_bench_${tag}_${Date.now()}`);
  const dir = mkdtempSync(join(tmpdir(), 'sigil-bench-pg-'));
  const pgEnv = { ...process.env, DATABASE_URL: base.toString() };
  const init = spawnSync(process.execPath, [BIN, 'init', '--data-dir', dir, '--json'], { env: pgEnv, encoding: 'utf8' });
  if (init.status !== 0) throw new Error(init.stderr);
  return { dir, env: pgEnv, root: JSON.parse(init.stdout), schema: base.searchParams.get('schema'), url: base };
}

export async function dropBenchSchema(deployment) {
  await dropPostgresSchema(deployment.url.toString());
  rmSync(deployment.dir, { recursive: true, force: true });
}

export const stop = (child) => new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : (child.once('exit', resolve), child.kill('SIGTERM'))));
