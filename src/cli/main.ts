// The `sigil` command: `init` creates a deployment, `serve` runs it, `start` does both for a first
// run (what `npm start` calls). Flags and environment are read here and nowhere else.
import { existsSync, mkdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createMasterKeyFile, loadMasterKey, masterKeyPath, parseMasterKey } from '../barrier/master-key.js';
import { loadConfig, type Config } from '../config/config.js';
import { initializeDeployment, isInitialized, type InitResult } from '../domain/deployment.js';
import { Store } from '../store/index.js';
import { makeLogger, startApp, VERSION } from './app.js';
import { verifyProofsCommand } from './verify-proofs.js';
import { auditExport, auditVerify } from './audit.js';

const USAGE = `sigil ${VERSION}: self-hosted wallet, key and user management (Turnkey API)

usage:
  sigil init  --data-dir DIR [--json]
  sigil serve --data-dir DIR [--port N] [--auth-proxy-port N] [--host H]
  sigil start [same flags as serve]     init on first run, then serve
  sigil verify-proofs --activity FILE --boot-proof FILE --signer HEX
                                        check an activity's app proofs offline
  sigil audit export --data-dir DIR [--out FILE]
                                        the hash-chained audit log as JSON lines, in seq order
  sigil audit verify --file FILE        check an export offline: exit 1 naming the first changed,
                                        removed or reordered entry

environment: SIGIL_DATA_DIR, SIGIL_PORT, SIGIL_AUTH_PROXY_PORT, SIGIL_HOST, SIGIL_MASTER_KEY,
             DATABASE_URL (postgres://…; embedded SQLite in the data directory when unset)
`;

class UsageError extends Error {}

async function init(config: Config, json: boolean): Promise<InitResult> {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const store = await Store.open({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    if (await isInitialized(store.repos)) {
      throw new UsageError(`already initialized: ${store.location} holds a Sigil deployment; nothing was changed`);
    }
    let masterKey: Buffer;
    let createdKeyFile = false;
    if (config.masterKey) masterKey = parseMasterKey(config.masterKey);
    else if (existsSync(masterKeyPath(config.dataDir))) {
      // A key file without a deployment: an earlier init was interrupted; reuse the key it made.
      masterKey = loadMasterKey(config.dataDir, undefined);
    } else {
      masterKey = createMasterKeyFile(config.dataDir);
      createdKeyFile = true;
    }
    const result = await initializeDeployment(store, masterKey);
    masterKey.fill(0);
    if (json) process.stdout.write(JSON.stringify(result) + '\n');
    else printCredentials(result, config, createdKeyFile);
    return result;
  } finally {
    await store.close();
  }
}

function printCredentials(r: InitResult, config: Config, createdKeyFile: boolean) {
  const lines = [
    'Sigil initialized. These root credentials are shown once; store the private key safely.',
    `  organizationId   ${r.organizationId}`,
    `  userId           ${r.userId}`,
    `  apiKeyId         ${r.apiKeyId}`,
    `  apiPublicKey     ${r.apiPublicKey}`,
    `  apiPrivateKey    ${r.apiPrivateKey}`,
    `  signerPublicKey  ${r.signerPublicKey}`,
    createdKeyFile ? `  master key file  ${masterKeyPath(config.dataDir)} (mode 600; back it up)` : '  master key       from SIGIL_MASTER_KEY',
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

async function serve(config: Config): Promise<void> {
  const logger = makeLogger(config.logLevel);
  const app = await startApp(config, logger);
  process.stdout.write(`listening ${app.publicUrl} ${app.authProxyUrl}\n`);
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'draining in-flight requests');
    app.close().then(
      () => process.exit(0),
      (err) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

async function start(config: Config): Promise<void> {
  const store = await Store.open({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  const initialized = await isInitialized(store.repos);
  await store.close();
  if (!initialized) await init(config, false);
  await serve(config);
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: command === 'audit',
    options: {
      'data-dir': { type: 'string' },
      port: { type: 'string' },
      'auth-proxy-port': { type: 'string' },
      host: { type: 'string' },
      'log-level': { type: 'string' },
      json: { type: 'boolean' },
      activity: { type: 'string' },
      'boot-proof': { type: 'string' },
      signer: { type: 'string' },
      out: { type: 'string' },
      file: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help || command === undefined || command === 'help' || command === '--help') {
    process.stdout.write(USAGE);
    return;
  }
  const config = loadConfig(values, process.env);
  switch (command) {
    case 'init':
      await init(config, values.json === true);
      return;
    case 'serve':
      await serve(config);
      return;
    case 'start':
      await start(config);
      return;
    case 'verify-proofs':
      process.exitCode = verifyProofsCommand(values);
      return;
    case 'audit': {
      const [sub] = positionals;
      if (sub === 'export') {
        const n = await auditExport(config, values.out);
        if (values.out) process.stderr.write(`exported ${n} audit entries to ${values.out}\n`);
        return;
      }
      if (sub === 'verify') {
        if (!values.file) throw new UsageError(`sigil audit verify needs --file FILE\n\n${USAGE}`);
        process.exitCode = auditVerify(values.file);
        return;
      }
      throw new UsageError(`unknown audit command "${sub ?? ''}": expected export or verify\n\n${USAGE}`);
    }
    case 'version':
      process.stdout.write(`${VERSION}\n`);
      return;
    default:
      throw new UsageError(`unknown command "${command}"\n\n${USAGE}`);
  }
}
