// `sigil activities show --activity-id` (docs/policies.md "Approving what you see") through the real
// `sigil` binary against a real `sigil serve`: with a root quorum of two, bob's waiting ERC-20 transfer
// and a Safe execTransaction hiding a proxy upgrade are printed decoded exactly as the API's decodedView
// has them (every row, the flags, the digest, the consensus), the digest equal to viem's keccak256 of
// the unsigned transaction. An activity that signs nothing says so; a missing id is refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateP256KeyPair } from '@turnkey/crypto';
import { keccak256 } from 'viem';
import { runSigil, startSigil, type SigilInstance } from '../helpers/sigil.js';
import { sdkServerClient, waitingSdkServerClient } from '../helpers/clients.js';
import { ALICE, ERC20_ABI, erc20Transfer, EVIL, safeHiddenUpgrade, TOKEN } from '../helpers/approval-vectors.js';

let sigil: SigilInstance;
let dir: string;
let keyFile: string;

function cli(args: string[]) {
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('SIGIL_') || k === 'DATABASE_URL') delete base[k];
  return runSigil(args, base);
}
const conn = () => ['--key-file', keyFile, '--url', sigil.url, '--organization-id', sigil.root.organizationId];

beforeAll(async () => {
  // A process: the CLI runs under spawnSync, which blocks this process, so a Sigil in it could not answer.
  sigil = await startSigil({}, { process: true });
  dir = mkdtempSync(join(tmpdir(), 'sigil-cli-show-'));
  keyFile = join(dir, 'root.json');
  writeFileSync(keyFile, JSON.stringify({ publicKey: sigil.root.apiPublicKey, privateKey: sigil.root.apiPrivateKey }), { mode: 0o600 });
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await sigil?.stop();
});

describe('sigil activities show', () => {
  it('prints the decoded view of a waiting signature as the API has it, with flags, digest and consensus', async () => {
    const root = sdkServerClient(sigil);
    const w = await root.createWallet({ walletName: 'w', accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] });
    await root.createSmartContractInterface({ smartContractAddress: TOKEN, smartContractInterface: ERC20_ABI, type: 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM', label: 'USDC', notes: 'decimals: 6' });
    const k = generateP256KeyPair();
    const { userIds } = await root.createUsers({
      users: [{ userName: 'bob', apiKeys: [{ apiKeyName: 'bob key', publicKey: k.publicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    // Created while the root user alone is the quorum (afterwards root's own activities wait too).
    await root.createPolicy({ policyName: 'two sign messages', effect: 'EFFECT_ALLOW', condition: "activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2'", consensus: 'approvers.count() >= 2', notes: '' });
    await root.updateRootQuorum({ threshold: 2, userIds: [sigil.root.userId, userIds[0]] });
    const bob = waitingSdkServerClient(sigil, { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey });

    const unsigned = erc20Transfer();
    const erc20 = await bob.signTransaction({ signWith: w.addresses[0], unsignedTransaction: unsigned.slice(2), type: 'TRANSACTION_TYPE_ETHEREUM' });
    expect(erc20.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');

    const r = cli(['activities', 'show', '--activity-id', erc20.activity.id, ...conn()]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = r.stdout;
    expect(out).toContain(`activity ${erc20.activity.id}  ACTIVITY_TYPE_SIGN_TRANSACTION_V2  ACTIVITY_STATUS_CONSENSUS_NEEDED`);
    expect(out).toContain(`Signs: transfer 1.5 USDC to ${ALICE}\n`);
    expect(out).toContain('  amount: 1500000  (1.5 USDC)\n');
    expect(out).toContain(`  to: ${TOKEN}  (USDC)\n`);
    expect(out).toContain(`Digest (keccak256 of transaction): ${keccak256(unsigned)}\n`);
    expect(out).toContain('  root quorum: 1 of 2 approvals\n');
    expect(out).toContain('  votes so far: bob approved\n');
    expect(out).toContain('  still needs: 1 more approval(s) from the root quorum\n');
    // The same decoding the API (and so the dashboard) has: every row of every section.
    const { activity } = (await root.getActivity({ activityId: erc20.activity.id })) as { activity: any };
    for (const s of activity.decodedView.sections) {
      expect(out).toContain(`\n${s.title}\n`);
      for (const row of s.rows) expect(out).toContain(`  ${row.label}: ${row.value}${row.note ? `  (${row.note})` : ''}\n`);
    }
    const json = cli(['activities', 'show', '--activity-id', erc20.activity.id, '--json', ...conn()]);
    expect(JSON.parse(json.stdout).decodedView).toEqual(activity.decodedView);

    // A Safe execTransaction that delegatecalls a proxy upgrade: both flagged as DANGER.
    const safe = safeHiddenUpgrade();
    const safeActivity = await bob.signTransaction({ signWith: w.addresses[0], unsignedTransaction: safe.slice(2), type: 'TRANSACTION_TYPE_ETHEREUM' });
    const shown = cli(['activities', 'show', '--activity-id', safeActivity.activity.id, ...conn()]).stdout;
    expect(shown).toMatch(/DANGER \[DELEGATECALL\]: Safe execTransaction with operation 1/);
    expect(shown).toMatch(new RegExp(`DANGER \\[PROXY_UPGRADE\\]: Proxy upgrade inside execTransaction.*${EVIL}`));

    // The policy created before the quorum grew (which asks for two approvers): named beside the decoding with its outcome and what it still needs.
    const message = await bob.signRawPayload({ signWith: w.addresses[0], payload: 'pay the invoice', encoding: 'PAYLOAD_ENCODING_TEXT_UTF8', hashFunction: 'HASH_FUNCTION_KECCAK256' });
    expect(message.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    const text = cli(['activities', 'show', '--activity-id', message.activity.id, ...conn()]).stdout;
    expect(text).toContain('Signs: sign the message “pay the invoice”\n');
    expect(text).toContain(`Digest (keccak256 of payload): ${keccak256(Buffer.from('pay the invoice'))}\n`);
    expect(text).toContain('  policies: two sign messages: requires consensus\n');
    expect(text).toContain('  still needs: 1 more approval(s) from the root quorum, or approvals that satisfy the consensus of two sign messages\n');
  });

  it('says when an activity signs nothing, and refuses a missing --activity-id', async () => {
    const { activities } = await sdkServerClient(sigil).getActivities({ filterByType: ['ACTIVITY_TYPE_CREATE_WALLET'] });
    const r = cli(['activities', 'show', '--activity-id', activities[0].id, ...conn()]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('signs nothing: no decoded view');
    const missing = cli(['activities', 'show', ...conn()]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('sigil activities show needs --activity-id ID');
  });
});
