// The master key: 32 bytes from SIGIL_MASTER_KEY (hex or base64) or from the key file
// `<dataDir>/master.key` that `sigil init` creates with mode 0600. It only ever wraps the data key
// (docs/design.md "Security model"); secrets themselves are sealed with the data key.
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const MASTER_KEY_FILE = 'master.key';
/** A rotation's new key, written before the database switches to it (see installNextMasterKeyFile). */
export const NEXT_MASTER_KEY_FILE = 'master.key.next';

export function parseMasterKey(text: string): Buffer {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64');
  if (key.length !== 32) throw new Error('the master key must be 32 bytes, given as 64 hex characters or base64');
  return key;
}

export function masterKeyPath(dataDir: string): string {
  return join(dataDir, MASTER_KEY_FILE);
}

/** Loads the master key; `fromEnv` wins over the key file. */
export function loadMasterKey(dataDir: string, fromEnv: string | undefined): Buffer {
  if (fromEnv) return parseMasterKey(fromEnv);
  const path = masterKeyPath(dataDir);
  if (!existsSync(path)) {
    throw new Error(`no master key: set SIGIL_MASTER_KEY or run "sigil init" (missing ${path})`);
  }
  const mode = statSync(path).mode & 0o777;
  if (mode & 0o077) throw new Error(`refusing to use ${path}: its mode is ${mode.toString(8)}, it must be 600`);
  return parseMasterKey(readFileSync(path, 'utf8'));
}

/** Creates a fresh key file readable by its owner only; refuses to overwrite one. */
export function createMasterKeyFile(dataDir: string): Buffer {
  const key = randomBytes(32);
  writeFileSync(masterKeyPath(dataDir), key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
  return key;
}

// Rotation of the key file (`sigil rotate-master-key`). The order makes every crash recoverable: the
// new key is durable in master.key.next before the database is switched to it, and master.key is
// replaced by an atomic rename only after the switch. A rotation interrupted in between leaves
// master.key.next behind; the next rotate-master-key finds it and finishes or discards it.

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function nextKeyPath(dataDir: string): string {
  return join(dataDir, NEXT_MASTER_KEY_FILE);
}

/** Writes the coming key to master.key.next (mode 0600), flushed to disk with its directory entry. */
export function writeNextMasterKeyFile(dataDir: string, key: Buffer): void {
  const fd = openSync(nextKeyPath(dataDir), 'wx', 0o600);
  try {
    writeSync(fd, key.toString('hex') + '\n');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  fsyncDir(dataDir);
}

/** The key a rotation left in master.key.next, if any. */
export function readNextMasterKeyFile(dataDir: string): Buffer | undefined {
  const path = nextKeyPath(dataDir);
  if (!existsSync(path)) return undefined;
  return parseMasterKey(readFileSync(path, 'utf8'));
}

export function discardNextMasterKeyFile(dataDir: string): void {
  rmSync(nextKeyPath(dataDir), { force: true });
  fsyncDir(dataDir);
}

/**
 * Makes master.key.next the master key by an atomic rename, so a process starting at any moment reads
 * either the old or the new file, whole. With `keepOld` the old key stays as
 * `master.key.old-<UTC time>` (mode 0600): backups taken before the rotation need it. Returns its path.
 */
export function installNextMasterKeyFile(dataDir: string, opts: { keepOld: boolean; now: number }): string | undefined {
  const current = masterKeyPath(dataDir);
  let keptAt: string | undefined;
  if (opts.keepOld && existsSync(current)) {
    keptAt = `${current}.old-${new Date(opts.now).toISOString().replace(/[:.]/g, '-')}`;
    linkSync(current, keptAt);
  }
  renameSync(nextKeyPath(dataDir), current);
  fsyncDir(dataDir);
  return keptAt;
}
