// A serving process's custody of the deployment's key (docs/operator-guide.md "Custody"; docs/design.md "Security model"):
// it is either sealed, holding no key and answering every request with 503 `sealed`, or unsealed,
// serving through the full app (src/cli/app.ts openServing). Static and pkcs11 seals open by
// themselves at start; a shamir seal waits on the operator server for its shares. Sealing (an
// operator's emergency seal, seen through the deployment's seal row) turns new requests away, lets
// those in flight finish, stops the app and overwrites the data key in memory; the same ports then
// answer 503 again until the next unseal.
import type { Logger } from 'pino';
import { performance } from 'node:perf_hooks';
import { appendAudit, sealEntry } from '../audit/record.js';
import type { AuditSink } from '../audit/sinks.js';
import { SealError, type SealRecord } from '../barrier/seals.js';
import { ShareCollector } from '../barrier/shamir.js';
import type { Config } from '../config/config.js';
import { openDeployment, readCustody, unwrapWith, type LoadedDeployment } from '../domain/governance/deployment.js';
import { emergencySealState } from '../domain/governance/seal-state.js';
import { SigilError } from '../errors/errors.js';
import { operatorServer, type OperatorControls, type SealStatus } from '../http/operator.js';
import { baseServer } from '../http/public-api.js';
import type { Store } from '../store/index.js';
import { drainServers } from './drain.js';
import type { LogSink } from './log-sink.js';
import { automaticSeal } from './seal.js';
import type { Pipeline } from '../pipeline/pipeline.js';

/** The full serving app over an unsealed deployment: both servers, the pipeline and background work (src/cli/app.ts). */
export interface Serving {
  pipeline: Pipeline;
  publicUrl: string;
  authProxyUrl: string;
  /** Where the frames server listens (src/http/frames.ts). */
  framesUrl: string;
  /** Takes the ports and starts background work. */
  listen(): Promise<void>;
  /** Drains both servers and stops background work; the store stays open (it outlives a seal). */
  close(timeoutMs: number, onDrained?: (drained: { forced: boolean }) => void): Promise<{ forced: boolean }>;
}

export interface ServingOptions {
  config: Config;
  logger: Logger;
  sink: LogSink | undefined;
  store: Store;
  deployment: LoadedDeployment;
  /** Where to listen (0: ephemeral, fixed after the first start so a seal and unseal keep the ports). */
  ports: { port: number; authProxyPort: number; framesPort: number };
  /** True while the process seals: the servers turn new requests away with 503. */
  sealed: () => boolean;
  /** Where checkpoints are copied outside the database (src/audit/sinks.ts), if configured. */
  auditSink?: AuditSink;
}

type OpenServing = (opts: ServingOptions) => Promise<Serving>;

type Server = Awaited<ReturnType<typeof baseServer>>;

function portOf(url: string): number {
  return Number(new URL(url).port);
}

export function urlOf(app: { server: { address(): unknown } }, host: string): string {
  const addr = app.server.address() as { port: number } | string | null;
  if (!addr || typeof addr === 'string') throw new Error('server has no TCP address');
  const h = host.includes(':') ? `[${host}]` : host;
  return `http://${h === '0.0.0.0' ? '127.0.0.1' : h}:${addr.port}`;
}

export class ProcessCustody implements OperatorControls {
  private readonly config: Config;
  private readonly logger: Logger;
  private readonly sink: LogSink | undefined;
  private readonly store: Store;
  private readonly openServing: OpenServing;
  private record!: SealRecord;
  private collector: ShareCollector | undefined;
  private serving: Serving | undefined;
  private deployment: LoadedDeployment | undefined;
  private shell: Server[] | undefined;
  private operator: Server | undefined;
  private ports: { port: number; authProxyPort: number; framesPort: number };
  /** True from the moment a seal begins: the serving app refuses new requests while it drains. */
  private sealing = false;
  /** The emergency seal generation this process last acted on (src/domain/governance/seal-state.ts). */
  private seenGeneration = 0;
  private watchTimer: NodeJS.Timeout | undefined;
  /** Seals and unseals run one at a time. */
  private transition: Promise<unknown> = Promise.resolve();
  private closed = false;
  publicUrl = '';
  authProxyUrl = '';
  operatorUrl: string | undefined;

  private readonly auditSink: AuditSink | undefined;

  constructor(opts: { config: Config; logger: Logger; sink: LogSink | undefined; store: Store; open: OpenServing; auditSink?: AuditSink }) {
    this.auditSink = opts.auditSink;
    this.config = opts.config;
    this.logger = opts.logger;
    this.sink = opts.sink;
    this.store = opts.store;
    this.openServing = opts.open;
    this.ports = { port: opts.config.port, authProxyPort: opts.config.authProxyPort, framesPort: opts.config.framesPort };
  }

  /** Opens by itself when the seal allows and no emergency seal stands; otherwise starts sealed. */
  async start(): Promise<void> {
    const { record } = await readCustody(this.store.repos);
    if (record.type !== this.config.seal.type) {
      throw new SealError(`this deployment is sealed by the ${record.type} seal, but SIGIL_SEAL is ${this.config.seal.type}`);
    }
    this.record = record;
    if (record.type === 'shamir') this.collector = new ShareCollector(record.threshold);
    const emergency = await emergencySealState(this.store.repos);
    this.seenGeneration = emergency.generation;
    if (record.type !== 'shamir' && !emergency.sealed) {
      // A wrong key, PIN, module or a tampered wrapped key stops the start here.
      await this.openAutomatically();
    } else {
      await this.openShell();
      this.logger.warn({ seal: record.type, emergency: emergency.sealed }, 'sigil started sealed: it answers 503 until an operator unseals it');
    }
    if (this.config.operatorPort !== undefined) {
      const operator = await operatorServer({ logger: this.logger, controls: this });
      await operator.listen({ host: this.config.operatorHost, port: this.config.operatorPort });
      this.operator = operator;
      this.operatorUrl = urlOf(operator, this.config.operatorHost);
    }
    this.watch();
  }

  get isSealed(): boolean {
    return this.serving === undefined || this.sealing;
  }

  pipeline() {
    if (!this.serving) throw new SigilError('SEALED', 'Sigil is sealed');
    return this.serving.pipeline;
  }

  status(): SealStatus {
    return { sealed: this.isSealed, type: this.record.type, ...(this.collector?.progress ?? { threshold: 0, progress: 0 }) };
  }

  async unseal(request: { key?: string; reset?: boolean }): Promise<SealStatus> {
    if (!this.collector) {
      throw new SigilError('REQUEST_INVALID', `this deployment's ${this.record.type} seal opens by itself; there are no shares to give`);
    }
    if (request.reset) {
      this.collector.reset();
      return this.status();
    }
    if (!this.isSealed) return this.status();
    const { wrapped } = await readCustody(this.store.repos);
    let dataKey: Buffer | undefined;
    try {
      dataKey = (await this.collector.submit(request.key ?? '', wrapped)).dataKey;
    } catch (err) {
      if (err instanceof SealError) throw new SigilError('REQUEST_INVALID', err.message);
      throw err;
    }
    if (dataKey) {
      const key = dataKey;
      await this.serially(async () => {
        // The operator's shares also lift a standing emergency seal, for this process.
        this.seenGeneration = (await emergencySealState(this.store.repos)).generation;
        await this.open(key, undefined, 'operator shares');
      });
    }
    return this.status();
  }

  /** Seals this process: new requests get 503, those in flight finish, the key is overwritten. */
  seal(reason: string, by?: string): Promise<void> {
    return this.serially(async () => {
      if (!this.serving) return;
      const started = performance.now();
      this.sealing = true;
      try {
        // Recorded while the audit key is still here; the drain below checkpoints it.
        await this.audit('sealed', by);
        await this.serving.close(this.config.shutdownTimeoutMs);
      } finally {
        this.deployment?.barrier.zero();
        this.deployment = undefined;
        this.serving = undefined;
      }
      await this.openShell();
      this.sealing = false;
      this.logger.warn({ reason, sealMs: Math.round(performance.now() - started) }, 'sealed: the data key is gone from this process');
    });
  }

  async close(timeoutMs: number, onDrained?: (d: { forced: boolean }) => void): Promise<{ forced: boolean }> {
    this.closed = true;
    if (this.watchTimer) clearTimeout(this.watchTimer);
    await this.transition.catch(() => undefined);
    const operator = this.operator ? [this.operator] : [];
    if (this.serving) {
      const drained = await this.serving.close(timeoutMs, onDrained);
      this.deployment?.barrier.zero();
      await drainServers(operator, 1000);
      return drained;
    }
    const drained = await drainServers([...(this.shell ?? []), ...operator], timeoutMs);
    onDrained?.(drained);
    return drained;
  }

  private serially<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.transition.then(fn, fn);
    this.transition = next.catch(() => undefined);
    return next;
  }

  private async openAutomatically(by?: string): Promise<void> {
    const started = performance.now();
    const seal = automaticSeal(this.config);
    let dataKey: Buffer;
    try {
      dataKey = await unwrapWith(this.store.repos, seal);
    } finally {
      seal.close();
    }
    await this.open(dataKey, started, by);
  }

  private async audit(event: 'sealed' | 'unsealed', by: string | undefined): Promise<void> {
    const entry = sealEntry({ event, seal: this.record.type, by, generation: this.seenGeneration, time: Date.now() });
    await this.store.transaction(async (repos) => appendAudit(repos, entry));
  }

  private async open(dataKey: Buffer, started = performance.now(), by?: string): Promise<void> {
    let deployment: LoadedDeployment;
    try {
      deployment = await openDeployment(this.store.repos, dataKey);
    } finally {
      dataKey.fill(0);
    }
    this.deployment = deployment;
    const serving = await this.openServing({ config: this.config, logger: this.logger, sink: this.sink, store: this.store, deployment, ports: this.ports, sealed: () => this.sealing, auditSink: this.auditSink });
    if (this.shell) {
      // Connections are refused for the moment between the two listens; a client retries.
      await drainServers(this.shell, 1000);
      this.shell = undefined;
    }
    await serving.listen();
    this.serving = serving;
    this.fixPorts(this.serving.publicUrl, this.serving.authProxyUrl);
    // The frames keep their port across a seal too (the sealed shell does not serve them).
    this.ports.framesPort = portOf(this.serving.framesUrl);
    await this.audit('unsealed', by);
    this.logger.info({ seal: this.record.type, unsealMs: Math.round(performance.now() - started) }, 'unsealed');
  }

  /** The sealed servers: the same ports, every request but /healthz refused with 503 `sealed`. */
  private async openShell(): Promise<void> {
    const { bodyLimitBytes, requestTimeoutMs, headersTimeoutMs, keepAliveTimeoutMs, maxConnections } = this.config;
    const transport = { bodyLimitBytes, requestTimeoutMs, headersTimeoutMs, keepAliveTimeoutMs, maxConnections };
    const make = () =>
      baseServer({ logger: this.logger, transport, ready: () => Promise.reject(new Error('sealed')), trustedProxies: this.config.trustedProxies, sealed: () => true });
    const api = await make();
    const proxy = await make();
    await api.listen({ host: this.config.host, port: this.ports.port });
    await proxy.listen({ host: this.config.host, port: this.ports.authProxyPort });
    this.shell = [api, proxy];
    this.fixPorts(urlOf(api, this.config.host), urlOf(proxy, this.config.host));
  }

  private fixPorts(publicUrl: string, authProxyUrl: string): void {
    this.publicUrl = publicUrl;
    this.authProxyUrl = authProxyUrl;
    this.ports = { ...this.ports, port: portOf(publicUrl), authProxyPort: portOf(authProxyUrl) };
  }

  /**
   * Follows the deployment's seal row: a new emergency seal seals this process; once an operator
   * lifts it, an automatic seal (static, pkcs11) opens again by itself.
   */
  private watch(): void {
    const tick = async () => {
      try {
        // Read over the background pool: a once-a-second poll has no place among the request path's
        // connections (nor in the round trips /metrics counts for them).
        const state = await emergencySealState(this.store.background);
        if (state.sealed && state.generation > this.seenGeneration) {
          this.seenGeneration = state.generation;
          await this.seal(`emergency seal by ${state.by ?? 'an operator'}`, state.by);
        } else if (!state.sealed && this.serving === undefined && !this.collector) {
          this.seenGeneration = state.generation;
          await this.serially(() => (this.serving ? Promise.resolve() : this.openAutomatically(state.by)));
        }
      } catch (err) {
        this.logger.error({ err }, 'reading the deployment seal state failed');
      }
      if (!this.closed) {
        this.watchTimer = setTimeout(() => void tick(), this.config.sealWatchMs);
        this.watchTimer.unref();
      }
    };
    this.watchTimer = setTimeout(() => void tick(), this.config.sealWatchMs);
    this.watchTimer.unref();
  }
}
