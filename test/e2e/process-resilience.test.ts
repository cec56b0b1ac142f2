// Regression tests of "one request must never stall the service" (docs/limits.md "Limits") for the
// serving process itself, through the real `sigil serve`:
// fault 3, a log reader that stalls or goes away never blocks requests and never keeps SIGTERM from
// finishing (lines are dropped and counted in /metrics instead); fault 6, `--workers N --port 0`
// keeps the port it announced when every worker dies at once. A process that hangs is caught by a
// deadline far past SIGIL_SHUTDOWN_TIMEOUT_MS; no duration is asserted.
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { rmSync } from 'node:fs';
import { SIGIL_BIN, ROOT, dropSchema, freshDeploymentEnv, initDeployment, serve, type RootCredentials } from '../helpers/sigil.js';
import { rawPost, sdkServerClient } from '../helpers/clients.js';
import { sleep } from '../helpers/raw-http.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function deployment() {
  const d = freshDeploymentEnv();
  const root = initDeployment(d.dataDir, d.env);
  cleanups.push(async () => {
    rmSync(d.dataDir, { recursive: true, force: true });
    if (d.databaseUrl) await dropSchema(d.databaseUrl);
  });
  return { ...d, root };
}

function killOnCleanup(child: ChildProcess) {
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
}

/** The exit code, or 'hung' when the process is still there `ms` after the call (then it is killed). */
function exitWithin(child: ChildProcess, ms: number): Promise<number | null | 'hung'> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve('hung');
    }, ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** Requests that each write a log line (a refusal is logged at info), sent one after the other. */
async function logLines(url: string, n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) statuses.push((await rawPost(`${url}/public/v1/query/whoami`, { organizationId: '00000000-0000-4000-8000-000000000000' })).status);
  return statuses;
}

async function droppedLines(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^sigil_log_lines_dropped_total\{pid="\d+"\} (\d+)$/m.exec(text);
  expect(m, 'sigil_log_lines_dropped_total in /metrics').not.toBeNull();
  return Number(m![1]);
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

const SHUTDOWN_MS = 3000;
/** Far past SHUTDOWN_MS: only a process that never exits reaches it. */
const HANG_MS = 20_000;

describe('fault 3: logging never blocks, shutdown always finishes', () => {
  it('a stalled log reader: requests are answered, lines are dropped and counted, SIGTERM exits', async () => {
    const d = deployment();
    const env = { ...d.env, SIGIL_LOG_LEVEL: 'info', SIGIL_LOG_BUFFER_BYTES: '4096', SIGIL_SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_MS) };
    const s = serve(d.dataDir, env);
    killOnCleanup(s.child);
    const { url } = await s.ready;
    // Nobody reads stderr any more: the pipe (64 KB) and the paused stream's buffer here (its
    // highWaterMark: 16 KB before Node 22, 64 KB since) fill and stay full. Lines are sent until the
    // server counts drops, up to far more than those buffers hold.
    s.child.stderr!.pause();
    const statuses: number[] = [];
    let dropped = 0;
    while (dropped === 0 && statuses.length < 4000) {
      statuses.push(...(await logLines(url, 200)));
      dropped = await droppedLines(url);
    }
    expect(statuses.every((st) => st === 401)).toBe(true);
    expect(dropped).toBeGreaterThan(0);
    s.child.kill('SIGTERM');
    expect(await exitWithin(s.child, HANG_MS)).toBe(0);
  }, 60_000);

  it('a log reader that has gone: SIGTERM exits (stdout and stderr both piped to a process that exited)', async () => {
    const d = deployment();
    const [port, authProxyPort] = [await freePort(), await freePort()];
    // The reader takes one byte and exits, like `sigil serve 2>&1 | head -c 1`.
    const reader = spawn('head', ['-c', '1'], { stdio: ['pipe', 'ignore', 'ignore'] });
    killOnCleanup(reader);
    const child = spawn(process.execPath, [SIGIL_BIN, 'serve', '--data-dir', d.dataDir, '--port', String(port), '--auth-proxy-port', String(authProxyPort), '--frames-port', '0'], {
      cwd: ROOT,
      env: { ...d.env, SIGIL_LOG_LEVEL: 'info', SIGIL_SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_MS) },
      stdio: ['ignore', reader.stdin!, reader.stdin!],
    });
    killOnCleanup(child);
    reader.stdin!.destroy(); // Only sigil holds the pipe's writing end now.
    const url = `http://127.0.0.1:${port}`;
    for (let up = false; !up; ) {
      if (child.exitCode !== null) throw new Error(`sigil serve exited with ${child.exitCode}`);
      up = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
      if (!up) await sleep(100);
    }
    await new Promise((r) => (reader.exitCode !== null ? r(null) : reader.once('exit', r)));
    expect((await logLines(url, 50)).every((st) => st === 401)).toBe(true);
    expect(await droppedLines(url)).toBeGreaterThan(0);
    child.kill('SIGTERM');
    expect(await exitWithin(child, HANG_MS)).toBe(0);
  }, 60_000);
});

describe('fault 6: --workers keeps the port it announced', () => {
  it('every worker killed at once: the restarted workers listen on the announced ports', async () => {
    const d = deployment();
    const s = serve(d.dataDir, { ...d.env, SIGIL_LOG_LEVEL: 'info' }, ['--workers', '2']);
    killOnCleanup(s.child);
    const { url, authProxyUrl } = await s.ready;
    const workerPids = () => [...s.stderr().matchAll(/"pid":(\d+),"msg":"worker listening"/g)].map((m) => Number(m[1]));
    const root: RootCredentials = d.root;
    expect((await sdkServerClient({ url } as never, root, root.organizationId).getWhoami({ organizationId: root.organizationId })).userId).toBe(root.userId);
    const first = workerPids();
    expect(first).toHaveLength(2);
    for (const pid of first) process.kill(pid, 'SIGKILL');
    while (workerPids().length < 4) {
      if (s.child.exitCode !== null) throw new Error(`the primary exited: ${s.stderr()}`);
      await sleep(100);
    }
    // Both restarted workers listen: the announced URLs answer.
    expect((await sdkServerClient({ url } as never, root, root.organizationId).getWhoami({ organizationId: root.organizationId })).userId).toBe(root.userId);
    expect((await fetch(`${authProxyUrl}/healthz`)).status).toBe(200);
    s.child.kill('SIGTERM');
    expect(await exitWithin(s.child, HANG_MS)).toBe(0);
  }, 60_000);
});
