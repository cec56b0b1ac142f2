// Starts a real Sigil for a test file, in a fresh data directory, its HTTP servers on ephemeral ports
// of 127.0.0.1 so the official SDK clients talk to it over real HTTP (compiled dist/, no mocks).
// By default in the test's own process: the same initialization as `sigil init`
// (src/cli/main.ts initialize) and the same composition as `sigil serve` (src/cli/app.ts startApp:
// config from the environment, store, barrier, registry, pipeline, both Fastify servers), which
// saves each file a `sigil init` and a `sigil serve` process start (~2 s of CPU each on this
// machine). `startSigil(env, { process: true })` runs `sigil init --json` and `sigil serve` as a user
// would, for what needs a process: signals, crashes, restarts, workers, its stdout and stderr.
// Measured on 12 in-process files (sessions, ip-allowlists, wallets, policies-crud, session-profiles,
// mfa-policies, velocity-controls, api-only-users, sub-organizations, otp, verified-contacts,
// core-client), runs alternated on a machine at load 10-20: 54 and 50 s of CPU as processes, 39 and
// 43 s in-process (wall 181/147 s against 98/137 s).
// SIGIL_TEST_PROCESS=1 runs every file's Sigil as a process, as before the harness (to compare, or to
// rule the harness out when a test fails).
// With SIGIL_TEST_DATABASE_URL set, each instance gets its own PostgreSQL schema in that database.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Writable } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import type * as AppModule from '../../src/cli/app.js';
import type * as MainModule from '../../src/cli/main.js';
import type * as ConfigModule from '../../src/config/config.js';
import type * as LogSinkModule from '../../src/cli/log-sink.js';

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
  /** The `sigil serve` process; only with `{ process: true }` (in-process instances have none). */
  process: ChildProcess;
  /** What the server logged (its stderr; in-process, the lines its logger wrote). */
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

export interface StartOptions {
  /** Run `sigil init` and `sigil serve` as processes instead of in the test's process. */
  process?: boolean;
}

/**
 * Starts a fresh deployment; `extraEnv` adds settings such as SMTP or a short bundle lifetime, read
 * as `sigil serve` reads its environment.
 */
export async function startSigil(extraEnv: Record<string, string> = {}, options: StartOptions = {}): Promise<SigilInstance> {
  const { dataDir, databaseUrl, env } = freshDeploymentEnv();
  Object.assign(env, extraEnv);
  if (!options.process && process.env.SIGIL_TEST_PROCESS !== '1') return startInProcess(dataDir, databaseUrl, env);
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

/** A module of the compiled tree, loaded by Node itself (vitest.config.ts keeps dist/ external). */
const compiled = <T>(path: string): Promise<T> => import(pathToFileURL(join(ROOT, 'dist', path)).href) as Promise<T>;

/** Init and serve in this process, with the flags `serve` gets from startSigil's process form. */
async function startInProcess(dataDir: string, databaseUrl: string | undefined, env: NodeJS.ProcessEnv): Promise<SigilInstance> {
  const [{ loadConfig }, { initialize }, { startApp, makeLogger }, { LogSink }] = await Promise.all([
    compiled<typeof ConfigModule>('config/config.js'),
    compiled<typeof MainModule>('cli/main.js'),
    compiled<typeof AppModule>('cli/app.js'),
    compiled<typeof LogSinkModule>('cli/log-sink.js'),
  ]);
  const config = loadConfig({ 'data-dir': dataDir, port: '0', 'auth-proxy-port': '0' }, env);
  const { result: root } = await initialize(config);
  let logged = '';
  const out = new Writable({
    write(chunk, _encoding, done) {
      logged += chunk;
      done();
    },
  });
  const logger = makeLogger(config.logLevel, new LogSink(out, config.logBufferBytes));
  const app = await startApp(config, logger);
  const instance = {
    url: app.publicUrl,
    authProxyUrl: app.authProxyUrl,
    dataDir,
    databaseUrl,
    env,
    root,
    stderr: () => logged,
    stop: async () => {
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
      if (databaseUrl) await dropSchema(databaseUrl);
    },
  };
  // Not enumerable, so spreading an instance (serveAnother) does not trip it.
  return Object.defineProperty(instance, 'process', {
    get(): never {
      throw new Error('this Sigil runs in the test process: start it with startSigil(env, { process: true }) to have a process');
    },
  }) as SigilInstance;
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
