// Migration 009: the hash-chained audit log (docs/operator-guide.md; the chain is described in
// src/audit/chain.ts). seq is assigned by Sigil as the last seq + 1 inside the appending
// transaction; the primary key makes two concurrent appenders of the same seq conflict, and the
// loser retries (src/store/repositories/audit-log.ts). No autoincrement, so both dialects agree.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_log')
    .addColumn('seq', 'bigint', (c) => c.primaryKey())
    // Null for a refused request whose organization could not be read from its body.
    .addColumn('organization_id', 'text')
    // 'activity' | 'vote' | 'refused'
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('activity_id', 'text')
    // Canonical JSON of what happened; never parameters or secrets.
    .addColumn('entry', 'text', (c) => c.notNull())
    .addColumn('prev_hash', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_log_org').on('audit_log').columns(['organization_id', 'seq']).execute();
}
