// Migration 016: the audit log as streams (docs/design.md "The hot path"; src/audit/chain.ts describes the scheme). Each
// serving process appends to a stream of its own, so no writer of the deployment waits for another
// to take a shared head: `audit_entries` is keyed by (stream, seq), every entry MACed with a key
// derived from the deployment's data key and chained to the previous entry of its stream.
// `audit_checkpoints` holds the heads of streams signed by the deployment signer, so a stream cut
// short before its last checkpoint is detected. The older single chain (`audit_log`, migration 009)
// stays as it is and is still verified.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Column order matters: the grouped insert fills rows positionally (src/store/group-commit.ts).
  await db.schema
    .createTable('audit_entries')
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    // Null for a refused request whose organization could not be read from its body.
    .addColumn('organization_id', 'text')
    // 'activity' | 'vote' | 'refused'
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('activity_id', 'text')
    // Canonical JSON of what happened; never parameters or secrets.
    .addColumn('entry', 'text', (c) => c.notNull())
    .addColumn('mac', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('audit_entries_pk', ['stream', 'seq'])
    .execute();
  // No secondary indexes: entries are only ever read whole (export, verify), and every index would
  // be one more page written by every signing request's commit.
  await db.schema
    .createTable('audit_checkpoints')
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('mac', 'text', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('audit_checkpoints_pk', ['stream', 'seq'])
    .execute();
}
