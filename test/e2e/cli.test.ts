// The `sigil` command as a new user runs it: init (once, refusing a second time without changing
// anything), serve with ephemeral ports, start (init on first run, credentials printed once).
import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { p256 } from '@noble/curves/nist.js';
import { dbSnapshot } from '../helpers/db-snapshot.js';
import { dropSchema, freshDeploymentEnv, initDeployment, ROOT, runSigil, serve, SIGIL_BIN } from '../helpers/sigil.js';
import { sdkServerClient } from '../helpers/clients.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

function fresh() {
  const d = freshDeploymentEnv();
  cleanups.push(async () => {
    rmSync(d.dataDir, { recursive: true, force: true });
    if (d.databaseUrl) await dropSchema(d.databaseUrl);
  });
  return d;
}

describe('sigil init', () => {
  it('prints exactly one JSON object with hex keys that belong together', () => {
    const { dataDir, env } = fresh();
    const r = runSigil(['init', '--data-dir', dataDir, '--json'], env);
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const out = JSON.parse(lines[0]);
    expect(Object.keys(out).sort()).toEqual(['apiKeyId', 'apiPrivateKey', 'apiPublicKey', 'organizationId', 'signerPublicKey', 'userId']);
    expect(out.apiPublicKey).toMatch(/^0[23][0-9a-f]{64}$/);
    expect(out.apiPrivateKey).toMatch(/^[0-9a-f]{64}$/);
    expect(out.signerPublicKey).toMatch(/^04[0-9a-f]{128}$/);
    expect(Buffer.from(p256.getPublicKey(Buffer.from(out.apiPrivateKey, 'hex'), true)).toString('hex')).toBe(out.apiPublicKey);
    const keyFile = join(dataDir, 'master.key');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    // The signer's private key is not stored in plaintext anywhere in the data directory.
    expect(readFileSync(keyFile, 'utf8')).not.toContain(out.apiPrivateKey);
  });

  it('refuses a second init on the same directory and changes nothing', async () => {
    const { dataDir, databaseUrl, env } = fresh();
    initDeployment(dataDir, env);
    const before = await dbSnapshot({ dataDir, databaseUrl });
    const keyBefore = readFileSync(join(dataDir, 'master.key'));
    const r = runSigil(['init', '--data-dir', dataDir, '--json'], env);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/already initialized: .* holds a Sigil deployment; nothing was changed/);
    expect(await dbSnapshot({ dataDir, databaseUrl })).toEqual(before);
    expect(readFileSync(join(dataDir, 'master.key'))).toEqual(keyBefore);
  });

  it('uses SIGIL_MASTER_KEY instead of a key file when set, and serve refuses a wrong one', async () => {
    const { dataDir, env } = fresh();
    const withKey = { ...env, SIGIL_MASTER_KEY: 'ab'.repeat(32) };
    initDeployment(dataDir, withKey);
    expect(existsSync(join(dataDir, 'master.key'))).toBe(false);
    const wrong = serve(dataDir, { ...env, SIGIL_MASTER_KEY: 'cd'.repeat(32) });
    await expect(wrong.ready).rejects.toThrow(/the master key does not open this deployment/);
  });

  it('serve refuses an uninitialized deployment with a clear message', async () => {
    const { dataDir, env } = fresh();
    const s = serve(dataDir, { ...env, SIGIL_MASTER_KEY: 'ab'.repeat(32) });
    await expect(s.ready).rejects.toThrow(/not initialized: run "sigil init" first/);
  });
});

describe('sigil serve and start', () => {
  it('serve prints its listening line and SIGTERM exits cleanly', async () => {
    const { dataDir, env } = fresh();
    const root = initDeployment(dataDir, env);
    const s = serve(dataDir, env);
    const { url, authProxyUrl } = await s.ready;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(authProxyUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toBe(authProxyUrl);
    const me = await sdkServerClient({ url } as never, root, root.organizationId).getWhoami({});
    expect(me.userId).toBe(root.userId);
    const exited = new Promise<number | null>((r) => s.child.once('exit', (code) => r(code)));
    s.child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('start initializes on first run, prints the root credentials once, and serves', async () => {
    const { dataDir, env } = fresh();
    const runStart = () => {
      const child = spawn(process.execPath, [SIGIL_BIN, 'start', '--port', '0', '--auth-proxy-port', '0'], {
        env: { ...env, SIGIL_DATA_DIR: dataDir },
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      const ready = new Promise<string>((resolve, reject) => {
        child.stdout!.on('data', (d) => {
          out += d;
          if (/^listening /m.test(out)) resolve(out);
        });
        child.on('exit', (code) => reject(new Error(`start exited ${code}`)));
      });
      return { child, ready };
    };
    const first = runStart();
    const out1 = await first.ready;
    expect(out1).toMatch(/apiPrivateKey\s+[0-9a-f]{64}/);
    expect(out1).toMatch(/organizationId\s+[0-9a-f-]{36}/);
    first.child.kill('SIGTERM');
    await new Promise((r) => first.child.once('exit', r));
    const second = runStart();
    const out2 = await second.ready;
    expect(out2).not.toMatch(/apiPrivateKey/);
    second.child.kill('SIGTERM');
    await new Promise((r) => second.child.once('exit', r));
  });
});
