// Conformance runner for the policy language corpus in test/policy/corpus/*.json (one runner for all
// files, after cel-go conformance/conformance_test.go over cel-spec's testdata).
//
// File format:
//   { "source": "<where the cases come from: a published page or a docs/reference/ section>",
//     "description": "…",
//     "placeholders": { "<PLACEHOLDER>": "replacement text", … },   // substitutions used below
//     "contexts": { "<name>": <context>, … },                       // reusable evaluation contexts
//     "cases": [ <case>, … ] }
//   case:
//     { "id": "P27" | "P5-quoted" | "B.4-3" | …, "title": "…", "origin": "<doc file>", "effect": "EFFECT_ALLOW",
//       "original": { "condition": "<expression as published, placeholders kept>" , … },
//       "rewritten": "<why the expressions differ from `original`>",      // variants only
//       "placeholders": { … },                                        // case-level additions
//       "condition" | "consensus" | "time": "<expression as compiled>",
//       "compileError": { "<field>": "<substring of the create-time error>" },
//       "evaluations": [ { "name": "…", "context": "<name>" | <context>, "with": <patch>,
//                          "expect": { "<field>": true | false | "error:<kind>" },
//                          "applies": true | false } ],             // optional: outcome.ts verdict
//       "note": "…" }
// Context encoding: JSON numbers must be safe integers; {"$int": "<decimal>"} is a bigint,
// {"$time": "<ISO 8601>"} a Date, {"$ci": "<text>"} a case-insensitive string (values.ts),
// {"$number": "<decimal>"} a JS number that may be unsafe on purpose (to test that it is refused), and
// {"$unavailable": "<reason>"} a value the pipeline cannot provide (a velocity control that vanished).
// `with` is merged into the named context: objects merge key by key, `null` deletes a key,
// anything else (arrays included) replaces.
//
// What the runner enforces beyond the expectations themselves:
// - a case with `original` and no `rewritten` must equal `original` after placeholder
//   substitution, so the data cannot drift from the published text;
// - every evaluation states the expected result of every field the case has;
// - every case can fail: it has evaluations or an expected compile error;
// - every published policy that compiles (ids P<n>, variants included) has at least one context in
//   which all its fields hold and one in which some field does not.

import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { CompiledPolicyExpression, EvaluationResult, ExpressionKind, PolicyContext, PolicyEffect } from '../../../src/policy/index.js';
import { Unavailable, caseInsensitive, compilePolicyExpression, evaluatePolicyExpression, fieldMatches } from '../../../src/policy/index.js';

const CORPUS_DIR = fileURLToPath(new URL('../../policy/corpus/', import.meta.url));
const FIELDS: readonly ExpressionKind[] = ['condition', 'consensus', 'time'];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Expectation = boolean | `error:${string}`;

interface Evaluation {
  name: string;
  context?: string | { [key: string]: Json };
  with?: { [key: string]: Json };
  expect: Partial<Record<ExpressionKind, Expectation>>;
  applies?: boolean;
}

interface Case {
  id: string;
  title?: string;
  effect?: PolicyEffect;
  original?: Partial<Record<ExpressionKind, string>>;
  rewritten?: string;
  placeholders?: Record<string, string>;
  condition?: string;
  consensus?: string;
  time?: string;
  compileError?: Partial<Record<ExpressionKind, string>>;
  evaluations?: Evaluation[];
  note?: string;
}

interface CorpusFile {
  source: string;
  description: string;
  placeholders?: Record<string, string>;
  contexts?: Record<string, { [key: string]: Json }>;
  cases: Case[];
}

function isPlainObject(value: Json | undefined): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isEncodedScalar(value: { [key: string]: Json }): boolean {
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0]!.startsWith('$');
}

function merge(base: Json, patch: Json): Json {
  if (!isPlainObject(base) || !isPlainObject(patch) || isEncodedScalar(patch) || isEncodedScalar(base)) return patch;
  const out: { [key: string]: Json } = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = key in out ? merge(out[key]!, value) : value;
  }
  return out;
}

/** JSON → evaluation context values (bigint, Date, case-insensitive strings). */
function decode(value: Json, where: string): unknown {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`${where}: ${value} is not a safe integer; encode it as {"$int": "…"}`);
    return value;
  }
  if (Array.isArray(value)) return value.map((v, i) => decode(v, `${where}[${i}]`));
  if (!isPlainObject(value)) return value;
  if (isEncodedScalar(value)) {
    const [key, raw] = Object.entries(value)[0]!;
    if (typeof raw !== 'string') throw new Error(`${where}: ${key} takes a string`);
    if (key === '$int') return BigInt(raw);
    if (key === '$ci') return caseInsensitive(raw);
    if (key === '$number') return Number(raw);
    if (key === '$unavailable') return new Unavailable(raw);
    if (key === '$time') {
      const date = new Date(raw);
      if (Number.isNaN(date.getTime())) throw new Error(`${where}: invalid $time ${raw}`);
      return date;
    }
    throw new Error(`${where}: unknown encoding ${key}`);
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, decode(v, `${where}.${k}`)]));
}

function substitute(text: string, placeholders: Record<string, string>): string {
  // Longest keys first, so `<ADDRESS_1>` is never clobbered by `<ADDRESS>`.
  return Object.keys(placeholders)
    .sort((a, b) => b.length - a.length)
    .reduce((out, key) => out.split(key).join(placeholders[key]!), text);
}

function describeResult(result: EvaluationResult): string {
  return result.ok ? String(result.value) : `error:${result.error.kind} (${result.error.message})`;
}

function matches(result: EvaluationResult, expected: Expectation): boolean {
  if (typeof expected === 'boolean') return result.ok && result.value === expected;
  return !result.ok && `error:${result.error.kind}` === expected;
}

const files = readdirSync(CORPUS_DIR)
  .filter((name) => name.endsWith('.json'))
  .sort();

const corpus = files.map((name) => ({ name, data: JSON.parse(readFileSync(CORPUS_DIR + name, 'utf8')) as CorpusFile }));

describe('policy conformance corpus', () => {
  it('covers every Appendix A policy (P1–P158) exactly once', () => {
    const ids = corpus.flatMap(({ data }) => data.cases.map((c) => c.id)).filter((id) => /^P\d+$/.test(id));
    const expected = Array.from({ length: 158 }, (_, i) => `P${i + 1}`);
    expect([...ids].sort()).toEqual([...expected].sort());
  });

  it('has unique case ids', () => {
    const ids = corpus.flatMap(({ data }) => data.cases.map((c) => c.id));
    expect(ids.length).toBe(new Set(ids).size);
  });
});

for (const { name, data } of corpus) {
  describe(name, () => {
    for (const c of data.cases) {
      it(`${c.id}${c.title ? ` — ${c.title}` : ''}`, () => {
        const fields = FIELDS.filter((f) => c[f] !== undefined);
        expect(fields.length, 'a case needs at least one expression').toBeGreaterThan(0);
        expect(c.evaluations?.length || c.compileError, 'a case must be able to fail').toBeTruthy();

        if (c.original && !c.rewritten) {
          const placeholders = { ...data.placeholders, ...c.placeholders };
          for (const field of fields) {
            expect(c[field], `${field} must be the published text with placeholders substituted`).toBe(substitute(c.original[field]!, placeholders));
          }
        }

        const compiled = new Map<ExpressionKind, CompiledPolicyExpression>();
        for (const field of fields) {
          const result = compilePolicyExpression(c[field]!, field);
          const expectedError = c.compileError?.[field];
          if (expectedError !== undefined) {
            expect(result.ok, `${field} must be rejected at compile time`).toBe(false);
            if (!result.ok) {
              expect(result.error.message).toContain(`invalid policy ${field}`);
              expect(result.error.message).toContain(expectedError);
            }
          } else {
            expect(result.ok ? '' : result.error.message, `${field} must compile`).toBe('');
            if (result.ok) compiled.set(field, result.expression);
          }
        }
        if (c.compileError) {
          expect(c.evaluations, 'a case that does not compile cannot be evaluated').toBeUndefined();
          return;
        }

        if (/^P\d+/.test(c.id)) {
          const verdicts = (c.evaluations ?? []).map((e) => Object.values(e.expect).every((v) => v === true));
          expect(verdicts, 'a published policy needs a matching and a non-matching context').toContain(true);
          expect(verdicts, 'a published policy needs a matching and a non-matching context').toContain(false);
        }

        for (const evaluation of c.evaluations ?? []) {
          const base = typeof evaluation.context === 'string' ? data.contexts?.[evaluation.context] : (evaluation.context ?? {});
          expect(base, `context '${String(evaluation.context)}' must exist`).toBeDefined();
          const context = decode(merge(base!, evaluation.with ?? {}), evaluation.name) as PolicyContext;
          const verdicts: boolean[] = [];
          for (const field of fields) {
            const expected = evaluation.expect[field];
            expect(expected, `evaluation '${evaluation.name}' must state the expected ${field}`).toBeDefined();
            const result = evaluatePolicyExpression(compiled.get(field)!, context);
            expect(matches(result, expected!), `${evaluation.name}: ${field} expected ${String(expected)}, got ${describeResult(result)}`).toBe(true);
            if (c.effect) verdicts.push(fieldMatches(c.effect, result));
          }
          if (evaluation.applies !== undefined) {
            expect(c.effect, 'applies needs an effect').toBeDefined();
            expect(verdicts.every(Boolean), `${evaluation.name}: policy applies`).toBe(evaluation.applies);
          }
        }
      });
    }
  });
}
