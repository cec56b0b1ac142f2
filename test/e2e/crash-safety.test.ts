// Crash safety (docs/operator-guide.md "Running on PostgreSQL / in production"): under concurrent
// create_wallet and sign_raw_payload load from the official @turnkey/http client, the server is killed
// with SIGKILL at random moments (a bounded number of rounds, loopback only) and restarted on the same
// data. Afterwards every activity the client saw COMPLETED is present with the same result, no activity
// is left half-done (CREATED or PENDING), and every wallet has exactly the accounts its activity listed.
// SIGTERM, by contrast, drains: the last request in flight completes and the process exits 0. SQLite and
// PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { dropSchema, freshDeploymentEnv, initDeployment, runSigil, serve, type RootCredentials, type SigilInstance } from '../helpers/sigil.js';
import { sdkServerClient } from '../helpers/clients.js';

const ROUNDS = 4;
const WORKERS = 6;
const ACCOUNTS = 3;
const ETH = (i: number) => ({ curve: 'CURVE_SECP256K1' as const, pathFormat: 'PATH_FORMAT_BIP32' as const, path: `m/44'/60'/0'/0/${i}`, addressFormat: 'ADDRESS_FORMAT_ETHEREUM' as const });

let deployment: ReturnType<typeof freshDeploymentEnv>;
let root: RootCredentials;
let child: ChildProcess | undefined;
let url = '';

async function start(): Promise<void> {
  const s = serve(deployment.dataDir, deployment.env);
  child = s.child;
  url = (await s.ready).url;
}

async function kill(signal: NodeJS.Signals): Promise<number | null> {
  const c = child!;
  if (c.exitCode !== null) return c.exitCode;
  const exited = new Promise<number | null>((r) => c.once('exit', (code) => r(code)));
  c.kill(signal);
  return exited;
}

/** What the SDK helpers need of an instance, for the current process. */
const instance = () => ({ url, root }) as unknown as SigilInstance;

beforeAll(async () => {
  deployment = freshDeploymentEnv();
  root = initDeployment(deployment.dataDir, deployment.env);
  await start();
}, 60_000);

afterAll(async () => {
  if (child) await kill('SIGTERM');
  rmSync(deployment.dataDir, { recursive: true, force: true });
  if (deployment.databaseUrl) await dropSchema(deployment.databaseUrl);
});

interface Seen {
  activityId: string;
  type: string;
  result: unknown;
}

describe('crash safety', () => {
  it('SIGKILL under load loses no completed activity and leaves nothing half-applied', async () => {
    const stamper = new ApiKeyStamper({ apiPublicKey: root.apiPublicKey, apiPrivateKey: root.apiPrivateKey });
    const client = () => new TurnkeyClient({ baseUrl: url }, stamper);
    const signer = await sdkServerClient(instance()).createWallet({ walletName: 'signer', accounts: [ETH(0)] });
    const signWith = signer.addresses[0];

    const seen: Seen[] = [];
    let stop = false;
    let failures = 0;
    let n = 0;
    // Below the organization's quota of 100 wallets (docs/limits.md "Quotas and rate limits"): later
    // iterations only sign.
    let walletsAsked = 0;
    const loop = async (w: number) => {
      while (!stop) {
        const i = n++;
        try {
          const res =
            (i + w) % 2 === 0 && walletsAsked++ < 80
              ? await client().createWallet({
                  type: 'ACTIVITY_TYPE_CREATE_WALLET',
                  timestampMs: String(Date.now()),
                  organizationId: root.organizationId,
                  parameters: { walletName: `load ${i}`, accounts: [ETH(0), ETH(1), ETH(2)] },
                })
              : await client().signRawPayload({
                  type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
                  timestampMs: String(Date.now()),
                  organizationId: root.organizationId,
                  parameters: { signWith, payload: i.toString(16).padStart(64, '0'), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' },
                });
          if (res.activity.status === 'ACTIVITY_STATUS_COMPLETED') seen.push({ activityId: res.activity.id, type: res.activity.type, result: res.activity.result });
        } catch {
          // Refused connections and cut responses while the server is down: the client retries.
          failures++;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    };
    const loops = Array.from({ length: WORKERS }, (_, w) => loop(w));
    for (let round = 0; round < ROUNDS; round++) {
      await new Promise((r) => setTimeout(r, 400 + Math.floor(Math.random() * 1100)));
      await kill('SIGKILL');
      await new Promise((r) => setTimeout(r, 100));
      await start();
    }
    await new Promise((r) => setTimeout(r, 500));
    stop = true;
    await Promise.all(loops);
    expect(seen.length).toBeGreaterThan(20);
    expect(failures).toBeGreaterThan(0); // the kills did land in the middle of the load

    // A clean restart, then the audit of what survived.
    expect(await kill('SIGTERM')).toBe(0);
    await start();
    const api = sdkServerClient(instance());
    for (const s of seen) {
      const { activity } = await api.getActivity({ activityId: s.activityId });
      expect(activity.status, s.activityId).toBe('ACTIVITY_STATUS_COMPLETED');
      expect(JSON.parse(JSON.stringify(activity.result)), s.activityId).toMatchObject(JSON.parse(JSON.stringify(s.result)));
    }
    const all = [];
    let before: string | undefined;
    for (;;) {
      const page = await api.getActivities({ paginationOptions: { limit: '100', ...(before ? { after: before } : {}) } });
      all.push(...page.activities);
      if (page.activities.length < 100) break;
      before = page.activities[page.activities.length - 1].id;
    }
    expect(all.filter((a) => a.status !== 'ACTIVITY_STATUS_COMPLETED').map((a) => `${a.id} ${a.status}`)).toEqual([]);
    const { wallets } = await api.getWallets({ organizationId: root.organizationId });
    const byId = new Map(wallets.map((w) => [w.walletId, w]));
    for (const a of all.filter((x) => x.type === 'ACTIVITY_TYPE_CREATE_WALLET')) {
      const r = a.result.createWalletResult!;
      expect(byId.has(r.walletId), `wallet of ${a.id}`).toBe(true);
      const { accounts } = await api.getWalletAccounts({ organizationId: root.organizationId, walletId: r.walletId });
      expect(accounts.map((x) => x.address).sort()).toEqual([...r.addresses].sort());
    }
    for (const w of wallets.filter((x) => x.walletName.startsWith('load '))) {
      const { accounts } = await api.getWalletAccounts({ organizationId: root.organizationId, walletId: w.walletId });
      expect(accounts, w.walletName).toHaveLength(ACCOUNTS);
    }
    // The audit log survived the kills too: every stream contiguous and every activity described.
    const verified = runSigil(['audit', 'verify', '--data-dir', deployment.dataDir], deployment.env);
    expect(verified.status, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/^ok /);
  }, 120_000);

  it('SIGTERM drains: a request in flight completes and the process exits 0', async () => {
    const api = sdkServerClient(instance());
    const { walletId } = await api.createWallet({ walletName: 'drained', accounts: [ETH(0)] }).catch(async () => {
      const { wallets } = await api.getWallets({ organizationId: root.organizationId });
      return wallets.find((w) => w.walletName === 'signer')!;
    });
    const many = Array.from({ length: 100 }, (_, i) => ETH(i + 1));
    const inFlight = api.createWalletAccounts({ walletId, accounts: many });
    await new Promise((r) => setTimeout(r, 30));
    const exit = kill('SIGTERM');
    const added = await inFlight;
    expect(added.addresses).toHaveLength(100);
    expect(await exit).toBe(0);
    await start();
    const { accounts } = await sdkServerClient(instance()).getWalletAccounts({ organizationId: root.organizationId, walletId, paginationOptions: { limit: '100' } });
    expect(accounts.length).toBeGreaterThanOrEqual(100);
  }, 60_000);
});
