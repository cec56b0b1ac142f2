// Backup and restore of the embedded SQLite store at the file level (docs/operator-guide.md, `sigil backup` /
// `sigil restore`). A backup is one SQLite file taken with SQLite's online backup API from a single
// read snapshot, so it is consistent while a server keeps committing (WAL lets writers go on). A
// restore only ever replaces a database nobody has open: whether a process has it open is asked of
// SQLite's own locks, not of a pid file that a killed process would leave behind.
import { chmodSync, closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3Type from 'better-sqlite3';
import BetterSqlite3 from './sqlite-driver.js';
import { sqliteFile } from './db.js';

export { sqliteFile } from './db.js';

function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Checks that `file` is an intact SQLite database holding Sigil's tables (quick_check, the `meta`
 * table); throws naming what is wrong.
 */
export function checkSqliteFile(file: string): void {
  let db: BetterSqlite3Type.Database;
  try {
    db = new BetterSqlite3(file, { fileMustExist: true });
  } catch (err) {
    throw new Error(`${file} is not a readable SQLite database: ${(err as Error).message}`);
  }
  try {
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`${file} fails SQLite's integrity check: ${String(check)}`);
    const meta = db.prepare("select count(*) as n from sqlite_master where type = 'table' and name = 'meta'").get() as { n: number };
    if (meta.n !== 1) throw new Error(`${file} is an SQLite database but not a Sigil one (it has no meta table)`);
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_NOTADB') throw new Error(`${file} is not an SQLite database`);
    throw err;
  } finally {
    db.close();
  }
}

/**
 * Copies the data directory's database to `out` (mode 0600) while it may be serving. The copy is
 * made beside `out` and renamed into place once checked, so `out` is never a partial file.
 */
export async function backupSqlite(dataDir: string, out: string): Promise<{ bytes: number }> {
  const source = sqliteFile(dataDir);
  if (!existsSync(source)) throw new Error(`no embedded database at ${source}: check --data-dir / SIGIL_DATA_DIR`);
  const partial = `${out}.partial-${process.pid}`;
  const db = new BetterSqlite3(source, { fileMustExist: true, timeout: 5000 });
  try {
    // All remaining pages in one step: copied from one read snapshot. Small steps would restart
    // from scratch each time a serving process commits, and might never finish under load.
    await db.backup(partial, { progress: () => 0x7fffffff });
  } catch (err) {
    rmSync(partial, { force: true });
    throw new Error(`backup of ${source} failed: ${(err as Error).message}`);
  } finally {
    db.close();
  }
  try {
    chmodSync(partial, 0o600);
    checkSqliteFile(partial);
    fsyncPath(partial);
    renameSync(partial, out);
    fsyncPath(dirname(out));
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  }
  return { bytes: statSync(out).size };
}

/**
 * Takes SQLite's exclusive lock on the data directory's database without waiting: fails if any
 * process (a running `sigil serve`, a backup) has it open. While the returned connection is open
 * nobody else can use the database; closing it checkpoints and removes the write-ahead log.
 */
function lockExclusively(file: string): BetterSqlite3Type.Database | 'busy' {
  const db = new BetterSqlite3(file, { fileMustExist: true, timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('begin exclusive');
    db.exec('commit');
    return db;
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY')) return 'busy';
    throw err;
  }
}

/** True when some process has the data directory's database open. */
export function sqliteInUse(dataDir: string): boolean {
  const file = sqliteFile(dataDir);
  if (!existsSync(file)) return false;
  const lock = lockExclusively(file);
  if (lock === 'busy') return true;
  lock.close();
  return false;
}

/**
 * Puts `staged` (a checked database file) in place as the data directory's database. A database
 * already there is kept as `keepReplacedAs` when given, else removed; either way it must not be open.
 */
export function installSqliteFile(dataDir: string, staged: string, keepReplacedAs: string | undefined): void {
  const file = sqliteFile(dataDir);
  if (existsSync(file)) {
    const lock = lockExclusively(file);
    if (lock === 'busy') throw new Error(`${file} is open in another process (a running sigil serve?): stop it first`);
    try {
      // Fold the write-ahead log into the file, so the kept copy is complete on its own.
      lock.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      lock.close();
    }
    if (keepReplacedAs) renameSync(file, keepReplacedAs);
    else rmSync(file);
  }
  // A log left beside the old file would be replayed into the new one.
  rmSync(`${file}-wal`, { force: true });
  rmSync(`${file}-shm`, { force: true });
  chmodSync(staged, 0o600);
  fsyncPath(staged);
  renameSync(staged, file);
  fsyncPath(dataDir);
}
