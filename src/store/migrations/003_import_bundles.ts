// Migration 003: import bundles issued by init_import_wallet / init_import_private_key. Each holds
// the sealed private half of its target key, is bound to one organization and user, expires, and
// can be used once (docs/reference/bundles.md).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('import_bundles')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('target_private_key', 'text', (c) => c.notNull())
    .addColumn('import_bundle', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('import_bundles_owner')
    .on('import_bundles')
    .columns(['organization_id', 'user_id', 'kind', 'created_at'])
    .execute();
}
