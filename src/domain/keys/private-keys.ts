// Private keys: creation with their addresses, records, tags and deletion (docs/reference/keys.md;
// swagger v1CreatePrivateKeysIntentV2, v1PrivateKey, v1CreatePrivateKeyTagIntent…). The key is random,
// sealed in the barrier bound to its row, and its addresses are encoded once at creation.
import { createTag, tagRecordOf, updateTag, type TagKind } from '../governance/tags.js';
import { randomBytes } from 'node:crypto';
import { assertCurveFitsAddressFormat, encodeAddress } from '../../chains/addresses/index.js';
import type { Curve } from '../../crypto/curves.js';
import { isValidPrivateKey, publicKeyFromPrivate } from '../../crypto/keys.js';
import { SigilError, invalid, notFound } from '../../errors/errors.js';
import type { PrivateKeyAddressRow, PrivateKeyRow, PrivateKeyTagRow, Repositories } from '../../store/index.js';
import { checkName } from '../identity/contacts.js';
import { requireAll } from '../lookup.js';
import type { ActivityContext, Prepared } from '../context.js';
import type { SecretSealer } from '../../barrier/barrier.js';
import { reserve } from '../governance/quotas.js';
import { PRIVATE_KEY_AT } from './key-material.js';
import { timestamp } from '../records.js';
import { openerFor, sealerFor } from './organization-keys.js';

export interface PrivateKeyParams {
  privateKeyName: string;
  curve: Curve;
  privateKeyTags: string[];
  addressFormats: string[];
}

function randomPrivateKey(curve: Curve): Uint8Array {
  // Rejection sampling: a 32-byte value outside the curve order is drawn again (probability < 2^-127).
  for (;;) {
    const k = new Uint8Array(randomBytes(32));
    if (isValidPrivateKey(curve, k)) return k;
  }
}

async function requireTags(repos: Repositories, organizationId: string, tagIds: string[], field: string): Promise<string[]> {
  return (await requireAll(tagIds, (ids) => repos.privateKeys.tags(organizationId, ids), `${field}: private key tag not found`)).ids;
}

/** One key's rows, sealed with `sealer`: what storing it writes, checked except against the rows that exist. */
function privateKeyRows(ctx: ActivityContext, p: PrivateKeyParams, privateKey: Uint8Array, imported: boolean, sealer: SecretSealer) {
  const orgId = ctx.organization.id;
  const formats = [...new Set(p.addressFormats)];
  for (const f of formats) assertCurveFitsAddressFormat(f, p.curve);
  const publicKey = publicKeyFromPrivate(p.curve, privateKey, true);
  const id = ctx.newId();
  const addresses: PrivateKeyAddressRow[] = formats.map((format, position) => ({
    private_key_id: id,
    organization_id: orgId,
    address_format: format,
    address: encodeAddress(format, p.curve, publicKey),
    position,
  }));
  const row: PrivateKeyRow = {
    id,
    organization_id: orgId,
    name: p.privateKeyName,
    curve: p.curve,
    public_key: Buffer.from(publicKey).toString('hex'),
    private_key: sealer.seal(privateKey, PRIVATE_KEY_AT(id)),
    exported: 0,
    imported: imported ? 1 : 0,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  return { row, addresses, result: { privateKeyId: id, addresses: addresses.map((a) => ({ format: a.address_format, address: a.address })) } };
}

/**
 * Stores one key with its addresses and tags; shared by create_private_keys and import_private_key,
 * which reserve the organization's quota of private keys first (src/domain/governance/quotas.ts).
 */
export async function storePrivateKey(
  ctx: ActivityContext,
  p: PrivateKeyParams,
  privateKey: Uint8Array,
  opts: { imported: boolean; field: string },
): Promise<{ privateKeyId: string; addresses: { format: string; address: string }[] }> {
  const orgId = ctx.organization.id;
  checkName(p.privateKeyName, `${opts.field}.privateKeyName`);
  if (await ctx.repos.privateKeys.findByName(orgId, p.privateKeyName)) {
    throw new SigilError('CONFLICT', `a private key named ${JSON.stringify(p.privateKeyName)} already exists in this organization`);
  }
  for (const f of new Set(p.addressFormats)) assertCurveFitsAddressFormat(f, p.curve);
  const tags = await requireTags(ctx.repos, orgId, p.privateKeyTags, `${opts.field}.privateKeyTags`);
  const { row, addresses, result } = privateKeyRows(ctx, p, privateKey, opts.imported, await sealerFor(ctx.services.barrier, ctx.repos, orgId, ctx.now));
  await ctx.repos.privateKeys.insert(row, addresses);
  for (const tag of tags) await ctx.repos.privateKeys.assign(orgId, tag, [row.id]);
  return result;
}

/**
 * New random keys for an organization created in the same commit (create_sub_organization V3): it
 * has no keys and no tags yet, so everything is checked here and `writes` only inserts.
 */
export function prepareNewOrganizationPrivateKeys(ctx: ActivityContext, keys: PrivateKeyParams[], sealer: SecretSealer): Prepared<{ privateKeys: ReturnType<typeof privateKeyRows>['result'][] }> {
  if (keys.length === 0) throw invalid('privateKeys must list at least one key');
  const names = new Set<string>();
  const made = keys.map((p, i) => {
    checkName(p.privateKeyName, `privateKeys[${i}].privateKeyName`);
    if (names.has(p.privateKeyName)) throw invalid(`privateKeys[${i}].privateKeyName ${JSON.stringify(p.privateKeyName)} is listed twice`);
    names.add(p.privateKeyName);
    if (p.privateKeyTags.length > 0) throw notFound(`privateKeys[${i}].privateKeyTags: private key tag not found: ${[...new Set(p.privateKeyTags)].join(', ')}`);
    const secret = randomPrivateKey(p.curve);
    try {
      return privateKeyRows(ctx, p, secret, false, sealer);
    } finally {
      secret.fill(0);
    }
  });
  return {
    result: { privateKeys: made.map((m) => m.result) },
    writes: async (repos) => {
      await reserve(repos, ctx.organization, 'privateKeys', keys.length, { newOrganization: true });
      for (const m of made) await repos.privateKeys.insert(m.row, m.addresses);
    },
  };
}

export async function createPrivateKeys(ctx: ActivityContext, keys: PrivateKeyParams[]) {
  if (keys.length === 0) throw invalid('privateKeys must list at least one key');
  await reserve(ctx.repos, ctx.organization, 'privateKeys', keys.length);
  const names = new Set<string>();
  const out = [];
  for (const [i, p] of keys.entries()) {
    if (names.has(p.privateKeyName)) throw invalid(`privateKeys[${i}].privateKeyName ${JSON.stringify(p.privateKeyName)} is listed twice`);
    names.add(p.privateKeyName);
    const secret = randomPrivateKey(p.curve);
    out.push(await storePrivateKey(ctx, p, secret, { imported: false, field: `privateKeys[${i}]` }));
    secret.fill(0);
  }
  return { privateKeys: out };
}

export async function requirePrivateKey(repos: Repositories, organizationId: string, id: string): Promise<PrivateKeyRow> {
  const k = await repos.privateKeys.get(organizationId, id);
  if (!k) throw notFound(`private key not found: ${id}`);
  return k;
}

export async function privateKeyRecords(repos: Repositories, rows: PrivateKeyRow[]) {
  const ids = rows.map((r) => r.id);
  const [addresses, tags] = await Promise.all([repos.privateKeys.addresses(ids), repos.privateKeys.tagIdsOf(ids)]);
  return rows.map((r) => ({
    privateKeyId: r.id,
    publicKey: r.public_key,
    privateKeyName: r.name,
    curve: r.curve,
    addresses: addresses.filter((a) => a.private_key_id === r.id).map((a) => ({ format: a.address_format, address: a.address })),
    privateKeyTags: tags.get(r.id) ?? [],
    createdAt: timestamp(r.created_at),
    updatedAt: timestamp(r.updated_at),
    exported: r.exported === 1,
    imported: r.imported === 1,
  }));
}

/** delete_private_keys (docs/reference/activities.md "Status" delete rule): never-exported keys need deleteWithoutExport. */
export async function deletePrivateKeys(ctx: ActivityContext, ids: string[], deleteWithoutExport = false) {
  if (ids.length === 0) throw invalid('privateKeyIds must list at least one key');
  const orgId = ctx.organization.id;
  const { ids: unique, rows } = await requireAll(ids, (u) => ctx.repos.privateKeys.getMany(orgId, u), 'private key not found');
  const unexported = rows.filter((r) => r.exported !== 1).map((r) => r.id);
  if (unexported.length > 0 && !deleteWithoutExport) {
    throw new SigilError(
      'REQUEST_INVALID',
      `private key ${unexported.join(', ')} ${unexported.length === 1 ? 'has' : 'have'} not been exported; export first or set deleteWithoutExport to delete without a backup`,
    );
  }
  await ctx.repos.privateKeys.delete(orgId, unique);
  return { privateKeyIds: unique };
}

// Tags

/** Private key tags as a TagKind (src/domain/governance/tags.ts). */
export const PRIVATE_KEY_TAGS: TagKind = {
  noun: 'private key',
  tagType: 'TAG_TYPE_PRIVATE_KEY',
  quota: 'privateKeyTags',
  store: (repos) => ({
    get: (org, id) => repos.privateKeys.tag(org, id),
    findByName: (org, name) => repos.privateKeys.tagByName(org, name),
    insert: (row) => repos.privateKeys.insertTag(row),
    rename: (org, id, name, now) => repos.privateKeys.renameTag(org, id, name, now),
    assign: (org, id, keyIds) => repos.privateKeys.assign(org, id, keyIds),
    unassign: (id, keyIds) => repos.privateKeys.unassign(id, keyIds),
  }),
  requireMembers: async (repos, organizationId, ids, field) =>
    (await requireAll(ids, (u) => repos.privateKeys.getMany(organizationId, u), `${field}: private key not found`)).ids,
};

export const privateKeyTagRecord = (row: PrivateKeyTagRow) => tagRecordOf(PRIVATE_KEY_TAGS, row);

export async function createPrivateKeyTag(ctx: ActivityContext, name: string, keyIds: string[]) {
  const { tagId, memberIds } = await createTag(ctx, PRIVATE_KEY_TAGS, { name, memberIds: keyIds }, { name: 'privateKeyTagName', members: 'privateKeyIds' });
  return { privateKeyTagId: tagId, privateKeyIds: memberIds };
}

export async function updatePrivateKeyTag(
  ctx: ActivityContext,
  p: { privateKeyTagId: string; newPrivateKeyTagName?: string; addPrivateKeyIds: string[]; removePrivateKeyIds: string[] },
) {
  const { tagId } = await updateTag(
    ctx,
    PRIVATE_KEY_TAGS,
    { tagId: p.privateKeyTagId, newName: p.newPrivateKeyTagName, add: p.addPrivateKeyIds, remove: p.removePrivateKeyIds },
    { newName: 'newPrivateKeyTagName', add: 'addPrivateKeyIds', remove: 'removePrivateKeyIds' },
  );
  return { privateKeyTagId: tagId };
}

export async function deletePrivateKeyTags(ctx: ActivityContext, tagIds: string[]) {
  if (tagIds.length === 0) throw invalid('privateKeyTagIds must list at least one tag');
  const orgId = ctx.organization.id;
  const { ids: unique } = await requireAll(tagIds, (u) => ctx.repos.privateKeys.tags(orgId, u), 'private key tag not found');
  const affected = await ctx.repos.privateKeys.keysWithTags(unique);
  await ctx.repos.privateKeys.deleteTags(orgId, unique);
  return { privateKeyTagIds: unique, privateKeyIds: affected };
}
