// `sigil operator migrate-seal` and `sigil operator rekey` (docs/operator-guide.md "Custody"): the deployment's data
// key, opened with the seal it has now, wrapped by the seal SIGIL_SEAL names (or, for rekey, by new
// shamir shares), in one update of one row; no secret is re-encrypted and running processes serve on.
// The old seal no longer opens the deployment afterwards: its wrapped key is gone. New shares and a
// new master key are printed, or written durably, before the database switches to them.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { discardNextMasterKeyFile, installNextMasterKeyFile, loadMasterKey, masterKeyPath, parseMasterKey, writeNextMasterKeyFile } from '../barrier/master-key.js';
import { ensurePkcs11Key, pkcs11Seal } from '../barrier/pkcs11.js';
import { SealError, staticSeal, type OpenSeal, type SealRecord } from '../barrier/seals.js';
import { newShamirSeal, presentShares, shareFromOperator, ShareCollector } from '../barrier/shamir.js';
import type { Config } from '../config/config.js';
import { readCustody } from '../domain/governance/deployment.js';
import { replaceSeal } from '../domain/governance/seal-state.js';
import { Store } from '../store/index.js';

export interface MigrateOptions {
  rekey: boolean;
  shares?: string;
  threshold?: string;
  keepOld: boolean;
  /** Public keys to encrypt the new shares to, one per share (--operator-keys). */
  operatorKeys?: string[];
  print: (text: string) => void;
  /** The current shares of a shamir seal, one a line (standard input). */
  readShares?: () => string;
}

/** Opens the data key with the seal the deployment has now. */
async function openCurrent(config: Config, record: SealRecord, wrapped: string, opts: MigrateOptions): Promise<Buffer> {
  if (record.type === 'shamir') {
    const lines = (opts.readShares ?? (() => readFileSync(0, 'utf8')))()
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
    if (lines.length < record.threshold) throw new SealError(`give ${record.threshold} of the current unseal shares on standard input, one a line (${lines.length} given)`);
    const collector = new ShareCollector(record.threshold);
    for (const line of lines.slice(0, record.threshold)) {
      const r = await collector.submit(line, wrapped);
      if (r.dataKey) return r.dataKey;
    }
    throw new SealError('the unseal shares given do not open this deployment');
  }
  let seal: OpenSeal;
  if (record.type === 'static') {
    const key = loadMasterKey(config.dataDir, config.masterKey);
    seal = staticSeal(key);
    key.fill(0);
  } else {
    if (!config.pkcs11) throw new SealError('this deployment is sealed by its HSM: set SIGIL_PKCS11_MODULE and the token settings to open it for the migration');
    seal = pkcs11Seal({ ...config.pkcs11, keyLabel: record.keyLabel });
  }
  try {
    return seal.unwrap(wrapped);
  } finally {
    seal.close();
  }
}

export async function migrateSeal(config: Config, opts: MigrateOptions): Promise<void> {
  const store = await Store.open({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  let dataKey: Buffer | undefined;
  try {
    const { record, wrapped } = await readCustody(store.repos);
    const target = opts.rekey ? 'shamir' : config.seal.type;
    if (opts.rekey && record.type !== 'shamir') throw new SealError(`rekey issues new shamir shares; this deployment is sealed by the ${record.type} seal (see migrate-seal)`);
    if (!opts.rekey && record.type === target) {
      throw new SealError(`this deployment is already sealed by the ${target} seal: set SIGIL_SEAL to the seal to migrate to${target === 'shamir' ? ', or use rekey for new shares' : ''}`);
    }
    dataKey = await openCurrent(config, record, wrapped, opts);
    let seal: OpenSeal;
    let newRecord: SealRecord;
    let afterSwitch = (): string[] => [];
    let onFailure = () => {};
    if (target === 'static') {
      const fromEnv = config.masterKey !== undefined;
      const key = fromEnv ? parseMasterKey(config.masterKey!) : randomBytes(32);
      if (!fromEnv) {
        // Durable before the database depends on it, as rotate-master-key does (src/barrier/master-key.ts).
        if (existsSync(masterKeyPath(config.dataDir))) throw new SealError(`${masterKeyPath(config.dataDir)} exists already: move it away (or set SIGIL_MASTER_KEY) before migrating to the static seal`);
        writeNextMasterKeyFile(config.dataDir, key);
        onFailure = () => discardNextMasterKeyFile(config.dataDir);
        afterSwitch = () => {
          installNextMasterKeyFile(config.dataDir, { keepOld: false, now: Date.now() });
          return [`${masterKeyPath(config.dataDir)} holds the new master key (mode 600; back it up).`];
        };
      }
      seal = staticSeal(key);
      key.fill(0);
      newRecord = { type: 'static' };
    } else if (target === 'pkcs11' && config.seal.type === 'pkcs11') {
      ensurePkcs11Key(config.seal.pkcs11);
      seal = pkcs11Seal(config.seal.pkcs11);
      newRecord = { type: 'pkcs11', keyLabel: config.seal.pkcs11.keyLabel };
    } else {
      const shares = Number(opts.shares ?? (record.type === 'shamir' ? record.shares : 5));
      const threshold = Number(opts.threshold ?? (record.type === 'shamir' ? record.threshold : 3));
      const made = await newShamirSeal(shares, threshold);
      seal = made.seal;
      newRecord = { type: 'shamir', shares, threshold };
      // Printed before the switch: once the database depends on the shares, they must already be out.
      opts.print(
        [`New unseal shares (${threshold} of ${shares}), shown once and stored nowhere: give one to each operator.`, ...presentShares(made.shares, opts.operatorKeys).map((s, i) => `  share ${i + 1}  ${s}`), ''].join('\n'),
      );
      onFailure = () => opts.print('The migration failed and nothing was changed: discard the shares printed above.\n');
    }
    try {
      const rewrapped = seal.wrap(dataKey);
      // The new seal must open what it wrapped before the database depends on it.
      const check = seal.unwrap(rewrapped);
      const same = check.equals(dataKey);
      check.fill(0);
      if (!same) throw new SealError('the new seal did not give back the data key it wrapped; nothing was changed');
      await replaceSeal(store, wrapped, rewrapped, newRecord);
    } catch (err) {
      onFailure();
      throw err;
    } finally {
      seal.close();
    }
    const notes = afterSwitch();
    // A master key file the static seal leaves behind opens nothing now; it goes (or is kept for old backups).
    if (record.type === 'static' && !config.masterKey && existsSync(masterKeyPath(config.dataDir))) {
      const path = masterKeyPath(config.dataDir);
      if (opts.keepOld) {
        const kept = `${path}.old-${new Date().toISOString().replace(/[:.]/g, '-')}`;
        renameSync(path, kept);
        notes.push(`The old master key is kept in ${kept}: it opens backups taken before now, and nothing else.`);
      } else {
        rmSync(path);
        notes.push(`The old master key file ${path} was removed: backups taken before now need a copy of it you kept elsewhere.`);
      }
    }
    opts.print(
      [
        opts.rekey ? 'Rekeyed: the data key is now wrapped by the new shares; the old shares no longer open this deployment.' : `Migrated the seal from ${record.type} to ${target}: the ${record.type} seal no longer opens this deployment.`,
        'Running processes keep serving; set SIGIL_SEAL (and its settings) on every process before restarting it.',
        ...notes,
      ].join('\n') + '\n',
    );
  } finally {
    dataKey?.fill(0);
    await store.close();
  }
}
