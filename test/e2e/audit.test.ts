// The audit trail (issue 8 part 5) against a real `sigil serve`: activities and a refused request
// land in the hash-chained log, `sigil audit export` writes it, `sigil audit verify` passes on it and
// fails, naming the entry, on a changed, a removed and a reordered entry. No parameters in entries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateP256KeyPair } from '@turnkey/crypto';
import { activityBody, rawPost, sdkServerClient } from '../helpers/clients.js';
import { runSigil, startSigil, type SigilInstance } from '../helpers/sigil.js';

let sigil: SigilInstance;
let dir: string;
const EMAIL = 'audit-secret-person@example.com';

beforeAll(async () => {
  sigil = await startSigil();
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

function verify(lines: any[]) {
  const file = join(dir, `tampered-${Math.random().toString(16).slice(2)}.jsonl`);
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return runSigil(['audit', 'verify', '--file', file], sigil.env);
}

describe('audit log', () => {
  it('records activities and refusals, exports, verifies, and detects tampering', async () => {
    const api = sdkServerClient(sigil);
    const k = generateP256KeyPair();
    const { userIds } = await api.createUsers({
      users: [
        {
          userName: 'audited',
          userEmail: EMAIL,
          apiKeys: [{ apiKeyName: 'k', publicKey: k.publicKey, curveType: 'API_KEY_CURVE_P256' }],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    });
    await api.createUserTag({ userTagName: 'audit-tag', userIds: [] });
    // A refused request: stamped by a key nobody registered.
    const stranger = generateP256KeyPair();
    const refusedBody = activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_USER_TAG', { userTagName: 'nope', userIds: [] });
    const refused = await rawPost(`${sigil.url}/public/v1/submit/create_user_tag`, refusedBody, {
      key: { apiPublicKey: stranger.publicKey, apiPrivateKey: stranger.privateKey },
    });
    expect(refused.status).toBe(401);
    // A request whose stamp does not match the body.
    const forged = await rawPost(`${sigil.url}/public/v1/submit/create_user_tag`, refusedBody, {
      key: sigil.root,
      stampBody: JSON.stringify({ other: 'body' }),
    });
    expect(forged.status).toBe(401);

    const { file, lines, text } = exportLog();
    expect(lines.length).toBeGreaterThanOrEqual(4);
    lines.forEach((l, i) => {
      expect(l.seq).toBe(i + 1);
      expect(Object.keys(l).sort()).toEqual(['activityId', 'createdAt', 'entry', 'hash', 'kind', 'organizationId', 'prevHash', 'seq']);
    });
    const entries = lines.map((l) => ({ ...l, content: JSON.parse(l.entry) }));
    const created = entries.find((e) => e.kind === 'activity' && e.content.operation === 'create_users');
    expect(created).toBeDefined();
    expect(created!.content).toMatchObject({ status: 'ACTIVITY_STATUS_COMPLETED', userId: sigil.root.userId, publicKey: sigil.root.apiPublicKey, operation: 'create_users' });
    expect(created!.content.type).toMatch(/^ACTIVITY_TYPE_CREATE_USERS/);
    expect(created!.content.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    const refusals = entries.filter((e) => e.kind === 'refused');
    expect(refusals.map((e) => e.content.publicKey)).toEqual(expect.arrayContaining([stranger.publicKey, sigil.root.apiPublicKey]));
    for (const r of refusals) {
      expect(r.organizationId).toBe(sigil.root.organizationId);
      expect(r.content.code).toMatch(/^[A-Z_]+$/);
      expect(r.content.httpStatus).toBe(401);
    }
    // No parameters, bodies or stamps: the email, the new key, the tag name and the user id list are absent.
    expect(text).not.toContain(EMAIL);
    expect(text).not.toContain(k.publicKey);
    expect(text).not.toContain('audit-tag');
    expect(text).not.toContain(userIds[0]);
    expect(text).not.toContain('"nope"');

    const ok = runSigil(['audit', 'verify', '--file', file], sigil.env);
    expect(ok.status, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(new RegExp(`^ok ${lines.length} entries verified`));

    // 1. A changed field inside the hashed entry.
    const changed = lines.map((l) => ({ ...l }));
    changed[1].entry = changed[1].entry.replace(/"status":"[A-Z_]+"/, '"status":"ACTIVITY_STATUS_FAILED"');
    expect(changed[1].entry).not.toBe(lines[1].entry);
    let r = verify(changed);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^FAIL entry seq 2 \(line 2\): hash does not match/);

    // 1b. A changed column beside the entry.
    const column = lines.map((l) => ({ ...l }));
    column[2].kind = 'vote';
    r = verify(column);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^FAIL entry seq 3 \(line 3\): kind "vote" differs/);

    // 2. A removed entry.
    const removed = lines.filter((_, i) => i !== 1);
    r = verify(removed);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^FAIL entry seq 3 \(line 2\): seq 3 where 2 was expected: an entry was removed or reordered/);

    // 2b. A removed entry whose successors were renumbered: the chain link breaks.
    const renumbered = removed.map((l, i) => ({ ...l, seq: i + 1 }));
    r = verify(renumbered);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^FAIL entry seq 2 \(line 2\): hash does not match|^FAIL entry seq 2 \(line 2\): prevHash/);

    // 3. Two entries swapped.
    const swapped = lines.map((l) => ({ ...l }));
    [swapped[1], swapped[2]] = [swapped[2], swapped[1]];
    r = verify(swapped);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^FAIL entry seq 3 \(line 2\): seq 3 where 2 was expected/);
  }, 120_000);

  it('audit verify reports a missing file argument as a usage error', () => {
    const r = runSigil(['audit', 'verify'], sigil.env);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/needs --file FILE/);
  });
});
