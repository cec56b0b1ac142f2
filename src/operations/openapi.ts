// The OpenAPI 3.1 document of the public API Sigil serves, generated from the registry's declarations
// and the Turnkey schemas they name (docs/design.md "An operation is data": the OpenAPI document served by Sigil is
// generated from the registry; docs/reference/api.md describes the envelope, stamps and errors it states).
// Only what the registry serves is listed, under the request shape the pipeline accepts: every type
// value of a path (current and older versions), each version's parameters, the activity or query
// result, and Sigil's error body. Swagger 2 definitions are JSON Schema already, so they move to
// components/schemas with their references rewritten; nothing else is changed in them.
import { ERROR_LIMITS } from '../errors/errors.js';
import { API_PATHS, definitions, schemaObjectOf, type RequestSchema } from '../schemas/index.js';
import type { ActivityDeclaration, QueryDeclaration } from './define.js';
import type { Registry } from './registry.js';

type Schema = Record<string, unknown>;

const COMPONENT = '#/components/schemas/';
/** The name of Sigil's error body among the component schemas (no Turnkey definition has it). */
const ERROR_SCHEMA = 'SigilError';

/** A schema with its references to swagger definitions pointed at components/schemas, and the names it refers to collected. */
function rewrite(node: unknown, refs: Set<string>): unknown {
  if (Array.isArray(node)) return node.map((n) => rewrite(n, refs));
  if (!node || typeof node !== 'object') return node;
  const out: Schema = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref' && typeof v === 'string') {
      const name = v.replace(/^(turnkey)?#\/definitions\//, '');
      refs.add(name);
      out.$ref = COMPONENT + name;
    } else {
      out[k] = rewrite(v, refs);
    }
  }
  return out;
}

/** Every definition `roots` refer to, directly or through others, as component schemas. */
function components(roots: Set<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const pending = [...roots];
  while (pending.length > 0) {
    const name = pending.pop()!;
    if (name in out) continue;
    const def = definitions[name];
    if (!def) throw new Error(`openapi: no schema definition named ${name}`);
    const refs = new Set<string>();
    out[name] = rewrite(def, refs);
    for (const r of refs) if (!(r in out)) pending.push(r);
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** Sigil's error body: a gRPC status code, a message, and details whose first item names the Turnkey error code (src/errors/errors.ts). */
const errorSchema: Schema = {
  type: 'object',
  required: ['code', 'message', 'details'],
  properties: {
    code: { type: 'integer', description: 'gRPC status code' },
    message: { type: 'string', maxLength: ERROR_LIMITS.messageChars },
    details: {
      type: 'array',
      maxItems: 1 + ERROR_LIMITS.detailItems,
      items: { type: 'object', properties: { '@type': { type: 'string' }, turnkeyErrorCode: { type: 'string' } } },
    },
  },
};

const errorResponse = { description: 'The request was refused; nothing changed', content: { 'application/json': { schema: { $ref: COMPONENT + ERROR_SCHEMA } } } };

function jsonBody(schema: unknown) {
  return { required: true, content: { 'application/json': { schema } } };
}

function okResponse(definition: string) {
  return { description: 'OK', content: { 'application/json': { schema: { $ref: COMPONENT + definition } } } };
}

/** A request or response schema as a component reference, a choice of references, or the declaration's inline schema. */
function schemaOf(schema: RequestSchema, refs: Set<string>): unknown {
  return rewrite(schemaObjectOf(schema), refs);
}

/** The body a submission takes: the envelope, one of the path's type values, and that version's parameters. */
function activityRequest(registry: Registry, d: ActivityDeclaration, refs: Set<string>): Schema {
  // The accepted spellings are the binding keys (a misspelling is recorded under the current type).
  const typesByParameters = new Map<string, string[]>();
  for (const [type, b] of registry.typeBindings.get(d.path)!) {
    const key = JSON.stringify(b.parametersDefinition);
    typesByParameters.set(key, [...(typesByParameters.get(key) ?? []), type]);
  }
  const envelope = (types: string[], parameters: RequestSchema): Schema => ({
    type: 'object',
    required: ['type', 'timestampMs', 'organizationId', 'parameters'],
    properties: {
      type: { type: 'string', enum: types },
      timestampMs: { type: 'string', description: 'epoch milliseconds, as a string' },
      organizationId: { type: 'string' },
      parameters: schemaOf(parameters, refs),
      generateAppProofs: { type: 'boolean' },
    },
  });
  const choices = [...typesByParameters].map(([key, types]) => envelope(types, JSON.parse(key) as RequestSchema));
  return choices.length === 1 ? choices[0] : { oneOf: choices };
}

/** The OpenAPI document of every operation `registry` serves. */
export function openApiDocument(registry: Registry, version: string): Schema {
  const refs = new Set<string>();
  const paths: Record<string, unknown> = {};
  const security = [{ ApiKeyStamp: [] }, { WebAuthnStamp: [] }];
  for (const d of [...registry.activities.values()].sort((a, b) => a.path.localeCompare(b.path))) {
    const response = API_PATHS[d.path]?.response ?? 'v1ActivityResponse';
    refs.add(response);
    paths[`/public/v1/submit/${d.path}`] = {
      post: {
        operationId: d.path,
        tags: ['submit'],
        security: d.acceptsAttestedStamp ? [...security, { AttestedStamp: [] }] : security,
        requestBody: jsonBody(activityRequest(registry, d, refs)),
        responses: { '200': okResponse(response), default: errorResponse },
        'x-sigil-policy': d.policy,
        ...(d.result ? { 'x-sigil-result': d.result } : {}),
        'x-sigil-authorization': d.authorization ?? 'policy',
      },
    };
  }
  for (const q of [...registry.queries.values()].sort((a, b) => a.path.localeCompare(b.path))) {
    paths[`/public/v1/query/${q.path}`] = { post: queryOperation(q, refs, security) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Sigil public API',
      version,
      description: 'The Turnkey-compatible public API this Sigil serves: every POST body is stamped (X-Stamp or X-Stamp-Webauthn) over its exact bytes. See docs/reference/api.md.',
    },
    paths,
    components: {
      schemas: { ...components(refs), [ERROR_SCHEMA]: errorSchema },
      securitySchemes: {
        ApiKeyStamp: { type: 'apiKey', in: 'header', name: 'X-Stamp', description: 'base64url JSON {publicKey, scheme, signature} over the body' },
        WebAuthnStamp: { type: 'apiKey', in: 'header', name: 'X-Stamp-Webauthn', description: 'a WebAuthn assertion whose challenge is the body digest' },
        AttestedStamp: { type: 'apiKey', in: 'header', name: 'X-Stamp-Attested', description: 'a stamp by a key an OTP verification token or OIDC token vouches for (login activities only)' },
      },
    },
  };
}

function queryOperation(q: QueryDeclaration, refs: Set<string>, security: unknown[]) {
  const response = q.response ?? (API_PATHS[q.path]?.kind === 'query' ? API_PATHS[q.path].response : undefined);
  // Like the registry's own checks: a query whose answer nobody declared is a mistake found at start-up.
  if (!response) throw new Error(`openapi: query ${q.path} is not in the swagger's paths and declares no response schema`);
  return {
    operationId: q.path,
    tags: ['query'],
    security,
    requestBody: jsonBody(schemaOf(q.request, refs)),
    responses: { '200': { description: 'OK', content: { 'application/json': { schema: schemaOf(response, refs) } } }, default: errorResponse },
  };
}
