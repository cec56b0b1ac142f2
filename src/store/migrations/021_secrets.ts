// Migration 021: secrets (swagger v1ImportSecretParams / v1SecretMetadata,
// @turnkey/http 6.6.0 v1DeleteSecretsIntent). Two changes:
//
// - `secrets`: arbitrary secret values (API tokens, passwords) an organization imported. The value is
//   barrier ciphertext bound to (secrets, id, value), like a private key; the name is optional and
//   unique within the organization when given (NULLs never clash on either store); the static
//   properties are the JSON list of {key, value} the importer bound to it, which export policies read.
//   Counted in `quota_counts` like keys (migration 017), for the `secrets` quota.
// - `import_bundles.target_public_key`: an import_secrets payload names the target it was sealed to
//   (v1ImportSecretParams.targetPublicKey) instead of being tried against the user's recent targets,
//   so the target is found by its public key. Earlier rows keep NULL; wallet and key imports set it too.
import type { Kysely } from 'kysely';
import { countForQuota } from './017_quota_counts.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('secrets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text')
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('static_properties', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('secrets_name', ['organization_id', 'name'])
    .execute();
  await db.schema.createIndex('secrets_by_created').on('secrets').columns(['organization_id', 'created_at', 'id']).execute();
  await countForQuota(db, 'secrets');

  await db.schema.alterTable('import_bundles').addColumn('target_public_key', 'text').execute();
  await db.schema.createIndex('import_bundles_by_target').on('import_bundles').columns(['organization_id', 'target_public_key']).execute();
}
