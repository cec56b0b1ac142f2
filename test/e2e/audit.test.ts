// The audit trail (docs/operator-guide.md "Audit trail and metrics": no deployment-wide serialization
// point, and proof against an attacker with database access) against a real `sigil serve`: activities,
// votes and refusals land in the process's stream of MACed, chained entries; `sigil audit export` writes
// them with the signed checkpoints; `sigil audit verify` passes on the live database and on an export,
// and fails, naming what it found, on each tampering an attacker with database access could try: an
// edited activity status, an edited result signature, an edited vote, a deleted activity with its vote,
// a stream recomputed without the deployment's key, entries cut from a stream's end, and changed,
// removed or added entries in an export. No parameters, bodies or secrets in entries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateP256KeyPair } from '@turnkey/crypto';
import { activityBody, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { execSql } from '../helpers/db-snapshot.js';
import { runSigil, startSigil, terminate, type SigilInstance } from '../helpers/sigil.js';

let sigil: SigilInstance;
let dir: string;
const EMAIL = 'audit-secret-person@example.com';
let signWith: string;
let bob: KeyPair;

beforeAll(async () => {
  sigil = await startSigil({}, { process: true });
  dir = mkdtempSync(join(tmpdir(), 'sigil-audit-'));
}, 120_000);
afterAll(async () => {
  await sigil?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function exportLog(): { file: string; lines: any[]; text: string } {
  const file = join(dir, `export-${Date.now()}.jsonl`);
  const r = runSigil(['audit', 'export', '--data-dir', sigil.dataDir, '--out', file], sigil.env);
  expect(r.status, r.stderr).toBe(0);
  const text = readFileSync(file, 'utf8');
  return { file, text, lines: text.trim().split('\n').map((l) => JSON.parse(l)) };
}

function verifyFile(lines: any[]) {
  const file = join(dir, `tampered-${Math.random().toString(16).slice(2)}.jsonl`);
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return runSigil(['audit', 'verify', '--data-dir', sigil.dataDir, '--file', file], sigil.env);
}

const verifyLive = () => runSigil(['audit', 'verify', '--data-dir', sigil.dataDir], sigil.env);

/** Changes a row, runs the live verification, then puts the row back. */
async function tampered(change: string, restore: string, params: unknown[], restoreParams: unknown[]) {
  await execSql(sigil, change, params);
  try {
    return verifyLive();
  } finally {
    await execSql(sigil, restore, restoreParams);
  }
}

describe('audit log', () => {
  it('records activities, votes and refusals in a stream; exports and verifies it with the deployment keys', async () => {
    const api = sdkServerClient(sigil);
    const k = generateP256KeyPair();
    const b = generateP256KeyPair();
    bob = { apiPublicKey: b.publicKey, apiPrivateKey: b.privateKey };
    const { userIds } = await api.createUsers({
      users: [{ userName: 'audited', userEmail: EMAIL, apiKeys: [{ apiKeyName: 'k', publicKey: k.publicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    const { userIds: bobIds } = await api.createUsers({
      users: [{ userName: 'bob', apiKeys: [{ apiKeyName: 'b', publicKey: b.publicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    await api.createUserTag({ userTagName: 'audit-tag', userIds: [] });
    const w = await api.createWallet({ walletName: 'audited', accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] });
    signWith = w.addresses[0];
    await api.signRawPayload({ signWith, payload: 'ab'.repeat(32), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' });
    // A vote: bob's signature waits for a root approval.
    await api.createPolicy({ policyName: 'bob signs with root', notes: '', effect: 'EFFECT_ALLOW', consensus: `approvers.any(user, user.id == '${bobIds[0]}') && approvers.count() >= 2`, condition: "activity.action == 'SIGN'" });
    const pending = await sdkServerClient(sigil, bob).signRawPayload({ signWith, payload: 'cd'.repeat(32), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' });
    expect(pending.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    await api.approveActivity({ fingerprint: pending.activity.fingerprint });
    // A refused request: stamped by a key nobody registered.
    const stranger = generateP256KeyPair();
    const refusedBody = activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_USER_TAG', { userTagName: 'nope', userIds: [] });
    const refused = await rawPost(`${sigil.url}/public/v1/submit/create_user_tag`, refusedBody, { key: { apiPublicKey: stranger.publicKey, apiPrivateKey: stranger.privateKey } });
    expect(refused.status).toBe(401);

    const ok = verifyLive();
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^ok \d+ entries in 1 streams, \d+ checkpoints, 0 entries of the first chain; \d+ activities and \d+ votes checked against their entries/);

    const { file, lines, text } = exportLog();
    const entries = lines.filter((l) => 'stream' in l);
    expect(entries.length).toBeGreaterThanOrEqual(8);
    entries.forEach((l, i) => {
      expect(l.seq).toBe(i + 1);
      expect(Object.keys(l).sort()).toEqual(['activityId', 'createdAt', 'entry', 'kind', 'mac', 'organizationId', 'seq', 'stream']);
    });
    const contents = entries.map((l) => ({ ...l, content: JSON.parse(l.entry) }));
    const created = contents.find((e) => e.kind === 'activity' && e.content.operation === 'create_users');
    expect(created!.content).toMatchObject({ status: 'ACTIVITY_STATUS_COMPLETED', userId: sigil.root.userId, publicKey: sigil.root.apiPublicKey, operation: 'create_users' });
    expect(created!.content.intentDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(created!.content.resultDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(created!.content.voteDigest).toMatch(/^[0-9a-f]{64}$/);
    expect(contents.some((e) => e.kind === 'vote' && e.content.status === 'ACTIVITY_STATUS_COMPLETED')).toBe(true);
    const refusals = contents.filter((e) => e.kind === 'refused');
    expect(refusals.map((e) => e.content.publicKey)).toContain(stranger.publicKey);
    // No parameters, bodies or stamps: the email, the new key, the tag name and the user id list are absent.
    expect(text).not.toContain(EMAIL);
    expect(text).not.toContain(k.publicKey);
    expect(text).not.toContain('audit-tag');
    expect(text).not.toContain(userIds[0]);
    expect(text).not.toContain('"nope"');

    const fromFile = runSigil(['audit', 'verify', '--data-dir', sigil.dataDir, '--file', file], sigil.env);
    expect(fromFile.status, fromFile.stdout).toBe(0);

    // A changed entry, a removed entry and a forged one in an export.
    const changed = lines.map((l) => ({ ...l }));
    changed[1].entry = changed[1].entry.replace(/"status":"[A-Z_]+"/, '"status":"ACTIVITY_STATUS_FAILED"');
    let r = verifyFile(changed);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/seq 2: the mac does not match/);
    r = verifyFile(lines.filter((_, i) => i !== 2));
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/seq 3 missing: entries were removed/);
    const column = lines.map((l) => ({ ...l }));
    column[3].kind = 'vote';
    r = verifyFile(column);
    expect(r.stdout).toMatch(/seq 4: kind "vote" differs from the entry's/);
  }, 120_000);

  it('the live verification names an edited status, an edited signature, an edited vote and a deleted activity', async () => {
    const [sign] = await execSql(sigil, "select id, status, result from activities where type = 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' and status = 'ACTIVITY_STATUS_COMPLETED' order by created_at limit 1");
    let r = await tampered('update activities set status = ? where id = ?', 'update activities set status = ? where id = ?', ['ACTIVITY_STATUS_FAILED', sign.id], [sign.status, sign.id]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`activity ${sign.id}: its status (ACTIVITY_STATUS_FAILED), intent, result or failure differs from every audit entry about it`);

    const forgedResult = sign.result.replace(/"r":"[0-9a-f]{2}/, '"r":"00');
    expect(forgedResult).not.toBe(sign.result);
    r = await tampered('update activities set result = ? where id = ?', 'update activities set result = ? where id = ?', [forgedResult, sign.id], [sign.result, sign.id]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`activity ${sign.id}: its status (ACTIVITY_STATUS_COMPLETED), intent, result or failure differs`);

    const [vote] = await execSql(sigil, 'select id, signature from votes where activity_id = ?', [sign.id]);
    r = await tampered('update votes set signature = ? where id = ?', 'update votes set signature = ? where id = ?', ['3045deadbeef', vote.id], [vote.signature, vote.id]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`vote ${vote.id} on activity ${sign.id}: no audit entry describes it`);

    // A deleted activity with its vote (and its policy evaluations).
    const [row] = await execSql(sigil, 'select * from activities where id = ?', [sign.id]);
    const votes = await execSql(sigil, 'select * from votes where activity_id = ?', [sign.id]);
    await execSql(sigil, 'delete from votes where activity_id = ?', [sign.id]);
    await execSql(sigil, 'delete from activities where id = ?', [sign.id]);
    r = verifyLive();
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`activity ${sign.id}: audit entries describe it, but it is gone: the activity was deleted`);
    const cols = Object.keys(row);
    await execSql(sigil, `insert into activities (${cols.join(', ')}) values (${cols.map(() => '?').join(', ')})`, cols.map((c) => row[c]));
    for (const v of votes) {
      const vc = Object.keys(v);
      await execSql(sigil, `insert into votes (${vc.join(', ')}) values (${vc.map(() => '?').join(', ')})`, vc.map((c) => v[c]));
    }
    expect(verifyLive().status).toBe(0);
  }, 120_000);

  it('a stream recomputed without the key, and entries cut from its end, are detected', async () => {
    // Let the serving process write its checkpoint (every 5 s while it writes; at the latest when it stops).
    await terminate(sigil.process);
    const entries = await execSql(sigil, 'select stream, seq, entry, mac from audit_entries order by stream, seq');
    const last = entries[entries.length - 1];
    const [checkpoint] = await execSql(sigil, 'select seq from audit_checkpoints where stream = ? order by seq desc limit 1', [last.stream]);
    expect(Number(checkpoint.seq)).toBe(Number(last.seq));

    // An attacker rewrites the last entry and recomputes its mac with a key of their own.
    const forged = last.entry.replace(/"time":\d+/, '"time":1');
    const mac = createHmac('sha256', Buffer.alloc(32, 7)).update(entries[entries.length - 2].mac).update(forged).digest('hex');
    let r = await tampered('update audit_entries set entry = ?, mac = ? where stream = ? and seq = ?', 'update audit_entries set entry = ?, mac = ? where stream = ? and seq = ?', [forged, mac, last.stream, last.seq], [last.entry, last.mac, last.stream, last.seq]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`stream ${last.stream} seq ${last.seq}: the mac does not match`));

    // The last entries cut off (with the activities they describe, as a thorough attacker would).
    const tail = entries.slice(-2);
    await execSql(sigil, 'delete from audit_entries where stream = ? and seq >= ?', [last.stream, tail[0].seq]);
    r = verifyLive();
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`checkpoint of stream ${last.stream} at seq ${last.seq}: the stream ends before it`));
  }, 60_000);
});
