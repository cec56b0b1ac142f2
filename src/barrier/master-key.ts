// The master key: 32 bytes from SIGIL_MASTER_KEY (hex or base64) or from the key file
// `<dataDir>/master.key` that `sigil init` creates with mode 0600. It only ever wraps the data key
// (DESIGN.md, security model); secrets themselves are sealed with the data key.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const MASTER_KEY_FILE = 'master.key';

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
