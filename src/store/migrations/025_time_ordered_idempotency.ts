// Migration 025: idempotency keyed in time order (docs/design.md "The hot path"; docs/reference/activities.md).
//
// A submission is idempotent by its fingerprint, sha256 of the raw body. The body carries its own
// `timestampMs`, so two submissions with one fingerprint also have one `timestamp_ms`: uniqueness
// over (timestamp_ms, fingerprint, organization_id) is the same rule as over (organization_id,
// fingerprint), and the lookup a submission makes knows its timestamp. What changes is where rows
// go: under the old key every new activity landed on a random leaf of a large index (one page of
// every grouped commit's log per activity, and a read that usually missed the page cache); under
// the new one they land at its right edge with the others of their moment (measured on SQLite:
// write-ahead log per signature 6.3 → 4.4 KB, SQLite CPU per signature 62–86 → 49–52 µs).
//
// The key leads with the time, not the organization, so that it is the only index a lookup by key
// can use: with (organization_id, …) first, PostgreSQL could also serve it from the listing index
// (organization_id, created_at, id) with a filter, and a prepared statement planned while the table
// was small kept that plan — a scan of the organization's every activity per lookup (seen: 1.2 ms
// and 480 pages a call on a deployment seconds old).
//
// Approvals name their target by fingerprint alone. They find it through a partial index of the
// activities that ever waited for approval (`pending_parameters IS NOT NULL`: the sealed parameters
// while waiting, '' once it no longer waits; see ActivitiesRepo.finishWaiting). An activity that
// never waited cannot be approved and is answered like an unknown fingerprint.
//
// SQLite cannot drop a table's UNIQUE constraint, so the table is rebuilt (its documented procedure:
// foreign keys off, new table, copy, drop, rename, check, foreign keys on), in one transaction.
import { sql, type Kysely } from 'kysely';
import { isSqlite } from './trigger-helpers.js';

const OLD_UNIQUE = 'constraint "activities_org_fingerprint" unique ("organization_id", "fingerprint")';
const NEW_UNIQUE = 'constraint "activities_time_fingerprint_org" unique ("timestamp_ms", "fingerprint", "organization_id")';

async function awaitedIndex(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX activities_awaited_fingerprint ON activities (organization_id, fingerprint) WHERE pending_parameters IS NOT NULL`.execute(db);
  // Activities that waited and finished before this migration had their parameters cleared to NULL;
  // one updated after it was created is one that waited (or failed while executing), so approvals
  // keep finding it and are told it no longer waits.
  await sql`UPDATE activities SET pending_parameters = '' WHERE pending_parameters IS NULL AND updated_at > created_at`.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!isSqlite(db)) {
    await sql`ALTER TABLE activities DROP CONSTRAINT activities_org_fingerprint`.execute(db);
    await sql`ALTER TABLE activities ADD CONSTRAINT activities_time_fingerprint_org UNIQUE (timestamp_ms, fingerprint, organization_id)`.execute(db);
    await awaitedIndex(db);
    return;
  }
  const { rows } = await sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'activities'`.execute(db);
  const ddl = rows[0]?.sql ?? '';
  // Kysely's migrator runs SQLite migrations outside a transaction: a crash after the rebuild's own
  // commit but before the migration is recorded leaves it done, and the next start finds it so.
  if (ddl.includes('activities_time_fingerprint_org')) return;
  if (!ddl.includes(OLD_UNIQUE)) throw new Error('migration 025: the activities table does not have the expected idempotency constraint');
  const rebuilt = ddl.replace(/^create table "activities"/i, 'create table "activities_next"').replace(OLD_UNIQUE, NEW_UNIQUE);
  await sql`PRAGMA foreign_keys = OFF`.execute(db);
  try {
    await sql`BEGIN IMMEDIATE`.execute(db);
    try {
      await sql.raw(rebuilt).execute(db);
      await sql`INSERT INTO activities_next SELECT * FROM activities`.execute(db);
      await sql`DROP TABLE activities`.execute(db);
      await sql`ALTER TABLE activities_next RENAME TO activities`.execute(db);
      await sql`CREATE INDEX activities_org_created ON activities (organization_id, created_at, id)`.execute(db);
      await awaitedIndex(db);
      const broken = await sql`PRAGMA foreign_key_check`.execute(db);
      if (broken.rows.length > 0) throw new Error(`migration 025: ${broken.rows.length} rows would break a foreign key`);
      await sql`COMMIT`.execute(db);
    } catch (err) {
      await sql`ROLLBACK`.execute(db);
      throw err;
    }
  } finally {
    await sql`PRAGMA foreign_keys = ON`.execute(db);
  }
}
