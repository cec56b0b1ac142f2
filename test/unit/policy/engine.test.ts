// Conformance runner for the policy ENGINE decision (src/activity/policy-engine.ts) over the data in
// test/policy/engine/*.json: whole sets of policies against one request context, checked against
// docs/reference/policies.md "Evaluation of one policy", "The decision for an activity". The language
// itself (one expression, one context) is covered by test/policy/corpus and conformance.test.ts; this
// suite is about how per-policy results combine: applicability, DENY over ALLOW, consensus, time
// windows, errors.
//
// File format:
//   { "source": "<where the cases come from: a docs/reference/ section or a published page>",   // required
//     "description": "…",
//     "contexts": { "<name>": <context>, … },        // optional reusable request contexts
//     "cases": [ <case>, … ] }
//   case:
//     { "name": "…",                                  // unique across all files
//       "origin": "<doc file / appendix id>",          // optional
//       "policies": [ { "id": "…", "effect": "EFFECT_ALLOW" | "EFFECT_DENY",
//                       "condition"?: "…", "consensus"?: "…", "time"?: "…",
//                       "compileError"?: { "<field>": "<substring of the create-time error>" } } ],
//       "context": <context> | "<name of a file-level context>",
//       "with": <patch>,                               // optional, merged into the context
//       "expected": { "decision": "allow" | "deny" | "consensus" | "none",
//                     "outcomes": { "<policyId>": "OUTCOME_…", … } },   // every evaluated policy
//       "knownDeviation": "<why the engine disagrees with the documented rule>",        // optional: case skipped
//       "note": "…" }
//
// A policy with `compileError` must be rejected by compilePolicyExpression with that message; like
// the service, which never stores such a policy, the runner leaves it out of the evaluation (and it
// must not appear in `outcomes`). Every other policy must compile, or the case fails.
//
// Context encoding (the PolicyContext of src/policy/context.ts as JSON): JSON numbers must be safe
// integers; {"$bigint": "<decimal>"} is a bigint (wei amounts, u256), {"$time": "<ISO 8601>"} a
// Date, {"$ci": "<text>"} a case-insensitive string (address-typed ABI / EIP-712 values, values.ts).
// `time.now` may also be given as a plain ISO 8601 string. `with` is merged into the context:
// objects merge key by key, `null` deletes a key, anything else (arrays included) replaces.
// Every decoded context must pass validatePolicyContext (no typos, no wrong field types).
//
// What the runner enforces beyond the engine's answers:
// - the expected decision follows from the expected outcomes by the documented precedence
//   (any OUTCOME_DENY_EXPLICIT → deny, else any OUTCOME_ALLOW → allow, else any
//   OUTCOME_REQUIRES_CONSENSUS → consensus, else none), so the data is self-consistent;
// - every decision and every per-policy outcome the engine can produce is exercised by some
//   case that runs.

import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { CompiledPolicy } from '../../../src/domain/governance/policies.js';
import type { PolicyDecision, PolicyOutcome } from '../../../src/activity/policy-engine.js';
import { evaluatePolicies } from '../../../src/activity/policy-engine.js';
import type { ExpressionKind, PolicyContext, PolicyEffect } from '../../../src/policy/index.js';
import { caseInsensitive, compilePolicyExpression, validatePolicyContext } from '../../../src/policy/index.js';

const DATA_DIR = fileURLToPath(new URL('../../policy/engine/', import.meta.url));
const FIELDS: readonly ExpressionKind[] = ['condition', 'consensus', 'time'];
const DECISIONS: readonly PolicyDecision[] = ['allow', 'deny', 'consensus', 'none'];
const OUTCOMES: readonly PolicyOutcome[] = [
  'OUTCOME_ALLOW',
  'OUTCOME_DENY_EXPLICIT',
  'OUTCOME_DENY_IMPLICIT',
  'OUTCOME_REQUIRES_CONSENSUS',
  'OUTCOME_ERROR',
  'OUTCOME_TIME_INACTIVE',
];
const MIN_CASES = 40;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface PolicySpec {
  id: string;
  effect: PolicyEffect;
  condition?: string;
  consensus?: string;
  time?: string;
  compileError?: Partial<Record<ExpressionKind, string>>;
}

interface Case {
  name: string;
  origin?: string;
  policies: PolicySpec[];
  context: string | JsonObject;
  with?: JsonObject;
  expected: { decision: PolicyDecision; outcomes?: Record<string, PolicyOutcome> };
  knownDeviation?: string;
  note?: string;
}

interface EngineFile {
  source: string;
  description?: string;
  contexts?: Record<string, JsonObject>;
  cases: Case[];
}

function isPlainObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isEncodedScalar(value: JsonObject): boolean {
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0]!.startsWith('$');
}

function merge(base: Json, patch: Json): Json {
  if (!isPlainObject(base) || !isPlainObject(patch) || isEncodedScalar(patch) || isEncodedScalar(base)) return patch;
  const out: JsonObject = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = key in out ? merge(out[key]!, value) : value;
  }
  return out;
}

function toDate(raw: string, where: string): Date {
  const date = new Date(raw);
  if (Number.isNaN(date.getTime())) throw new Error(`${where}: invalid time ${raw}`);
  return date;
}

/** JSON → evaluation context values (bigint, Date, case-insensitive strings). */
function decode(value: Json, where: string): unknown {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`${where}: ${value} is not a safe integer; encode it as {"$bigint": "…"}`);
    return value;
  }
  if (typeof value === 'string' && where === 'context.time.now') return toDate(value, where);
  if (Array.isArray(value)) return value.map((v, i) => decode(v, `${where}[${i}]`));
  if (!isPlainObject(value)) return value;
  if (isEncodedScalar(value)) {
    const [key, raw] = Object.entries(value)[0]!;
    if (typeof raw !== 'string') throw new Error(`${where}: ${key} takes a string`);
    if (key === '$bigint') {
      if (!/^-?\d+$/.test(raw)) throw new Error(`${where}: invalid $bigint ${raw}`);
      return BigInt(raw);
    }
    if (key === '$ci') return caseInsensitive(raw);
    if (key === '$time') return toDate(raw, where);
    throw new Error(`${where}: unknown encoding ${key}`);
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, decode(v, `${where}.${k}`)]));
}

/**
 * The precedence of docs/reference/policies.md "The decision for an activity", stated independently of
 * the engine, to check the data against itself.
 */
function decisionOf(outcomes: readonly PolicyOutcome[]): PolicyDecision {
  if (outcomes.includes('OUTCOME_DENY_EXPLICIT')) return 'deny';
  if (outcomes.includes('OUTCOME_ALLOW')) return 'allow';
  if (outcomes.includes('OUTCOME_REQUIRES_CONSENSUS')) return 'consensus';
  return 'none';
}

const files = readdirSync(DATA_DIR)
  .filter((name) => name.endsWith('.json'))
  .sort();
const suite = files.map((name) => ({ name, data: JSON.parse(readFileSync(DATA_DIR + name, 'utf8')) as EngineFile }));
const allCases = suite.flatMap(({ data }) => data.cases);
const running = allCases.filter((c) => c.knownDeviation === undefined);
const deviations = suite.flatMap(({ name, data }) => data.cases.filter((c) => c.knownDeviation !== undefined).map((c) => ({ file: name, c })));

if (deviations.length > 0) {
  console.warn(
    `policy engine: ${deviations.length} case(s) skipped as known deviations from docs/reference/policies.md:\n` +
      deviations.map(({ file, c }) => `  - ${file} / ${c.name}: ${c.knownDeviation}`).join('\n'),
  );
}

describe('policy engine conformance data', () => {
  it(`has at least ${MIN_CASES} cases, each named uniquely`, () => {
    expect(allCases.length).toBeGreaterThanOrEqual(MIN_CASES);
    const names = allCases.map((c) => c.name);
    expect(names.filter((n, i) => names.indexOf(n) !== i)).toEqual([]);
  });

  it('names its source in every file', () => {
    for (const { name, data } of suite) {
      expect(typeof data.source === 'string' && data.source.trim() !== '', `${name}: "source" is required`).toBe(true);
      expect(Array.isArray(data.cases) && data.cases.length > 0, `${name}: "cases" must not be empty`).toBe(true);
    }
  });

  it('exercises every decision and every per-policy outcome in cases that run', () => {
    const decisions = new Set(running.map((c) => c.expected.decision));
    const outcomes = new Set(running.flatMap((c) => Object.values(c.expected.outcomes ?? {})));
    expect([...DECISIONS].filter((d) => !decisions.has(d))).toEqual([]);
    expect([...OUTCOMES].filter((o) => !outcomes.has(o))).toEqual([]);
  });
});

function buildPolicies(c: Case): CompiledPolicy[] {
  const ids = c.policies.map((p) => p.id);
  expect(ids.filter((id, i) => ids.indexOf(id) !== i), 'policy ids must be unique within a case').toEqual([]);
  const compiled: CompiledPolicy[] = [];
  for (const spec of c.policies) {
    expect(['EFFECT_ALLOW', 'EFFECT_DENY'], `${spec.id}: effect`).toContain(spec.effect);
    const fields = FIELDS.filter((f) => spec[f] !== undefined);
    for (const field of Object.keys(spec.compileError ?? {})) {
      expect(fields, `${spec.id}: compileError names a field the policy does not have`).toContain(field);
    }
    const policy: CompiledPolicy = { id: spec.id, name: spec.id, effect: spec.effect };
    let rejected = false;
    for (const field of fields) {
      const result = compilePolicyExpression(spec[field]!, field);
      const expectedError = spec.compileError?.[field];
      if (expectedError !== undefined) {
        expect(result.ok, `${spec.id}: ${field} must be rejected at create time`).toBe(false);
        if (!result.ok) {
          expect(result.error.message).toContain(`invalid policy ${field}`);
          expect(result.error.message).toContain(expectedError);
        }
        rejected = true;
      } else {
        expect(result.ok ? '' : result.error.message, `${spec.id}: ${field} must compile`).toBe('');
        if (result.ok) policy[field] = result.expression;
      }
    }
    // A rejected policy is never stored, so it takes no part in any decision.
    if (!rejected) compiled.push(policy);
    else expect(c.expected.outcomes?.[spec.id], `${spec.id} is rejected at create time and has no outcome`).toBeUndefined();
  }
  return compiled;
}

function buildContext(c: Case, contexts: Record<string, JsonObject> | undefined): PolicyContext {
  const base = typeof c.context === 'string' ? contexts?.[c.context] : c.context;
  expect(base, `context '${String(c.context)}' must exist`).toBeDefined();
  const context = decode(merge(base!, c.with ?? {}), 'context') as PolicyContext;
  expect(validatePolicyContext(context), 'the context must match the schema of src/policy/context.ts').toEqual([]);
  return context;
}

for (const { name, data } of suite) {
  describe(name, () => {
    for (const c of data.cases) {
      if (c.knownDeviation !== undefined) {
        it.skip(`${c.name} [KNOWN DEVIATION: ${c.knownDeviation}]`, () => {});
        continue;
      }
      it(c.name, () => {
        expect(DECISIONS, 'expected.decision').toContain(c.expected.decision);
        const policies = buildPolicies(c);
        const context = buildContext(c, data.contexts);

        const expectedOutcomes = c.expected.outcomes;
        if (expectedOutcomes) {
          for (const o of Object.values(expectedOutcomes)) expect(OUTCOMES, 'expected outcome').toContain(o);
          expect(Object.keys(expectedOutcomes).sort(), 'outcomes must list every evaluated policy').toEqual(policies.map((p) => p.id).sort());
          expect(decisionOf(Object.values(expectedOutcomes)), 'expected decision must follow from the expected outcomes').toBe(c.expected.decision);
        }

        const { decision, evaluations } = evaluatePolicies(policies, context);
        expect(evaluations.map((e) => e.policyId), 'one evaluation per policy, in order').toEqual(policies.map((p) => p.id));
        const actual = Object.fromEntries(evaluations.map((e) => [e.policyId, e.outcome]));
        if (expectedOutcomes) expect(actual, 'per-policy outcomes').toEqual(expectedOutcomes);
        expect(decision, `decision (outcomes: ${JSON.stringify(actual)})`).toBe(c.expected.decision);
      });
    }
  });
}
