// Request and result schemas of the Turnkey public API, taken verbatim from its OpenAPI document
// (generated into turnkey-definitions.json by scripts/gen-schemas.mjs) and compiled by ajv. Unknown
// fields are accepted (turnkey-contract.md Traps 11); missing required fields, wrong types and values
// outside an enum are refused with a field-level description.
import { createRequire } from 'node:module';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

const require = createRequire(import.meta.url);
const definitionsDoc = require('./turnkey-definitions.json') as { $id: string; definitions: Record<string, any> };

// allErrors is off: validation stops at the first violation, so its cost stays linear in the body
// (with allErrors, ajv is quadratic in the failing items of one array: issue 15).
const ajv = new Ajv({ strict: false, allErrors: false });
// Integer formats are enforced, so a number no store column can hold is a 400 on both stores
// instead of a PostgreSQL error; other formats of the swagger (byte, uint64 strings) stay
// unchecked, as before (int64 strings too: a format applies to one JSON type only).
ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
for (const format of ['uint64', 'byte']) ajv.addFormat(format, { type: 'string', validate: () => true });
ajv.addSchema(definitionsDoc);

const validators = new Map<string, ValidateFunction>();

export const definitions: Readonly<Record<string, any>> = definitionsDoc.definitions;

export function hasDefinition(name: string): boolean {
  return name in definitionsDoc.definitions;
}

/** The compiled validator of a swagger definition, e.g. `v1CreateUsersIntentV4`. */
export function validatorFor(definition: string): ValidateFunction {
  const cached = validators.get(definition);
  if (cached) return cached;
  if (!hasDefinition(definition)) throw new Error(`no schema definition named ${definition}`);
  const v = ajv.compile({ $ref: `turnkey#/definitions/${definition}` });
  validators.set(definition, v);
  return v;
}

const inline = new WeakMap<object, ValidateFunction>();

/** Compiles an inline schema, for the few request bodies the public swagger lacks (turnkey-contract.md A.2). */
export function compileInlineSchema(schema: Record<string, unknown>): ValidateFunction {
  const cached = inline.get(schema);
  if (cached) return cached;
  const v = ajv.compile(schema);
  inline.set(schema, v);
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
