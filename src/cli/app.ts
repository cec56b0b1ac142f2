// Composition root of a serving process: opens the store, unseals the barrier, loads the deployment
// signer, wires the registry, pipeline and both HTTP servers, and closes them in order on shutdown.
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pino, type Logger } from 'pino';
import { decodedViewOf } from '../domain/keys/decoded-approvals.js';
import { ActivityRecords } from '../activity/reader.js';
import { WaitingActivities } from '../activity/waiting.js';
import { evmFeeCapSetting, evmRpcSetting, solanaCluster, solanaRpcSetting, type Config } from '../config/config.js';
import { Broadcasting } from '../domain/keys/broadcasting.js';
import { EvmSimulator, TransactionSimulators } from '../domain/keys/simulation.js';
import { SolanaSends } from '../domain/keys/solana-sends.js';
import { SolanaSimulator } from '../domain/keys/solana-simulation.js';
import { SendRecorder } from '../domain/keys/send-tracking.js';
import { Resealer } from '../domain/keys/reseal.js';
import { newId } from '../domain/ids.js';
import type { OperationContext, Services } from '../domain/context.js';
import { ProcessCustody, urlOf, type Serving, type ServingOptions } from './custody.js';
import { userRecordOf } from '../domain/identity/users.js';
import { AppProofKey } from '../crypto/app-proofs.js';
import { OidcTokenVerifier } from '../auth/oidc.js';
import { recordBootProof } from '../domain/keys/app-proofs.js';
import { authProxyServer } from '../http/auth-proxy.js';
import { configureQuotas } from '../domain/governance/quotas.js';
import { makeDelivery } from '../delivery/delivery.js';
import { emailEventRecorder } from '../domain/identity/email-events.js';
import { WebhookDestinations } from '../delivery/webhook-http.js';
import { WebhookSigningKey } from '../crypto/webhook-signature.js';
import { WebhookDispatcher } from '../domain/governance/webhook-dispatcher.js';
import { publicApiServer } from '../http/public-api.js';
import { frameUrls, framesServer } from '../http/frames.js';
import { Metrics } from '../http/metrics.js';
import { AUDIT_KEY_PURPOSE, auditSealer } from '../audit/record.js';
import { allSinks, fileSink, httpSink, syslogSink } from '../audit/sinks.js';
import { openFilesLimit, type TransportLimits } from '../http/transport.js';
import { Registry } from '../operations/registry.js';
import { Pipeline } from '../pipeline/pipeline.js';
import { Store } from '../store/index.js';
import { drainServers } from './drain.js';
import type { LogSink } from './log-sink.js';
import { VERSION } from './version.js';

export function makeLogger(level: string, sink: LogSink): Logger {
  // Logs go to stderr as JSON lines (through the non-blocking, bounded sink of log-sink.ts); stdout
  // carries only what the CLI prints for people and scripts.
  // pid tells apart the workers of `serve --workers N`, which share one stderr.
  return pino({ level, base: { service: 'sigil', pid: process.pid } }, sink);
}

/** Both servers' transport limits; a warning when their connection caps exceed the open-files limit. */
function transportLimits(config: Config, logger: Logger): TransportLimits {
  const files = openFilesLimit();
  // Three servers, each up to maxConnections, plus database connections and files.
  const needed = 3 * config.maxConnections + 256;
  if (files !== undefined && files < needed) {
    logger.warn({ openFilesLimit: files, maxConnections: config.maxConnections }, `the open-files limit is below ${needed}: raise it (ulimit -n, LimitNOFILE) or lower SIGIL_MAX_CONNECTIONS`);
  }
  const { bodyLimitBytes, requestTimeoutMs, headersTimeoutMs, keepAliveTimeoutMs, maxConnections } = config;
  return { bodyLimitBytes, requestTimeoutMs, headersTimeoutMs, keepAliveTimeoutMs, maxConnections };
}

export interface RunningApp {
  publicUrl: string;
  authProxyUrl: string;
  /** The operator server (seal status, unseal), when it runs. */
  operatorUrl: string | undefined;
  /** The request path itself, for driving it without HTTP (bench/inprocess.mjs). */
  pipeline: Pipeline;
  /**
   * Drains both servers (at most `timeoutMs`, then cuts what is left) and closes the database;
   * `onDrained` hears the outcome as soon as the servers are closed, before the database is.
   */
  close(timeoutMs?: number, onDrained?: (drained: { forced: boolean }) => void): Promise<{ forced: boolean }>;
}


/**
 * TESTS ONLY (Config.testVelocityClockFile): velocity windows read the real clock plus the offset
 * the file holds, re-read each time, so a test moves time without sleeping. Loudly logged.
 */
function testVelocityClock(config: Config, logger: Logger): (() => number) | undefined {
  const file = config.testVelocityClockFile;
  if (!file) return undefined;
  logger.warn({ file }, 'TEST CLOCK: velocity control windows read their time from SIGIL_TEST_VELOCITY_CLOCK_FILE; never run a deployment like this');
  return () => {
    const offset = Number(readFileSync(file, 'utf8').trim() || '0');
    return Date.now() + (Number.isFinite(offset) ? offset : 0);
  };
}

/**
 * Builds and starts the serving app for an unsealed deployment on `ports` (0: ephemeral). `sealed`
 * turns every request away with 503 while the process seals (src/cli/custody.ts).
 */
export async function openServing({ config, logger, sink, store, deployment, ports, sealed, auditSink }: ServingOptions): Promise<Serving> {
  // Audit entries are sealed into this process's stream; its signed heads are also logged, a copy
  // of each checkpoint outside the database.
  store.attachAudit(
    auditSealer(deployment.barrier.deriveKey(AUDIT_KEY_PURPOSE), deployment.signer, (c) => {
      logger.info({ audit: { stream: c.stream, seq: c.seq, mac: c.mac, signature: c.signature, time: c.created_at } }, 'audit checkpoint');
      try {
        auditSink?.write(c);
      } catch (err) {
        logger.error({ err }, 'the audit sink refused a checkpoint');
      }
    }),
    { checkpointEntries: config.auditCheckpointEntries },
  );
  // Fail closed (SIGIL_AUDIT_SINK_FAIL_CLOSED): while no sink accepts checkpoints, nothing is done
  // that the log outside the database could not vouch for.
  const sinkRefusal =
    config.auditSinkFailClosed && auditSink
      ? () => (auditSink.accepting() ? undefined : 'no audit sink accepts checkpoints (SIGIL_AUDIT_SINK_FAIL_CLOSED): requests are refused until one does')
      : undefined;
  configureQuotas(config.quotas);
  // Webhooks: one signing key per deployment, derived from its data key, so every
  // process signs alike and GET /.well-known/sigil.json publishes it; a dispatcher per process.
  const webhookKey = new WebhookSigningKey(deployment.barrier.deriveKey('webhook-signing-key'));
  const webhookDestinations = new WebhookDestinations(config.webhooks.allowedHosts);
  const dispatcher = new WebhookDispatcher({
    repos: store.background,
    key: webhookKey,
    destinations: webhookDestinations,
    settings: config.webhooks,
    log: (fields, message) => logger.warn(fields, message),
  });
  // Secrets sealed before per-organization keys, or in the first additional-data format, are sealed
  // again under their organization's key, in the background (docs/operator-guide.md "Custody").
  const resealer = new Resealer({
    barrier: deployment.barrier,
    repos: store.background,
    transaction: (fn) => store.transaction(fn),
    log: (level, fields, message) => logger[level](fields, message),
  });
  const registry = new Registry();
  registry.compileSchemas();
  // Voters' user records, one per user, kept by the read cache while the organization is unchanged.
  const waiting = new WaitingActivities((type) => registry.byType.get(type), deployment.barrier);
  const records = new ActivityRecords(store.repos, async (repos, orgId, ids) => {
    const rendered = await Promise.all(
      ids.map((id) => repos.memo(orgId, `user-record:${id}`, () => userRecordOf(repos, orgId, id))),
    );
    return new Map(rendered.filter((u) => u !== undefined).map((u) => [u.userId, u]));
  }, (row, votes) => decodedViewOf(store.repos, deployment.barrier, row, votes),
  // Reads show canApprove only to users a vote would count from (docs/policies.md "Approving what you see").
  (row, votes, viewer) => waiting.mayVote(row, votes, viewer.request as OperationContext));
  // Every chain's sends record their statuses, and enqueue their webhook events, through one recorder.
  const sendRecorder = new SendRecorder({ repos: store.repos, transaction: (fn) => store.transaction(fn), wakeWebhooks: () => dispatcher.wake() });
  const services: Services = {
    barrier: deployment.barrier,
    signer: deployment.signer,
    activities: {
      get: (org, id, viewer) => records.get(org, id, { userId: viewer.caller.user.id, request: viewer }),
      list: (org, opts, viewer) => records.list(org, opts, { userId: viewer.caller.user.id, request: viewer }),
    },
    settings: { importBundleTtlMs: config.importBundleTtlMs, webauthn: { rpId: config.webauthnRpId, origins: config.webauthnOrigins }, oauth2Endpoints: config.oauth2Endpoints, oidcSelfIssuer: config.oidcSelfIssuer, dashboardUrl: config.dashboardUrl, invitationTtlMs: config.invitationTtlMs },
    appProofKey: new AppProofKey(),
    oidc: new OidcTokenVerifier({ issuers: config.oidcIssuers, selfIssuer: config.oidcSelfIssuer, signerPublicKey: deployment.signer.publicKeyUncompressed }),
    delivery: makeDelivery(config, logger, emailEventRecorder(store.repos)),
    // EVM broadcasting; its tracker polls the chains' nodes for the transactions still in flight,
    // resuming after a restart from what the database holds.
    broadcasting: new Broadcasting({
      repos: store.repos,
      background: store.background,
      recorder: sendRecorder,
      rpcUrls: config.evmRpcUrls,
      rpcSetting: evmRpcSetting,
      assets: config.evmAssets,
      pollIntervalMs: config.evmPollIntervalMs,
      feeCap: (caip2, which) => evmFeeCapSetting(config.evmFeeCaps, caip2, which),
      rawSendTtlMs: config.evmRawSendTtlSeconds * 1000,
      rpcMaxResponseBytes: config.evmRpcMaxResponseBytes,
      newId,
      log: logger,
    }),
    webhooks: {
      checkDestination: async (url) => void (await webhookDestinations.check(url)),
      wake: () => dispatcher.wake(),
    },
  };
  // Simulation before approval (docs/policies.md "Simulation before approval"): one simulator per
  // transaction type, each on the RPCs its chain broadcasts through.
  services.simulators = new TransactionSimulators();
  if (config.evmSimulationMethod !== 'off') {
    services.simulators.register(
      new EvmSimulator({
        rpcUrls: config.evmRpcUrls,
        rpcSetting: evmRpcSetting,
        rpcMaxResponseBytes: config.evmRpcMaxResponseBytes,
        timeoutMs: config.evmSimulationTimeoutMs,
        method: config.evmSimulationMethod,
      }),
    );
  }
  // Registered with no cluster configured too: its transactions are then NOT_SIMULATED with the
  // reason (no node asked), so a policy reading simulation.* refuses instead of not applying.
  services.simulators.register(
    new SolanaSimulator({
      rpcUrls: config.solanaRpcUrls,
      simulationCluster: config.solanaSimulationCluster,
      cluster: solanaCluster,
      rpcSetting: solanaRpcSetting,
      rpcMaxResponseBytes: config.evmRpcMaxResponseBytes,
    }),
  );
  // Solana broadcasting (docs/broadcasting.md "Solana"): its statuses and webhook events go through the same table and recorder as the EVM sends'.
  services.solanaSends = new SolanaSends({
    repos: store.repos,
    background: store.background,
    rpcUrls: config.solanaRpcUrls,
    cluster: solanaCluster,
    rpcSetting: solanaRpcSetting,
    recorder: sendRecorder,
    pollIntervalMs: config.evmPollIntervalMs,
    rpcMaxResponseBytes: config.evmRpcMaxResponseBytes,
    newId,
    log: logger,
  });
  await recordBootProof(store.repos, services.appProofKey, deployment.signer, VERSION, Date.now());
  const pipeline = new Pipeline({ store, registry, config, services, records, velocityClock: testVelocityClock(config, logger) });
  const ready = async () => {
    if (sealed()) throw new Error('sealed');
    await store.ping();
  };
  const transport = transportLimits(config, logger);
  const metrics = new Metrics();
  metrics.addCounter('sigil_database_round_trips_total', 'Statements sent to PostgreSQL, each a round trip (0 on the embedded SQLite store).', () => store.stats.roundTrips);
  // Units per group (the second over the first): how many finished requests share each commit, and
  // so each sync of the log (SQLite) or round trip (PostgreSQL).
  metrics.addCounter('sigil_commit_groups_total', 'Grouped commits of finished requests this process made.', () => store.commitGroups.groups);
  metrics.addCounter('sigil_commit_group_units_total', 'Finished requests recorded by those grouped commits.', () => store.commitGroups.units);
  // How long the event loop was kept from other requests at worst (docs/design.md: nothing blocks it for
  // more than a few milliseconds); resets when read, so each scrape covers the interval since the last.
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  metrics.addGauge('sigil_event_loop_delay_max_seconds', 'Longest event-loop stall since the previous scrape.', () => {
    const max = loopDelay.max / 1e9;
    loopDelay.reset();
    return Number.isFinite(max) ? max : 0;
  });
  metrics.addCounter('sigil_webhook_deliveries_total', 'Webhook events this process delivered (the endpoint answered 2xx).', () => dispatcher.stats.delivered);
  metrics.addCounter('sigil_webhook_delivery_failures_total', 'Webhook delivery attempts of this process that failed (each is retried until the attempts run out).', () => dispatcher.stats.failedAttempts);
  metrics.addCounter('sigil_webhook_deliveries_abandoned_total', 'Webhook events this process gave up on (refused by the endpoint, or out of attempts).', () => dispatcher.stats.abandoned);
  metrics.addGauge('sigil_webhook_outbox_pending', 'Webhook events waiting in the outbox (all processes).', () => dispatcher.stats.pending);
  metrics.addGauge('sigil_webhook_outbox_oldest_age_seconds', 'Age of the oldest webhook event waiting in the outbox (0 when none waits).', () =>
    dispatcher.stats.oldestPendingAt === null ? 0 : Math.max(0, (Date.now() - dispatcher.stats.oldestPendingAt) / 1000),
  );
  metrics.addCounter('sigil_log_lines_dropped_total', 'Log lines dropped because stderr was not read fast enough (SIGIL_LOG_BUFFER_BYTES) or not at all.', () => sink?.dropped ?? 0);
  let frames: Record<string, string> | undefined;
  const api = await publicApiServer({
    frameUrls: () => frames,
    metrics,
    pipeline,
    logger,
    transport,
    signerPublicKey: deployment.signer.publicKeyUncompressedHex,
    signerKey: { sealedBy: config.seal.type, storedIn: 'database' },
    webhookKey,
    version: VERSION,
    ready,
    trustedProxies: config.trustedProxies,
    sealed,
    unavailable: sinkRefusal,
    invitations: { store, services },
    registry,
  });
  const proxy = await authProxyServer({
    logger,
    transport,
    ready,
    pipeline,
    repos: store.repos,
    services,
    trustedProxies: config.trustedProxies,
    sealed,
    unavailable: sinkRefusal,
  });
  const framesApp = await framesServer({
    logger,
    transport,
    ready,
    signerPublicKey: deployment.signer.publicKeyUncompressedHex,
    allowedOrigins: config.webauthnOrigins,
    trustedProxies: config.trustedProxies,
  });
  // Everything above is built before the ports are taken, so an unseal hands the ports from the
  // sealed servers to these in the time two listens take.
  const listening = { publicUrl: '', authProxyUrl: '', framesUrl: '' };
  return {
    pipeline,
    get publicUrl() {
      return listening.publicUrl;
    },
    get authProxyUrl() {
      return listening.authProxyUrl;
    },
    get framesUrl() {
      return listening.framesUrl;
    },
    listen: async () => {
      await api.listen({ host: config.host, port: ports.port });
      await proxy.listen({ host: config.host, port: ports.authProxyPort });
      await framesApp.listen({ host: config.host, port: ports.framesPort });
      listening.publicUrl = urlOf(api, config.host);
      listening.authProxyUrl = urlOf(proxy, config.host);
      listening.framesUrl = urlOf(framesApp, config.host);
      const framesBase = config.framesUrl ?? listening.framesUrl;
      // A frame sharing an origin with the app embedding it would hand that app its storage and DOM.
      if (config.webauthnOrigins.includes(new URL(framesBase).origin)) {
        throw new Error(`the frames' origin ${new URL(framesBase).origin} is also an allowed app origin (SIGIL_WEBAUTHN_ORIGINS): serve the frames from an origin of their own`);
      }
      frames = frameUrls(new URL(framesBase).origin);
      dispatcher.start();
      logger.info({ store: store.dialect, location: store.location }, 'sigil started');
      services.broadcasting?.tracker.start();
      services.solanaSends?.tracker.start();
      resealer.start();
    },
    close: async (timeoutMs, onDrained) => {
      // Stop accepting, let in-flight requests finish; the database stays open.
      const drained = await drainServers([api, proxy, framesApp], timeoutMs);
      onDrained?.(drained);
      await services.broadcasting?.tracker.stop();
      await services.solanaSends?.tracker.stop();
      // Attempts in flight finish (each has its deadline); what is left waits in the outbox.
      await dispatcher.stop();
      await resealer.stop();
      // The stream's last entries get their checkpoint while the key that signs it is still here.
      await store.checkpoint().catch(() => undefined);
      return drained;
    },
  };
}

export async function startApp(config: Config, logger: Logger, sink?: LogSink): Promise<RunningApp> {
  const store = await Store.open({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  const sinkError = (err: unknown) => logger.error({ err }, 'an audit sink refused a checkpoint');
  const auditSink = allSinks([
    ...(config.auditSinkFile ? [fileSink(config.auditSinkFile)] : []),
    ...(config.auditSinkHttp ? [httpSink(config.auditSinkHttp, sinkError)] : []),
    ...(config.auditSinkSyslog ? [syslogSink(config.auditSinkSyslog, sinkError)] : []),
  ]);
  try {
    const custody = new ProcessCustody({ config, logger, sink, store, open: openServing, auditSink });
    await custody.start();
    return {
      get pipeline() {
        return custody.pipeline();
      },
      publicUrl: custody.publicUrl,
      authProxyUrl: custody.authProxyUrl,
      operatorUrl: custody.operatorUrl,
      close: async (timeoutMs = config.shutdownTimeoutMs, onDrained) => {
        const drained = await custody.close(timeoutMs, onDrained);
        // The store's last checkpoint still reaches the sink.
        await store.close();
        await auditSink?.close();
        return drained;
      },
    };
  } catch (err) {
    await store.close();
    await auditSink?.close();
    throw err;
  }
}
