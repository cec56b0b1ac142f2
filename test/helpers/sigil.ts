// Starts a real Sigil for a test file: `sigil init --json` in a fresh data directory, then
// `sigil serve` on ephemeral ports, exactly as a user would run them (compiled dist/, no mocks).
// With SIGIL_TEST_DATABASE_URL set, each instance gets its own PostgreSQL schema in that database.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const SIGIL_BIN = join(ROOT, 'bin', 'sigil.js');

export interface RootCredentials {
  organizationId: string;
  userId: string;
  apiKeyId: string;
  apiPublicKey: string;
  apiPrivateKey: string;
  signerPublicKey: string;
}

export interface SigilInstance {
  url: string;
  authProxyUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  env: NodeJS.ProcessEnv;
  root: RootCredentials;
  process: ChildProcess;
  stderr: () => string;
  stop(): Promise<void>;
}

export function testDatabaseUrl(): string | undefined {
  return process.env.SIGIL_TEST_DATABASE_URL || undefined;
}

/** A fresh data directory and, on PostgreSQL, a fresh schema. */
export function freshDeploymentEnv(): { dataDir: string; databaseUrl: string | undefined; env: NodeJS.ProcessEnv } {
  const dataDir = mkdtempSync(join(tmpdir(), 'sigil-test-'));
  const base = testDatabaseUrl();
  let databaseUrl: string | undefined;
  if (base) {
    const u = new URL(base);
    u.searchParams.set('schema', `sigil_test_${randomBytes(6).toString('hex')}`);
    databaseUrl = u.toString();
  }
  const env: NodeJS.ProcessEnv = { ...process.env, SIGIL_LOG_LEVEL: process.env.SIGIL_LOG_LEVEL ?? 'warn' };
  delete env.DATABASE_URL;
  delete env.SIGIL_MASTER_KEY;
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  return { dataDir, databaseUrl, env };
}

export function runSigil(args: string[], env: NodeJS.ProcessEnv, cwd = ROOT) {
  return spawnSync(process.execPath, [SIGIL_BIN, ...args], { env, cwd, encoding: 'utf8', timeout: 60_000 });
}

export function initDeployment(dataDir: string, env: NodeJS.ProcessEnv): RootCredentials {
  const r = runSigil(['init', '--data-dir', dataDir, '--json'], env);
  if (r.status !== 0) throw new Error(`sigil init failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout) as RootCredentials;
}

/** Spawns `sigil serve` and resolves once it prints its `listening` line. */
export function serve(dataDir: string, env: NodeJS.ProcessEnv, extraArgs: string[] = []) {
  const child = spawn(process.execPath, [SIGIL_BIN, 'serve', '--data-dir', dataDir, '--port', '0', '--auth-proxy-port', '0', ...extraArgs], {
    env,
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const ready = new Promise<{ url: string; authProxyUrl: string }>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /^listening (\S+) (\S+)$/m.exec(out);
      if (m) resolve({ url: m[1], authProxyUrl: m[2] });
    });
    child.on('exit', (code) => reject(new Error(`sigil serve exited with ${code}: ${stderr}`)));
  });
  return { child, ready, stderr: () => stderr };
}

/** SIGTERM to a serving process, resolving once it has exited. */
export async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Starts a fresh deployment; `extraEnv` adds settings such as SMTP or a short bundle lifetime. */
export async function startSigil(extraEnv: Record<string, string> = {}): Promise<SigilInstance> {
  const { dataDir, databaseUrl, env } = freshDeploymentEnv();
  Object.assign(env, extraEnv);
  const root = initDeployment(dataDir, env);
  const { child, ready, stderr } = serve(dataDir, env);
  const { url, authProxyUrl } = await ready;
  return {
    url,
    authProxyUrl,
    dataDir,
    databaseUrl,
    env,
    root,
    process: child,
    stderr,
    stop: async () => {
      await terminate(child);
      rmSync(dataDir, { recursive: true, force: true });
      if (databaseUrl) await dropSchema(databaseUrl);
    },
  };
}

/**
 * Another `sigil serve` process on the same deployment (data directory and database) as `instance`:
 * for scale-out tests. Stopping it leaves the deployment to `instance`.
 */
export async function serveAnother(instance: SigilInstance): Promise<SigilInstance> {
  const { child, ready, stderr } = serve(instance.dataDir, instance.env);
  const { url, authProxyUrl } = await ready;
  return {
    ...instance,
    url,
    authProxyUrl,
    process: child,
    stderr,
    stop: () => terminate(child),
  };
}

/** Removes a test instance's PostgreSQL schema. */
export async function dropSchema(databaseUrl: string): Promise<void> {
  const u = new URL(databaseUrl);
  const schema = u.searchParams.get('schema');
  if (!schema) return;
  u.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: u.toString() });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}
