// A PostgreSQL restart under a running `sigil serve` (docs/operator-guide.md "PostgreSQL with a
// standby", the step before failover: the database going away and coming back, as it does during a
// failover or a maintenance restart). Sigil runs on a PostgreSQL 15 cluster of the test's own (Debian's
// initdb and pg_ctl, as the postgres user, on a free port), serves the official client, then the cluster
// is stopped at once (`pg_ctl -m immediate`, as a crash) and started again. The process must live
// through it: requests while the database is down are refused with 503 (gRPC UNAVAILABLE: retry), and
// once it is back the same process serves reads and activities again without a restart. Before the fix
// the pool's idle connections, closed by the server, raised an 'error' event nobody heard and Node.js
// ended the process.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Turnkey } from '@turnkey/sdk-server';
import { initDeployment, serve, terminate, type RootCredentials } from '../helpers/sigil.js';

const BIN = '/usr/lib/postgresql/15/bin';
const runnable = existsSync(join(BIN, 'initdb')) && process.getuid?.() === 0;

let dir: string;
let port: number;
let sigil: ReturnType<typeof serve> & { url?: string };
let root: RootCredentials;
let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;

const asPostgres = (command: string, ...args: string[]) => execFileSync('runuser', ['-u', 'postgres', '--', join(BIN, command), ...args], { stdio: 'pipe', timeout: 60_000 });
const startCluster = () => asPostgres('pg_ctl', '-D', join(dir, 'data'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, '-l', join(dir, 'log'), '-w', 'start');
const stopCluster = () => asPostgres('pg_ctl', '-D', join(dir, 'data'), '-m', 'immediate', '-w', 'stop');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port: p } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return p;
}

const client = () => new Turnkey({ apiBaseUrl: sigil.url!, apiPublicKey: root.apiPublicKey, apiPrivateKey: root.apiPrivateKey, defaultOrganizationId: root.organizationId }).apiClient();

beforeAll(async () => {
  if (!runnable) return;
  dir = mkdtempSync(join(tmpdir(), 'sigil-pg-restart-'));
  chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
  asPostgres('initdb', '-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres');
  port = await freePort();
  startCluster();
  const env: NodeJS.ProcessEnv = { ...process.env, SIGIL_LOG_LEVEL: 'warn', DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres` };
  delete env.SIGIL_MASTER_KEY;
  const dataDir = join(dir, 'sigil');
  root = initDeployment(dataDir, env);
  sigil = serve(dataDir, env);
  sigil.child.on('exit', (code, signal) => (exited = { code, signal }));
  sigil.url = (await sigil.ready).url;
}, 120_000);

afterAll(async () => {
  if (!runnable) return;
  if (sigil) await terminate(sigil.child);
  try {
    stopCluster();
  } catch {
    // Already stopped.
  }
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!runnable)('a PostgreSQL restart under a running Sigil', () => {
  it('the process lives through it and serves again once the database is back, without a restart', async () => {
    const api = client();
    expect((await api.getWhoami({})).organizationId).toBe(root.organizationId);
    await api.createWallet({ walletName: 'before', accounts: [] });

    stopCluster();
    // While the database is down a request is refused with a clean 503 / gRPC UNAVAILABLE (retry),
    // never an internal error; it does not take the process with it.
    await expect(client().getWhoami({})).rejects.toMatchObject({ code: 14, message: expect.stringMatching(/database is unavailable/) });
    await expect(client().createWallet({ walletName: 'while down', accounts: [] })).rejects.toMatchObject({ code: 14 });
    expect(exited).toBeUndefined();

    startCluster();
    // The pool opens new connections on demand: the first requests after the restart may still meet
    // a connection the restart broke, so the test asks again a bounded number of times.
    let whoami: { organizationId: string } | undefined;
    for (let attempt = 0; attempt < 40 && !whoami; attempt++) {
      whoami = await client()
        .getWhoami({})
        .catch(() => undefined);
      if (!whoami) await new Promise((r) => setTimeout(r, 250));
    }
    expect(exited, sigil.stderr().slice(-2000)).toBeUndefined();
    expect(whoami?.organizationId).toBe(root.organizationId);
    const wallet = await client().createWallet({ walletName: 'after', accounts: [] });
    expect(wallet.walletId).toBeTruthy();
    const names = (await client().getWallets({})).wallets.map((w) => w.walletName);
    expect(names).toEqual(expect.arrayContaining(['before', 'after']));
    expect(names).not.toContain('while down');
  });
});
