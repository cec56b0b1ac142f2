// Private key operations (docs/reference/keys.md; docs/reference/policies.md): create_private_keys (V2),
// get_private_key, list_private_keys, delete_private_keys, and private key tags.
import {
  createPrivateKeyTag,
  createPrivateKeys,
  deletePrivateKeyTags,
  deletePrivateKeys,
  privateKeyRecords,
  privateKeyTagRecord,
  requirePrivateKey,
  updatePrivateKeyTag,
  type PrivateKeyParams,
} from '../domain/keys/private-keys.js';
import { defineActivity, defineQuery } from './define.js';
import { keyDerivationFacts } from '../domain/keys/app-proofs.js';

export const createPrivateKeysOp = defineActivity<
  { privateKeys: PrivateKeyParams[] },
  { privateKeys: { privateKeyId: string; addresses: { format: string; address: string }[] }[] }
>({
  path: 'create_private_keys',
  type: 'ACTIVITY_TYPE_CREATE_PRIVATE_KEYS_V2',
  // V1 takes the same parameters and answers only the new keys' ids (v1CreatePrivateKeysResult).
  aliases: [
    {
      type: 'ACTIVITY_TYPE_CREATE_PRIVATE_KEYS',
      result: 'createPrivateKeysResult',
      adaptResult: (r: { privateKeys: { privateKeyId: string }[] }) => ({ privateKeyIds: r.privateKeys.map((k) => k.privateKeyId) }),
    },
  ],
  result: 'createPrivateKeysResultV2',
  policy: { resource: 'PRIVATE_KEY', action: 'CREATE' },
  appProofFacts: (ctx, _p, r) => r.privateKeys.flatMap((k) => keyDerivationFacts(ctx.organization.id, k.addresses.map((a) => a.address))),
  execute: (ctx, p) => createPrivateKeys(ctx, p.privateKeys),
});

export const deletePrivateKeysOp = defineActivity<{ privateKeyIds: string[]; deleteWithoutExport?: boolean }, unknown>({
  path: 'delete_private_keys',
  type: 'ACTIVITY_TYPE_DELETE_PRIVATE_KEYS',
  result: 'deletePrivateKeysResult',
  policy: { resource: 'PRIVATE_KEY', action: 'DELETE' },
  execute: (ctx, p) => deletePrivateKeys(ctx, p.privateKeyIds, p.deleteWithoutExport),
});

export const getPrivateKeyOp = defineQuery<{ organizationId: string; privateKeyId: string }, unknown>({
  path: 'get_private_key',
  request: 'v1GetPrivateKeyRequest',
  execute: async (ctx, b) => {
    const row = await requirePrivateKey(ctx.repos, ctx.organization.id, b.privateKeyId);
    const [privateKey] = await privateKeyRecords(ctx.repos, [row]);
    return { privateKey };
  },
});

export const listPrivateKeysOp = defineQuery<{ organizationId: string }, unknown>({
  path: 'list_private_keys',
  request: 'v1GetPrivateKeysRequest',
  execute: async (ctx) => ({ privateKeys: await privateKeyRecords(ctx.repos, await ctx.repos.privateKeys.list(ctx.organization.id)) }),
});

export const createPrivateKeyTagOp = defineActivity<{ privateKeyTagName: string; privateKeyIds: string[] }, unknown>({
  path: 'create_private_key_tag',
  type: 'ACTIVITY_TYPE_CREATE_PRIVATE_KEY_TAG',
  result: 'createPrivateKeyTagResult',
  policy: { resource: 'PRIVATE_KEY', action: 'CREATE' },
  execute: (ctx, p) => createPrivateKeyTag(ctx, p.privateKeyTagName, p.privateKeyIds),
});

export const updatePrivateKeyTagOp = defineActivity<
  { privateKeyTagId: string; newPrivateKeyTagName?: string; addPrivateKeyIds: string[]; removePrivateKeyIds: string[] },
  unknown
>({
  path: 'update_private_key_tag',
  type: 'ACTIVITY_TYPE_UPDATE_PRIVATE_KEY_TAG',
  result: 'updatePrivateKeyTagResult',
  policy: { resource: 'PRIVATE_KEY', action: 'UPDATE' },
  execute: (ctx, p) => updatePrivateKeyTag(ctx, p),
});

export const deletePrivateKeyTagsOp = defineActivity<{ privateKeyTagIds: string[] }, unknown>({
  path: 'delete_private_key_tags',
  type: 'ACTIVITY_TYPE_DELETE_PRIVATE_KEY_TAGS',
  result: 'deletePrivateKeyTagsResult',
  policy: { resource: 'PRIVATE_KEY', action: 'DELETE' },
  execute: (ctx, p) => deletePrivateKeyTags(ctx, p.privateKeyTagIds),
});

export const listPrivateKeyTagsOp = defineQuery<{ organizationId: string }, unknown>({
  path: 'list_private_key_tags',
  request: 'v1ListPrivateKeyTagsRequest',
  execute: async (ctx) => ({ privateKeyTags: (await ctx.repos.privateKeys.tags(ctx.organization.id)).map(privateKeyTagRecord) }),
});
