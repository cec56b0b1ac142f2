// `sigil backup` and `sigil restore` for the embedded SQLite store (docs/operator-guide.md). A backup is a
// consistent copy of the database taken while serving; it holds ciphertexts only, so it is useless
// without the master key, which is backed up separately (never inside the backup). A restore checks
// the backup (integrity, migrations, the data directory's master key unseals it) in a staging copy
// before it replaces anything, and refuses a database that a running process has open.
// PostgreSQL deployments are backed up with PostgreSQL's own tools.
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadMasterKey, masterKeyPath } from '../barrier/master-key.js';
import type { Config } from '../config/config.js';
import { loadDeployment } from '../domain/governance/deployment.js';
import { staticSeal } from '../barrier/seals.js';
import { backupSqlite, checkSqliteFile, installSqliteFile, sqliteFile, sqliteInUse } from '../store/backup.js';
import { parseDatabaseUrl } from '../store/database-url.js';
import { Store } from '../store/index.js';

function refusePostgres(config: Config, what: 'backup' | 'restore'): void {
  if (!config.databaseUrl) return;
  // Read as the store reads it, so a multi-host URL (a standby beside the primary) is understood too.
  const { schema, location: dbUrl } = parseDatabaseUrl(config.databaseUrl);
  const schemaFlag = schema ? ` --schema=${schema}` : '';
  throw new Error(
    what === 'backup'
      ? `sigil backup copies the embedded SQLite store; this deployment uses PostgreSQL (DATABASE_URL). Back it up with pg_dump, e.g.\n  pg_dump --format=custom${schemaFlag} --file=sigil.dump '${dbUrl}'\nand keep the master key (master.key or SIGIL_MASTER_KEY) separately.`
      : `sigil restore fills the embedded SQLite store; this deployment uses PostgreSQL (DATABASE_URL). Restore a pg_dump archive with pg_restore, e.g.\n  pg_restore --clean --if-exists${schemaFlag} --dbname='${dbUrl}' sigil.dump\nwith every Sigil process stopped, then start Sigil with the master key of the deployment the dump came from.`,
  );
}

export async function backupCommand(config: Config, opts: { out: string | undefined; force: boolean; print: (t: string) => void }): Promise<void> {
  refusePostgres(config, 'backup');
  if (!opts.out) throw new Error('sigil backup needs --out FILE: where to write the backup');
  const out = resolve(opts.out);
  if (existsSync(out) && !opts.force) throw new Error(`${out} exists: choose another --out, or add --force to overwrite it`);
  const { bytes } = await backupSqlite(config.dataDir, out);
  opts.print(
    `Backed up ${sqliteFile(config.dataDir)} to ${out} (${bytes} bytes, one consistent snapshot, integrity checked).\n` +
      `The backup does not contain the master key: keep ${config.masterKey ? 'SIGIL_MASTER_KEY' : masterKeyPath(config.dataDir)} as well; without it the backup cannot be opened.\n`,
  );
}

export async function restoreCommand(config: Config, opts: { from: string | undefined; force: boolean; print: (t: string) => void }): Promise<void> {
  refusePostgres(config, 'restore');
  if (!opts.from) throw new Error('sigil restore needs --from FILE: a file made by sigil backup');
  const from = resolve(opts.from);
  if (!existsSync(from)) throw new Error(`no backup at ${from}`);
  const dataDir = config.dataDir;
  const target = sqliteFile(dataDir);
  if (sqliteInUse(dataDir)) throw new Error(`${target} is open in another process (a running sigil serve?): stop it before restoring`);
  if (existsSync(target) && !opts.force) {
    throw new Error(`${dataDir} already holds a database (${target}): restore into an empty data directory, or add --force to replace it (the current one is kept beside it)`);
  }
  let masterKey: Buffer;
  try {
    masterKey = loadMasterKey(dataDir, config.masterKey);
  } catch (err) {
    throw new Error(
      `${(err as Error).message}\nA restore needs the master key of the deployment the backup came from: copy its master.key into ${dataDir} (mode 600) or set SIGIL_MASTER_KEY.`,
    );
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // A staging directory beside the target, so the final rename stays on one file system.
  const staging = join(dataDir, `.restore-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { mode: 0o700 });
  try {
    const staged = sqliteFile(staging);
    copyFileSync(from, staged);
    checkSqliteFile(staged);
    // Opening applies the migrations of this version; the barrier must unseal with this key.
    const organizationId = await verifyDeployment(staging, masterKey).catch((err: Error) => {
      throw new Error(`the backup does not open with this data directory's master key: ${err.message}. Nothing was changed.`);
    });
    const keptAs = existsSync(target) ? `${target}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}` : undefined;
    installSqliteFile(dataDir, staged, keptAs);
    await verifyDeployment(dataDir, masterKey);
    opts.print(
      `Restored ${from} into ${target}: root organization ${organizationId}; the master key ${config.masterKey ? 'in SIGIL_MASTER_KEY' : `in ${masterKeyPath(dataDir)}`} opens it.\n` +
        (keptAs ? `The database it replaced is kept as ${keptAs}.\n` : '') +
        `Start it with: sigil serve --data-dir ${dataDir}\n`,
    );
  } finally {
    masterKey.fill(0);
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Opens the embedded store of `dataDir` (migrating it) and unseals it; the root organization's id. */
async function verifyDeployment(dataDir: string, masterKey: Buffer): Promise<string> {
  const store = await Store.open({ dataDir });
  try {
    const seal = staticSeal(masterKey);
    try {
      return (await loadDeployment(store.repos, seal)).rootOrganizationId;
    } finally {
      seal.close();
    }
  } finally {
    await store.close();
  }
}
