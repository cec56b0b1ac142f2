// THE request path, once for every operation (docs/design.md "One pipeline for every request"):
// find the operation → verify the stamp over the raw body → resolve the organization and the caller
// → (activities) check type and timestampMs liveness → validate against the operation's schema →
// idempotency by fingerprint → authorize → record the activity → execute → record the result →
// respond. Branches only on declaration fields; no handler does any of this by itself.
import { newId } from '../domain/ids.js';
import type { ActivityRecords } from '../activity/reader.js';
import { fingerprintOf } from '../activity/fingerprint.js';
import type { Config } from '../config/config.js';
import type { OperationContext, Services } from '../domain/context.js';
import { SigilError, badRequestDetail, invalid } from '../errors/errors.js';
import type { ActivityDeclaration, QueryDeclaration } from '../operations/define.js';
import type { Registry } from '../operations/registry.js';
import { describeErrors, validatorOf, type RequestSchema } from '../schemas/index.js';
import type { ActivityRow, Repositories, Store } from '../store/index.js';
import { readOnlySessionToken, readStamp } from './authenticate.js';
import { ActivityLifecycle } from '../activity/lifecycle.js';
import { checkEnvelope, checkTimestamp, organizationIdOf, parseBody, timestampOf } from './envelope.js';
import { jsonLimits, type JsonLimits } from './input-limits.js';
import { RateLimiter } from './rate-limit.js';
import { parseStamp } from '../auth/stamp.js';
import { authenticate } from '../domain/identity/authentication.js';
import { refusedEntry } from '../audit/record.js';

export interface PipelineRequest {
  kind: 'submit' | 'query';
  operation: string;
  rawBody: Buffer;
  headers: Record<string, string | string[] | undefined>;
  /** The client's IP address as the HTTP layer determined it (trusted proxies applied). */
  clientAddress?: string;
  /** Sent by the auth proxy on its configuration's behalf: exempt from IP allowlists (docs/reference/organizations.md). */
  viaAuthProxy?: boolean;
  /** Filled in as the pipeline learns who is asking, so a refusal can be audited with it. */
  identity?: RequestIdentity;
  /** Headers the answer carries whatever its outcome (the rate-limit state), filled in by the pipeline. */
  responseHeaders?: Record<string, string>;
}

/** What is known of a request's origin when it is refused: never its body or stamp signature. */
export interface RequestIdentity {
  organizationId?: string;
  userId?: string;
  publicKey?: string;
}

export interface PipelineResponse {
  body: unknown;
  /** `body` as JSON text when it was written as text (a just-recorded activity): sent as it is. */
  json?: string;
  /** What the access log may show: never parameters, stamps or secrets. */
  log: { operation: string; organizationId?: string; activityId?: string; status?: string; type?: string; signatures?: number };
}

export interface PipelineDeps {
  store: Store;
  registry: Registry;
  config: Config;
  services: Services;
  records: ActivityRecords;
  now?: () => number;
  /** The clock of velocity control windows; the request's time unless a test clock is configured. */
  velocityClock?: () => number;
}

function validate(schema: RequestSchema, value: unknown, prefix: string): void {
  const v = validatorOf(schema);
  if (v(value)) return;
  const violations = describeErrors(v.errors, prefix);
  const first = violations[0];
  const what = first.description === 'missing required field' ? `missing parameter: ${first.field}` : `${first.field}: ${first.description}`;
  throw invalid(`bad request body: ${what}`, [badRequestDetail(violations)]);
}

export class Pipeline {
  private readonly now: () => number;

  private readonly activities: ActivityLifecycle;

  readonly rateLimiter: RateLimiter;

  /** Shape limits of every body (src/pipeline/input-limits.ts), shared with the auth proxy. */
  readonly limits: JsonLimits;

  constructor(private readonly deps: PipelineDeps) {
    this.now = deps.now ?? Date.now;
    this.limits = jsonLimits(deps.config);
    this.activities = new ActivityLifecycle({ ...deps, operationOf: (type) => deps.registry.byType.get(type) });
    this.rateLimiter = new RateLimiter(deps.store, deps.config.rateLimits);
  }

  async handle(req: PipelineRequest): Promise<PipelineResponse> {
    const { registry } = this.deps;
    const decl = req.kind === 'submit' ? registry.activities.get(req.operation) : registry.queries.get(req.operation);
    if (!decl) {
      throw new SigilError('UNIMPLEMENTED', `unknown operation: /public/v1/${req.kind}/${req.operation}`);
    }
    // A read-only session (X-Session) stands in for a stamp on queries only.
    const sessionToken = readOnlySessionToken(req.headers, req.kind);
    const stamp = sessionToken === undefined ? readStamp(req.headers, req.rawBody) : undefined;
    const body = parseBody(req.rawBody, this.limits);
    const organizationId = organizationIdOf(body);
    if (req.identity) req.identity.organizationId = organizationId;
    // A submission's fingerprint is looked up with the request's first read (idempotency, docs/reference/activities.md), by the
    // timestampMs its body carries; a body without a valid one is refused before it could matter.
    const fingerprint = decl.kind === 'activity' ? fingerprintOf(req.rawBody) : undefined;
    const timestampMs = fingerprint ? timestampOf(body) : undefined;
    // The store reads the target and its parent's cache generations with the fingerprint, and what an
    // organization it has not cached needs (the account it signs with too) in one more statement
    // (src/store/cold-reads.ts).
    const parameters = body.parameters;
    const address =
      decl.kind === 'activity' && decl.targetAddress && parameters !== null && typeof parameters === 'object' ? decl.targetAddress(parameters as Record<string, unknown>) : undefined;
    const { repos, existing } = await this.deps.store.requestReads(
      organizationId,
      fingerprint && timestampMs !== undefined ? { organizationId, fingerprint, timestampMs } : undefined,
      stamp?.kind === 'api_key' ? stamp.publicKey : undefined,
      typeof address === 'string' ? address : undefined,
    );
    const now = this.now();
    const { organization, caller } = await authenticate(
      { reads: repos, writes: this.deps.store.repos },
      this.deps.services,
      {
        organizationId,
        credential: stamp ? { stamp } : { sessionToken: sessionToken! },
        rawBody: req.rawBody,
        operation: `/public/v1/${decl.kind === 'activity' ? 'submit' : 'query'}/${decl.path}`,
        acceptsAttestedStamp: decl.kind === 'activity' && decl.acceptsAttestedStamp === true,
        credentialMayBeInSubOrganization: decl.kind === 'activity' && decl.credentialMayBeInSubOrganization === true,
        clientAddress: req.clientAddress,
        viaAuthProxy: req.viaAuthProxy,
        now,
      },
      req.identity,
    );
    // After the allowlist, so requests it refuses cannot spend the organization's budget.
    await this.rateLimiter.take(organization, caller, now, (req.responseHeaders ??= {}), { perCredential: !req.viaAuthProxy });
    const base = { organization, caller, now, newId, services: this.deps.services, clientAddress: req.clientAddress };
    const response =
      decl.kind === 'query'
        ? await this.runQuery(decl, body, { ...base, repos, velocityNow: () => this.deps.velocityClock?.() ?? now })
        : // The fingerprint was looked up in the target; a login may have moved to a sub-organization.
          await this.runActivity(decl, body, req.rawBody, base, repos, organization.id === organizationId ? (existing ?? null) : undefined, fingerprint!);
    // What the answer shows was read from the database: it leaves only once that is durable.
    await this.deps.store.settled();
    return response;
  }

  /** True for a path the registry declares (the metrics label unknown paths as one value). */
  isKnown(kind: 'submit' | 'query', operation: string): boolean {
    return (kind === 'submit' ? this.deps.registry.activities : this.deps.registry.queries).has(operation);
  }

  /**
   * Appends a refused request (authentication, authorization, validation or execution failure) to
   * the audit log, in a transaction of its own: who asked as far as known, the error code and the
   * message the client got; never the body or the stamp's signature.
   */
  async recordRefusal(req: PipelineRequest, error: SigilError): Promise<void> {
    const known = req.identity ?? {};
    let publicKey = known.publicKey;
    let credentialId: string | undefined;
    if (publicKey === undefined) {
      try {
        const stamp = parseStamp(req.headers);
        if (stamp.kind === 'webauthn') credentialId = stamp.credentialId;
        else publicKey = stamp.publicKey;
      } catch {
        // No readable stamp: the refusal is recorded without a credential.
      }
    }
    let organizationId = known.organizationId;
    if (organizationId === undefined) {
      try {
        // Refused before the body was read (a bad stamp): the organization it names, unverified; a body
        // past the limits is not parsed at all (a 2 MB nesting costs JSON.parse most of a second).
        organizationId = organizationIdOf(parseBody(req.rawBody, this.limits));
      } catch {
        // No readable organization id.
      }
    }
    const entry = refusedEntry({
      organizationId,
      requestKind: req.kind,
      operation: this.isKnown(req.kind, req.operation) ? req.operation : req.operation.slice(0, 128),
      code: error.turnkeyErrorCode,
      message: error.message,
      httpStatus: error.httpStatus,
      fingerprint: req.rawBody.length > 0 ? fingerprintOf(req.rawBody) : undefined,
      actor: { userId: known.userId, publicKey },
      time: this.now(),
    });
    if (credentialId) entry.credentialId = credentialId;
    await this.deps.store.commitRecords({ audit: [entry] });
  }

  private async runQuery(decl: QueryDeclaration, body: Record<string, unknown>, ctx: OperationContext): Promise<PipelineResponse> {
    validate(decl.request, body, '');
    const result = await decl.execute(ctx, body);
    return { body: result, log: { operation: decl.path, organizationId: ctx.organization.id } };
  }

  private async runActivity(
    decl: ActivityDeclaration,
    body: Record<string, unknown>,
    rawBody: Buffer,
    base: Omit<OperationContext, 'repos'>,
    reads: Repositories,
    /** The activity the fingerprint names (null: none), when it was looked up in this organization. */
    existing: ActivityRow | null | undefined,
    fingerprint: string,
  ): Promise<PipelineResponse> {
    const { config } = this.deps;
    const bindings = this.deps.registry.typeBindings.get(decl.path)!;
    const type = body.type;
    const binding = typeof type === 'string' ? bindings.get(type) : undefined;
    if (!binding) {
      throw invalid(
        `bad request body: invalid activity type ${JSON.stringify(type)} for /public/v1/submit/${decl.path}; expected ${[...bindings.keys()].join(' or ')}`,
        [badRequestDetail([{ field: 'type', description: `must be ${[...bindings.keys()].join(' or ')}` }])],
      );
    }
    const timestampMs = checkTimestamp(body, base.now, config.maxRequestAgeMs, config.maxRequestFutureMs);
    checkEnvelope(body);
    if (body.parameters === undefined) {
      throw invalid('bad request body: missing parameter: parameters', [
        badRequestDetail([{ field: 'parameters', description: 'missing required field' }]),
      ]);
    }
    validate(binding.parametersDefinition, body.parameters, 'parameters');
    const intentParams = body.parameters as Record<string, unknown>;
    const params = binding.adapt ? (binding.adapt(intentParams) as Record<string, unknown>) : intentParams;
    return this.activities.submit({ reads, existing, decl, binding, params, intentParams, fingerprint, rawBody, timestampMs, base, appProofs: body.generateAppProofs === true });
  }

}
