// The `sigil` command: `init` creates a deployment, `serve` runs it (one process, or a cluster with
// --workers), `start` does both for a first run (what `npm start` calls), and the operator commands
// of docs/operator-guide.md: `config`, `rotate-master-key`, `backup`, `restore`, plus `audit` and
// `verify-proofs`. Flags and environment are read here and nowhere else. Help texts are in help.ts.
import { existsSync, mkdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../config/config.js';
import type { InitResult } from '../domain/governance/deployment.js';
import type { OpenSeal, SealRecord } from '../barrier/seals.js';
import { commandHelp, usage } from './help.js';
import { fixPorts, isWorker, pinnedPorts, reportListening, runPrimary } from './cluster.js';
import { isOperatorTool, operatorToolCommand } from './operator-tools.js';
import { VERSION } from './version.js';

// Each command imports what it runs when it runs: the server's module graph (fastify, ajv, the
// WebAuthn verifier, every operation) costs ~2 s of CPU to load here, which `init`, `audit` or an
// operator tool such as `whoami` has no use for (those load in 25–550 ms). cluster.ts and
// operator-tools.ts are light and stay static imports.
const storeModule = () => import('../store/index.js');
const masterKeyModule = () => import('../barrier/master-key.js');
const deploymentModule = () => import('../domain/governance/deployment.js');
const sealModules = () => Promise.all([import('../barrier/seals.js'), import('../barrier/pkcs11.js'), import('../barrier/shamir.js'), import('./seal.js')]);

class UsageError extends Error {}

const print = (text: string) => void process.stdout.write(text);

/**
 * `sigil init` without its output: creates the deployment in the configured store under the configured
 * seal (and the master key file for a static seal unless SIGIL_MASTER_KEY gives the key). Exported for
 * the in-process test harness (test/helpers/sigil.ts), which initializes as the command does.
 */
export async function initialize(
  config: Config,
  flags: Record<string, unknown> = {},
): Promise<{ result: InitResult; createdKeyFile: string | undefined; seal: SealRecord['type']; unsealShares: string[] | undefined }> {
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const [{ Store }, { createMasterKeyFile, loadMasterKey, masterKeyPath, parseMasterKey }, { initializeDeployment, isInitialized }] = await Promise.all([
    storeModule(),
    masterKeyModule(),
    deploymentModule(),
  ]);
  const [{ staticSeal }, { ensurePkcs11Key, pkcs11Seal }, { newShamirSeal, presentShares }] = await sealModules();
  const store = await Store.open({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    if (await isInitialized(store.repos)) {
      throw new UsageError(`already initialized: ${store.location} holds a Sigil deployment; nothing was changed`);
    }
    let createdKeyFile = false;
    let custody: { seal: OpenSeal; record: SealRecord };
    let unsealShares: string[] | undefined;
    if (config.seal.type === 'static') {
      let masterKey: Buffer;
      if (config.masterKey) masterKey = parseMasterKey(config.masterKey);
      else if (existsSync(masterKeyPath(config.dataDir))) {
        // A key file without a deployment: an earlier init was interrupted; reuse the key it made.
        masterKey = loadMasterKey(config.dataDir, undefined);
      } else {
        masterKey = createMasterKeyFile(config.dataDir);
        createdKeyFile = true;
      }
      custody = { seal: staticSeal(masterKey), record: { type: 'static' } };
      masterKey.fill(0);
    } else if (config.seal.type === 'pkcs11') {
      // The seal's key is made inside the HSM (non-extractable) unless the token already holds it.
      ensurePkcs11Key(config.seal.pkcs11);
      custody = { seal: pkcs11Seal(config.seal.pkcs11), record: { type: 'pkcs11', keyLabel: config.seal.pkcs11.keyLabel } };
    } else {
      const { shares, threshold } = shamirCounts(flags);
      const made = await newShamirSeal(shares, threshold);
      unsealShares = presentShares(made.shares, operatorKeys(flags));
      custody = { seal: made.seal, record: { type: 'shamir', shares, threshold } };
    }
    let result: InitResult;
    try {
      result = await initializeDeployment(store, custody);
    } finally {
      custody.seal.close();
    }
    return { result, createdKeyFile: createdKeyFile ? masterKeyPath(config.dataDir) : undefined, seal: custody.record.type, unsealShares };
  } finally {
    await store.close();
  }
}

async function init(config: Config, json: boolean, flags: Record<string, unknown> = {}): Promise<InitResult> {
  const { result, createdKeyFile, seal, unsealShares } = await initialize(config, flags);
  if (json) process.stdout.write(JSON.stringify({ ...result, ...(seal !== 'static' ? { seal } : {}), ...(unsealShares ? { unsealShares } : {}) }) + '\n');
  else printCredentials(result, seal === 'static' ? createdKeyFile : seal, unsealShares);
  return result;
}

/** --shares and --threshold of a shamir seal (5 and 3 by default). */
function shamirCounts(flags: Record<string, unknown>): { shares: number; threshold: number } {
  const shares = Number(flags.shares ?? 5);
  const threshold = Number(flags.threshold ?? 3);
  return { shares, threshold };
}

/** --operator-keys: comma-separated P-256 public keys (hex), one per share, to encrypt the shares to. */
export function operatorKeys(flags: Record<string, unknown>): string[] | undefined {
  const v = flags['operator-keys'];
  return typeof v === 'string' && v !== '' ? v.split(',').map((k) => k.trim()) : undefined;
}

function printCredentials(r: InitResult, createdKeyFile: string | undefined, unsealShares?: string[]) {
  const lines = [
    'Sigil initialized. These root credentials are shown once; store the private key safely.',
    `  organizationId   ${r.organizationId}`,
    `  userId           ${r.userId}`,
    `  apiKeyId         ${r.apiKeyId}`,
    `  apiPublicKey     ${r.apiPublicKey}`,
    `  apiPrivateKey    ${r.apiPrivateKey}`,
    `  signerPublicKey  ${r.signerPublicKey}`,
    createdKeyFile === 'pkcs11' || createdKeyFile === 'shamir'
      ? `  seal             ${createdKeyFile}`
      : createdKeyFile
        ? `  master key file  ${createdKeyFile} (mode 600; back it up)`
        : '  master key       from SIGIL_MASTER_KEY',
    ...(unsealShares
      ? ['', 'Unseal shares, shown once and stored nowhere: give one to each operator. Any threshold of them unseals a process.', ...unsealShares.map((s, i) => `  share ${i + 1}  ${s}`)]
      : []),
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

/** The log sink and logger of a serving process (or a cluster's primary); stdout losing its reader is no error. */
async function processLogging(config: Config) {
  const [{ openLogSink }, { makeLogger }] = await Promise.all([import('./log-sink.js'), import('./app.js')]);
  const sink = openLogSink(2, config.logBufferBytes);
  // stdout carries one line (listening …); if nobody reads it any more, that is nothing to crash on.
  process.stdout.on('error', () => {});
  return { sink, logger: makeLogger(config.logLevel, sink) };
}

/** One serving process: the whole of `serve` without --workers, or one worker of a cluster. */
async function serveProcess(config: Config): Promise<void> {
  // The young generation keeps V8's default size. Setting --max-semi-space-size from here, after V8
  // has sized its heap, changed nothing (13.3 MB allocated between scavenges with it, 13.5 MB
  // without, under the bench's signing load). Given on node's command line (64 MB) it did take
  // effect: 28 MB between scavenges, 11 µs of scavenging per signature instead of 13, but each pause
  // 4.8 ms instead of 2.6, which a p99 of ~15 ms cannot spare.
  const { sink, logger } = await processLogging(config);
  const { startApp } = await import('./app.js');
  const app = await startApp(config, logger, sink);
  if (isWorker()) reportListening(app.publicUrl, app.authProxyUrl);
  else {
    if (app.operatorUrl) process.stdout.write(`operator ${app.operatorUrl}\n`);
    process.stdout.write(`listening ${app.publicUrl} ${app.authProxyUrl}\n`);
  }
  let closing = false;
  const shutdown = (reason: string) => {
    if (closing) return;
    closing = true;
    const timeoutMs = config.shutdownTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    // Whatever hangs (a database that does not answer, a log reader that does not read), the process
    // is gone by the deadline.
    setTimeout(() => process.exit(1), timeoutMs).unref();
    // Requests are cut a little before the deadline, leaving time to close the database and write the last lines.
    const drainMs = timeoutMs - Math.min(1000, Math.floor(timeoutMs / 4));
    // The last lines get what time is left, short of the deadline (a stalled reader never takes them).
    const exit = (code: number) => void sink.flush(Math.min(1000, deadline - Date.now() - 100)).then(() => process.exit(code));
    logger.info({ reason, timeoutMs }, 'draining in-flight requests');
    const cut = ({ forced }: { forced: boolean }) => {
      if (forced) logger.error({ timeoutMs }, 'shutdown timeout: connections with requests in flight were closed');
    };
    app.close(drainMs, cut).then(
      ({ forced }) => {
        if (!forced) logger.info('stopped');
        exit(forced ? 1 : 0);
      },
      (err) => {
        logger.error({ err }, 'shutdown failed');
        exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  // A worker whose primary is gone (killed) has nobody to restart or stop it: it drains and exits.
  if (isWorker()) process.on('disconnect', () => shutdown('primary gone'));
}

/** The primary of `serve --workers N`: checks the deployment once, then runs the cluster. */
async function serveCluster(config: Config): Promise<void> {
  const { logger } = await processLogging(config);
  if (config.seal.type === 'shamir') {
    throw new UsageError('the shamir seal is unsealed one process at a time through its operator port: run several sigil serve processes on one PostgreSQL instead of --workers');
  }
  const [{ Store }, { loadDeployment }, [, , , { withAutomaticSeal }]] = await Promise.all([storeModule(), deploymentModule(), sealModules()]);
  // Migrations run here, once, rather than in N workers racing; a wrong key fails here, once.
  const store = await Store.open({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    await withAutomaticSeal(config, (seal) => loadDeployment(store.repos, seal));
  } finally {
    await store.close();
  }
  logger.info({ workers: config.workers, store: store.dialect }, 'starting workers');
  runPrimary({
    workerEnv: await fixPorts(config.host, config.port, config.authProxyPort, config.framesPort),
    workers: config.workers,
    shutdownTimeoutMs: config.shutdownTimeoutMs,
    logger,
    onListening: (publicUrl, authProxyUrl) => void process.stdout.write(`listening ${publicUrl} ${authProxyUrl}\n`),
  });
}

async function serve(config: Config): Promise<void> {
  if (config.workers > 1 && !isWorker()) await serveCluster(config);
  else await serveProcess(config);
}

async function start(config: Config): Promise<void> {
  const [{ Store }, { isInitialized }] = await Promise.all([storeModule(), deploymentModule()]);
  const store = await Store.open({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  const initialized = await isInitialized(store.repos);
  await store.close();
  if (!initialized) await init(config, false);
  await serve(config);
}

function parse(command: string | undefined, rest: string[]) {
  try {
    return parseArgs({
      args: rest,
      allowPositionals: command === 'audit' || command === 'help' || command === 'operator',
      options: {
        'data-dir': { type: 'string' },
        port: { type: 'string' },
        'auth-proxy-port': { type: 'string' },
        'frames-port': { type: 'string' },
        host: { type: 'string' },
        'log-level': { type: 'string' },
        workers: { type: 'string' },
        json: { type: 'boolean' },
        activity: { type: 'string' },
        'boot-proof': { type: 'string' },
        signer: { type: 'string' },
        out: { type: 'string' },
        from: { type: 'string' },
        file: { type: 'string' },
        force: { type: 'boolean' },
        'keep-old': { type: 'boolean' },
        'operator-port': { type: 'string' },
        shares: { type: 'string' },
        url: { type: 'string' },
        reset: { type: 'boolean' },
        'operator-keys': { type: 'string' },
        checkpoints: { type: 'string' },
        'key-file': { type: 'string' },
        threshold: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    });
  } catch (err) {
    const help = (command && commandHelp(command)) ?? usage(VERSION);
    throw new UsageError(`${(err as Error).message}\n\n${help}`);
  }
}

export async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  // proxy-config has options of its own (src/cli/proxy-config.ts).
  if (command === 'proxy-config' && !rest.includes('--help') && !rest.includes('-h')) {
    const { proxyConfigCommand } = await import('./proxy-config.js');
    return proxyConfigCommand(rest, (t) => print(`${t}\n`));
  }
  // keys, request, whoami, activities: API clients with options and help of their own (src/cli/operator-tools.ts).
  if (isOperatorTool(command)) return operatorToolCommand(command, rest, print);
  const { values, positionals } = parse(command, rest);
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    const topic = command === 'help' ? positionals[0] : undefined;
    if (topic === undefined) return print(usage(VERSION));
    const help = commandHelp(topic);
    if (!help) throw new UsageError(`no command "${topic}"\n\n${usage(VERSION)}`);
    return print(help);
  }
  if (values.help) {
    const help = commandHelp(command);
    if (!help) throw new UsageError(`unknown command "${command}"\n\n${usage(VERSION)}`);
    return print(help);
  }
  const config = loadConfig(values, process.env);
  // A cluster worker runs the same command line as its primary; all it has to do is serve, on the
  // ports the primary fixed (src/cli/cluster.ts).
  if (isWorker()) return serveProcess({ ...config, ...pinnedPorts(process.env) });
  switch (command) {
    case 'init':
      await init(config, values.json === true, values);
      return;
    case 'serve':
      await serve(config);
      return;
    case 'start':
      await start(config);
      return;
    case 'config':
      print((await import('./show-config.js')).showConfig(config));
      return;
    case 'rotate-master-key':
      await (await import('./rotate-master-key.js')).rotateMasterKey(config, { keepOld: values['keep-old'] === true, newKey: process.env.SIGIL_NEW_MASTER_KEY || undefined, print });
      return;
    case 'backup':
      await (await import('./backup.js')).backupCommand(config, { out: values.out, force: values.force === true, print });
      return;
    case 'restore':
      await (await import('./backup.js')).restoreCommand(config, { from: values.from, force: values.force === true, print });
      return;
    case 'verify-proofs':
      process.exitCode = (await import('./verify-proofs.js')).verifyProofsCommand(values);
      return;
    case 'audit': {
      const [sub] = positionals;
      const { auditExport, auditVerify } = await import('./audit.js');
      if (sub === 'export') {
        const n = await auditExport(config, values.out);
        if (values.out) process.stderr.write(`exported ${n} audit lines to ${values.out}\n`);
        return;
      }
      if (sub === 'verify') {
        process.exitCode = await auditVerify(config, values.file, values.checkpoints);
        return;
      }
      throw new UsageError(`unknown audit command "${sub ?? ''}": expected export or verify\n\n${commandHelp('audit')}`);
    }
    case 'operator':
      if (positionals[0] === 'migrate-seal' || positionals[0] === 'rekey') {
        await (await import('./migrate-seal.js')).migrateSeal(config, { rekey: positionals[0] === 'rekey', shares: values.shares, threshold: values.threshold, operatorKeys: operatorKeys(values), keepOld: values['keep-old'] === true, print });
        return;
      }
      await (await import('./operator-seal.js')).operatorCommand(config, positionals[0], { keyFile: values['key-file'], url: values.url, reset: values.reset === true, json: values.json === true, print });
      return;
    case 'version':
      process.stdout.write(`${VERSION}\n`);
      return;
    default:
      throw new UsageError(`unknown command "${command}"\n\n${usage(VERSION)}`);
  }
}
