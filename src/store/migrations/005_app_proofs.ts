// Migration 005: app proofs. Each serving process records its boot proof (the deployment signer's
// statement binding the process's ephemeral app-proof key); activities keep the proofs they asked for.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('boot_proofs')
    .addColumn('ephemeral_public_key', 'text', (c) => c.primaryKey())
    .addColumn('boot_proof', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('boot_proofs_created').on('boot_proofs').column('created_at').execute();
  await db.schema.alterTable('activities').addColumn('app_proofs', 'text').execute();
}
