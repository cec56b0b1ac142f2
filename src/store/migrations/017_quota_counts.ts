// Migration 017: quota counters ("a counter instead of count(*)"). Each organization's
// number of users, policies, wallets, private keys and tags is kept in `quota_counts`, maintained by
// triggers on insert and delete (so no write path can forget it) and filled once from the tables. A
// create reads its counter with a row lock (QuotasRepo.lockCount) instead of counting every row
// under a lock on the organization.
import { sql, type Kysely } from 'kysely';
import { isSqlite, qualified } from './trigger-helpers.js';

/** The tables a quota counts, as src/domain/governance/quotas.ts names them. */
export const COUNTED_TABLES = ['users', 'policies', 'wallets', 'private_keys', 'user_tags', 'private_key_tags'] as const;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('quota_counts')
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('quota_counts_pk', ['organization_id', 'name'])
    .execute();
  const sqlite = isSqlite(db);
  if (!sqlite) {
    // Named with its schema, so a writer whose search_path differs (psql, a restore) counts too.
    const counts = await qualified(db, 'quota_counts');
    await sql
      .raw(
        `CREATE OR REPLACE FUNCTION sigil_quota_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO ${counts} AS c (organization_id, name, count) VALUES (NEW.organization_id, TG_TABLE_NAME, 1)
      ON CONFLICT (organization_id, name) DO UPDATE SET count = c.count + 1;
  ELSE
    INSERT INTO ${counts} AS c (organization_id, name, count) VALUES (OLD.organization_id, TG_TABLE_NAME, 0)
      ON CONFLICT (organization_id, name) DO UPDATE SET count = c.count - 1;
  END IF;
  RETURN NULL;
END $$`,
      )
      .execute(db);
  }
  for (const table of COUNTED_TABLES) await countForQuota(db, table);
}

/**
 * Starts counting `table` in `quota_counts`: its rows so far, then triggers on insert and delete
 * (on PostgreSQL through sigil_quota_count, created above). Later migrations call it for the tables
 * they add a quota to.
 */
export async function countForQuota(db: Kysely<unknown>, table: string): Promise<void> {
  const sqliteChange = (row: 'NEW' | 'OLD', by: 1 | -1) =>
    `INSERT INTO quota_counts (organization_id, name, count) VALUES (${row}.organization_id, '${table}', ${by === 1 ? 1 : 0})
     ON CONFLICT (organization_id, name) DO UPDATE SET count = count + (${by})`;
  await sql.raw(`INSERT INTO quota_counts (organization_id, name, count) SELECT organization_id, '${table}', count(*) FROM ${table} GROUP BY organization_id`).execute(db);
  for (const [event, row, by] of [['INSERT', 'NEW', 1], ['DELETE', 'OLD', -1]] as const) {
    const name = `sigil_quota_${table}_${event.toLowerCase()}`;
    if (isSqlite(db)) await sql.raw(`CREATE TRIGGER ${name} AFTER ${event} ON ${table} BEGIN ${sqliteChange(row, by)}; END`).execute(db);
    else await sql.raw(`CREATE TRIGGER ${name} AFTER ${event} ON ${table} FOR EACH ROW EXECUTE FUNCTION sigil_quota_count()`).execute(db);
  }
}
