// Secret operations (swagger v1InitImportSecretsIntent, v1ImportSecretsIntent,
// v1ExportSecretsIntent, v1ListSecretsRequest; @turnkey/http 6.6.0 v1DeleteSecretsIntent, which the
// bundled swagger lacks, scripts/swagger-supplement.json): init_import_secrets, import_secrets,
// export_secrets, delete_secrets, list_secrets.
//
// Policy resource SECRET with actions IMPORT (init_import_secrets, import_secrets, as wallets and
// private keys pair them), EXPORT and DELETE. The reference's resource list (docs/reference/policies.md
// docs/reference/policies.md "Keywords") predates secrets and its examples match them by `activity.type`; a resource of their own lets
// a policy grant "everything about secrets" without granting keys. Recorded as deliberate in
// test/vectors/activity-resources.json. Export and delete are judged once per secret (`secret.id`,
// `secret.name`, `secret.static_properties`), the batch allowed only when every secret is.
//
// import_secrets' `secretPayload` is a bearer secret (sealed to the deployment) and declared so.
// export_secrets' `secretPayloads` stay in the stored result, as export_wallet's `exportBundle` does:
// each is sealed to the requester's target key, and an export that waited for approvals is read
// from get_activity.
import { deleteSecrets, exportSecrets, importSecrets, initImportSecrets, secretMetadata, secretPolicyKeywords, type ExportSecretParams, type ImportSecretParams } from '../domain/keys/secrets.js';
import { pageLimit, requireCursors } from '../domain/records.js';
import { invalid } from '../errors/errors.js';
import { defineActivity, defineQuery } from './define.js';

export const initImportSecretsOp = defineActivity<{ encryptionSuite: string; numSecrets: number }, { enclaveTargetMessages: string[] }>({
  path: 'init_import_secrets',
  type: 'ACTIVITY_TYPE_INIT_IMPORT_SECRETS',
  result: 'initImportSecretsResult',
  policy: { resource: 'SECRET', action: 'IMPORT' },
  execute: (ctx, p) => initImportSecrets(ctx, p),
});

export const importSecretsOp = defineActivity<{ secrets: ImportSecretParams[] }, { secretIds: string[] }>({
  path: 'import_secrets',
  type: 'ACTIVITY_TYPE_IMPORT_SECRETS',
  result: 'importSecretsResult',
  policy: { resource: 'SECRET', action: 'IMPORT' },
  secretFields: ['secrets[].secretPayload'],
  execute: (ctx, p) => importSecrets(ctx, p),
});

export const exportSecretsOp = defineActivity<{ secrets: ExportSecretParams[] }, { secretPayloads: string[] }>({
  path: 'export_secrets',
  type: 'ACTIVITY_TYPE_EXPORT_SECRETS',
  result: 'exportSecretsResult',
  policy: { resource: 'SECRET', action: 'EXPORT' },
  policyContext: (ctx, p) => secretPolicyKeywords(ctx, p.secrets.map((s) => s.secretId)),
  execute: (ctx, p) => exportSecrets(ctx, p),
});

export const deleteSecretsOp = defineActivity<{ secretIds: string[] }, { secretIds: string[] }>({
  path: 'delete_secrets',
  type: 'ACTIVITY_TYPE_DELETE_SECRETS',
  result: 'deleteSecretsResult',
  policy: { resource: 'SECRET', action: 'DELETE' },
  policyContext: (ctx, p) => secretPolicyKeywords(ctx, p.secretIds),
  execute: (ctx, p) => deleteSecrets(ctx, p),
});

export const listSecretsOp = defineQuery<{ organizationId: string; paginationOptions?: { limit?: string; before?: string; after?: string } }, unknown>({
  path: 'list_secrets',
  request: 'v1ListSecretsRequest',
  execute: async (ctx, b) => {
    const orgId = ctx.organization.id;
    const page = b.paginationOptions ?? {};
    await requireCursors(page, (id) => ctx.repos.secrets.get(orgId, id), 'a secret');
    const rows = await ctx.repos.secrets.page(orgId, { limit: pageLimit(page.limit), before: page.before || undefined, after: page.after || undefined, order: 'desc' });
    return { secrets: rows.map(secretMetadata) };
  },
});
