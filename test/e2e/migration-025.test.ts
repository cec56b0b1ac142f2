// Migration 025 (time-ordered idempotency) on a deployment that has history: activities recorded
// under the old (organization_id, fingerprint) constraint keep their identity. The test records a
// waiting activity, a finished approval and a completed signature with the official clients, puts
// the database back in the shape migration 024 left it (old constraint, no partial index, waited
// activities' parameters cleared to NULL, 025 not recorded), restarts Sigil, and checks that the
// migration kept every row, that the waiting activity can still be approved to completion, that the
// same body still answers the same activity, and that approvals are answered as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { serve, startSigil, terminate, type SigilInstance } from '../helpers/sigil.js';
import { newKey, rawPost, activityBody, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot, execSql } from '../helpers/db-snapshot.js';

let sigil: SigilInstance;
let org: string;
let signWith: string;
const keys: Record<string, { id: string; key: KeyPair }> = {};

const http = (key: KeyPair) => new TurnkeyClient({ baseUrl: sigil.url }, new ApiKeyStamper({ apiPublicKey: key.apiPublicKey, apiPrivateKey: key.apiPrivateKey }));

function signBody(payloadByte: string, timestampMs: string) {
  return { type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2', timestampMs, organizationId: org, parameters: { signWith, payload: payloadByte.repeat(32), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' } };
}

/** The activities table as migration 024 left it, on either store. */
async function backTo024(): Promise<void> {
  const sq = !sigil.databaseUrl;
  await execSql(sigil, `UPDATE activities SET pending_parameters = NULL WHERE pending_parameters = ''`);
  await execSql(sigil, 'DROP INDEX activities_awaited_fingerprint');
  if (sq) {
    const [{ sql: ddl }] = await execSql(sigil, `SELECT sql FROM sqlite_master WHERE name = 'activities'`);
    const old = ddl
      .replace(/^CREATE TABLE "activities"/, 'CREATE TABLE "activities_old"')
      .replace('constraint "activities_time_fingerprint_org" unique ("timestamp_ms", "fingerprint", "organization_id")', 'constraint "activities_org_fingerprint" unique ("organization_id", "fingerprint")');
    expect(old).toContain('activities_org_fingerprint');
    // One connection for the rebuild: foreign keys are a per-connection setting.
    const { default: BetterSqlite3 } = await import('../../src/store/sqlite-driver.js');
    const { join } = await import('node:path');
    const db = new BetterSqlite3(join(sigil.dataDir, 'sigil.sqlite'));
    try {
      db.pragma('foreign_keys = OFF');
      db.exec(`BEGIN; ${old}; INSERT INTO activities_old SELECT * FROM activities; DROP TABLE activities; ALTER TABLE activities_old RENAME TO activities;
        CREATE INDEX "activities_org_created" on "activities" ("organization_id", "created_at", "id"); COMMIT;`);
    } finally {
      db.close();
    }
  } else {
    await execSql(sigil, 'ALTER TABLE activities DROP CONSTRAINT activities_time_fingerprint_org');
    await execSql(sigil, 'ALTER TABLE activities ADD CONSTRAINT activities_org_fingerprint UNIQUE (organization_id, fingerprint)');
  }
  await execSql(sigil, `DELETE FROM kysely_migration WHERE name = '025_time_ordered_idempotency'`);
}

beforeAll(async () => {
  sigil = await startSigil({}, { process: true });
  org = sigil.root.organizationId;
  const root = sdkServerClient(sigil);
  const w = await root.createWallet({ walletName: 'm025', accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] });
  signWith = w.addresses[0];
  for (const name of ['bob', 'carol']) {
    const key = newKey();
    const { userIds } = await root.createUsers({ users: [{ userName: name, apiKeys: [{ apiKeyName: name, publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }] });
    keys[name] = { id: userIds[0], key };
  }
  await root.createPolicy({
    policyName: 'two people sign',
    effect: 'EFFECT_ALLOW',
    condition: `activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2'`,
    consensus: `approvers.count() >= 2 && approvers.any(u, u.id == '${keys.bob.id}' || u.id == '${keys.carol.id}')`,
    notes: 'two-person rule',
  });
});
afterAll(async () => {
  if (sigil) await terminate(sigil.process);
  await sigil?.stop();
});

describe('migration 025 on a deployment with history', () => {
  it('keeps every activity, its idempotency and its approvals', async () => {
    const ts = String(Date.now());
    const waiting = await http(keys.bob.key).signRawPayload(signBody('11', ts) as never);
    expect(waiting.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    const approvedEarlier = await http(keys.bob.key).signRawPayload(signBody('22', ts) as never);
    // Approved in a later millisecond than it was created: what tells the migration it waited.
    await new Promise((r) => setTimeout(r, 5));
    await sdkServerClient(sigil, keys.carol.key).approveActivity({ fingerprint: approvedEarlier.activity.fingerprint });
    const completed = await http(sigil.root).signRawPayload(signBody('33', ts) as never);
    expect(completed.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');

    await terminate(sigil.process);
    await backTo024();
    const before = await dbSnapshot(sigil);
    const restarted = serve(sigil.dataDir, sigil.env);
    sigil = { ...sigil, ...(await restarted.ready), process: restarted.child, stderr: restarted.stderr };

    // The migration ran again, and the idempotency key is the time-ordered one.
    const constraint = sigil.databaseUrl
      ? await execSql(sigil, `SELECT conname AS name FROM pg_constraint WHERE conrelid = 'activities'::regclass AND contype = 'u'`)
      : await execSql(sigil, `SELECT 'activities_time_fingerprint_org' AS name FROM sqlite_master WHERE name = 'activities' AND sql LIKE '%activities_time_fingerprint_org%'`);
    expect(constraint.map((r) => r.name)).toEqual(['activities_time_fingerprint_org']);

    // Every row is still there, unchanged but for the marker of activities that waited.
    const after = await dbSnapshot(sigil);
    const strip = (rows: unknown[]) => (rows as Record<string, unknown>[]).map(({ pending_parameters: _p, ...rest }) => rest);
    expect(strip(after.activities)).toEqual(strip(before.activities));
    expect(after.votes).toEqual(before.votes);

    // The same body is the same activity (no second signature), whoever of its signers sends it.
    const again = await http(sigil.root).signRawPayload(signBody('33', ts) as never);
    expect(again.activity.id).toBe(completed.activity.id);
    expect((await dbSnapshot(sigil)).activities).toHaveLength(after.activities.length);

    // The waiting activity completes with the approval it was waiting for.
    await sdkServerClient(sigil, keys.carol.key).approveActivity({ fingerprint: waiting.activity.fingerprint });
    const done = (await sdkServerClient(sigil).getActivity({ activityId: waiting.activity.id })).activity as any;
    expect(done.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(done.votes.map((v: { userId: string }) => v.userId)).toEqual([keys.bob.id, keys.carol.id]);

    // An activity that finished after waiting is still found, and said to be done; one that never
    // waited cannot be approved and is answered like an unknown fingerprint.
    const late = await rawPost(`${sigil.url}/public/v1/submit/approve_activity`, activityBody(org, 'ACTIVITY_TYPE_APPROVE_ACTIVITY', { fingerprint: approvedEarlier.activity.fingerprint }), { key: keys.carol.key });
    expect(late.status).toBe(400);
    expect(late.body.message).toMatch(/is not awaiting consensus/);
    const never = await rawPost(`${sigil.url}/public/v1/submit/approve_activity`, activityBody(org, 'ACTIVITY_TYPE_APPROVE_ACTIVITY', { fingerprint: completed.activity.fingerprint }), { key: keys.carol.key });
    expect(never.status).toBe(404);
  });
});
