// Opens Sigil's database: embedded SQLite (better-sqlite3, WAL, synchronous=FULL) in the data
// directory, or PostgreSQL when a `postgres://` URL is given, and applies the migrations. The same
// Kysely queries run on both. A `?schema=NAME` parameter on the PostgreSQL URL places Sigil's tables
// in that schema (created if missing), so several deployments or test runs can share one database.
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type BetterSqlite3Type from 'better-sqlite3';
import BetterSqlite3 from './sqlite-driver.js';
import pg from 'pg';
import { CompiledQuery, Kysely, Migrator, PostgresDialect, SqliteDialect, SqliteDriver, sql, type DatabaseConnection, type Driver, type Migration, type MigrationProvider } from 'kysely';
import type { Database } from './schema.js';
import { parseDatabaseUrl, type PostgresHost } from './database-url.js';
import { HeardClient, HostTarget } from './postgres-target.js';
import { postgresRaw, sqliteRaw, type DatabaseStats, type Dialect, type RawDb } from './raw.js';
import { Checkpointer, WalSync } from './wal-sync.js';
import * as m001 from './migrations/001_foundation.js';
import * as m002 from './migrations/002_wallets.js';
import * as m003 from './migrations/003_import_bundles.js';
import * as m004 from './migrations/004_policies.js';
import * as m005 from './migrations/005_app_proofs.js';
import * as m006 from './migrations/006_authenticators.js';
import * as m007 from './migrations/007_sessions_allowlists.js';
import * as m008 from './migrations/008_otp.js';
import * as m009 from './migrations/009_audit_log.js';
import * as m010 from './migrations/010_organization_features.js';
import * as m011 from './migrations/011_oauth2_credentials.js';
import * as m013 from './migrations/013_rate_limits.js';
import * as m014 from './migrations/014_verified_contacts_auth_proxy.js';
import * as m015 from './migrations/015_cache_generations.js';
import * as m016 from './migrations/016_audit_streams.js';
import * as m017 from './migrations/017_quota_counts.js';
import * as m018 from './migrations/018_velocity_controls.js';
import * as m019 from './migrations/019_mfa_policies.js';
import * as m020 from './migrations/020_session_profiles.js';
import * as m021 from './migrations/021_secrets.js';
import * as m022 from './migrations/022_invitations_email_events.js';
import * as m023 from './migrations/023_webhooks.js';
import * as m024 from './migrations/024_send_transactions.js';
import * as m025 from './migrations/025_time_ordered_idempotency.js';
import * as m026 from './migrations/026_vouched_contacts.js';
import * as m027 from './migrations/027_send_tracking.js';
import * as m030 from './migrations/030_lookup_indexes.js';
import * as m031 from './migrations/031_small_rows.js';
import * as m032 from './migrations/032_organization_keys.js';
import * as m036 from './migrations/036_activity_simulations.js';

// Declared with the prepared statements that count them (raw.ts), which db.ts builds on.
export type { DatabaseStats, Dialect } from './raw.js';


const MIGRATIONS: Record<string, Migration> = {
  '001_foundation': m001,
  '002_wallets': m002,
  '003_import_bundles': m003,
  '004_policies': m004,
  '005_app_proofs': m005,
  '006_authenticators': m006,
  '007_sessions_allowlists': m007,
  '008_otp': m008,
  '009_audit_log': m009,
  '010_organization_features': m010,
  '011_oauth2_credentials': m011,
  '013_rate_limits': m013,
  '014_verified_contacts_auth_proxy': m014,
  '015_cache_generations': m015,
  '016_audit_streams': m016,
  '017_quota_counts': m017,
  '018_velocity_controls': m018,
  '019_mfa_policies': m019,
  '020_session_profiles': m020,
  '021_secrets': m021,
  '022_invitations_email_events': m022,
  '023_webhooks': m023,
  '024_send_transactions': m024,
  '025_time_ordered_idempotency': m025,
  '026_vouched_contacts': m026,
  '027_send_tracking': m027,
  '030_lookup_indexes': m030,
  '031_small_rows': m031,
  '032_organization_keys': m032,
  '036_activity_simulations': m036,
};

class StaticMigrations implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

export interface OpenedDatabase {
  db: Kysely<Database>;
  dialect: Dialect;
  stats: DatabaseStats;
  /** The hot path's prepared statements (src/store/raw.ts). */
  raw: RawDb;
  /** SQLite: the connection Kysely writes through (grouped commits use it under Kysely's lock). */
  sqliteWriter?: BetterSqlite3Type.Database;
  /** SQLite: makes commits durable off the event loop (src/store/wal-sync.ts). */
  walSync?: WalSync;
  /** SQLite: the checkpointing worker, stopped on close. */
  checkpointer?: Checkpointer;
  /**
   * PostgreSQL: a small pool of its own for background work (the webhook dispatcher), so that work
   * never takes a connection requests wait for, and its statements are not counted as the request
   * path's round trips. SQLite: absent (the one writer serves both).
   */
  backgroundDb?: Kysely<Database>;
  /** Where the data lives, for messages (never contains a password). */
  location: string;
  schema?: string;
}

// PostgreSQL returns int8 as strings; every bigint Sigil stores is a millisecond time that fits a double.
pg.types.setTypeParser(20, (v: string) => Number(v));

/**
 * Kysely prepares every query it runs; preparing costs more than running a small query, and
 * Kysely emits the same SQL text for the same query shape, so prepared statements are reused.
 */
function cacheStatements(database: BetterSqlite3Type.Database, max = 1000): void {
  const prepare = database.prepare.bind(database);
  const statements = new Map<string, BetterSqlite3Type.Statement>();
  database.prepare = ((source: string) => {
    let stmt = statements.get(source);
    if (!stmt) {
      stmt = prepare(source);
      if (statements.size >= max) statements.delete(statements.keys().next().value as string);
      statements.set(source, stmt);
    }
    return stmt;
  }) as typeof database.prepare;
}

/**
 * Transactions start with BEGIN IMMEDIATE: the write lock is taken (waiting up to busy_timeout) before
 * the first read. With a plain (deferred) BEGIN, a transaction that reads and then writes fails at
 * once with SQLITE_BUSY when another process (`sigil serve --workers N`) committed in between,
 * because its read snapshot is stale; busy_timeout cannot help there. One process never contends.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly sqliteConfig: ConstructorParameters<typeof SqliteDialect>[0]) {
    super(sqliteConfig);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.sqliteConfig);
  }
}

/** The embedded database file of a data directory. */
export function sqliteFile(dataDir: string): string {
  return join(dataDir, 'sigil.sqlite');
}

function openSqlite(dataDir: string): OpenedDatabase {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = sqliteFile(dataDir);
  const database = new BetterSqlite3(file);
  // The database holds ciphertexts and credentials' public halves only, yet it is nobody else's business.
  chmodSync(file, 0o600);
  // WAL lets reads proceed during a write; FULL makes every commit durable (fsync) before we answer.
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = FULL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  // Keep the log from growing on disk once a checkpoint has emptied it.
  database.pragma('journal_size_limit = 67108864');
  // Statement journals (a multi-row write's undo record) and temporary indexes stay in memory: on
  // disk each is a file created, written and deleted within one statement, ~30 µs of system time
  // per signing request when grouped commits used multi-row INSERTs (docs/design.md "The hot path").
  database.pragma('temp_store = MEMORY');
  cacheStatements(database);
  // A second connection for the hot path's reads: in WAL it reads the last commit without waiting
  // for a transaction in progress on the writing connection.
  const reader = new BetterSqlite3(file);
  reader.pragma('busy_timeout = 5000');
  reader.pragma('query_only = true');
  return {
    db: new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database }) }),
    dialect: 'sqlite',
    location: file,
    stats: { roundTrips: 0 },
    raw: sqliteRaw(reader, database),
    sqliteWriter: database,
  };
}

/**
 * A process's PostgreSQL connections: the hot path's statements run on a few connections of their own
 * (no pool checkout per statement), Kysely's queries and transactions on a pool of the rest.
 */
const HOT_CONNECTIONS = 3;
const POOL_CONNECTIONS = 10 - HOT_CONNECTIONS;

/**
 * A pool whose idle connections may be closed by the server (PostgreSQL restarted or failed over, an
 * administrator's pg_terminate_backend, an idle timeout): pg removes such a connection from the pool
 * and emits 'error' on the pool, and an 'error' event nobody listens to ends the Node.js process. It
 * is expected, so it is heard and dropped; the next checkout opens a new connection, and the requests
 * that were using the database get its error (a PostgreSQL restart ended `sigil serve`).
 */
function droppingBrokenConnections(pool: pg.Pool): pg.Pool {
  pool.on('error', () => {});
  return pool;
}

function openPostgres(url: string): OpenedDatabase {
  const parsed = parseDatabaseUrl(url);
  const schema = parsed.schema;
  // search_path (and jit) are set by the server at connect time, so every connection has them.
  const configFor = (host: PostgresHost | undefined) => ({
    connectionString: parsed.forHost(host),
    // Names the process in pg_stat_activity, so an operator (and the bench) can tell whose backend is whose.
    application_name: `sigil ${process.pid}`,
    // A database host that does not answer (a failover in progress, a network partition) fails the
    // request after this long instead of holding it; pg waits forever by default.
    connectionTimeoutMillis: 5_000,
    // JIT compilation off: every statement here is a short index read or write, and the planner
    // compiles one whose estimated cost passes jit_above_cost (a batch over a JSON recordset is
    // estimated at 100 rows, so the cold read of src/store/hot-reads.ts passed it at a million end
    // users), which cost 1.7 s per execution against 1 ms of work.
    options: `-c jit=off${schema ? ` -c search_path=${schema}` : ''}`,
  });
  // One host and no session attribute to check: node-postgres connects as it always has. Several
  // hosts, or a session that must be read-write: each new connection goes to the host that fits now
  // (postgres-target.ts), so a promoted standby is found without a restart.
  const single = parsed.hosts.length <= 1 && parsed.targetSessionAttrs === 'any';
  const connection: pg.ClientConfig & { Client: typeof pg.Client } = {
    ...configFor(parsed.hosts[0]),
    Client: single ? HeardClient : new HostTarget(parsed.hosts, parsed.targetSessionAttrs, configFor).clientClass(),
  };
  const pool = droppingBrokenConnections(new pg.Pool({ ...connection, max: POOL_CONNECTIONS }));
  const stats: DatabaseStats = { roundTrips: 0 };
  // Every statement a pooled connection sends is one round trip (bench and /metrics report them).
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      stats.roundTrips++;
      return query(...args);
    };
  });
  return {
    db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }),
    backgroundDb: new Kysely<Database>({ dialect: new PostgresDialect({ pool: droppingBrokenConnections(new pg.Pool({ ...connection, max: 2 })) }) }),
    stats,
    raw: postgresRaw(connection, stats, HOT_CONNECTIONS),
    dialect: 'postgres',
    location: parsed.location,
    schema,
  };
}

/** How the SQLite log is checkpointed (src/store/wal-sync.ts Checkpointer); the defaults serve. */
export interface CheckpointOptions {
  intervalMs?: number;
  restartFrames?: number;
}

export async function openDatabase(opts: { dataDir: string; databaseUrl?: string; checkpoints?: CheckpointOptions }): Promise<OpenedDatabase> {
  const opened = opts.databaseUrl ? openPostgres(opts.databaseUrl) : openSqlite(opts.dataDir);
  if (opened.dialect === 'postgres') {
    // Fail fast with a clear message when the server is unreachable.
    try {
      await sql`select 1`.execute(opened.db);
      if (opened.schema) {
        try {
          await sql`create schema if not exists ${sql.id(opened.schema)}`.execute(opened.db);
        } catch (err) {
          // Two processes starting at once may race on the catalog; the loser sees a duplicate.
          if (!isUniqueViolation(err)) throw err;
        }
      }
    } catch (err) {
      await opened.raw.close();
      await opened.db.destroy();
      await opened.backgroundDb?.destroy();
      throw new Error(`cannot reach PostgreSQL at ${opened.location}: ${(err as Error).message}`);
    }
  }
  // Kysely looks for its bookkeeping tables in every schema; naming ours keeps deployments that
  // share a database from seeing each other's migration state.
  const migrator = new Migrator({
    db: opened.db,
    provider: new StaticMigrations(),
    // Migrations developed side by side may land with numbers below one a database already ran;
    // each is independent, so applying the missing one later is safe.
    allowUnorderedMigrations: true,
    ...(opened.schema ? { migrationTableSchema: opened.schema } : {}),
  });
  let { error } = await migrator.migrateToLatest();
  // Kysely reads the whole catalog to find its own tables; a schema or table another deployment drops
  // at that moment (several deployments share one database) fails the read. Such a failure is not
  // ours: read again.
  for (let attempt = 1; error && attempt < 5 && isCatalogRace(error); attempt++) {
    await new Promise((r) => setTimeout(r, 50 * attempt));
    ({ error } = await migrator.migrateToLatest());
  }
  if (error) {
    await opened.raw.close();
    await opened.db.destroy();
    throw new Error(`database migration failed: ${(error as Error).message ?? String(error)}`);
  }
  if (opened.sqliteWriter) {
    // From here on commits are made durable by WalSync (the store syncs the log before it reports a
    // commit), and checkpoints happen on a worker thread rather than inside a commit.
    opened.sqliteWriter.pragma('synchronous = NORMAL');
    opened.sqliteWriter.pragma('wal_autocheckpoint = 0');
    opened.walSync = new WalSync(`${opened.location}-wal`);
    opened.checkpointer = new Checkpointer(opened.location, opts.checkpoints?.intervalMs, opts.checkpoints?.restartFrames);
  }
  return opened;
}

/** PostgreSQL: an object named in the catalog vanished while it was read (invalid schema, undefined table). */
function isCatalogRace(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === '3F000' || code === '42P01' || code === '42883';
}

/**
 * The unique constraint a violation broke: PostgreSQL's constraint name, or SQLite's
 * "table.column, table.column" (undefined when `err` is not a unique violation).
 */
export function violatedUnique(err: unknown): string | undefined {
  if (!isUniqueViolation(err)) return undefined;
  const e = err as { constraint?: string; message?: string };
  return e.constraint ?? /UNIQUE constraint failed: (.*)$/.exec(e.message ?? '')?.[1] ?? '';
}

/** True when the error is a unique/primary-key constraint violation on either dialect. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A row that names another that is gone (PostgreSQL 23503, SQLite's foreign key constraint). */
export function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}
