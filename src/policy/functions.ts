// The function registry of the policy language (docs/reference/policies.md "The language": time and
// case functions): methods `list.contains(v)`, `list.count()` and globals `Timestamp(s)`,
// `CronSpan(cron, duration, tz)`, `CaseInsensitiveString(s)`. The macros `all`/`any`/`filter` are not
// here: they bind a variable and are expanded by the parser (macros.ts).
//
// Each entry carries its static signature check (used by checker.ts at create time), a validation of
// literal arguments (so `Timestamp('2026-13-01T00:00:00Z')` or a bad cron is rejected when the policy
// is created, not on every request) and its run-time implementation. Adding a function is adding an
// entry; neither the checker nor the evaluator switches on function names.

import type { EvalErrorKind, ExpressionKind } from './errors.js';
import type { PolicyType } from './types.js';
import { aOrAn } from './errors.js';
import { BOOL, INT, STRING, TIMESTAMP, equalityCompatible, typeName } from './types.js';
import { cronSpanContains, parseCronSpan, parseTimestamp } from './time.js';
import type { Value } from './values.js';
import type { TimestampValue } from './values.js';
import { CaseInsensitiveText, runtimeTypeName, scalarEquals, stringOf } from './values.js';

/** Outcome of one function invocation; failures get the call's span from the evaluator. */
export type FnResult<T = Value> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly kind: EvalErrorKind; readonly reason: string };

/** What the evaluator lends a function while it runs. */
export interface FunctionEnv {
  /** `time.now` from the context. */
  now(): FnResult<TimestampValue>;
  /** The elements of a list, converted, after the length and step budgets. @throws on a budget */
  listItems(list: Value): FnResult<readonly Value[]>;
  /** The length of a list, after the length budget. @throws on a budget */
  listLength(list: Value): FnResult<number>;
  /** Charges extra evaluation steps. @throws when the step budget is exhausted */
  charge(steps: number): void;
}

export interface FunctionDef {
  readonly name: string;
  /** True for methods (`x.name(…)`), false for global functions (`Name(…)`). */
  readonly method: boolean;
  /** How the call is written, for messages. */
  readonly usage: string;
  readonly arity: number;
  /** The fields whose expressions may call it; all fields when absent. */
  readonly kinds?: readonly ExpressionKind[];
  /** The result type, or the reason the argument types are wrong. */
  check(receiver: PolicyType | null, args: readonly PolicyType[]): PolicyType | string;
  /** Compile-time validation when every argument is a literal: a reason, or null when valid. */
  validateLiterals?(args: readonly Value[]): string | null;
  invoke(receiver: Value | null, args: readonly Value[], env: FunctionEnv): FnResult;
}

function ok<T>(value: T): FnResult<T> {
  return { ok: true, value };
}

function typeError(reason: string): FnResult<never> {
  return { ok: false, kind: 'type', reason };
}

function expectString(value: Value, what: string): FnResult<string> {
  const text = stringOf(value);
  return text !== null ? ok(text) : typeError(`${what} must be a string, got ${runtimeTypeName(value)}`);
}

/** Static check that every argument is a string (or dyn). */
function stringArgs(name: string, args: readonly PolicyType[]): string | null {
  const bad = args.findIndex((t) => t.kind !== 'string' && t.kind !== 'dyn');
  return bad < 0 ? null : `argument ${bad + 1} of ${name}() must be a string, got ${typeName(args[bad]!)}`;
}

const contains: FunctionDef = {
  name: 'contains',
  method: true,
  usage: 'list.contains(value)',
  arity: 1,
  check(receiver, [arg]) {
    if (receiver!.kind === 'dyn') return BOOL;
    if (receiver!.kind !== 'list') return `contains() applies to lists, not ${typeName(receiver!)}`;
    if (!equalityCompatible(receiver!.elem, arg!)) return `cannot look for ${aOrAn(typeName(arg!))} in ${aOrAn(typeName(receiver!))}`;
    return BOOL;
  },
  invoke(receiver, [needle], env) {
    const items = env.listItems(receiver!);
    if (!items.ok) return items;
    let found = false;
    for (const item of items.value) {
      const equal = scalarEquals(item, needle!);
      if (equal === null) return typeError(`contains() cannot compare ${runtimeTypeName(item)} with ${runtimeTypeName(needle!)}`);
      found ||= equal;
    }
    return ok(found);
  },
};

const count: FunctionDef = {
  name: 'count',
  method: true,
  usage: 'list.count()',
  arity: 0,
  check(receiver) {
    if (receiver!.kind === 'dyn' || receiver!.kind === 'list') return INT;
    return `count() applies to lists, not ${typeName(receiver!)}`;
  },
  invoke(receiver, _args, env) {
    const length = env.listLength(receiver!);
    return length.ok ? ok(BigInt(length.value)) : length;
  },
};

const timestamp: FunctionDef = {
  name: 'Timestamp',
  method: false,
  usage: "Timestamp('2026-01-01T00:00:00Z')",
  arity: 1,
  check(_receiver, args) {
    return stringArgs('Timestamp', args) ?? TIMESTAMP;
  },
  validateLiterals([text]) {
    const parsed = parseTimestamp(text as string);
    return parsed.ok ? null : parsed.reason;
  },
  invoke(_receiver, [text]) {
    const arg = expectString(text!, 'the argument of Timestamp()');
    if (!arg.ok) return arg;
    const parsed = parseTimestamp(arg.value);
    return parsed.ok ? ok(parsed.value) : { ok: false, kind: 'value', reason: parsed.reason };
  },
};

const cronSpan: FunctionDef = {
  name: 'CronSpan',
  method: false,
  usage: "CronSpan('0 9 * * 1-5', '8h', 'America/New_York')",
  arity: 3,
  kinds: ['time'],
  check(_receiver, args) {
    return stringArgs('CronSpan', args) ?? BOOL;
  },
  validateLiterals([cron, duration, zone]) {
    const parsed = parseCronSpan(cron as string, duration as string, zone as string);
    return parsed.ok ? null : parsed.reason;
  },
  invoke(_receiver, args, env) {
    const strings: string[] = [];
    for (const [i, arg] of args.entries()) {
      const s = expectString(arg, `argument ${i + 1} of CronSpan()`);
      if (!s.ok) return s;
      strings.push(s.value);
    }
    const spec = parseCronSpan(strings[0]!, strings[1]!, strings[2]!);
    if (!spec.ok) return { ok: false, kind: 'value', reason: spec.reason };
    const now = env.now();
    if (!now.ok) return now;
    // Walking back over at most 8 days of candidate fire times: charge for the worst case.
    env.charge(16);
    return ok(cronSpanContains(spec.value, now.value));
  },
};

const caseInsensitiveString: FunctionDef = {
  name: 'CaseInsensitiveString',
  method: false,
  usage: 'CaseInsensitiveString(wallet_account.address)',
  arity: 1,
  check(_receiver, args) {
    return stringArgs('CaseInsensitiveString', args) ?? STRING;
  },
  invoke(_receiver, [value], env) {
    const arg = expectString(value!, 'the argument of CaseInsensitiveString()');
    if (!arg.ok) return arg;
    env.charge(Math.floor(arg.value.length / 1024));
    // [branch: andrew/policy-address-casing] describes it as lowercasing both sides of a comparison.
    // Returning a case-insensitive value gives the same result for the documented form
    // `CaseInsensitiveString(a) == CaseInsensitiveString(b)`, and also makes the one-sided
    // `CaseInsensitiveString(a) == '0xAbC…'` compare ignoring case, as the name promises.
    return ok(new CaseInsensitiveText(arg.value));
  },
};

const REGISTRY: ReadonlyMap<string, FunctionDef> = new Map([contains, count, timestamp, cronSpan, caseInsensitiveString].map((def) => [def.name, def]));

/** The function called as `x.name(…)` (method) or `name(…)` (global), if it exists. */
export function lookupFunction(name: string, method: boolean): FunctionDef | undefined {
  const def = REGISTRY.get(name);
  return def && def.method === method ? def : undefined;
}

/** Whether `name` exists with the other calling style, for "did you mean" messages. */
export function otherStyle(name: string, method: boolean): FunctionDef | undefined {
  const def = REGISTRY.get(name);
  return def && def.method !== method ? def : undefined;
}
