// Shared by the migrations that install triggers (015 cache generations, 017 quota counts, 019 MFA policies, 023 webhooks): which
// dialect is migrating, and a table's name qualified with the schema being migrated, so a trigger
// function finds its table whatever the writer's search_path (psql, a restore).
import { SqliteAdapter, sql, type Kysely } from 'kysely';

export const isSqlite = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof SqliteAdapter;

/** PostgreSQL only: `"<current schema>".<table>`. */
export async function qualified(db: Kysely<unknown>, table: string): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return `"${rows[0].schema}".${table}`;
}

/**
 * The cache-generation triggers of migration 015's scheme on a table added later: every insert,
 * update and delete bumps its rows' organization's generation (the PostgreSQL function exists from 015).
 * `updateOf`: only updates of these columns bump it (a table that also holds fast-changing state,
 * such as an endpoint's delivery health, must not empty the caches at every change of it).
 */
export async function cacheGenerationTriggers(db: Kysely<unknown>, table: string, updateOf?: string[]): Promise<void> {
  for (const event of ['INSERT', 'UPDATE', 'DELETE'] as const) {
    const name = `sigil_gen_${table}_${event.toLowerCase()}`;
    const on = event === 'UPDATE' && updateOf ? `UPDATE OF ${updateOf.join(', ')}` : event;
    if (isSqlite(db)) {
      const bump = (row: 'NEW' | 'OLD') =>
        `INSERT INTO cache_generations (organization_id, generation) VALUES (${row}.organization_id, 1) ON CONFLICT (organization_id) DO UPDATE SET generation = cache_generations.generation + 1`;
      const body = event === 'INSERT' ? bump('NEW') : event === 'DELETE' ? bump('OLD') : `${bump('OLD')}; ${bump('NEW')}`;
      await sql.raw(`CREATE TRIGGER ${name} AFTER ${on} ON ${table} BEGIN ${body}; END`).execute(db);
    } else {
      await sql.raw(`CREATE TRIGGER ${name} AFTER ${on} ON ${table} FOR EACH ROW EXECUTE FUNCTION sigil_bump_cache_generation('organization_id')`).execute(db);
    }
  }
}
