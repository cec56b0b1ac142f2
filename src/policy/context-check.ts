// A shape check of an evaluation context against the schema (schema.ts, docs/reference/policies.md "Keywords"),
// for the pipeline's tests and debug logging: "did I fill in the context the way the language reads
// it?". Evaluation never depends on it: the evaluator checks every value it touches anyway, and a
// malformed context only ever produces evaluation errors.
//
// Reported: unknown keys (typos such as `eth.tx.chainId`), values of the wrong type, required fields
// missing from a struct that is present. Not reported: absent optional fields and keywords (that is
// how an activity says "not populated"), and anything inside `dyn` data (ABI arguments, EIP-712
// messages), which has no schema.

import { ROOT } from './schema.js';
import type { PolicyType } from './types.js';
import { typeName } from './types.js';
import { CaseInsensitiveText, isHostObject, ownProperty, readHost, runtimeTypeName } from './values.js';

function check(value: unknown, type: PolicyType, path: string, problems: string[]): void {
  const read = readHost(value);
  if (read.tag === 'absent') return; // the caller decides whether absence is allowed
  if (read.tag === 'invalid') {
    problems.push(`${path}: ${read.reason}`);
    return;
  }
  const v = read.value;
  switch (type.kind) {
    case 'dyn':
      return;
    case 'bool':
    case 'int':
    case 'timestamp':
      if (runtimeTypeName(v) !== type.kind) problems.push(`${path}: expected ${type.kind}, got ${runtimeTypeName(v)}`);
      return;
    case 'string':
      if (typeof v !== 'string' && !(v instanceof CaseInsensitiveText)) problems.push(`${path}: expected string, got ${runtimeTypeName(v)}`);
      return;
    case 'list':
      if (!Array.isArray(v)) {
        problems.push(`${path}: expected ${typeName(type)}, got ${runtimeTypeName(v)}`);
        return;
      }
      v.forEach((item: unknown, i: number) => {
        if (item === undefined || item === null) problems.push(`${path}[${i}]: null element`);
        else check(item, type.elem, `${path}[${i}]`, problems);
      });
      return;
    case 'map':
      if (!isHostObject(v)) {
        problems.push(`${path}: expected ${typeName(type)}, got ${runtimeTypeName(v)}`);
        return;
      }
      for (const key of Object.keys(v)) check(ownProperty(v, key), type.value, `${path}['${key}']`, problems);
      return;
    case 'struct': {
      if (!isHostObject(v)) {
        problems.push(`${path}: expected ${type.name}, got ${runtimeTypeName(v)}`);
        return;
      }
      for (const key of Object.keys(v)) {
        if (!Object.prototype.hasOwnProperty.call(type.fields, key)) problems.push(`${path ? `${path}.` : ''}${key}: unknown field of ${type.name}`);
      }
      for (const [name, field] of Object.entries(type.fields)) {
        const fieldPath = path ? `${path}.${name}` : name;
        const raw = ownProperty(v, name);
        if ((raw === undefined || raw === null) && !field.optional) problems.push(`${fieldPath}: required field of ${type.name} is missing`);
        else check(raw, field.type, fieldPath, problems);
      }
      return;
    }
  }
}

/**
 * Problems with the shape of `context`, one message per problem; empty when it matches the schema.
 * Walks the whole context: meant for tests and diagnostics, not for every request.
 * @example expect(validatePolicyContext(buildContext(activity))).toEqual([]);
 */
export function validatePolicyContext(context: unknown): readonly string[] {
  const problems: string[] = [];
  if (!isHostObject(context)) return ['the context must be a plain object'];
  check(context, ROOT, '', problems);
  return problems;
}
