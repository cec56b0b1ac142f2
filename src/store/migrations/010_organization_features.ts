// Migration 010: organization features (docs/reference/organizations.md "Organizations"), set and
// removed only by the root quorum.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('organization_features')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('organization_features_pk', ['organization_id', 'name'])
    .execute();
}
