// The public API server (Fastify): POST /public/v1/{submit,query}/<operation> handed to the one
// pipeline with the raw body bytes, CORS for every header the SDKs send (docs/reference/api.md "Transport"),
// JSON errors for everything including unknown paths and oversized bodies, health endpoints, and
// the deployment's signer key at /.well-known/sigil.json. It never redirects (docs/reference/auth-proxy.md).
import Fastify, { LogController } from 'fastify';
import cors from '@fastify/cors';
import type { Logger } from 'pino';
import { SigilError } from '../errors/errors.js';
import type { Pipeline, RequestIdentity } from '../pipeline/pipeline.js';
import { toSigilError } from './errors.js';
import { Metrics } from './metrics.js';
import { registerDashboard } from './dashboard.js';
import { registerInvitationRoutes, type InvitationRoutes } from './invitations.js';
import { registerOpenApi } from './openapi.js';
import type { Registry } from '../operations/registry.js';
import { capConnections, discardUnreadBody, requireJsonBody, serverOptions, type TransportLimits } from './transport.js';

export const CORS_HEADERS = [
  'Content-Type',
  'X-Stamp',
  'X-Stamp-Webauthn',
  'X-Stamp-Attested',
  'X-Client-Version',
  'X-Session',
  'X-Auth-Proxy-Config-ID',
  'X-Captcha-Token',
];

export interface PublicApiOptions {
  pipeline: Pipeline;
  logger: Logger;
  /** Body limit, timeouts and connection cap of the server (src/http/transport.ts). */
  transport: TransportLimits;
  signerPublicKey: string;
  /**
   * Where the signer key's private half lives, for /.well-known/sigil.json: sealed in the database by
   * the deployment's data key, which the named seal wraps (docs/operator-guide.md "Custody").
   */
  signerKey?: { sealedBy: string; storedIn: 'database' };
  /** The key webhook deliveries are signed with (src/crypto/webhook-signature.ts). */
  webhookKey?: { keyId: string; publicKeyHex: string; jwk(): Record<string, string> };
  version: string;
  ready: () => Promise<void>;
  /** True while sealed (baseServer). */
  sealed?: () => boolean;
  /** Why requests are refused for now (baseServer). */
  unavailable?: () => string | undefined;
  /** Proxies whose X-Forwarded-For sets the client address (config.trustedProxies); none by default. */
  trustedProxies?: string[];
  /** Counters served at GET /metrics; a fresh set when not given. */
  metrics?: Metrics;
  /** The frame URLs (src/http/frames.ts) /.well-known/sigil.json lists under `frames`, once they listen. */
  frameUrls?: () => Record<string, string> | undefined;
  /** The invitation accept routes (src/http/invitations.ts); absent, they are not served. */
  invitations?: Omit<InvitationRoutes, 'limits'>;
  /** The operations served: GET /openapi.json describes them (src/http/openapi.ts); absent, it is not served. */
  registry?: Registry;
}

/** Shared set-up of both servers: transport limits, raw-body parsing, CORS, JSON errors, 404s, health. */
export async function baseServer(opts: {
  logger: Logger;
  transport: TransportLimits;
  ready: () => Promise<void>;
  trustedProxies?: string[];
  /** True while the process holds no key (docs/operator-guide.md "Custody"): every request but /healthz gets 503 `sealed`. */
  sealed?: () => boolean;
  /** Why requests are refused with 503 for now (SIGIL_AUDIT_SINK_FAIL_CLOSED), or undefined. */
  unavailable?: () => string | undefined;
}) {
  const { bodyLimitBytes } = opts.transport;
  const app = Fastify({
    ...serverOptions(opts.transport),
    loggerInstance: opts.logger,
    // The pipeline logs one line per request itself, with the operation and outcome.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: bodyLimitBytes,
    // Requests arriving while the server drains get our JSON error (the hook below), not Fastify's.
    return503OnClosing: false,
    requestIdHeader: 'x-request-id',
    // req.ip is the connecting address unless it is a trusted proxy, then X-Forwarded-For decides.
    trustProxy: opts.trustedProxies && opts.trustedProxies.length > 0 ? opts.trustedProxies : false,
  });
  capConnections(app.server, opts.transport);
  await app.register(cors, {
    origin: true,
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: CORS_HEADERS,
    // Browser clients may read the rate-limit state (src/pipeline/rate-limit.ts).
    exposedHeaders: ['ratelimit-limit', 'ratelimit-remaining', 'retry-after'],
    maxAge: 86400,
  });
  // Draining (SIGTERM): a request that arrives on a connection opened before gets a clear 503 and
  // the connection is closed, so a load balancer retries it on another process.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // A callback hook, not an async one: it runs for every request, and an async hook costs a promise
  // and a microtask turn each time.
  const sealed = opts.sealed ?? (() => false);
  app.addHook('onRequest', (req, reply, done) => {
    if (sealed() && req.url !== '/healthz') {
      const e = new SigilError('SEALED', 'Sigil is sealed: it holds no key until an operator unseals it (sigil operator unseal)');
      if (req.url === '/readyz') return void reply.status(503).send({ status: 'sealed' });
      return void reply.status(503).header('connection', 'close').send(e.toBody());
    }
    const why = opts.unavailable?.();
    if (why !== undefined && req.url !== '/healthz') {
      if (req.url === '/readyz') return void reply.status(503).send({ status: 'unavailable', reason: why });
      return void reply.status(503).send(new SigilError('INTERNAL', why, { http: 503, grpc: 14 }).toBody());
    }
    if (!closing) return done();
    const e = new SigilError('INTERNAL', 'Sigil is shutting down: retry the request on another process', { http: 503, grpc: 14 });
    reply.status(503).header('connection', 'close').send(e.toBody());
  });
  // Every body arrives as bytes: stamps are verified over exactly what was sent.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.setErrorHandler((err, req, reply) => {
    const e = toSigilError(err, req.log);
    const body =
      e.turnkeyErrorCode === 'BODY_TOO_LARGE'
        ? new SigilError('BODY_TOO_LARGE', `request body too large: the limit is ${bodyLimitBytes} bytes`).toBody()
        : e.toBody();
    discardUnreadBody(req, reply, bodyLimitBytes);
    reply.status(e.httpStatus).send(body);
  });
  app.setNotFoundHandler((req, reply) => {
    const e = new SigilError('NOT_FOUND', `no such endpoint: ${req.method} ${req.url.split('?')[0]}`);
    reply.status(404).send(e.toBody());
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    try {
      await opts.ready();
      return { status: 'ready' };
    } catch {
      return reply.status(503).send({ status: 'unavailable' });
    }
  });
  return app;
}

export async function publicApiServer(opts: PublicApiOptions) {
  const app = await baseServer(opts);
  const webhookVerificationKey = opts.webhookKey ? { keyId: opts.webhookKey.keyId, publicKey: opts.webhookKey.publicKeyHex, algorithm: 'ed25519' } : undefined;
  app.get('/.well-known/sigil.json', async () => ({
    signerPublicKey: opts.signerPublicKey,
    signerKey: opts.signerKey,
    webhookVerificationKey,
    frames: opts.frameUrls?.(),
    version: opts.version,
  }));
  // Turnkey's webhook key discovery (docs.turnkey.com "Verify webhook signatures"): a JWKS of the
  // Ed25519 keys deliveries are signed with, matched by X-Turnkey-Signature-Key-Id.
  app.get('/public/v1/discovery/webhooks/jwks', async (_req, reply) =>
    reply.header('cache-control', 'public, max-age=300').send({ keys: opts.webhookKey ? [opts.webhookKey.jwk()] : [] }),
  );
  registerDashboard(app);
  if (opts.registry) registerOpenApi(app, opts.registry, opts.version);
  if (opts.invitations) registerInvitationRoutes(app, { ...opts.invitations, limits: opts.pipeline.limits });
  const metrics = opts.metrics ?? new Metrics();
  app.get('/metrics', async (_req, reply) => reply.type('text/plain; version=0.0.4; charset=utf-8').send(metrics.render()));

  app.post<{ Params: { kind: string; operation: string } }>('/public/v1/:kind/:operation', { onRequest: requireJsonBody }, async (req, reply) => {
    const { kind, operation } = req.params;
    if (kind !== 'submit' && kind !== 'query') {
      throw new SigilError('NOT_FOUND', `no such endpoint: POST /public/v1/${kind}/${operation}`);
    }
    const started = process.hrtime.bigint();
    let status = 200;
    let log: Record<string, unknown> & { type?: string; status?: string; signatures?: number } = { operation };
    const identity: RequestIdentity = {};
    const pipelineRequest = {
      kind,
      operation,
      rawBody: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
      headers: req.headers,
      clientAddress: req.ip,
      identity,
      // The pipeline adds the rate-limit headers here; they go out with answers and refusals alike.
      responseHeaders: {} as Record<string, string>,
    } as const;
    try {
      const res = await opts.pipeline.handle(pipelineRequest);
      log = res.log;
      reply.headers(pipelineRequest.responseHeaders);
      // Text already written is sent as it is, with the type an object's answer gets.
      return res.json === undefined ? reply.send(res.body) : reply.type('application/json; charset=utf-8').send(res.json);
    } catch (err) {
      const e = toSigilError(err, req.log);
      status = e.httpStatus;
      log = { ...log, error: e.turnkeyErrorCode };
      // Every refused request goes to the audit log; failing to record it must not hide the answer.
      try {
        await opts.pipeline.recordRefusal(pipelineRequest, e);
      } catch (auditErr) {
        req.log.error({ err: auditErr }, 'audit log append failed for a refused request');
      }
      return reply.status(e.httpStatus).headers(pipelineRequest.responseHeaders).send(e.toBody());
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // Only the declared operation names become label values.
      const label = opts.pipeline.isKnown(kind, operation) ? operation : 'unknown';
      metrics.request({ operation: label, kind, httpStatus: status, seconds, type: log.type, status: log.status, signatures: log.signatures });
      // The access line's object is built only when info lines are written.
      if (req.log.isLevelEnabled('info')) req.log.info({ kind, ...log, httpStatus: status, ms: Math.round(seconds * 1e5) / 100 }, 'request');
    }
  });
  return app;
}
