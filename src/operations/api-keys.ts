// API key operations (docs/reference/api.md "Queries"; swagger v1CreateApiKeysIntentV2, v1DeleteApiKeysIntent,
// v1GetApiKeyRequest, v1GetApiKeysRequest).
import { apiKeyRecord, buildApiKeyRows, getApiKey, insertApiKeys, type ApiKeyParams } from '../domain/identity/api-keys.js';
import { requireUser } from '../domain/lookup.js';
import { invalid, notFound } from '../errors/errors.js';
import { defineActivity, defineQuery } from './define.js';

export const createApiKeysOp = defineActivity<{ apiKeys: ApiKeyParams[]; userId: string }, { apiKeyIds: string[] }>({
  path: 'create_api_keys',
  type: 'ACTIVITY_TYPE_CREATE_API_KEYS_V2',
  aliases: ['ACTIVITY_TYPE_CREATE_API_KEYS'],
  result: 'createApiKeysResult',
  policy: { resource: 'CREDENTIAL', action: 'CREATE' },
  policyParams: (p) => ({ user_id: p.userId }),
  selfService: (caller, p) => caller.user.id === p.userId,
  addsCredential: { method: 'AUTHENTICATION_TYPE_API_KEY', userId: (_caller, p) => p.userId },
  execute: async (ctx, p) => {
    const orgId = ctx.organization.id;
    if (p.apiKeys.length === 0) throw invalid('apiKeys must list at least one key');
    await requireUser(ctx.repos, orgId, p.userId);
    const rows = buildApiKeyRows(orgId, p.userId, p.apiKeys, ctx.now, ctx.newId);
    // Making room for an expiring key never deletes the key this request is stamped with.
    const keepKeyId = ctx.caller.credential.kind === 'api_key' ? ctx.caller.credential.apiKey.id : undefined;
    await insertApiKeys(ctx.repos, orgId, rows, { keepKeyId });
    return { apiKeyIds: rows.map((r) => r.id) };
  },
});

export const deleteApiKeysOp = defineActivity<{ userId: string; apiKeyIds: string[] }, { apiKeyIds: string[] }>({
  path: 'delete_api_keys',
  type: 'ACTIVITY_TYPE_DELETE_API_KEYS',
  result: 'deleteApiKeysResult',
  policy: { resource: 'CREDENTIAL', action: 'DELETE' },
  policyParams: (p) => ({ user_id: p.userId, api_key_ids: p.apiKeyIds }),
  selfService: (caller, p) => caller.user.id === p.userId,
  execute: async (ctx, p) => {
    const orgId = ctx.organization.id;
    if (p.apiKeyIds.length === 0) throw invalid('apiKeyIds must list at least one key');
    await requireUser(ctx.repos, orgId, p.userId);
    const unique = [...new Set(p.apiKeyIds)];
    const owned = new Set((await ctx.repos.apiKeys.listForUsers(orgId, [p.userId])).map((k) => k.id));
    const missing = unique.filter((id) => !owned.has(id));
    if (missing.length > 0) throw notFound(`api key not found for user ${p.userId}: ${missing.join(', ')}`);
    await ctx.repos.apiKeys.delete(orgId, p.userId, unique);
    return { apiKeyIds: unique };
  },
});

export const getApiKeyOp = defineQuery<{ organizationId: string; apiKeyId: string }, unknown>({
  path: 'get_api_key',
  request: 'v1GetApiKeyRequest',
  execute: async (ctx, b) => ({ apiKey: apiKeyRecord(await getApiKey(ctx.repos, ctx.organization.id, b.apiKeyId)) }),
});

export const getApiKeysOp = defineQuery<{ organizationId: string; userId?: string }, unknown>({
  path: 'get_api_keys',
  request: 'v1GetApiKeysRequest',
  execute: async (ctx, b) => {
    const orgId = ctx.organization.id;
    if (b.userId) await requireUser(ctx.repos, orgId, b.userId);
    const rows = b.userId
      ? await ctx.repos.apiKeys.listForUsers(orgId, [b.userId])
      : await ctx.repos.apiKeys.list(orgId);
    return { apiKeys: rows.map(apiKeyRecord) };
  },
});
