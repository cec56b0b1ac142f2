// Shared by the migrations that install triggers (015 cache generations, 017 quota counts): which
// dialect is migrating, and a table's name qualified with the schema being migrated, so a trigger
// function finds its table whatever the writer's search_path (psql, a restore).
import { SqliteAdapter, sql, type Kysely } from 'kysely';

export const isSqlite = (db: Kysely<unknown>) => db.getExecutor().adapter instanceof SqliteAdapter;

/** PostgreSQL only: `"<current schema>".<table>`. */
export async function qualified(db: Kysely<unknown>, table: string): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return `"${rows[0].schema}".${table}`;
}
