// Secrets (docs/secrets.md "Secrets"; docs/reference/bundles.md "Secrets"): arbitrary secret values
// imported and exported only as HPKE bundles, driven through the official clients (@turnkey/http
// TurnkeyClient for init_import_secrets and delete_secrets, which @turnkey/sdk-server lacks;
// @turnkey/sdk-server for import, export and list), with @turnkey/crypto sealing each secret to an
// init_import_secrets target (encryptSecretToBundle) and opening each export (decryptSecretBundle), both
// verifying the deployment's signer key. Proves: import → list → export decrypts to the same bytes →
// delete → gone; export policies judged per secret (static properties, id, name), a batch refused whole;
// import targets single-use and bound to the user they were issued to; bad bundles, keys and ids refused
// with nothing changed; the secret never readable in get_activity, the database, the audit export or the
// server log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decryptExportBundle, decryptSecretBundle, encryptSecretToBundle, generateP256KeyPair } from '@turnkey/crypto';
import { runSigil, startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, httpClient, newKey, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot, dbText, expectRefusedUnchanged } from '../helpers/db-snapshot.js';

const SUITE = 'TRANSPORT_ENCRYPTION_SUITE_ENCLAVE_ENCRYPT_V1' as const;

let sigil: SigilInstance;
let api: ReturnType<typeof sdkServerClient>;
let org: string;
let signer: string;
/** Every plaintext this file imports: none may be readable anywhere but in a decrypted export. */
const plaintexts: string[] = [];

beforeAll(async () => {
  sigil = await startSigil({ SIGIL_LOG_LEVEL: 'debug' });
  api = sdkServerClient(sigil);
  org = sigil.root.organizationId;
  signer = sigil.root.signerPublicKey;
});
afterAll(async () => {
  await sigil?.stop();
});

const now = () => String(Date.now());

/** init_import_secrets through @turnkey/http: the signed target messages. */
async function initImport(numSecrets: number, key: KeyPair = sigil.root): Promise<string[]> {
  const r = await httpClient(sigil, key).initImportSecrets({
    type: 'ACTIVITY_TYPE_INIT_IMPORT_SECRETS',
    timestampMs: now(),
    organizationId: org,
    parameters: { encryptionSuite: SUITE, numSecrets },
  });
  expect(r.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  return (r.activity.result as any).initImportSecretsResult.enclaveTargetMessages;
}

/** A secret sealed by the client to one target, as an ImportSecretParams entry. */
async function sealed(plaintext: string, target: string, extra: { name?: string; staticProperties?: { key: string; value: string }[] } = {}) {
  plaintexts.push(plaintext);
  const { secretPayload, targetPublicKey } = await encryptSecretToBundle({ plaintext, ingressTargetBundle: target, organizationId: org, dangerouslyOverrideSignerPublicKey: signer });
  return { ...extra, secretPayload, targetPublicKey, encryptionSuite: SUITE };
}

async function importOne(plaintext: string, extra: { name?: string; staticProperties?: { key: string; value: string }[] } = {}): Promise<string> {
  const [target] = await initImport(1);
  const { secretIds } = await api.importSecrets({ secrets: [await sealed(plaintext, target, extra)] });
  return secretIds[0];
}

async function exportAndOpen(client: ReturnType<typeof sdkServerClient>, secretIds: string[]): Promise<string[]> {
  const target = generateP256KeyPair();
  const { secretPayloads } = await client.exportSecrets({ secrets: secretIds.map((secretId) => ({ secretId, targetPublicKey: target.publicKeyUncompressed, encryptionSuite: SUITE })) });
  return Promise.all(secretPayloads.map((secretPayload) => decryptSecretBundle({ secretPayload, embeddedPrivateKey: target.privateKey, organizationId: org, dangerouslyOverrideSignerPublicKey: signer })));
}

async function newUser(name: string): Promise<{ id: string; key: KeyPair }> {
  const key = newKey();
  const { userIds } = await api.createUsers({
    users: [{ userName: name, apiKeys: [{ apiKeyName: `${name} key`, publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
  });
  return { id: userIds[0], key };
}

describe('secrets', () => {
  it('import → list → export decrypts to the same bytes → delete → gone', async () => {
    const token = `tk_live_${generateP256KeyPair().privateKey}`;
    const password = 'pässwörd 🔑 with spaces\nand a newline';
    const targets = await initImport(2);
    expect(targets).toHaveLength(2);
    // Each target is the signed envelope encryptSecretToBundle verifies, bound to the organization and user.
    const data = JSON.parse(Buffer.from(JSON.parse(targets[0]).data, 'hex').toString('utf8'));
    expect(data).toMatchObject({ organizationId: org, userId: sigil.root.userId, targetPublic: expect.stringMatching(/^04[0-9a-f]{128}$/) });

    const imported = await api.importSecrets({
      secrets: [
        await sealed(token, targets[0], { name: 'exchange-token', staticProperties: [{ key: 'kind', value: 'exchangeApiKey' }, { key: 'permissions', value: 'trade' }] }),
        await sealed(password, targets[1]),
      ],
    });
    const [tokenId, passwordId] = imported.secretIds;
    expect(imported.secretIds).toHaveLength(2);

    // Listed newest first (both share the activity's time, so ids order them), metadata only.
    const listed = await api.listSecrets({});
    expect(listed.secrets.map((s) => s.secretId)).toEqual([passwordId, tokenId]);
    expect(listed.secrets[1]).toEqual({
      secretId: tokenId,
      name: 'exchange-token',
      staticProperties: [{ key: 'kind', value: 'exchangeApiKey' }, { key: 'permissions', value: 'trade' }],
      createdAtUnixMs: expect.stringMatching(/^\d+$/),
    });
    expect(listed.secrets[0]).not.toHaveProperty('name');
    expect(JSON.stringify(listed)).not.toContain(token);

    // Export to an uncompressed and to a compressed target key; both open to the exact bytes.
    expect(await exportAndOpen(api, [tokenId, passwordId])).toEqual([token, password]);
    const compressed = generateP256KeyPair();
    // requestContext (in @turnkey/http 6.6.0's types, not the bundled swagger) is accepted and ignored.
    const { secretPayloads } = await api.exportSecrets({ secrets: [{ secretId: passwordId, targetPublicKey: compressed.publicKey, encryptionSuite: SUITE, requestContext: [{ key: 'ticket', value: 'OPS-1' }] } as never] });
    expect(await decryptSecretBundle({ secretPayload: secretPayloads[0], embeddedPrivateKey: compressed.privateKey, organizationId: org, dangerouslyOverrideSignerPublicKey: signer })).toBe(password);
    // The payload is an export bundle: decryptExportBundle opens it to the same bytes.
    const asExport = await decryptExportBundle({ exportBundle: secretPayloads[0], embeddedKey: compressed.privateKey, organizationId: org, returnMnemonic: false, dangerouslyOverrideSignerPublicKey: signer });
    expect(asExport).toBe(Buffer.from(password, 'utf8').toString('hex'));
    // A client trusting another signer key, or expecting another organization, refuses the payload.
    await expect(
      decryptSecretBundle({ secretPayload: secretPayloads[0], embeddedPrivateKey: compressed.privateKey, organizationId: org, dangerouslyOverrideSignerPublicKey: generateP256KeyPair().publicKeyUncompressed }),
    ).rejects.toThrow(/does not match signer key from bundle/);
    await expect(
      decryptSecretBundle({ secretPayload: secretPayloads[0], embeddedPrivateKey: compressed.privateKey, organizationId: '00000000-0000-4000-8000-000000000000', dangerouslyOverrideSignerPublicKey: signer }),
    ).rejects.toThrow(/organization id does not match/);

    // Delete through @turnkey/http: gone from the list, and an export of it is a 404.
    const deleted = await httpClient(sigil).deleteSecrets({ type: 'ACTIVITY_TYPE_DELETE_SECRETS', timestampMs: now(), organizationId: org, parameters: { secretIds: [passwordId] } });
    expect((deleted.activity.result as any).deleteSecretsResult).toEqual({ secretIds: [passwordId] });
    expect((await api.listSecrets({})).secrets.map((s) => s.secretId)).toEqual([tokenId]);
    await expect(exportAndOpen(api, [passwordId])).rejects.toThrow(/secret not found/);
    const stored = await dbText(sigil);
    expect(stored).not.toContain(password.slice(0, 8));
  });

  it('lists in pages, newest first', async () => {
    const ids = [];
    for (const n of [1, 2, 3]) ids.push(await importOne(`page secret ${n} ${generateP256KeyPair().privateKey}`, { name: `page-${n}` }));
    const first = await api.listSecrets({ paginationOptions: { limit: '2' } });
    expect(first.secrets.map((s) => s.secretId)).toEqual([ids[2], ids[1]]);
    const next = await api.listSecrets({ paginationOptions: { limit: '2', after: ids[1] } });
    expect(next.secrets[0].secretId).toBe(ids[0]);
  });

  it('export policies see each secret: static properties, id and name; a batch is allowed only when every secret is', async () => {
    const trade = await importOne(`trade ${generateP256KeyPair().privateKey}`, { name: 'trade-key', staticProperties: [{ key: 'kind', value: 'exchangeApiKey' }, { key: 'permissions', value: 'trade' }] });
    const withdraw = await importOne(`withdraw ${generateP256KeyPair().privateKey}`, { name: 'withdraw-key', staticProperties: [{ key: 'kind', value: 'exchangeApiKey' }, { key: 'permissions', value: 'withdraw' }] });
    const bob = await newUser('secrets bob');
    const asBob = sdkServerClient(sigil, bob.key);

    // No policy: implicit deny, and the refused export changes nothing.
    const before = await dbSnapshot(sigil);
    const target = generateP256KeyPair();
    const body = activityBody(org, 'ACTIVITY_TYPE_EXPORT_SECRETS', { secrets: [{ secretId: trade, targetPublicKey: target.publicKeyUncompressed, encryptionSuite: SUITE }] });
    const res = await rawPost(`${sigil.url}/public/v1/submit/export_secrets`, body, { key: bob.key });
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(/permission/i);
    expect(await dbSnapshot(sigil)).toEqual(before);

    // The documented policy (docs/reference/policies.md "The decision for an activity"): bob may export
    // trade keys.
    const allow = await api.createPolicy({
      policyName: 'bob retrieves trade-only exchange keys',
      effect: 'EFFECT_ALLOW',
      consensus: `approvers.any(u, u.id == '${bob.id}')`,
      condition: "secret.static_properties['kind'] == 'exchangeApiKey' && secret.static_properties['permissions'] == 'trade' && activity.type == 'ACTIVITY_TYPE_EXPORT_SECRETS'",
      notes: '',
    });
    const [tradeValue] = await exportAndOpen(asBob, [trade]);
    expect(tradeValue).toMatch(/^trade /);
    await expect(exportAndOpen(asBob, [withdraw])).rejects.toThrow(/permission/i);
    // One secret not allowed refuses the whole batch.
    await expect(exportAndOpen(asBob, [trade, withdraw])).rejects.toThrow(/permission/i);
    // Root exports both (the root quorum is not policy-governed).
    expect((await exportAndOpen(api, [trade, withdraw])).map((v) => v.split(' ')[0])).toEqual(['trade', 'withdraw']);
    await api.deletePolicy({ policyId: allow.policyId });

    // A policy naming one secret by id, and an explicit DENY naming another by name.
    await api.createPolicy({
      policyName: 'bob exports exchange keys by resource',
      effect: 'EFFECT_ALLOW',
      consensus: `approvers.any(u, u.id == '${bob.id}')`,
      condition: `activity.resource == 'SECRET' && activity.action == 'EXPORT' && (secret.id == '${trade}' || secret.name == 'withdraw-key')`,
      notes: '',
    });
    expect(await exportAndOpen(asBob, [trade, withdraw])).toHaveLength(2);
    await api.createPolicy({ policyName: 'nobody exports the withdraw key', effect: 'EFFECT_DENY', condition: "secret.name == 'withdraw-key'", notes: '' });
    await expect(exportAndOpen(asBob, [withdraw])).rejects.toThrow(/policy engine denied request explicitly/);
    expect(await exportAndOpen(asBob, [trade])).toHaveLength(1);

    // An export that needs a second approver waits, and its result is read from get_activity.
    const guarded = await importOne(`guarded ${generateP256KeyPair().privateKey}`, { name: 'needs-two' });
    const dave = await newUser('secrets dave');
    await api.createPolicy({
      policyName: 'the guarded secret needs bob and dave',
      effect: 'EFFECT_ALLOW',
      consensus: `approvers.any(u, u.id == '${bob.id}') && approvers.any(u, u.id == '${dave.id}')`,
      condition: "activity.type == 'ACTIVITY_TYPE_EXPORT_SECRETS' && secret.name == 'needs-two'",
      notes: '',
    });
    const waiting = generateP256KeyPair();
    const submitted = await httpClient(sigil, bob.key).exportSecrets({
      type: 'ACTIVITY_TYPE_EXPORT_SECRETS',
      timestampMs: now(),
      organizationId: org,
      parameters: { secrets: [{ secretId: guarded, targetPublicKey: waiting.publicKeyUncompressed, encryptionSuite: SUITE }] },
    });
    expect(submitted.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    await sdkServerClient(sigil, dave.key).approveActivity({ fingerprint: submitted.activity.fingerprint });
    const done = await httpClient(sigil, bob.key).getActivity({ organizationId: org, activityId: submitted.activity.id });
    expect(done.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const [payload] = (done.activity.result as any).exportSecretsResult.secretPayloads;
    expect(await decryptSecretBundle({ secretPayload: payload, embeddedPrivateKey: waiting.privateKey, organizationId: org, dangerouslyOverrideSignerPublicKey: signer })).toMatch(/^guarded /);

    // Deleting is SECRET/DELETE: not allowed by the export policies.
    await expect(
      httpClient(sigil, bob.key).deleteSecrets({ type: 'ACTIVITY_TYPE_DELETE_SECRETS', timestampMs: now(), organizationId: org, parameters: { secretIds: [trade] } }),
    ).rejects.toThrow(/permission/i);
    expect((await api.listSecrets({ paginationOptions: { limit: '100' } })).secrets.map((s) => s.secretId)).toContain(trade);
  });

  it('import targets are single-use and bound to the user they were issued to', async () => {
    const carol = await newUser('secrets carol');
    // Without a policy carol cannot even ask for a target.
    await expect(initImport(1, carol.key)).rejects.toThrow(/permission/i);
    await api.createPolicy({
      policyName: 'carol imports secrets',
      effect: 'EFFECT_ALLOW',
      consensus: `approvers.any(u, u.id == '${carol.id}')`,
      condition: "activity.resource == 'SECRET' && activity.action == 'IMPORT'",
      notes: '',
    });
    const [rootTarget] = await initImport(1);
    const entry = await sealed(`carol's ${generateP256KeyPair().privateKey}`, rootTarget);
    const asCarol = sdkServerClient(sigil, carol.key);
    await expect(asCarol.importSecrets({ secrets: [entry] })).rejects.toThrow(/not an import target init_import_secrets issued to you/);
    // The target carol could not use is still good for the user it was issued to, once.
    const { secretIds } = await api.importSecrets({ secrets: [entry] });
    expect(secretIds).toHaveLength(1);
    await expect(api.importSecrets({ secrets: [{ ...entry, name: 'again' }] })).rejects.toThrow(/already used/);
    // Carol's own target works for carol.
    const [carolTarget] = await initImport(1, carol.key);
    const mine = await asCarol.importSecrets({ secrets: [await sealed(`carol ${generateP256KeyPair().privateKey}`, carolTarget)] });
    expect(mine.secretIds).toHaveLength(1);
  });

  it('bad bundles, keys, ids and batches are refused with a clear error and change nothing', async () => {
    const submit = (path: string, type: string, parameters: unknown) => rawPost(`${sigil.url}/public/v1/submit/${path}`, activityBody(org, type, parameters), { key: sigil.root });
    const refused = async (path: string, type: string, parameters: unknown, status: number, code: number, kind: string, message: RegExp) => {
      const before = await dbSnapshot(sigil);
      await expectRefusedUnchanged(sigil, before, await submit(path, type, parameters), status, code, kind, message);
    };
    const [target, second] = await initImport(2);
    const good = await sealed(`refusals ${generateP256KeyPair().privateKey}`, target, { name: 'refusals' });
    const payload = JSON.parse(good.secretPayload);
    const flipped = payload.ciphertext.slice(0, -2) + (payload.ciphertext.endsWith('00') ? '01' : '00');
    const tampered = { ...good, secretPayload: JSON.stringify({ ...payload, ciphertext: flipped }) };

    await refused('import_secrets', 'ACTIVITY_TYPE_IMPORT_SECRETS', { secrets: [tampered] }, 400, 3, 'REQUEST_INVALID', /secrets\[0\]\.secretPayload does not open with its import target/);
    await refused('import_secrets', 'ACTIVITY_TYPE_IMPORT_SECRETS', { secrets: [{ ...good, secretPayload: 'not json' }] }, 400, 3, 'REQUEST_INVALID', /secrets\[0\]\.secretPayload does not open/);
    await refused('import_secrets', 'ACTIVITY_TYPE_IMPORT_SECRETS', { secrets: [{ ...good, targetPublicKey: generateP256KeyPair().publicKeyUncompressed }] }, 400, 3, 'REQUEST_INVALID', /not an import target/);
    await refused('import_secrets', 'ACTIVITY_TYPE_IMPORT_SECRETS', { secrets: [{ ...good, targetPublicKey: 'zz' }] }, 400, 3, 'REQUEST_INVALID', /targetPublicKey/);
    await refused('import_secrets', 'ACTIVITY_TYPE_IMPORT_SECRETS', { secrets: [{ ...good, encryptionSuite: 'TRANSPORT_ENCRYPTION_SUITE_NONE' }] }, 400, 3, 'REQUEST_INVALID', /encryptionSuite/);
    await refused('import_secrets', 'ACTIVITY_TYPE_IMPORT_SECRETS', { secrets: [] }, 400, 3, 'REQUEST_INVALID', /1 to 32 secrets/);
    await refused('import_secrets', 'ACTIVITY_TYPE_IMPORT_SECRETS', { secrets: [{ ...good, name: 'exchange-token' }] }, 400, 3, 'REQUEST_INVALID', /a secret named "exchange-token" already exists/);
    await refused('import_secrets', 'ACTIVITY_TYPE_IMPORT_SECRETS', { secrets: [{ ...good, staticProperties: [{ key: 'k', value: '1' }, { key: 'k', value: '2' }] }] }, 400, 3, 'REQUEST_INVALID', /names the key "k" twice/);
    // A batch whose second secret is bad imports neither, and spends neither target.
    const other = await sealed(`second ${generateP256KeyPair().privateKey}`, second);
    await refused('import_secrets', 'ACTIVITY_TYPE_IMPORT_SECRETS', { secrets: [good, { ...other, secretPayload: tampered.secretPayload }] }, 400, 3, 'REQUEST_INVALID', /secrets\[1\]\.secretPayload/);
    const empty = await sealed('', second);
    await refused('import_secrets', 'ACTIVITY_TYPE_IMPORT_SECRETS', { secrets: [empty] }, 400, 3, 'REQUEST_INVALID', /a secret must be 1 to 16384 bytes/);
    // Both targets still work after all those refusals.
    expect((await api.importSecrets({ secrets: [good, other] })).secretIds).toHaveLength(2);

    await refused('init_import_secrets', 'ACTIVITY_TYPE_INIT_IMPORT_SECRETS', { encryptionSuite: SUITE, numSecrets: 0 }, 400, 3, 'REQUEST_INVALID', /numSecrets must hold 1 to 32/);
    await refused('init_import_secrets', 'ACTIVITY_TYPE_INIT_IMPORT_SECRETS', { encryptionSuite: SUITE, numSecrets: 33 }, 400, 3, 'REQUEST_INVALID', /numSecrets must hold 1 to 32/);

    const [kept] = (await api.listSecrets({})).secrets;
    const to = generateP256KeyPair().publicKeyUncompressed;
    const missing = '0190aaaa-0000-7000-8000-000000000000';
    await refused('export_secrets', 'ACTIVITY_TYPE_EXPORT_SECRETS', { secrets: [{ secretId: missing, targetPublicKey: to, encryptionSuite: SUITE }] }, 404, 5, 'NOT_FOUND', /secret not found: 0190aaaa/);
    await refused('export_secrets', 'ACTIVITY_TYPE_EXPORT_SECRETS', { secrets: [{ secretId: kept.secretId, targetPublicKey: '04abcd', encryptionSuite: SUITE }] }, 400, 3, 'REQUEST_INVALID', /secrets\[0\]\.targetPublicKey: invalid targetPublicKey/);
    await refused('delete_secrets', 'ACTIVITY_TYPE_DELETE_SECRETS', { secretIds: [kept.secretId, missing] }, 404, 5, 'NOT_FOUND', /secret not found: 0190aaaa/);
    await refused('delete_secrets', 'ACTIVITY_TYPE_DELETE_SECRETS', { secretIds: [kept.secretId, kept.secretId] }, 400, 3, 'REQUEST_INVALID', /secretIds must be distinct/);
    await refused('delete_secrets', 'ACTIVITY_TYPE_DELETE_SECRETS', { secretIds: [] }, 400, 3, 'REQUEST_INVALID', /1 to 32 secrets/);
    const badCursor = await rawPost(`${sigil.url}/public/v1/query/list_secrets`, { organizationId: org, paginationOptions: { after: missing } }, { key: sigil.root });
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.message).toMatch(/pagination cursor .* is not a secret of this organization/);
  });

  it('no secret is readable in get_activity, the database, the audit log or the server log', async () => {
    const marker = `marker-${generateP256KeyPair().privateKey}`;
    const id = await importOne(marker, { name: 'marker' });
    await exportAndOpen(api, [id]);
    const { activities } = await api.getActivities({ paginationOptions: { limit: '100' } });
    const imports = activities.filter((a) => a.type === 'ACTIVITY_TYPE_IMPORT_SECRETS');
    expect(imports.length).toBeGreaterThan(0);
    const fetched = await api.getActivity({ activityId: imports[0].id });
    expect((fetched.activity.intent as any).importSecretsIntent.secrets[0].secretPayload).toBe('<redacted>');
    expect((fetched.activity.intent as any).importSecretsIntent.secrets[0].name).toBe('marker');

    const encodings = (s: string) => [s, Buffer.from(s).toString('hex'), Buffer.from(s).toString('base64')];
    const records = JSON.stringify(activities) + (await dbText(sigil));
    const dir = mkdtempSync(join(tmpdir(), 'sigil-secrets-audit-'));
    try {
      const file = join(dir, 'audit.jsonl');
      const exported = runSigil(['audit', 'export', '--data-dir', sigil.dataDir, '--out', file], sigil.env);
      expect(exported.status, exported.stderr).toBe(0);
      const audit = readFileSync(file, 'utf8');
      expect(audit).toContain('ACTIVITY_TYPE_IMPORT_SECRETS');
      await new Promise((r) => setTimeout(r, 200)); // pino writes asynchronously
      const log = sigil.stderr();
      expect(log).toContain('import_secrets');
      for (const p of plaintexts.filter((x) => x.length >= 12)) {
        for (const e of encodings(p)) {
          expect(records).not.toContain(e);
          expect(audit).not.toContain(e);
          expect(log).not.toContain(e);
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('secret import targets expire, and the secrets quota holds', () => {
  let short: SigilInstance;
  beforeAll(async () => {
    short = await startSigil({ SIGIL_IMPORT_BUNDLE_TTL_SECONDS: '1', SIGIL_QUOTAS: 'secrets=2' });
  });
  afterAll(async () => {
    await short?.stop();
  });

  it('an expired target is refused and nothing is imported', async () => {
    const shortOrg = short.root.organizationId;
    const r = await httpClient(short).initImportSecrets({ type: 'ACTIVITY_TYPE_INIT_IMPORT_SECRETS', timestampMs: now(), organizationId: shortOrg, parameters: { encryptionSuite: SUITE, numSecrets: 1 } });
    const [target] = (r.activity.result as any).initImportSecretsResult.enclaveTargetMessages;
    const sealedValue = await encryptSecretToBundle({ plaintext: 'late secret value', ingressTargetBundle: target, organizationId: shortOrg, dangerouslyOverrideSignerPublicKey: short.root.signerPublicKey });
    await new Promise((resolve) => setTimeout(resolve, 1500)); // past the 1 s lifetime; a slower machine only waits longer
    const before = await dbSnapshot(short);
    const res = await rawPost(`${short.url}/public/v1/submit/import_secrets`, activityBody(shortOrg, 'ACTIVITY_TYPE_IMPORT_SECRETS', { secrets: [{ ...sealedValue, encryptionSuite: SUITE }] }), { key: short.root });
    await expectRefusedUnchanged(short, before, res, 400, 3, 'REQUEST_INVALID', /secrets\[0\]\.targetPublicKey expired: call init_import_secrets again/);
    expect((await sdkServerClient(short).listSecrets({})).secrets).toEqual([]);
  });

  it('an organization holds at most its quota of secrets; deleting makes room', async () => {
    const shortOrg = short.root.organizationId;
    const client = sdkServerClient(short);
    const seal = async (plaintext: string) => {
      const r = await httpClient(short).initImportSecrets({ type: 'ACTIVITY_TYPE_INIT_IMPORT_SECRETS', timestampMs: now(), organizationId: shortOrg, parameters: { encryptionSuite: SUITE, numSecrets: 1 } });
      const [target] = (r.activity.result as any).initImportSecretsResult.enclaveTargetMessages;
      const s = await encryptSecretToBundle({ plaintext, ingressTargetBundle: target, organizationId: shortOrg, dangerouslyOverrideSignerPublicKey: short.root.signerPublicKey });
      return { ...s, encryptionSuite: SUITE };
    };
    const { secretIds } = await client.importSecrets({ secrets: [await seal('quota one'), await seal('quota two')] });
    const third = await seal('quota three');
    const before = await dbSnapshot(short);
    const res = await rawPost(`${short.url}/public/v1/submit/import_secrets`, activityBody(shortOrg, 'ACTIVITY_TYPE_IMPORT_SECRETS', { secrets: [third] }), { key: short.root });
    await expectRefusedUnchanged(short, before, res, 429, 8, 'RATE_LIMIT_EXCEEDED', /organization has exceeded maximum secrets: an organization holds at most 2 secrets \(has 2, adding 1\)/);
    await httpClient(short).deleteSecrets({ type: 'ACTIVITY_TYPE_DELETE_SECRETS', timestampMs: now(), organizationId: shortOrg, parameters: { secretIds: [secretIds[0]] } });
    expect((await client.importSecrets({ secrets: [third] })).secretIds).toHaveLength(1);
  });
});
