// Statements prepared once (docs/design.md "The hot path": SQL is prepared once, never rebuilt
// per call). The hot path's few statements are written out here as text with `$1` placeholders and
// run without the query builder: on PostgreSQL as named prepared statements (parsed and planned once
// per connection), on SQLite as cached better-sqlite3 statements on a connection of their own that
// only reads, so a read never waits behind another request's transaction (WAL lets it read the last
// commit). Kysely stays on the cold paths.
import type BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';

export type Dialect = 'sqlite' | 'postgres';

/**
 * Counters of the database work a process does: `roundTrips` counts the statements sent to
 * PostgreSQL (each one a round trip on its connection); SQLite runs in-process and counts none.
 */
export interface DatabaseStats {
  roundTrips: number;
}

/** A statement with its name (the PostgreSQL prepared-statement name) and text per dialect. */
export interface Statement {
  name: string;
  postgres: string;
  sqlite: string;
  /** For each `?` of the SQLite text, in order, which parameter (0-based) it takes. */
  sqliteParams: number[];
}

/**
 * `$n` placeholders become SQLite's positional `?` (better-sqlite3 binds `?NNN` only by name), so
 * one text serves both dialects where their SQL agrees; `sqliteText` gives SQLite its own.
 */
export function statement(name: string, text: string, sqliteText?: string): Statement {
  const sqliteParams: number[] = [];
  const sqlite = (sqliteText ?? text).replace(/\$(\d+)/g, (_, n: string) => {
    sqliteParams.push(Number(n) - 1);
    return '?';
  });
  return { name, postgres: text, sqlite, sqliteParams };
}

export interface RawDb {
  readonly dialect: Dialect;
  /** Runs a read (or a self-contained write) and returns its rows. */
  query<R>(s: Statement, params: unknown[]): Promise<R[]>;
  /**
   * SQLite only: runs `fn`'s reads synchronously in one read transaction (one snapshot), each
   * statement prepared once; what `fn` returns is the answer.
   */
  readTogether?<T>(fn: (query: <R>(s: Statement, params: unknown[]) => R[]) => T): T;
  close(): Promise<void>;
}

/** SQLite binds only numbers, strings, bigints, buffers and null; booleans are stored as 0/1. */
function sqliteParam(v: unknown): unknown {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v === undefined) return null;
  return v;
}

/**
 * Reads run on the writing connection whenever it is between transactions (its page cache is warm
 * and current: it made the last commits), and on the reading connection while a transaction is open
 * on the writer across an await, so a read never sees uncommitted rows.
 */
export function sqliteRaw(reader: BetterSqlite3.Database, writer: BetterSqlite3.Database): RawDb {
  const prepared = new Map<BetterSqlite3.Database, Map<string, BetterSqlite3.Statement>>([
    [reader, new Map()],
    [writer, new Map()],
  ]);
  const run = <R>(conn: BetterSqlite3.Database, s: Statement, params: unknown[]): R[] => {
    const statements = prepared.get(conn)!;
    let stmt = statements.get(s.name);
    if (!stmt) {
      stmt = conn.prepare(s.sqlite);
      statements.set(s.name, stmt);
    }
    const bound = s.sqliteParams.map((i) => sqliteParam(params[i]));
    return (stmt.reader ? stmt.all(...bound) : (stmt.run(...bound), [])) as R[];
  };
  return {
    dialect: 'sqlite',
    async query<R>(s: Statement, params: unknown[]): Promise<R[]> {
      return run<R>(writer.inTransaction ? reader : writer, s, params);
    },
    readTogether<T>(fn: (query: <R>(s: Statement, params: unknown[]) => R[]) => T): T {
      const conn = writer.inTransaction ? reader : writer;
      conn.exec('BEGIN');
      try {
        return fn((s, params) => run(conn, s, params));
      } finally {
        conn.exec('COMMIT');
      }
    },
    async close() {
      reader.close();
    },
  };
}

/**
 * PostgreSQL: `size` connections of the hot path's own, opened on first use; each statement goes to
 * the one with the fewest statements waiting. node-postgres sends one statement at a time per
 * connection and deprecates queueing a second on a busy client, so each connection keeps its own
 * queue (`tail`): a statement starts when the one before it on that connection has finished.
 */
export function postgresRaw(config: pg.ClientConfig & { Client?: typeof pg.Client }, stats: DatabaseStats, size: number): RawDb {
  const connections: { client: Promise<pg.Client>; waiting: number; tail: Promise<unknown> }[] = [];
  // Every statement here is an index lookup or an insert, and each is prepared once per connection:
  // after five runs PostgreSQL may keep a generic plan for the connection's life, and one made while a
  // table was still small can read it whole on every run (seen: a hash join over activities, and a
  // lookup through the listing index reading 480 pages a call, on a deployment a few seconds old).
  // Without sequential scans the planner keeps to the indexes whatever the table's size was; the
  // statements themselves are written so only one index fits each lookup (migration 025).
  const hotConfig: pg.ClientConfig = { ...config, options: [config.options, '-c enable_seqscan=off'].filter(Boolean).join(' ') };
  const open = () => {
    // The Client of a multi-host DATABASE_URL chooses its host when it connects (postgres-target.ts).
    const client = new (config.Client ?? pg.Client)(hotConfig);
    // A connection that fails is dropped, and the next statement opens a new one.
    client.on('error', () => {
      const i = connections.findIndex((c) => c.client === entry.client);
      if (i >= 0) connections.splice(i, 1);
    });
    const entry = { client: client.connect().then(() => client), waiting: 0, tail: Promise.resolve() as Promise<unknown> };
    entry.client.catch(() => {
      const i = connections.indexOf(entry);
      if (i >= 0) connections.splice(i, 1);
    });
    connections.push(entry);
    return entry;
  };
  return {
    dialect: 'postgres',
    async query<R>(s: Statement, params: unknown[]): Promise<R[]> {
      let entry = connections.reduce<(typeof connections)[number] | undefined>((best, c) => (!best || c.waiting < best.waiting ? c : best), undefined);
      if (!entry || (entry.waiting > 0 && connections.length < size)) entry = open();
      entry.waiting++;
      const chosen = entry;
      const run = chosen.tail.then(async () => {
        stats.roundTrips++;
        const res = await (await chosen.client).query({ name: s.name, text: s.postgres, values: params });
        return res.rows as R[];
      });
      // The queue continues whether this statement succeeds or fails.
      chosen.tail = run.then(
        () => undefined,
        () => undefined,
      );
      try {
        return await run;
      } finally {
        chosen.waiting--;
      }
    },
    async close() {
      await Promise.all(connections.splice(0).map(async (c) => (await c.client.catch(() => undefined))?.end().catch(() => undefined)));
    },
  };
}
