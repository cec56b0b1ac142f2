// `sigil rotate-master-key` (docs/operator-guide.md): a new master key wraps the deployment's data key, with
// no downtime. Running processes hold the unwrapped data key and serve on; processes started after
// the rotation unseal with the new key, and the old key no longer opens the deployment.
//
// Key file deployments (<dataDir>/master.key): the new key is written to master.key.next first, the
// database is switched, then master.key is replaced by an atomic rename (order and recovery in
// src/barrier/master-key.ts). The old key is removed unless --keep-old keeps it as
// master.key.old-<UTC time>: it opens backups taken before the rotation, and nothing else.
// SIGIL_MASTER_KEY deployments: the new key (random, or SIGIL_NEW_MASTER_KEY when the operator made
// it in a secret store) is printed once, before the database switches, so it is never lost.
import { randomBytes } from 'node:crypto';
import {
  discardNextMasterKeyFile,
  installNextMasterKeyFile,
  loadMasterKey,
  masterKeyPath,
  parseMasterKey,
  readNextMasterKeyFile,
  writeNextMasterKeyFile,
} from '../barrier/master-key.js';
import { existsSync } from 'node:fs';
import type { Config } from '../config/config.js';
import { isInitialized, readCustody } from '../domain/governance/deployment.js';
import { masterKeyOpens, rewrapDataKey } from '../domain/governance/master-key-rotation.js';
import { Store } from '../store/index.js';

export interface RotateOptions {
  keepOld: boolean;
  /** SIGIL_NEW_MASTER_KEY: the key to rotate to, for SIGIL_MASTER_KEY deployments. */
  newKey: string | undefined;
  print: (text: string) => void;
}

export async function rotateMasterKey(config: Config, opts: RotateOptions): Promise<void> {
  const store = await Store.open({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    if (!(await isInitialized(store.repos))) throw new Error(`no Sigil deployment in ${store.location}: run "sigil init" first`);
    const { record } = await readCustody(store.repos);
    if (record.type !== 'static') {
      throw new Error(`this deployment is sealed by the ${record.type} seal, which has no master key: use "sigil operator ${record.type === 'shamir' ? 'rekey' : 'migrate-seal'}" (README "Custody")`);
    }
    if (config.masterKey) await rotateEnvKey(store, config, opts);
    else await rotateKeyFile(store, config, opts);
  } finally {
    await store.close();
  }
}

async function rotateKeyFile(store: Store, config: Config, opts: RotateOptions): Promise<void> {
  if (opts.newKey) {
    throw new Error('SIGIL_NEW_MASTER_KEY is for deployments keyed by SIGIL_MASTER_KEY; with a key file, rotate-master-key makes the new key itself');
  }
  const path = masterKeyPath(config.dataDir);
  const pending = readNextMasterKeyFile(config.dataDir);
  if (pending) {
    if (await masterKeyOpens(store, pending)) {
      // An earlier rotation switched the database but stopped before replacing the key file.
      const kept = installNextMasterKeyFile(config.dataDir, { keepOld: opts.keepOld, now: Date.now() });
      opts.print(`Finished an interrupted rotation: ${path} now holds the key that opens this deployment.${kept ? ` The previous key is kept in ${kept}.` : ''}\n`);
      return;
    }
    // The earlier rotation never reached the database: its key was never used.
    discardNextMasterKeyFile(config.dataDir);
  }
  const oldKey = loadMasterKey(config.dataDir, undefined);
  const newKey = randomBytes(32);
  try {
    writeNextMasterKeyFile(config.dataDir, newKey);
    try {
      await rewrapDataKey(store, oldKey, newKey);
    } catch (err) {
      discardNextMasterKeyFile(config.dataDir);
      throw err;
    }
    const kept = installNextMasterKeyFile(config.dataDir, { keepOld: opts.keepOld, now: Date.now() });
    // What a process starting now will do: read the file back and unseal with it.
    const check = loadMasterKey(config.dataDir, undefined);
    const opens = await masterKeyOpens(store, check);
    check.fill(0);
    if (!opens) throw new Error(`${path} does not open the deployment after the rotation; do not restart Sigil and report this`);
    opts.print(
      [
        `Rotated the master key: ${path} holds the new key (mode 600) and the data key is wrapped by it.`,
        'Running Sigil processes keep serving; processes started from now on use the new key.',
        kept
          ? `The old key is kept in ${kept}: it opens backups taken before now. Delete it once you no longer need them.`
          : 'The old key was removed: backups taken before now need a copy of it you kept elsewhere.',
        config.databaseUrl ? 'Other machines serving this PostgreSQL database with their own master.key need a copy of the new file before they restart.' : '',
      ]
        .filter((l) => l !== '')
        .join('\n') + '\n',
    );
  } finally {
    oldKey.fill(0);
    newKey.fill(0);
  }
}

async function rotateEnvKey(store: Store, config: Config, opts: RotateOptions): Promise<void> {
  const oldKey = parseMasterKey(config.masterKey!);
  const supplied = opts.newKey !== undefined;
  const newKey = supplied ? parseMasterKey(opts.newKey!) : randomBytes(32);
  try {
    if (!(await masterKeyOpens(store, oldKey))) {
      throw new Error('SIGIL_MASTER_KEY does not open this deployment: set it to the current master key before rotating');
    }
    if (!supplied) {
      // Printed before the switch: once the database depends on the key, it must already be out.
      opts.print(`New master key (shown once; store it now): ${newKey.toString('hex')}\n`);
    }
    try {
      await rewrapDataKey(store, oldKey, newKey);
    } catch (err) {
      if (!supplied) opts.print('The rotation failed and nothing was changed: discard the key printed above.\n');
      throw err;
    }
    opts.print(
      [
        `Rotated the master key: the data key is now wrapped by the ${supplied ? 'key in SIGIL_NEW_MASTER_KEY' : 'new key above'}.`,
        'Running Sigil processes keep serving. Set SIGIL_MASTER_KEY to the new key wherever Sigil runs before',
        'restarting any process: the old key no longer opens this deployment (backups taken before now still need it).',
        existsSync(masterKeyPath(config.dataDir))
          ? `${masterKeyPath(config.dataDir)} is not used while SIGIL_MASTER_KEY is set and was left unchanged.`
          : '',
      ]
        .filter((l) => l !== '')
        .join('\n') + '\n',
    );
  } finally {
    oldKey.fill(0);
    newKey.fill(0);
  }
}
