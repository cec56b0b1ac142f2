// The operator CLI's API commands (docs/operator-guide.md "Operator CLI") through the real `sigil`
// binary against a real `sigil serve`: `keys generate` writes a P-256 key file with mode 600 and refuses
// to overwrite it; once @turnkey/sdk-server registers its public key (create_api_keys), `sigil request`
// stamps with it (X-Stamp, docs/reference/api.md "Stamps") and answers whoami, and `sigil whoami` does
// too from SIGIL_* environment; `sigil activities approve` casts the second approval a consensus policy
// waits for and the activity completes with a signature; `reject --fingerprint` ends one. Mistakes
// (missing key file, JSON that does not parse, an unknown path, voting on a finished activity) exit 1
// with a message naming the fix and change nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateP256KeyPair } from '@turnkey/crypto';
import { Turnkey } from '@turnkey/sdk-server';
import { runSigil, startSigil, type SigilInstance } from '../helpers/sigil.js';
import { sdkServerClient } from '../helpers/clients.js';
import { dbSnapshot } from '../helpers/db-snapshot.js';

const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } as const;

let sigil: SigilInstance;
let dir: string;
let keyFile: string;
let cliPublicKey: string;
let address: string;
let bob: { apiPublicKey: string; apiPrivateKey: string };

/** The CLI as an operator runs it: only what the command line and SIGIL_* give it. */
function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('SIGIL_') || k === 'DATABASE_URL') delete base[k];
  return runSigil(args, { ...base, ...env });
}

const conn = () => ['--key-file', keyFile, '--url', sigil.url, '--organization-id', sigil.root.organizationId];

/** bob's sign_raw_payload, held by the two-approval policy. */
async function pendingSignature(byte: string) {
  const client = new Turnkey({ apiBaseUrl: sigil.url, ...bob, defaultOrganizationId: sigil.root.organizationId, activityPoller: { intervalMs: 100, numRetries: 0 } }).apiClient();
  const submitted = await client.signRawPayload({ signWith: address, payload: '0x' + byte.repeat(32), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' });
  expect(submitted.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
  return submitted.activity;
}

beforeAll(async () => {
  // A process: the CLI runs under spawnSync, which blocks this process, so a Sigil in it could not answer.
  sigil = await startSigil({}, { process: true });
  dir = mkdtempSync(join(tmpdir(), 'sigil-cli-keys-'));
  keyFile = join(dir, 'operator.json');
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await sigil?.stop();
});

describe('sigil keys generate', () => {
  it('writes a P-256 key pair with mode 600 and refuses to overwrite it', () => {
    const r = cli(['keys', 'generate', '--out', keyFile]);
    expect(r.status).toBe(0);
    const file = JSON.parse(readFileSync(keyFile, 'utf8'));
    expect(Object.keys(file)).toEqual(['publicKey', 'privateKey']);
    expect(file.publicKey).toMatch(/^0[23][0-9a-f]{64}$/);
    expect(file.privateKey).toMatch(/^[0-9a-f]{64}$/);
    expect(r.stdout.trim()).toBe(file.publicKey);
    expect(r.stdout).not.toContain(file.privateKey);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    cliPublicKey = file.publicKey;

    const again = cli(['keys', 'generate', '--out', keyFile]);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain(`${keyFile} already exists: refusing to overwrite`);
    expect(JSON.parse(readFileSync(keyFile, 'utf8'))).toEqual(file);

    const noOut = cli(['keys', 'generate']);
    expect(noOut.status).toBe(1);
    expect(noOut.stderr).toContain('needs --out FILE');
  });
});

describe('sigil request and whoami', () => {
  it('stamps with the key file once its public key is registered, and prints the answer', async () => {
    const before = cli(['request', '--path', '/public/v1/query/whoami', '--body', '{}', ...conn()]);
    expect(before.status).toBe(1);
    expect(JSON.parse(before.stdout).code).toBe(16);
    expect(before.stderr).toContain('/public/v1/query/whoami failed with HTTP 401');

    await sdkServerClient(sigil).createApiKeys({ userId: sigil.root.userId, apiKeys: [{ apiKeyName: 'operator cli', publicKey: cliPublicKey, curveType: 'API_KEY_CURVE_P256' }] });
    const expected = await sdkServerClient(sigil).getWhoami({});
    const r = cli(['request', '--path', '/public/v1/query/whoami', '--body', JSON.stringify({ organizationId: sigil.root.organizationId }), '--key-file', keyFile, '--url', sigil.url]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ organizationId: expected.organizationId, organizationName: expected.organizationName, userId: expected.userId, username: expected.username });

    // The same from the environment, through `sigil whoami`.
    const w = cli(['whoami'], { SIGIL_KEY_FILE: keyFile, SIGIL_URL: sigil.url, SIGIL_ORGANIZATION_ID: sigil.root.organizationId });
    expect(w.status).toBe(0);
    expect(JSON.parse(w.stdout).userId).toBe(sigil.root.userId);
  });

  it('fills organizationId and timestampMs into a submit body, so an activity is one line', async () => {
    const r = cli(['request', '--path', '/public/v1/submit/create_wallet', '--body', JSON.stringify({ type: 'ACTIVITY_TYPE_CREATE_WALLET', parameters: { walletName: 'cli wallet', accounts: [ETH] } }), ...conn()]);
    expect(r.stderr).toBe('');
    const { activity } = JSON.parse(r.stdout);
    expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    address = activity.result.createWalletResult.addresses[0];
    const { wallets } = await sdkServerClient(sigil).getWallets({});
    expect(wallets.map((w) => w.walletName)).toEqual(['cli wallet']);
    // The vote is the CLI key's.
    expect(activity.votes[0].publicKey).toBe(cliPublicKey);
  });

  it('names the fix for a missing key file, a body that is not JSON and a path that is not the API, changing nothing', async () => {
    const before = await dbSnapshot(sigil);
    const missing = cli(['request', '--path', '/public/v1/query/whoami', '--body', '{}', '--key-file', join(dir, 'nope.json'), '--url', sigil.url]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain(`key file ${join(dir, 'nope.json')} does not exist: create one with "sigil keys generate --out`);

    const noKey = cli(['whoami', '--url', sigil.url]);
    expect(noKey.status).toBe(1);
    expect(noKey.stderr).toContain('no API key: pass --key-file FILE or set SIGIL_KEY_FILE');

    const badJson = cli(['request', '--path', '/public/v1/submit/create_wallet', '--body', '{"type": ACTIVITY_TYPE_CREATE_WALLET}', ...conn()]);
    expect(badJson.status).toBe(1);
    expect(badJson.stderr).toMatch(/^sigil: --body is not valid JSON \(.+\): pass one JSON object/);

    const badPath = cli(['request', '--path', '/v1/otp_init', '--body', '{}', ...conn()]);
    expect(badPath.status).toBe(1);
    expect(badPath.stderr).toContain('is not a public API path: expected /public/v1/query/<operation> or /public/v1/submit/<operation>');

    const badUrl = cli(['whoami', '--key-file', keyFile, '--url', 'localhost:8080', '--organization-id', sigil.root.organizationId]);
    expect(badUrl.status).toBe(1);
    expect(badUrl.stderr).toContain('must be http:// or https://');
    expect(await dbSnapshot(sigil)).toEqual(before);
  });
});

describe('sigil activities', () => {
  beforeAll(async () => {
    const k = generateP256KeyPair();
    bob = { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
    const root = sdkServerClient(sigil);
    await root.createUsers({
      users: [{ userName: 'bob', apiKeys: [{ apiKeyName: 'bob key', publicKey: bob.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    await root.createPolicy({
      policyName: 'two people sign raw payloads',
      effect: 'EFFECT_ALLOW',
      condition: "activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2'",
      consensus: 'approvers.count() >= 2',
      notes: 'two-person rule',
    });
  });

  it('lists the waiting activity and approves it as the second approver; it completes with a signature', async () => {
    const waiting = await pendingSignature('51');
    const list = cli(['activities', 'list', '--status', 'CONSENSUS_NEEDED', ...conn()]);
    expect(list.status).toBe(0);
    expect(list.stdout.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^${waiting.id}  ACTIVITY_STATUS_CONSENSUS_NEEDED  ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2  \\S+  ${waiting.fingerprint}$`))]);
    const json = cli(['activities', 'list', '--pending', '--json', ...conn()]);
    expect(JSON.parse(json.stdout).map((a: { id: string }) => a.id)).toEqual([waiting.id]);

    const r = cli(['activities', 'approve', '--activity-id', waiting.id, ...conn()]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(`approved ${waiting.fingerprint}`);
    expect(r.stdout).toContain(`activity ${waiting.id} (ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2) is now ACTIVITY_STATUS_COMPLETED`);

    const done = (await sdkServerClient(sigil).getActivity({ activityId: waiting.id })).activity as any;
    expect(done.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(done.result.signRawPayloadResult.r).toMatch(/^[0-9a-f]{64}$/);
    expect(done.votes.map((v: any) => [v.user.userName, v.publicKey])).toEqual([
      ['bob', bob.apiPublicKey],
      ['Root user', cliPublicKey],
    ]);

    // Voting again on a finished activity is refused with what is wrong, and changes nothing.
    const before = await dbSnapshot(sigil);
    const again = cli(['activities', 'approve', '--activity-id', waiting.id, ...conn()]);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain(`activity ${waiting.id} is ACTIVITY_STATUS_COMPLETED: only activities in ACTIVITY_STATUS_CONSENSUS_NEEDED take votes`);
    expect(await dbSnapshot(sigil)).toEqual(before);
  });

  it('rejects by fingerprint', async () => {
    const waiting = await pendingSignature('52');
    const r = cli(['activities', 'reject', '--fingerprint', waiting.fingerprint, ...conn()]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(`activity ${waiting.id} (ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2) is now ACTIVITY_STATUS_REJECTED`);
    expect((await sdkServerClient(sigil).getActivity({ activityId: waiting.id })).activity.status).toBe('ACTIVITY_STATUS_REJECTED');

    const both = cli(['activities', 'approve', '--fingerprint', waiting.fingerprint, '--activity-id', waiting.id, ...conn()]);
    expect(both.status).toBe(1);
    expect(both.stderr).toContain('needs exactly one of --fingerprint F or --activity-id ID');
  });

  it('has help for every command', () => {
    for (const command of ['keys', 'request', 'whoami', 'activities']) {
      const r = cli([command, '--help']);
      expect(r.status, command).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^usage: sigil ${command}`));
    }
    expect(cli(['help', 'activities']).stdout).toBe(cli(['activities', '--help']).stdout);
    expect(cli(['help']).stdout).toMatch(/activities\s+list activities, or approve or reject one waiting for consensus/);
  });
});
