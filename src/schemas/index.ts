// Request and result schemas of the Turnkey public API, taken verbatim from its OpenAPI document
// (generated into turnkey-definitions.json by scripts/gen-schemas.mjs) and compiled by ajv, at build
// time for the request schemas operations declare (scripts/precompile-schemas.mjs). Unknown
// fields are accepted (docs/reference/api.md "Activities"); missing required fields, wrong types and values
// outside an enum are refused with a field-level description.
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { SCHEMA_FORMATS } from './formats.js';

const require = createRequire(import.meta.url);
const definitionsDoc = require('./turnkey-definitions.json') as { $id: string; definitions: Record<string, any> };

/** A request schema as operations declare it: a definition's name, a list of definitions any of which may match, or an inline schema. */
export type RequestSchema = string | readonly string[] | Record<string, unknown>;

/**
 * The one Ajv configuration, for validators compiled at run time and for those compiled at build
 * time (scripts/precompile-schemas.mjs passes its code-generation options in `extra`).
 * allErrors is off: validation stops at the first violation, so its cost stays linear in the body
 * (with allErrors, ajv is quadratic in the failing items of one array).
 */
export function newAjv(extra: Options = {}): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: false, ...extra });
  for (const [name, format] of Object.entries(SCHEMA_FORMATS)) ajv.addFormat(name, format);
  ajv.addSchema(definitionsDoc);
  return ajv;
}

/** The JSON Schema a request schema stands for. */
export function schemaObjectOf(schema: RequestSchema): Record<string, unknown> {
  if (typeof schema === 'string') return { $ref: `turnkey#/definitions/${schema}` };
  if (Array.isArray(schema)) return { anyOf: schema.map((d) => ({ $ref: `turnkey#/definitions/${d}` })) };
  return schema as Record<string, unknown>;
}

/** The name a request schema's validator is exported under by the build (a JavaScript identifier). */
export function precompiledName(schema: RequestSchema): string {
  if (typeof schema === 'string') return `definition_${schema}`;
  return `inline_${createHash('sha256').update(JSON.stringify(schemaObjectOf(schema))).digest('hex').slice(0, 24)}`;
}

/** Definitions validated outside the operation registry (src/http/invitations.ts), precompiled as well. */
export const STANDALONE_DEFINITIONS: readonly string[] = ['v1AuthenticatorParamsV2'];

// The validators the build compiled (dist/schemas/validators.js, by scripts/precompile-schemas.mjs):
// compiling the ~170 of them with Ajv at start-up cost ~0.6 s of CPU, loading the compiled code ~50 ms.
// Running from src (unit tests) there is no such file, and a schema the build did not see (a stale
// dist) is compiled here, with the same configuration.
const precompiledPath = './validators.js';
const precompiled = (await import(precompiledPath).catch((err: NodeJS.ErrnoException) => {
  if (err.code === 'ERR_MODULE_NOT_FOUND') return undefined;
  throw err;
})) as Record<string, ValidateFunction | undefined> | undefined;

let runtimeAjv: Ajv | undefined;
const validators = new Map<string, ValidateFunction>();
const inline = new WeakMap<object, ValidateFunction>();

export const definitions: Readonly<Record<string, any>> = definitionsDoc.definitions;

export function hasDefinition(name: string): boolean {
  return name in definitionsDoc.definitions;
}

/** The validator of a request schema: a swagger definition (e.g. `v1CreateUsersIntentV4`), a list of them, or an inline schema. */
export function validatorOf(schema: RequestSchema): ValidateFunction {
  // Lists and inline schemas are declared once, so the object itself is the key.
  const cached = typeof schema === 'string' ? validators.get(schema) : inline.get(schema);
  if (cached) return cached;
  if (typeof schema === 'string' && !hasDefinition(schema)) throw new Error(`no schema definition named ${schema}`);
  const v = precompiled?.[precompiledName(schema)] ?? (runtimeAjv ??= newAjv()).compile(schemaObjectOf(schema));
  if (typeof schema === 'string') validators.set(schema, v);
  else inline.set(schema, v);
  return v;
}

export interface FieldViolation {
  field: string;
  description: string;
}

/** At most this many violations are described: an error body stays a few KB whatever was sent. */
export const MAX_VIOLATIONS = 5;

/** Turns ajv errors into `parameters.users[0].userName: must be string` style violations. */
export function describeErrors(errors: ErrorObject[] | null | undefined, prefix: string): FieldViolation[] {
  const out: FieldViolation[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    if (out.length >= MAX_VIOLATIONS) break;
    const path = e.instancePath
      .split('/')
      .slice(1)
      .map((seg) => (/^\d+$/.test(seg) ? `[${seg}]` : `.${seg.replace(/~1/g, '/').replace(/~0/g, '~')}`))
      .join('');
    let field = `${prefix}${path}`;
    let description: string;
    if (e.keyword === 'required') {
      field = `${field}.${(e.params as { missingProperty: string }).missingProperty}`;
      description = 'missing required field';
    } else if (e.keyword === 'enum') {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
      description = `must be one of ${allowed.slice(0, 12).join(', ')}${allowed.length > 12 ? ', …' : ''}`;
    } else {
      description = e.message ?? 'invalid value';
    }
    const key = `${field}|${description}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, description });
  }
  return out;
}

/** The v1Intent member name of an activity type value, e.g. ACTIVITY_TYPE_CREATE_USERS_V4 → createUsersIntentV4. */
export function intentMemberOf(activityType: string): string {
  const m = /^ACTIVITY_TYPE_(.+?)(?:_(V\d+))?$/.exec(activityType);
  if (!m) throw new Error(`not an activity type: ${activityType}`);
  const camel = m[1]
    .toLowerCase()
    .split('_')
    .map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1)))
    .join('');
  return `${camel}Intent${m[2] ?? ''}`;
}

/** The swagger definition of an intent member, e.g. createUsersIntentV4 → v1CreateUsersIntentV4. */
export function intentDefinitionOf(intentMember: string): string | undefined {
  const prop = definitionsDoc.definitions.v1Intent?.properties?.[intentMember];
  const ref: string | undefined = prop?.$ref;
  return ref?.replace('#/definitions/', '');
}

export const ACTIVITY_TYPES: readonly string[] = definitionsDoc.definitions.v1ActivityType.enum;

/** A path of the Turnkey public API as its swagger declares it (src/schemas/turnkey-paths.json, by scripts/gen-schemas.mjs). */
export interface ApiPath {
  kind: 'submit' | 'query';
  request: string;
  response: string;
  type?: string;
  parameters?: string;
}

/** The swagger's paths by their segment under /public/v1/submit/ or /public/v1/query/ (e.g. create_users). */
export const API_PATHS: Readonly<Record<string, ApiPath>> = require('./turnkey-paths.json');
