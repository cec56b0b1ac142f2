// THE request path, once for every operation (DESIGN.md "One pipeline for every request"):
// find the operation → verify the stamp over the raw body → resolve the organization and the caller
// → (activities) check type and timestampMs liveness → validate against the operation's schema →
// idempotency by fingerprint → authorize → record the activity → execute → record the result →
// respond. Branches only on declaration fields; no handler does any of this by itself.
import { newId } from '../domain/ids.js';
import type { ActivityRecords } from '../activity/reader.js';
import { fingerprintOf } from '../activity/fingerprint.js';
import { ActivityStatus } from '../activity/status.js';
import type { Config } from '../config/config.js';
import type { ActivityContext, Caller, OperationContext, Services } from '../domain/context.js';
import { requireOrganization } from '../domain/organizations.js';
import { SigilError, badRequestDetail, invalid } from '../errors/errors.js';
import type { ActivityDeclaration, QueryDeclaration } from '../operations/define.js';
import type { Registry } from '../operations/registry.js';
import { compileInlineSchema, describeErrors, validatorFor } from '../schemas/index.js';
import { isUniqueViolation, type ActivityRow, type Store, type VoteRow } from '../store/index.js';
import { readStamp, resolveCaller } from './authenticate.js';
import { authorizeActivity } from './authorize.js';
import { checkTimestamp, organizationIdOf, parseBody } from './envelope.js';

export interface PipelineRequest {
  kind: 'submit' | 'query';
  operation: string;
  rawBody: Buffer;
  headers: Record<string, string | string[] | undefined>;
}

export interface PipelineResponse {
  body: unknown;
  /** What the access log may show: never parameters, stamps or secrets. */
  log: { operation: string; organizationId?: string; activityId?: string; status?: string };
}

export interface PipelineDeps {
  store: Store;
  registry: Registry;
  config: Config;
  services: Services;
  records: ActivityRecords;
  now?: () => number;
}

function validate(schema: string | Record<string, unknown>, value: unknown, prefix: string): void {
  const v = typeof schema === 'string' ? validatorFor(schema) : compileInlineSchema(schema);
  if (v(value)) return;
  const violations = describeErrors(v.errors, prefix);
  const first = violations[0];
  const what = first.description === 'missing required field' ? `missing parameter: ${first.field}` : `${first.field}: ${first.description}`;
  throw invalid(`bad request body: ${what}`, [badRequestDetail(violations)]);
}

/** Replaces secret parameter values before the intent is stored or echoed. */
function redact(params: Record<string, unknown>, secretFields: string[] | undefined): Record<string, unknown> {
  if (!secretFields || secretFields.length === 0) return params;
  const copy = { ...params };
  for (const f of secretFields) if (f in copy) copy[f] = '<redacted>';
  return copy;
}

export class Pipeline {
  private readonly now: () => number;

  constructor(private readonly deps: PipelineDeps) {
    this.now = deps.now ?? Date.now;
  }

  async handle(req: PipelineRequest): Promise<PipelineResponse> {
    const { registry } = this.deps;
    const decl = req.kind === 'submit' ? registry.activities.get(req.operation) : registry.queries.get(req.operation);
    if (!decl) {
      throw new SigilError('UNIMPLEMENTED', `unknown operation: /public/v1/${req.kind}/${req.operation}`);
    }
    const stamp = readStamp(req.headers, req.rawBody);
    const body = parseBody(req.rawBody);
    const organizationId = organizationIdOf(body);
    const repos = this.deps.store.repos;
    const now = this.now();
    const organization = await requireOrganization(repos, organizationId);
    const caller = await resolveCaller(repos, stamp, organization, now);
    const base = { organization, caller, now, newId, services: this.deps.services };
    if (decl.kind === 'query') return this.runQuery(decl, body, { ...base, repos });
    return this.runActivity(decl, body, req.rawBody, base);
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
  ): Promise<PipelineResponse> {
    const { config, store } = this.deps;
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
    if (body.parameters === undefined) {
      throw invalid('bad request body: missing parameter: parameters', [
        badRequestDetail([{ field: 'parameters', description: 'missing required field' }]),
      ]);
    }
    validate(binding.parametersDefinition, body.parameters, 'parameters');
    const params = body.parameters as Record<string, unknown>;
    const fingerprint = fingerprintOf(rawBody);
    const orgId = base.organization.id;

    // Idempotency: the same bytes are the same activity (turnkey-semantics.md §3).
    const existing = await store.repos.activities.findByFingerprint(orgId, fingerprint);
    if (existing) return this.respond(decl, existing, base.caller);

    const decision = await authorizeActivity(store.repos, decl, binding.type, base.organization, base.caller);
    const activityId = newId();
    const row: ActivityRow = {
      id: activityId,
      organization_id: orgId,
      type: binding.type,
      status: ActivityStatus.CREATED,
      fingerprint,
      intent: JSON.stringify({ [binding.intentMember]: redact(params, decl.secretFields) }),
      result: null,
      failure: null,
      user_id: base.caller.user.id,
      timestamp_ms: timestampMs,
      created_at: base.now,
      updated_at: base.now,
    };
    const vote = {
      id: newId(),
      activity_id: activityId,
      organization_id: orgId,
      user_id: base.caller.user.id,
      selection: 'VOTE_SELECTION_APPROVED',
      // The signed message is the request body; bodies carrying secrets keep only their fingerprint.
      message: decl.secretFields?.length ? fingerprint : rawBody.toString('utf8'),
      public_key: base.caller.credential.apiKey.public_key,
      signature: base.caller.credential.signature,
      scheme: base.caller.credential.scheme,
      created_at: base.now,
    };
    const complete = (result: unknown) => {
      row.status = ActivityStatus.COMPLETED;
      row.result = JSON.stringify({ [decl.result]: result ?? {} });
    };
    try {
      if (decision.outcome === 'consensus_needed') {
        row.status = ActivityStatus.CONSENSUS_NEEDED;
        await store.groupCommit(async (repos) => {
          await repos.activities.insert(row);
          await repos.activities.insertVote(vote);
        });
      } else if (decl.execution === 'pure') {
        // Reads and computation happen first; the finished activity is then recorded durably
        // before the answer leaves. A crash in between loses a result nobody has seen.
        const ctx: ActivityContext = { ...base, repos: store.repos, activityId, activityType: binding.type };
        complete(await decl.execute(ctx, params));
        await store.groupCommit(async (repos) => {
          await repos.activities.insert(row);
          await repos.activities.insertVote(vote);
        });
      } else {
        await store.transaction(async (repos) => {
          // Recorded before execution; its status and result after, in the same transaction, so a
          // crash leaves either nothing or the finished activity.
          await repos.activities.insert(row);
          await repos.activities.insertVote(vote);
          const ctx: ActivityContext = { ...base, repos, activityId, activityType: binding.type };
          complete(await decl.execute(ctx, params));
          await repos.activities.finish(activityId, { status: row.status, result: row.result }, base.now);
        });
      }
    } catch (err) {
      // A concurrent identical submission won the insert: answer with its activity.
      if (isUniqueViolation(err)) {
        const winner = await store.repos.activities.findByFingerprint(orgId, fingerprint);
        if (winner) return this.respond(decl, winner, base.caller);
      }
      throw err;
    }
    return this.respond(decl, row, base.caller, [vote]);
  }

  private async respond(decl: ActivityDeclaration, row: ActivityRow, caller: Caller, votes?: VoteRow[]): Promise<PipelineResponse> {
    const [activity] = await this.deps.records.render([row], { userId: caller.user.id }, votes);
    return {
      body: { activity },
      log: { operation: decl.path, organizationId: row.organization_id, activityId: row.id, status: row.status },
    };
  }
}
