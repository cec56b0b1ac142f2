// Migration 031: smaller rows per end user on PostgreSQL (measured by
// bench/scale.mjs, bytes per end user by table and index).
//
// 1. One cache generation write per organization per transaction. Migration 015's trigger added 1 to
//    an organization's generation at every write to a cached table, so a signup (the organization, its
//    root user, API key, quorum, wallet and account, the quorum's update) wrote its generation row 8
//    times in one transaction; on PostgreSQL each write leaves a dead row version until vacuum: 683
//    bytes per end user in cache_generations, more than the users table. Other processes only ever
//    see a transaction's last value, so one write is enough: the generation becomes the writing
//    transaction's id (pg_current_xact_id(), 64 bits, never reused), and a row that already holds it
//    is left alone. The read cache compares generations for equality only (src/store/read-cache.ts),
//    so what matters is that each committed write transaction leaves a value the row never had:
//    a transaction id is unique, and the generations written before this migration are made negative
//    so that none can equal one. SQLite updates rows in place and keeps migration 015's counter.
// 2. api_keys: the unique (organization_id, public_key) becomes (public_key, organization_id), which
//    also serves the lookups by public key alone (list_suborgs PUBLIC_KEY, the stamp lookup across
//    an organization and its parent), so the separate index on public_key goes: one index, not two.
//    SQLite keeps both (dropping a table constraint there means rebuilding the table).
import { sql, type Kysely } from 'kysely';
import { isSqlite, qualified } from './trigger-helpers.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (isSqlite(db)) return;
  const generations = await qualified(db, 'cache_generations');
  await sql
    .raw(
      `CREATE OR REPLACE FUNCTION sigil_bump_cache_generation() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  org text;
  tx bigint := pg_current_xact_id()::text::bigint;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    org := to_jsonb(OLD) ->> TG_ARGV[0];
    INSERT INTO ${generations} AS g (organization_id, generation) VALUES (org, tx)
      ON CONFLICT (organization_id) DO UPDATE SET generation = EXCLUDED.generation WHERE g.generation <> EXCLUDED.generation;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    org := to_jsonb(NEW) ->> TG_ARGV[0];
    INSERT INTO ${generations} AS g (organization_id, generation) VALUES (org, tx)
      ON CONFLICT (organization_id) DO UPDATE SET generation = EXCLUDED.generation WHERE g.generation <> EXCLUDED.generation;
  END IF;
  RETURN NULL;
END $$`,
    )
    .execute(db);
  await sql`UPDATE cache_generations SET generation = -generation WHERE generation > 0`.execute(db);

  await sql`ALTER TABLE api_keys DROP CONSTRAINT api_keys_org_public_key`.execute(db);
  await sql`ALTER TABLE api_keys ADD CONSTRAINT api_keys_public_key_org UNIQUE (public_key, organization_id)`.execute(db);
  await sql`DROP INDEX api_keys_public_key`.execute(db);
}
