// Migration 015: cache generations (docs/design.md "The hot path": what rarely changes is served
// from memory, with an invalidation that is correct across processes on one database). Every write
// to a table the in-process read cache serves from bumps `cache_generations.generation` of the row's
// organization, in the same transaction, by a trigger — so no write path (an activity, the CLI,
// a restore) can forget it. A process reads the generation of the organizations a request touches
// (one indexed read) and drops what it cached for any whose generation moved
// (src/store/read-cache.ts).
//
// Authenticators bump on insert and delete only: their one update is the signature counter that
// every passkey stamp advances, which the cache does not hold (WebAuthn replay checks read it).
import { sql, type Kysely } from 'kysely';
import { isSqlite, qualified } from './trigger-helpers.js';

/** Cached tables and the column naming the organization a row belongs to. */
export const CACHED_TABLES: readonly { table: string; organization: string; events: readonly ('INSERT' | 'UPDATE' | 'DELETE')[] }[] = [
  { table: 'organizations', organization: 'id', events: ['INSERT', 'UPDATE', 'DELETE'] },
  ...[
    'root_quorum_members',
    'users',
    'api_keys',
    'user_tags',
    'user_tag_assignments',
    'wallets',
    'wallet_accounts',
    'private_keys',
    'private_key_addresses',
    'private_key_tags',
    'private_key_tag_assignments',
    'organization_features',
    'policies',
    'smart_contract_interfaces',
    'ip_allowlists',
    'oauth_providers',
  ].map((table) => ({ table, organization: 'organization_id', events: ['INSERT', 'UPDATE', 'DELETE'] as const })),
  { table: 'authenticators', organization: 'organization_id', events: ['INSERT', 'DELETE'] },
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('cache_generations')
    .addColumn('organization_id', 'text', (c) => c.primaryKey())
    .addColumn('generation', 'bigint', (c) => c.notNull())
    .execute();
  const sqlite = isSqlite(db);
  const bump = (row: 'NEW' | 'OLD', column: string) =>
    `INSERT INTO cache_generations (organization_id, generation) VALUES (${row}.${column}, 1) ON CONFLICT (organization_id) DO UPDATE SET generation = cache_generations.generation + 1`;
  if (!sqlite) {
    // One function for every table; the trigger passes the organization column's name. The table is
    // named with its schema, so a writer whose search_path differs (psql, a restore) bumps it too.
    const generations = await qualified(db, 'cache_generations');
    await sql
      .raw(
        `CREATE OR REPLACE FUNCTION sigil_bump_cache_generation() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE org text;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    org := to_jsonb(OLD) ->> TG_ARGV[0];
    INSERT INTO ${generations} AS g (organization_id, generation) VALUES (org, 1)
      ON CONFLICT (organization_id) DO UPDATE SET generation = g.generation + 1;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    org := to_jsonb(NEW) ->> TG_ARGV[0];
    INSERT INTO ${generations} AS g (organization_id, generation) VALUES (org, 1)
      ON CONFLICT (organization_id) DO UPDATE SET generation = g.generation + 1;
  END IF;
  RETURN NULL;
END $$`,
      )
      .execute(db);
  }
  for (const { table, organization, events } of CACHED_TABLES) {
    for (const event of events) {
      const name = `sigil_gen_${table}_${event.toLowerCase()}`;
      if (sqlite) {
        const body = event === 'INSERT' ? bump('NEW', organization) : event === 'DELETE' ? bump('OLD', organization) : `${bump('OLD', organization)}; ${bump('NEW', organization)}`;
        await sql.raw(`CREATE TRIGGER ${name} AFTER ${event} ON ${table} BEGIN ${body}; END`).execute(db);
      } else {
        await sql.raw(`CREATE TRIGGER ${name} AFTER ${event} ON ${table} FOR EACH ROW EXECUTE FUNCTION sigil_bump_cache_generation('${organization}')`).execute(db);
      }
    }
  }
}
