// Secrets (swagger v1InitImportSecretsIntent, v1ImportSecretParams,
// v1ExportSecretParams, v1SecretMetadata; @turnkey/http 6.6.0 v1DeleteSecretsIntent; the client side
// is @turnkey/crypto's encryptSecretToBundle / decryptSecretBundle, docs/reference/bundles.md): arbitrary
// secret values (API tokens, passwords) held sealed like keys, arriving and leaving only as HPKE
// bundles, governed by policies (`secret.*`, docs/reference/policies.md docs/reference/bundles.md "Secrets").
//
// The wire is wallet import and export's (src/domain/keys/export-import.ts, src/crypto/bundles.ts):
// - init_import_secrets issues `numSecrets` single-use, expiring import targets, each a signed
//   envelope {targetPublic, organizationId, userId} (the enclave target message the client verifies
//   against the deployment's signer key), bound to the organization and the calling user;
// - import_secrets takes per secret the formatHpkeBuf JSON sealed to one of those targets, named by
//   its `targetPublicKey`; the target must be the caller's own, unused and unexpired, and is spent;
// - export_secrets answers per secret an export envelope {encappedPublic, ciphertext, organizationId}
//   sealed to the requester's `targetPublicKey`, which decryptSecretBundle opens.
//
// Rules (docs/secrets.md "Secrets"): a batch holds 1 to 32 secrets and succeeds or fails whole; a value is 1 to
// 16,384 bytes; a name, when given, is 1 to 256 characters and unique in the organization; at most
// 32 static properties, keys unique and 1 to 128 characters, values at most 1,024; an organization
// holds at most 1,000 secrets (the `secrets` quota, SIGIL_QUOTAS). Values are sealed at
// rest by the barrier, bound to (secrets, id, value); they are never listed, logged or stored readable.
import { CryptoError, openImportBundle } from '../../crypto/bundles.js';
import { decompressPublicKeyHex } from '../../crypto/p256.js';
import { SigilError, invalid, notFound } from '../../errors/errors.js';
import { SecretNameTaken, type Repositories, type SecretRow } from '../../store/index.js';
import { checkName } from '../identity/contacts.js';
import { reserve } from '../governance/quotas.js';
import type { ActivityContext, OperationContext } from '../context.js';
import { IMPORT_TARGET_AT, checkTarget, exportBundle, issueImportTarget } from './export-import.js';
import type { PolicyContext } from '../../policy/index.js';
import { openForOrganization, openerFor, sealerFor } from './organization-keys.js';

export const MAX_SECRETS_PER_REQUEST = 32;
export const MAX_SECRET_BYTES = 16_384;
const MAX_STATIC_PROPERTIES = 32;

const SECRET_VALUE_AT = (id: string) => ({ table: 'secrets', rowId: id, column: 'value' });

export interface KeyValue {
  key: string;
  value: string;
}

export interface ImportSecretParams {
  name?: string;
  secretPayload: string;
  targetPublicKey: string;
  encryptionSuite: string;
  staticProperties?: KeyValue[];
}

export interface ExportSecretParams {
  secretId: string;
  targetPublicKey: string;
  encryptionSuite: string;
}

function checkBatch(count: number, field: string): void {
  if (count < 1 || count > MAX_SECRETS_PER_REQUEST) {
    throw invalid(`${field} must hold 1 to ${MAX_SECRETS_PER_REQUEST} secrets, got ${count}`);
  }
}

function checkStaticProperties(props: KeyValue[] | undefined, field: string): KeyValue[] {
  const list = props ?? [];
  if (list.length > MAX_STATIC_PROPERTIES) throw invalid(`${field} holds ${list.length} properties; at most ${MAX_STATIC_PROPERTIES} are allowed`);
  const seen = new Set<string>();
  return list.map((p, i) => {
    const key = p.key ?? '';
    const value = p.value ?? '';
    checkName(key, `${field}[${i}].key`, 128);
    if (value.length > 1024) throw invalid(`${field}[${i}].value must be at most 1024 characters`);
    if (seen.has(key)) throw invalid(`${field} names the key "${key}" twice`);
    seen.add(key);
    return { key, value };
  });
}

/** The organization's secrets with these ids, in the order asked; a missing one is a 404 naming it. */
export async function requireSecrets(repos: Repositories, organizationId: string, ids: string[]): Promise<SecretRow[]> {
  const rows = new Map((await repos.secrets.getMany(organizationId, ids)).map((r) => [r.id, r]));
  return ids.map((id) => {
    const row = rows.get(id);
    if (!row) throw notFound(`secret not found: ${id} is not a secret of organization ${organizationId}`);
    return row;
  });
}

const staticPropertiesOf = (row: SecretRow): KeyValue[] => JSON.parse(row.static_properties) as KeyValue[];

/** v1SecretMetadata: what list_secrets shows of a secret, never its value. */
export function secretMetadata(row: SecretRow) {
  return {
    secretId: row.id,
    ...(row.name !== null ? { name: row.name } : {}),
    staticProperties: staticPropertiesOf(row),
    createdAtUnixMs: String(row.created_at),
  };
}

export async function initImportSecrets(ctx: ActivityContext, p: { encryptionSuite: string; numSecrets: number }) {
  checkBatch(p.numSecrets, 'numSecrets');
  const enclaveTargetMessages: string[] = [];
  for (let i = 0; i < p.numSecrets; i++) enclaveTargetMessages.push(await issueImportTarget(ctx, 'secret', ctx.caller.user.id));
  return { enclaveTargetMessages };
}

/** Opens one payload with the caller's import target it names, spending that target. */
async function openSecretPayload(ctx: ActivityContext, s: ImportSecretParams, field: string): Promise<Uint8Array> {
  const userId = ctx.caller.user.id;
  let target: string;
  try {
    target = decompressPublicKeyHex(checkTarget(s.targetPublicKey));
  } catch (err) {
    if (err instanceof SigilError) throw invalid(`${field}.targetPublicKey: ${err.message}`);
    throw invalid(`${field}.targetPublicKey must be a P-256 public key in hex`);
  }
  const row = await ctx.repos.importBundles.byTarget(ctx.organization.id, userId, 'secret', target);
  if (!row) throw invalid(`${field}.targetPublicKey is not an import target init_import_secrets issued to you in this organization`);
  if (row.used_at !== null) throw invalid(`${field}.targetPublicKey was already used: call init_import_secrets again for a fresh target`);
  if (row.expires_at <= ctx.now) throw invalid(`${field}.targetPublicKey expired: call init_import_secrets again for a fresh target`);
  const targetPrivateKey = await openForOrganization(ctx.services.barrier, ctx.repos, row.organization_id, row.target_private_key, IMPORT_TARGET_AT(row.id));
  let plaintext: Uint8Array;
  try {
    plaintext = openImportBundle({
      encryptedBundle: s.secretPayload,
      importBundle: row.import_bundle,
      targetPrivateKey,
      organizationId: ctx.organization.id,
      userId,
      signerPublicKey: ctx.services.signer.publicKeyUncompressedHex,
    });
  } catch (err) {
    if (err instanceof CryptoError) {
      throw invalid(`${field}.secretPayload does not open with its import target (not the formatHpkeBuf JSON of a secret sealed to ${field}.targetPublicKey, or tampered)`);
    }
    throw err;
  } finally {
    targetPrivateKey.fill(0);
  }
  if (!(await ctx.repos.importBundles.markUsed(row.id, ctx.now))) {
    plaintext.fill(0);
    throw invalid(`${field}.targetPublicKey was already used: call init_import_secrets again for a fresh target`);
  }
  return plaintext;
}

export async function importSecrets(ctx: ActivityContext, p: { secrets: ImportSecretParams[] }) {
  checkBatch(p.secrets.length, 'secrets');
  const orgId = ctx.organization.id;
  // Everything that needs no decryption is checked first, so a bad batch spends no target.
  const prepared = p.secrets.map((s, i) => {
    const field = `secrets[${i}]`;
    const name = s.name === undefined ? null : checkName(s.name, `${field}.name`, 256);
    return { s, field, name, staticProperties: checkStaticProperties(s.staticProperties, `${field}.staticProperties`) };
  });
  const names = prepared.flatMap((x) => (x.name === null ? [] : [x.name]));
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw invalid(`secrets names "${twice}" twice: names are unique within an organization`);
  const targets = p.secrets.map((s) => s.targetPublicKey.toLowerCase().replace(/^0x/, ''));
  if (new Set(targets).size !== targets.length) throw invalid('secrets names one targetPublicKey twice: each import target takes one secret');
  const taken = await ctx.repos.secrets.namesTaken(orgId, names);
  if (taken.length > 0) throw invalid(`a secret named "${taken[0]}" already exists in this organization`);

  await reserve(ctx.repos, ctx.organization, 'secrets', prepared.length);
  const secretIds: string[] = [];
  const sealer = await sealerFor(ctx.services.barrier, ctx.repos, orgId, ctx.now);
  for (const x of prepared) {
    const plaintext = await openSecretPayload(ctx, x.s, x.field);
    try {
      if (plaintext.length === 0 || plaintext.length > MAX_SECRET_BYTES) {
        throw invalid(`${x.field}: a secret must be 1 to ${MAX_SECRET_BYTES} bytes, this one is ${plaintext.length}`);
      }
      const id = ctx.newId();
      await ctx.repos.secrets.insert({
        id,
        organization_id: orgId,
        name: x.name,
        value: sealer.seal(plaintext, SECRET_VALUE_AT(id)),
        static_properties: JSON.stringify(x.staticProperties),
        created_by: ctx.caller.user.id,
        created_at: ctx.now,
      });
      secretIds.push(id);
    } catch (err) {
      if (err instanceof SecretNameTaken) throw invalid(`a secret named "${x.name}" already exists in this organization`);
      throw err;
    } finally {
      plaintext.fill(0);
    }
  }
  return { secretIds };
}

export async function exportSecrets(ctx: ActivityContext, p: { secrets: ExportSecretParams[] }) {
  checkBatch(p.secrets.length, 'secrets');
  const rows = await requireSecrets(ctx.repos, ctx.organization.id, p.secrets.map((s) => s.secretId));
  // Every target key is checked before any secret is opened.
  p.secrets.forEach((s, i) => {
    try {
      checkTarget(s.targetPublicKey);
    } catch (err) {
      throw err instanceof SigilError ? invalid(`secrets[${i}].targetPublicKey: ${err.message}`) : err;
    }
  });
  const opener = await openerFor(ctx.services.barrier, ctx.repos, ctx.organization.id, rows.map((r) => r.value));
  const secretPayloads = rows.map((row, i) => {
    const opened = opener.open(row.value, SECRET_VALUE_AT(row.id));
    const plaintext = new Uint8Array(opened);
    opened.fill(0);
    return exportBundle(ctx, plaintext, p.secrets[i].targetPublicKey);
  });
  return { secretPayloads };
}

export async function deleteSecrets(ctx: ActivityContext, p: { secretIds: string[] }) {
  checkBatch(p.secretIds.length, 'secretIds');
  if (new Set(p.secretIds).size !== p.secretIds.length) throw invalid('secretIds must be distinct');
  await requireSecrets(ctx.repos, ctx.organization.id, p.secretIds);
  await ctx.repos.secrets.deleteMany(ctx.organization.id, p.secretIds);
  return { secretIds: p.secretIds };
}

/**
 * What policies see of the secrets an export or delete targets: one `secret` keyword per secret, so
 * the batch is allowed only when every secret is (docs/reference/bundles.md "Secrets": "A DENY, or any evaluation
 * without an ALLOW outcome, rejects the entire batch"). `secret.id` and `secret.name` ('' when the
 * secret has none) let a policy name one secret; `secret.static_properties` is the documented map.
 * An id that is not a secret of the organization contributes no keyword, so a policy reading
 * `secret` fails closed for it.
 */
export async function secretPolicyKeywords(ctx: OperationContext, ids: string[]): Promise<PolicyContext[]> {
  if (!Array.isArray(ids) || ids.length === 0) return [{}];
  const rows = new Map((await ctx.repos.secrets.getMany(ctx.organization.id, ids)).map((r) => [r.id, r]));
  return ids.map((id) => {
    const row = rows.get(id);
    if (!row) return {};
    return {
      secret: {
        id: row.id,
        name: row.name ?? '',
        static_properties: Object.fromEntries(staticPropertiesOf(row).map((kv) => [kv.key, kv.value])),
      },
    };
  });
}
