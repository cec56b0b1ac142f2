// Operator commands and process management (docs/operator-guide.md "The `sigil` command") through the
// real `sigil` command: rotate-master-key while a server serves (it serves on; a new process unseals
// with the new key only), backup while serving and restore into a new data directory that then serves
// the data, config without secrets, `serve --workers 2` (both workers answer through
// @turnkey/sdk-server, each with its own boot proof; a killed worker is replaced), and SIGTERM draining
// in-flight requests. Runs on SQLite, and on PostgreSQL with SIGIL_TEST_DATABASE_URL (backup/restore
// then point to pg_dump).
import { afterEach, describe, expect, it } from 'vitest';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { dbSnapshot } from '../helpers/db-snapshot.js';
import { dropSchema, freshDeploymentEnv, initDeployment, runSigil, serve, testDatabaseUrl, type RootCredentials } from '../helpers/sigil.js';
import { activityBody, sdkServerClient } from '../helpers/clients.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function fresh() {
  const d = freshDeploymentEnv();
  cleanups.push(async () => {
    rmSync(d.dataDir, { recursive: true, force: true });
    if (d.databaseUrl) await dropSchema(d.databaseUrl);
  });
  return d;
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((r) => child.once('exit', (code) => r(code)));
}

/** `sigil serve` stopped with SIGTERM at the end of the test. */
async function serving(dataDir: string, env: NodeJS.ProcessEnv, extraArgs: string[] = []) {
  const s = serve(dataDir, env, extraArgs);
  cleanups.push(async () => {
    if (s.child.exitCode === null && s.child.signalCode === null) {
      s.child.kill('SIGTERM');
      await exitOf(s.child);
    }
  });
  return { ...s, ...(await s.ready) };
}

function api(url: string, root: RootCredentials) {
  return sdkServerClient({ url } as never, root, root.organizationId);
}

const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } as const;

function ethAccounts(n: number) {
  return Array.from({ length: n }, (_, i) => ({ ...ETH, path: `m/44'/60'/0'/0/${i}` }));
}

async function sign(url: string, root: RootCredentials, signWith: string) {
  const sig = await api(url, root).signRawPayload({ signWith, payload: '0x' + randomBytes(32).toString('hex'), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' });
  expect(sig.r).toMatch(/^[0-9a-f]{64}$/);
}

const keyFileOf = (dataDir: string) => readFileSync(join(dataDir, 'master.key'), 'utf8').trim();

describe('sigil rotate-master-key', () => {
  it('key file: the running server serves on, a new process unseals with the new key, the old key no longer opens it', async () => {
    const { dataDir, env } = fresh();
    const root = initDeployment(dataDir, env);
    const running = await serving(dataDir, env);
    const { addresses } = await api(running.url, root).createWallet({ walletName: 'before', accounts: [ETH] });
    const oldKey = keyFileOf(dataDir);

    const r = runSigil(['rotate-master-key', '--data-dir', dataDir], env);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/Rotated the master key/);
    expect(r.stdout).not.toContain(oldKey);
    const newKey = keyFileOf(dataDir);
    expect(newKey).toMatch(/^[0-9a-f]{64}$/);
    expect(newKey).not.toBe(oldKey);
    expect(r.stdout).not.toContain(newKey);
    expect(statSync(join(dataDir, 'master.key')).mode & 0o777).toBe(0o600);
    // By default the old key is gone and no rotation file is left behind.
    expect(readdirSync(dataDir).filter((f) => f.startsWith('master.key'))).toEqual(['master.key']);

    // The running process holds the data key: signing (which opens sealed keys) and creating work.
    await sign(running.url, root, addresses[0]);
    await api(running.url, root).createWallet({ walletName: 'during', accounts: [ETH] });

    // A process started now reads the new key file and unseals.
    const second = await serving(dataDir, env);
    await sign(second.url, root, addresses[0]);
    expect((await api(second.url, root).getWallets({})).wallets.map((w) => w.walletName).sort()).toEqual(['before', 'during']);

    // The old key no longer opens the deployment.
    const withOld = serve(dataDir, { ...env, SIGIL_MASTER_KEY: oldKey });
    await expect(withOld.ready).rejects.toThrow(/the master key does not open this deployment/);

    // --keep-old keeps the previous key, mode 600, beside the new one.
    const kept = runSigil(['rotate-master-key', '--data-dir', dataDir, '--keep-old'], env);
    expect(kept.status).toBe(0);
    const old = readdirSync(dataDir).filter((f) => f.startsWith('master.key.old-'));
    expect(old).toHaveLength(1);
    expect(kept.stdout).toContain(old[0]);
    expect(readFileSync(join(dataDir, old[0]), 'utf8').trim()).toBe(newKey);
    expect(statSync(join(dataDir, old[0])).mode & 0o777).toBe(0o600);
    expect(keyFileOf(dataDir)).not.toBe(newKey);
    await sign(running.url, root, addresses[0]);
    await sign(second.url, root, addresses[0]);
    const third = await serving(dataDir, env);
    await sign(third.url, root, addresses[0]);
  });

  it('SIGIL_MASTER_KEY: prints the new key once; only the new key opens the deployment; SIGIL_NEW_MASTER_KEY is used as given', async () => {
    const { dataDir, env } = fresh();
    const oldKey = randomBytes(32).toString('hex');
    const withOld = { ...env, SIGIL_MASTER_KEY: oldKey };
    const root = initDeployment(dataDir, withOld);
    const running = await serving(dataDir, withOld);
    const { addresses } = await api(running.url, root).createWallet({ walletName: 'env', accounts: [ETH] });

    const r = runSigil(['rotate-master-key', '--data-dir', dataDir], withOld);
    expect(r.status).toBe(0);
    const m = /New master key \(shown once; store it now\): ([0-9a-f]{64})/.exec(r.stdout);
    expect(m).not.toBeNull();
    const newKey = m![1];
    expect(r.stdout.split(newKey)).toHaveLength(2);
    expect(r.stdout).toMatch(/Set SIGIL_MASTER_KEY to the new key/);
    expect(existsSync(join(dataDir, 'master.key'))).toBe(false);

    await sign(running.url, root, addresses[0]);
    await expect(serve(dataDir, withOld).ready).rejects.toThrow(/the master key does not open this deployment/);
    const withNew = { ...env, SIGIL_MASTER_KEY: newKey };
    const second = await serving(dataDir, withNew);
    await sign(second.url, root, addresses[0]);

    // A key made by the operator's secret store, in base64: used, never printed.
    const chosen = randomBytes(32);
    const r2 = runSigil(['rotate-master-key', '--data-dir', dataDir], { ...withNew, SIGIL_NEW_MASTER_KEY: chosen.toString('base64') });
    expect(r2.status).toBe(0);
    expect(r2.stdout).not.toContain(chosen.toString('hex'));
    expect(r2.stdout).not.toContain(chosen.toString('base64'));
    await expect(serve(dataDir, withNew).ready).rejects.toThrow(/the master key does not open this deployment/);
    const third = await serving(dataDir, { ...env, SIGIL_MASTER_KEY: chosen.toString('hex') });
    await sign(third.url, root, addresses[0]);

    // A wrong current key is refused and changes nothing.
    const before = await dbSnapshot({ dataDir, databaseUrl: env.DATABASE_URL });
    const wrong = runSigil(['rotate-master-key', '--data-dir', dataDir], { ...env, SIGIL_MASTER_KEY: oldKey });
    expect(wrong.status).toBe(1);
    expect(wrong.stdout).toBe('');
    expect(wrong.stderr).toMatch(/SIGIL_MASTER_KEY does not open this deployment: set it to the current master key/);
    expect(await dbSnapshot({ dataDir, databaseUrl: env.DATABASE_URL })).toEqual(before);
  });

  it('an interrupted rotation (database switched, key file not yet replaced) is finished by running it again; a stale next key is discarded', async () => {
    const { dataDir, env } = fresh();
    const root = initDeployment(dataDir, env);
    const oldKey = keyFileOf(dataDir);
    const nextKey = randomBytes(32).toString('hex');
    // Switch the database alone (the env-key path), then leave the new key where an interrupted
    // key-file rotation would have: master.key.next, with master.key still the old key.
    const switched = runSigil(['rotate-master-key', '--data-dir', dataDir], { ...env, SIGIL_MASTER_KEY: oldKey, SIGIL_NEW_MASTER_KEY: nextKey });
    expect(switched.status).toBe(0);
    writeFileSync(join(dataDir, 'master.key.next'), nextKey + '\n', { mode: 0o600 });
    await expect(serve(dataDir, env).ready).rejects.toThrow(/the master key does not open this deployment/);

    const r = runSigil(['rotate-master-key', '--data-dir', dataDir], env);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/Finished an interrupted rotation/);
    expect(keyFileOf(dataDir)).toBe(nextKey);
    expect(existsSync(join(dataDir, 'master.key.next'))).toBe(false);
    const s = await serving(dataDir, env);
    expect((await api(s.url, root).getWhoami({})).userId).toBe(root.userId);

    // A next key the database never switched to is thrown away and a normal rotation follows.
    writeFileSync(join(dataDir, 'master.key.next'), randomBytes(32).toString('hex') + '\n', { mode: 0o600 });
    const again = runSigil(['rotate-master-key', '--data-dir', dataDir], env);
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(/Rotated the master key/);
    expect(existsSync(join(dataDir, 'master.key.next'))).toBe(false);
    const t = await serving(dataDir, env);
    expect((await api(t.url, root).getWhoami({})).userId).toBe(root.userId);
  });

  it('refuses an uninitialized data directory, naming what to do', () => {
    const { dataDir, env } = fresh();
    const r = runSigil(['rotate-master-key', '--data-dir', dataDir], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/no Sigil deployment in .*: run "sigil init" first/);
  });
});

describe('sigil backup and restore', () => {
  it.runIf(!testDatabaseUrl())('backup while serving, restore into a new data directory, serve it: the data is there', async () => {
    const { dataDir, env } = fresh();
    const root = initDeployment(dataDir, env);
    const s = await serving(dataDir, env);
    const client = api(s.url, root);
    const { walletId, addresses } = await client.createWallet({ walletName: 'kept', accounts: [ETH] });

    // Writes keep coming while the backup runs.
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        await client.createUsers({ users: [{ userName: `u${written}`, userEmail: `u${written}@example.com`, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }] });
        written += 1;
      }
    })();
    const out = join(fresh().dataDir, 'sigil.backup');
    const r = runSigil(['backup', '--data-dir', dataDir, '--out', out], env);
    writing = false;
    await writer;
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/Backed up .* one consistent snapshot, integrity checked/);
    expect(r.stdout).toMatch(/does not contain the master key/);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    expect(written).toBeGreaterThan(0);

    // An existing file is not overwritten without --force.
    const again = runSigil(['backup', '--data-dir', dataDir, '--out', out], env);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/exists: choose another --out, or add --force/);
    expect(runSigil(['backup', '--data-dir', dataDir, '--out', out, '--force'], env).status).toBe(0);

    // A new data directory needs the master key of the deployment the backup came from.
    const target = fresh().dataDir;
    const noKey = runSigil(['restore', '--data-dir', target, '--from', out], env);
    expect(noKey.status).toBe(1);
    expect(noKey.stderr).toMatch(/copy its master.key into/);
    expect(existsSync(join(target, 'sigil.sqlite'))).toBe(false);

    // Another deployment's key does not open it, and nothing is put in place.
    writeFileSync(join(target, 'master.key'), randomBytes(32).toString('hex') + '\n', { mode: 0o600 });
    const wrongKey = runSigil(['restore', '--data-dir', target, '--from', out], env);
    expect(wrongKey.status).toBe(1);
    expect(wrongKey.stderr).toMatch(/does not open with this data directory's master key.*Nothing was changed/s);
    expect(existsSync(join(target, 'sigil.sqlite'))).toBe(false);

    copyFileSync(join(dataDir, 'master.key'), join(target, 'master.key'));
    const restored = runSigil(['restore', '--data-dir', target, '--from', out], env);
    expect(restored.stderr).toBe('');
    expect(restored.status).toBe(0);
    expect(restored.stdout).toContain(`root organization ${root.organizationId}`);

    const t = await serving(target, env);
    const tc = api(t.url, root);
    expect((await tc.getWallets({})).wallets.map((w) => w.walletId)).toContain(walletId);
    await sign(t.url, root, addresses[0]);

    // The restored directory is now serving: a restore over it is refused even with --force.
    const before = await dbSnapshot({ dataDir: target, databaseUrl: undefined });
    const busy = runSigil(['restore', '--data-dir', target, '--from', out, '--force'], env);
    expect(busy.status).toBe(1);
    expect(busy.stderr).toMatch(/is open in another process \(a running sigil serve\?\): stop it/);
    await tc.createWallet({ walletName: 'after-restore', accounts: [ETH] });
    t.child.kill('SIGTERM');
    expect(await exitOf(t.child)).toBe(0);
    const withNewWallet = await dbSnapshot({ dataDir: target, databaseUrl: undefined });
    expect(withNewWallet.wallets.length).toBe(before.wallets.length + 1);

    // Stopped: without --force an existing database is kept as it is.
    const exists = runSigil(['restore', '--data-dir', target, '--from', out], env);
    expect(exists.status).toBe(1);
    expect(exists.stderr).toMatch(/already holds a database .* add --force to replace it/);
    expect(await dbSnapshot({ dataDir: target, databaseUrl: undefined })).toEqual(withNewWallet);

    // With --force the backup replaces it, and the replaced database is kept beside it.
    const forced = runSigil(['restore', '--data-dir', target, '--from', out, '--force'], env);
    expect(forced.status).toBe(0);
    expect(forced.stdout).toMatch(/The database it replaced is kept as .*sigil\.sqlite\.before-restore-/);
    expect(readdirSync(target).filter((f) => f.startsWith('sigil.sqlite.before-restore-'))).toHaveLength(1);
    const u = await serving(target, env);
    const names = (await api(u.url, root).getWallets({})).wallets.map((w) => w.walletName);
    expect(names).toContain('kept');
    expect(names).not.toContain('after-restore');
  });

  it.runIf(!testDatabaseUrl())('restore refuses a file that is not a Sigil backup, changing nothing', () => {
    const { dataDir, env } = fresh();
    initDeployment(dataDir, env);
    const junk = join(dataDir, 'junk.backup');
    writeFileSync(junk, 'not a database'.repeat(100));
    const target = fresh().dataDir;
    copyFileSync(join(dataDir, 'master.key'), join(target, 'master.key'));
    const r = runSigil(['restore', '--data-dir', target, '--from', junk], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/is not an SQLite database|is not a readable SQLite database/);
    expect(readdirSync(target)).toEqual(['master.key']);
  });

  it.runIf(!!testDatabaseUrl())('on PostgreSQL, backup and restore point to pg_dump / pg_restore and change nothing', async () => {
    const { dataDir, databaseUrl, env } = fresh();
    initDeployment(dataDir, env);
    const before = await dbSnapshot({ dataDir, databaseUrl });
    const out = join(dataDir, 'x.backup');
    const b = runSigil(['backup', '--data-dir', dataDir, '--out', out], env);
    expect(b.status).toBe(1);
    expect(b.stderr).toMatch(/uses PostgreSQL \(DATABASE_URL\)\. Back it up with pg_dump/);
    expect(b.stderr).toMatch(/pg_dump --format=custom --schema=sigil_test_/);
    expect(existsSync(out)).toBe(false);
    const r = runSigil(['restore', '--data-dir', dataDir, '--from', out], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/Restore a pg_dump archive with pg_restore/);
    expect(await dbSnapshot({ dataDir, databaseUrl })).toEqual(before);
  });
});

describe('sigil config and help', () => {
  it('config prints the effective configuration as JSON without secrets', () => {
    const { dataDir, env } = fresh();
    const masterKey = randomBytes(32).toString('hex');
    const secrets = {
      SIGIL_MASTER_KEY: masterKey,
      SIGIL_SMTP_HOST: 'smtp.example.com',
      SIGIL_SMTP_USER: 'mailer',
      SIGIL_SMTP_PASSWORD: 'smtp-pass-7f3a',
      DATABASE_URL: 'postgres://sigil:db-pass-91c2@db.example.com:5432/sigil?schema=prod',
      SIGIL_SMS_WEBHOOK_URL: 'https://hooks:hook-pass-55@sms.example.com/send?token=hook-token-e4&to=x',
    };
    const r = runSigil(['config', '--data-dir', dataDir, '--port', '9000', '--workers', '3'], { ...env, ...secrets, SIGIL_SHUTDOWN_TIMEOUT_MS: '2500' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    for (const secret of [masterKey, 'smtp-pass-7f3a', 'db-pass-91c2', 'hook-pass-55', 'hook-token-e4']) expect(r.stdout).not.toContain(secret);
    const c = JSON.parse(r.stdout);
    expect(c).toMatchObject({
      dataDir,
      port: 9000,
      workers: 3,
      shutdownTimeoutMs: 2500,
      masterKey: 'REDACTED',
      masterKeySource: 'SIGIL_MASTER_KEY',
      store: 'postgres',
      databaseUrl: 'postgres://sigil:REDACTED@db.example.com:5432/sigil?schema=prod',
      smtp: { host: 'smtp.example.com', user: 'mailer', password: 'REDACTED' },
    });
    expect(c.smsWebhookUrl).toMatch(/^https:\/\/hooks:REDACTED@sms\.example\.com\/send\?token=REDACTED&to=x$/);

    // libpq's multi-host form (a standby beside the primary) is no WHATWG URL; its password is hidden too.
    const hosts = runSigil(['config', '--data-dir', dataDir], { ...env, DATABASE_URL: 'postgres://sigil:db-pass-91c2@db1:5432,db2:5433/sigil?target_session_attrs=read-write&password=db-pass-2' });
    expect(hosts.stdout).not.toMatch(/db-pass/);
    expect(JSON.parse(hosts.stdout).databaseUrl).toBe('postgres://sigil:REDACTED@db1:5432,db2:5433/sigil?target_session_attrs=read-write&password=REDACTED');

    const plain = runSigil(['config', '--data-dir', dataDir], { ...env, DATABASE_URL: '' });
    const p = JSON.parse(plain.stdout);
    expect(p).toMatchObject({ masterKey: null, masterKeySource: join(dataDir, 'master.key'), store: 'sqlite', workers: 1, shutdownTimeoutMs: 10000 });
  });

  it('help lists every command and explains each; bad flags and values name what to fix', () => {
    const { env } = fresh();
    const all = runSigil(['help'], env);
    expect(all.status).toBe(0);
    for (const cmd of ['init', 'serve', 'start', 'config', 'rotate-master-key', 'backup', 'restore', 'audit', 'verify-proofs']) {
      expect(all.stdout).toMatch(new RegExp(`^  ${cmd} `, 'm'));
    }
    for (const cmd of ['serve', 'config', 'rotate-master-key', 'backup', 'restore']) {
      const one = runSigil([cmd, '--help'], env);
      expect(one.status).toBe(0);
      expect(one.stdout).toMatch(/^usage: sigil /);
      if (cmd === 'rotate-master-key') expect(runSigil(['help', cmd], env).stdout).toBe(one.stdout);
    }
    const unknownFlag = runSigil(['backup', '--outt', 'x'], env);
    expect(unknownFlag.status).toBe(1);
    expect(unknownFlag.stderr).toMatch(/Unknown option '--outt'/);
    expect(unknownFlag.stderr).toMatch(/usage: sigil backup --data-dir DIR --out FILE/);
    const noOut = runSigil(['backup'], { ...env, DATABASE_URL: '' });
    expect(noOut.status).toBe(1);
    expect(noOut.stderr).toMatch(/sigil backup needs --out FILE/);
    const workers = runSigil(['serve', '--workers', 'many'], env);
    expect(workers.status).toBe(1);
    expect(workers.stderr).toMatch(/--workers must be a number of processes from 1 to 256 or "auto", got "many"/);
    const unknown = runSigil(['frobnicate'], env);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"/);
  });
});

const waitFor = async (cond: () => boolean, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(cond()).toBe(true);
};

/** A stamped POST on a connection of its own (no pooling), so each one may reach another worker. */
async function freshPost(url: string, body: object, key: RootCredentials): Promise<{ status: number; body: any }> {
  const text = JSON.stringify(body);
  const stamp = await new ApiKeyStamper({ apiPublicKey: key.apiPublicKey, apiPrivateKey: key.apiPrivateKey }).stamp(text);
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent: false, headers: { 'content-type': 'application/json', [stamp.stampHeaderName]: stamp.stampHeaderValue } },
      (res) => {
        let raw = '';
        res.on('data', (d) => (raw += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(raw) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(15_000, () => req.destroy(new Error(`no answer from ${url} in 15 s`)));
    req.end(text);
  });
}

describe('sigil serve --workers', () => {
  it('two workers answer through @turnkey/sdk-server, each with its own boot proof; a killed worker is replaced; SIGTERM stops all', async () => {
    const { dataDir, env } = fresh();
    const root = initDeployment(dataDir, env);
    const s = await serving(dataDir, { ...env, SIGIL_LOG_LEVEL: 'info' }, ['--workers', '2']);
    const client = api(s.url, root);
    expect((await client.getWhoami({})).userId).toBe(root.userId);
    const { addresses } = await client.createWallet({ walletName: 'cluster', accounts: [ETH] });

    // App proofs are signed by the serving process's own key. Every request below comes on a new
    // connection, and the cluster hands new connections to the workers in turn.
    const proofKeys = async () => {
      const keys = new Set<string>();
      const results = await Promise.all(
        Array.from({ length: 16 }, async () => {
          const params = { signWith: addresses[0], payload: '0x' + randomBytes(32).toString('hex'), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' };
          return freshPost(`${s.url}/public/v1/submit/sign_raw_payload`, { ...activityBody(root.organizationId, 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', params), generateAppProofs: true }, root);
        }),
      );
      for (const res of results) {
        expect(res.status).toBe(200);
        keys.add(res.body.activity.appProofs[0].publicKey);
      }
      return keys;
    };
    const keys = await proofKeys();
    expect(keys.size).toBe(2);
    // Each worker recorded the boot proof of its own key.
    for (const ephemeralKey of keys) expect((await client.getBootProof({ ephemeralKey })).bootProof.ephemeralPublicKeyHex).toBe(ephemeralKey);

    // Kill one worker outright: the primary starts another, which gets a key of its own.
    const workerPids = () => [...s.stderr().matchAll(/"pid":(\d+),"msg":"worker listening"/g)].map((m) => Number(m[1]));
    expect(workerPids()).toHaveLength(2);
    process.kill(workerPids()[0], 'SIGKILL');
    // Until the primary has seen the death it may still hand a new connection to the dead worker,
    // and node:cluster loses such a connection; a client's timeout and retry covers that instant.
    await waitFor(() => /worker exited unexpectedly; restarting it/.test(s.stderr()));
    const deadline = Date.now() + 30_000;
    while (workerPids().length < 3 && Date.now() < deadline) {
      // The other worker keeps answering meanwhile (on new connections: the killed worker's are gone).
      const me = await freshPost(`${s.url}/public/v1/query/whoami`, { organizationId: root.organizationId }, root);
      expect(me.body.userId).toBe(root.userId);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(workerPids()).toHaveLength(3);
    const after = await proofKeys();
    expect(after.size).toBe(2);
    expect([...after].filter((k) => !keys.has(k))).toHaveLength(1);

    s.child.kill('SIGTERM');
    expect(await exitOf(s.child)).toBe(0);
    for (const pid of workerPids()) expect(() => process.kill(pid, 0)).toThrow();
    expect(s.stderr()).toMatch(/"exitCode":0,"msg":"all workers stopped"/);
  });

  it('a wrong master key stops the cluster before any worker starts', async () => {
    const { dataDir, env } = fresh();
    initDeployment(dataDir, env);
    const s = serve(dataDir, { ...env, SIGIL_MASTER_KEY: 'cd'.repeat(32) }, ['--workers', '2']);
    await expect(s.ready).rejects.toThrow(/the master key does not open this deployment/);
    expect(s.stderr()).not.toMatch(/starting workers/);
  });
});

/**
 * A stamped POST whose body is sent in two parts: the request is in flight, for as long as the test
 * likes, from the first part until finish() sends the rest. Over a kept-alive connection.
 */
async function slowPost(url: string, body: object, key: RootCredentials) {
  const text = JSON.stringify(body);
  const stamp = await new ApiKeyStamper({ apiPublicKey: key.apiPublicKey, apiPrivateKey: key.apiPrivateKey }).stamp(text);
  const bytes = Buffer.from(text);
  const agent = new http.Agent({ keepAlive: true });
  const u = new URL(url);
  let req!: http.ClientRequest;
  const response = new Promise<{ status: number; body: any; connection: string | undefined; at: number }>((resolve, reject) => {
    req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': bytes.length, [stamp.stampHeaderName]: stamp.stampHeaderValue } },
      (res) => {
        let raw = '';
        res.on('data', (d) => (raw += d));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(raw), connection: res.headers.connection, at: Date.now() }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
  });
  response.catch(() => {});
  const connected = new Promise<void>((r) => req.once('socket', (sock) => sock.once('connect', () => r())));
  req.write(bytes.subarray(0, 100));
  await connected;
  cleanups.push(() => agent.destroy());
  return { response, finish: () => req.end(bytes.subarray(100)), agent };
}

describe('graceful shutdown', () => {
  it('SIGTERM lets an in-flight create_wallet (100 accounts) finish, closes kept-alive connections, exits 0', async () => {
    const { dataDir, env } = fresh();
    const root = initDeployment(dataDir, env);
    const s = await serving(dataDir, { ...env, SIGIL_LOG_LEVEL: 'info' });
    // The SDK's connection stays open (keep-alive) and idle.
    expect((await api(s.url, root).getWhoami({})).userId).toBe(root.userId);

    const body = activityBody(root.organizationId, 'ACTIVITY_TYPE_CREATE_WALLET', { walletName: 'in-flight', accounts: ethAccounts(100) });
    const slow = await slowPost(`${s.url}/public/v1/submit/create_wallet`, body, root);
    await new Promise((r) => setTimeout(r, 200));
    s.child.kill('SIGTERM');
    await waitFor(() => /draining in-flight requests/.test(s.stderr()));
    // Draining: no new connections, and the process waits for the request in flight.
    await expect(fetch(`${s.url}/healthz`)).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 300));
    expect(s.child.exitCode).toBeNull();

    slow.finish();
    const answer = await slow.response;
    expect(answer.status).toBe(200);
    expect(answer.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(answer.body.activity.result.createWalletResult.addresses).toHaveLength(100);

    // Both kept-alive connections are closed by the server instead of lingering for 72 s.
    expect(await exitOf(s.child)).toBe(0);
    expect(Date.now() - answer.at).toBeLessThan(3000);
    expect(s.stderr()).not.toMatch(/"level":(50|60)/);

    // The wallet was committed with all its accounts.
    const snap = await dbSnapshot({ dataDir, databaseUrl: env.DATABASE_URL });
    const wallet = (snap.wallets as { id: string; name: string }[]).find((w) => w.name === 'in-flight');
    expect(wallet).toBeDefined();
    expect((snap.wallet_accounts as { wallet_id: string }[]).filter((a) => a.wallet_id === wallet!.id)).toHaveLength(100);
  });

  it('a request still running at SIGIL_SHUTDOWN_TIMEOUT_MS is cut, changes nothing, and the exit code says so', async () => {
    const { dataDir, env } = fresh();
    const root = initDeployment(dataDir, env);
    const s = await serving(dataDir, { ...env, SIGIL_SHUTDOWN_TIMEOUT_MS: '500' });
    const before = await dbSnapshot({ dataDir, databaseUrl: env.DATABASE_URL });
    const body = activityBody(root.organizationId, 'ACTIVITY_TYPE_CREATE_WALLET', { walletName: 'never', accounts: ethAccounts(1) });
    const slow = await slowPost(`${s.url}/public/v1/submit/create_wallet`, body, root);
    await new Promise((r) => setTimeout(r, 200));
    s.child.kill('SIGTERM');
    expect(await exitOf(s.child)).toBe(1);
    await expect(slow.response).rejects.toThrow();
    expect(s.stderr()).toMatch(/shutdown timeout: connections with requests in flight were closed/);
    expect(await dbSnapshot({ dataDir, databaseUrl: env.DATABASE_URL })).toEqual(before);
  });
});
