// Tree-walking evaluator of compiled policy expressions (docs/reference/policies.md "The language").
//
// What always holds:
// - No short-circuit (docs/reference/policies.md "The language", docs/reference/policies.md"Policy evaluation"): every operand of `&&`/`||`,
//   both sides of a comparison and every element of a comprehension are evaluated, and if any of
//   them fails the whole expression fails. `wallet.id == 'w' || private_key.id == 'k'` therefore
//   always fails, as the reference docs say. Failures are values inside the evaluator; when several
//   clauses fail, the most severe is reported (errors.ts `EVAL_ERROR_SEVERITY`), so a `missing`
//   keyword in one clause cannot mask exhausted budgets or malformed data in another.
// - The result is `{ok: true, value: boolean}` only when everything evaluated cleanly to a bool.
//   Every other outcome is `{ok: false, error}`; the engine decides what that means (outcome.ts).
// - Nothing is trusted: every operation re-checks the types of its operands at run time (the
//   context is request data; the checker's verdict is not relied upon). Context values are read
//   as own properties only, converted lazily (values.ts), and never coerced.
// - Budgets (limits.ts): each node visited and each list element touched costs a step; a list in the
//   context longer than `maxRuntimeListLength` or a run over `maxEvalSteps` aborts with `limit`.
// - Slices clamp to the value's length (`'0x'[0..10]` is `'0x'`): a short value can never equal a
//   longer literal, and published policies slice call data of any length without a guard (corpus
//   P32, P120: `eth.tx.data[0..10]` on a plain ETH transfer) in a language that cannot
//   short-circuit, so an error there would make them fail on every plain transfer. A start after
//   the end, or a negative bound, is an `index` error; so is an index outside a list or string.

import type { Comprehension, Expr, Span } from './ast.js';
import type { CompiledPolicyExpression } from './compile.js';
import type { PolicyContext } from './context.js';
import type { EvalErrorKind, PolicyEvalError } from './errors.js';
import { EVAL_ERROR_SEVERITY, aOrAn, positionAt } from './errors.js';
import type { FnResult, FunctionEnv } from './functions.js';
import { lookupFunction } from './functions.js';
import type { PolicyLimits } from './limits.js';
import { resolveLimits } from './limits.js';
import { KEYWORDS_BY_KIND } from './schema.js';
import type { HostObject, Value } from './values.js';
import {
  CaseInsensitiveText,
  TimestampValue,
  codePoints,
  isHostObject,
  orderedCompare,
  ownProperty,
  readHost,
  runtimeTypeName,
  scalarEquals,
  stringOf,
} from './values.js';

export type EvaluationResult =
  | { readonly ok: true; readonly value: boolean; readonly steps: number }
  | { readonly ok: false; readonly error: PolicyEvalError; readonly steps: number };

export interface EvaluateOptions {
  readonly limits?: Partial<PolicyLimits>;
}

/** A failed sub-expression. */
class Failure {
  constructor(
    readonly kind: EvalErrorKind,
    readonly reason: string,
    readonly span: Span,
  ) {}
}

/** Thrown when a budget runs out: the evaluation stops at once, whatever else is pending. */
class BudgetExhausted extends Error {
  constructor(
    readonly reason: string,
    readonly span: Span,
  ) {
    super(reason);
  }
}

type Result = Value | Failure;

/** Bound comprehension variables, innermost first. */
interface Scope {
  readonly name: string;
  readonly value: Value;
  readonly parent: Scope | null;
}

/** A substring of `original`, case-insensitive if `original` was. */
function sameCase(original: Value, text: string): Value {
  return original instanceof CaseInsensitiveText ? new CaseInsensitiveText(text) : text;
}

function worse(current: Failure | null, next: Failure): Failure {
  return current === null || EVAL_ERROR_SEVERITY[next.kind] > EVAL_ERROR_SEVERITY[current.kind] ? next : current;
}

/** The keywords each field may read, as sets (built once, not per evaluation). */
const KEYWORD_SETS: Readonly<Record<string, ReadonlySet<string>>> = Object.fromEntries(
  Object.entries(KEYWORDS_BY_KIND).map(([kind, keywords]) => [kind, new Set<string>(keywords)]),
);

class Evaluation {
  steps = 0;
  private readonly keywords: ReadonlySet<string>;

  constructor(
    private readonly compiled: CompiledPolicyExpression,
    private readonly context: HostObject,
    private readonly limits: PolicyLimits,
  ) {
    this.keywords = KEYWORD_SETS[compiled.kind] ?? new Set();
  }

  /** The source text of a node, for messages (`eth.tx.to`, `transfer.amount`). */
  private text(span: Span): string {
    return this.compiled.source.slice(span.start, span.end);
  }

  private charge(steps: number, span: Span): void {
    this.steps += steps;
    if (this.steps > this.limits.maxEvalSteps) {
      throw new BudgetExhausted(`evaluation exceeded ${this.limits.maxEvalSteps} steps`, span);
    }
  }

  /** Converts a raw context value read at `span`. */
  private read(raw: unknown, span: Span, absent: () => string): Result {
    const read = readHost(raw);
    if (read.tag === 'value') return read.value;
    if (read.tag === 'absent') return new Failure('missing', `MissingField: ${absent()}`, span);
    return new Failure(read.kind, `${this.text(span)}: ${read.reason}`, span);
  }

  private checkedList(value: Value, span: Span): Failure | readonly unknown[] {
    if (!Array.isArray(value)) return new Failure('type', `${this.text(span)} is ${aOrAn(runtimeTypeName(value))}, not a list`, span);
    if (value.length > this.limits.maxRuntimeListLength) {
      throw new BudgetExhausted(`${this.text(span)} has ${value.length} elements, more than the limit of ${this.limits.maxRuntimeListLength}`, span);
    }
    return value;
  }

  /** The converted elements of the list value of the node at `span`. */
  private listItems(value: Value, span: Span): Failure | Value[] {
    const list = this.checkedList(value, span);
    if (list instanceof Failure) return list;
    this.charge(list.length, span);
    const items: Value[] = [];
    for (let i = 0; i < list.length; i++) {
      const item = this.read(list[i], span, () => `element ${i} of ${this.text(span)} is null`);
      if (item instanceof Failure) return item;
      items.push(item);
    }
    return items;
  }

  run(): EvaluationResult {
    const result = this.eval(this.compiled.ast, null);
    if (result instanceof Failure) return { ok: false, error: this.toError(result.kind, result.reason, result.span), steps: this.steps };
    if (typeof result !== 'boolean') {
      return {
        ok: false,
        error: this.toError('type', `the expression evaluated to ${aOrAn(runtimeTypeName(result))}, not a bool`, this.compiled.ast.span),
        steps: this.steps,
      };
    }
    return { ok: true, value: result, steps: this.steps };
  }

  toError(kind: EvalErrorKind, message: string, span: Span): PolicyEvalError {
    return Object.freeze({ kind, message, span, position: positionAt(this.compiled.source, span.start) });
  }

  eval(node: Expr, scope: Scope | null): Result {
    this.charge(1, node.span);
    switch (node.kind) {
      case 'bool':
      case 'int':
      case 'string':
        return node.value;
      case 'list':
        return this.evalAll(node.elements, scope, (values) => Object.freeze(values));
      case 'ident':
        return this.evalIdent(node.name, node.span, scope);
      case 'member': {
        const value = this.evalMember(node.object, node.field, node.span, scope);
        return typeof value === 'string' && this.compiled.caseInsensitiveReads.has(node) ? new CaseInsensitiveText(value) : value;
      }
      case 'index':
        return this.evalAll([node.object, node.index], scope, ([object, index]) => this.index(object!, index!, node.object.span, node.span));
      case 'slice':
        return this.evalAll([node.object, node.start, node.end], scope, ([object, start, end]) => this.slice(object!, start!, end!, node.span));
      case 'not':
        return this.evalAll([node.operand], scope, ([operand]) =>
          typeof operand === 'boolean' ? !operand : new Failure('type', `'!' needs a bool, got ${runtimeTypeName(operand!)}`, node.span),
        );
      case 'logical':
        return this.evalAll(node.operands, scope, (values) => {
          for (const [i, value] of values.entries()) {
            if (typeof value !== 'boolean') {
              return new Failure('type', `an operand of '${node.op}' is ${aOrAn(runtimeTypeName(value))}, not a bool`, node.operands[i]!.span);
            }
          }
          return node.op === '&&' ? values.every(Boolean) : values.some(Boolean);
        });
      case 'relation':
        return this.evalAll([node.left, node.right], scope, ([left, right]) => this.relation(node.op, left!, right!, node.right.span, node.opSpan));
      case 'call':
        return this.evalCall(node.target, node.name, node.args, node.span, scope);
      case 'comprehension':
        return this.evalComprehension(node, scope);
    }
  }

  /**
   * Evaluates every node (no short-circuit) and hands the values to `then`, or returns the most
   * severe failure among them.
   */
  private evalAll(nodes: readonly Expr[], scope: Scope | null, then: (values: Value[]) => Result): Result {
    let failure: Failure | null = null;
    const values: Value[] = [];
    for (const node of nodes) {
      const result = this.eval(node, scope);
      if (result instanceof Failure) failure = worse(failure, result);
      else values.push(result);
    }
    return failure ?? then(values);
  }

  private evalIdent(name: string, span: Span, scope: Scope | null): Result {
    for (let s = scope; s; s = s.parent) if (s.name === name) return s.value;
    if (!this.keywords.has(name)) {
      // Unreachable for checked expressions: the checker only lets this field's keywords through.
      return new Failure('internal', `'${name}' is not a keyword of a policy ${this.compiled.kind}`, span);
    }
    return this.read(ownProperty(this.context, name), span, () => `${name} is not available for this activity`);
  }

  private evalMember(objectNode: Expr, field: string, span: Span, scope: Scope | null): Result {
    const object = this.eval(objectNode, scope);
    if (object instanceof Failure) return object;
    if (!isHostObject(object)) return new Failure('type', `${this.text(objectNode.span)} is ${aOrAn(runtimeTypeName(object))}, it has no field '${field}'`, span);
    return this.read(ownProperty(object, field), span, () => `${this.text(span)} is not available for this activity`);
  }

  private index(object: Value, index: Value, objectSpan: Span, span: Span): Result {
    if (typeof index === 'bigint' && Array.isArray(object)) {
      const list = this.checkedList(object, objectSpan);
      if (list instanceof Failure) return list;
      if (index < 0n || index >= BigInt(list.length)) {
        return new Failure('index', `index ${index} is out of range for ${this.text(objectSpan)} (length ${list.length})`, span);
      }
      return this.read(list[Number(index)], span, () => `${this.text(span)} is null`);
    }
    const text = stringOf(object);
    if (typeof index === 'bigint' && text !== null) {
      const points = codePoints(text);
      if (index < 0n || index >= BigInt(points.length)) {
        return new Failure('index', `index ${index} is out of range for ${this.text(objectSpan)} (length ${points.length})`, span);
      }
      return sameCase(object, points.slice(Number(index), Number(index) + 1));
    }
    if (typeof index === 'string' && isHostObject(object)) {
      return this.read(ownProperty(object, index), span, () => `${this.text(objectSpan)} has no entry '${index}'`);
    }
    return new Failure('type', `${this.text(objectSpan)} (${aOrAn(runtimeTypeName(object))}) cannot be indexed with ${aOrAn(runtimeTypeName(index))}`, span);
  }

  private slice(object: Value, start: Value, end: Value, span: Span): Result {
    if (typeof start !== 'bigint' || typeof end !== 'bigint') {
      return new Failure('type', `slice bounds must be ints, got ${runtimeTypeName(start)} and ${runtimeTypeName(end)}`, span);
    }
    if (start < 0n || end < 0n) return new Failure('index', `slice bounds must not be negative (${start}..${end})`, span);
    if (start > end) return new Failure('index', `slice start ${start} is after its end ${end}`, span);
    let view: { readonly length: number; slice(s: number, e: number): Value };
    const text = stringOf(object);
    if (text !== null) {
      this.charge(Math.floor(text.length / 1024), span);
      const points = codePoints(text);
      view = { length: points.length, slice: (s, e) => sameCase(object, points.slice(s, e)) };
    } else if (Array.isArray(object)) {
      const list = this.checkedList(object, span);
      if (list instanceof Failure) return list;
      view = { length: list.length, slice: (s, e) => Object.freeze(list.slice(s, e)) };
    } else {
      return new Failure('type', `only lists and strings can be sliced, not ${aOrAn(runtimeTypeName(object))}`, span);
    }
    const length = BigInt(view.length);
    const clamp = (bound: bigint) => Number(bound < length ? bound : length);
    return view.slice(clamp(start), clamp(end));
  }

  private relation(op: string, left: Value, right: Value, rightSpan: Span, span: Span): Result {
    if (op === 'in') {
      const items = this.listItems(right, rightSpan);
      if (items instanceof Failure) return items;
      let found = false;
      for (const item of items) {
        const equal = scalarEquals(left, item);
        if (equal === null) return new Failure('type', `'in' cannot compare ${runtimeTypeName(left)} with ${runtimeTypeName(item)}`, span);
        found ||= equal;
      }
      return found;
    }
    if (op === '==' || op === '!=') {
      const equal = scalarEquals(left, right);
      if (equal === null) return new Failure('type', `cannot compare ${runtimeTypeName(left)} with ${runtimeTypeName(right)} using '${op}'`, span);
      return op === '==' ? equal : !equal;
    }
    const order = orderedCompare(left, right);
    if (order === null) return new Failure('type', `cannot order ${runtimeTypeName(left)} and ${runtimeTypeName(right)} with '${op}'`, span);
    switch (op) {
      case '<':
        return order < 0;
      case '<=':
        return order <= 0;
      case '>':
        return order > 0;
      default:
        return order >= 0;
    }
  }

  private evalCall(target: Expr | null, name: string, args: readonly Expr[], span: Span, scope: Scope | null): Result {
    const nodes = target ? [target, ...args] : args;
    return this.evalAll(nodes, scope, (values) => {
      const def = lookupFunction(name, target !== null);
      if (!def) return new Failure('internal', `unknown function '${name}'`, span);
      const receiver = target ? values[0]! : null;
      const argValues = target ? values.slice(1) : values;
      const receiverSpan = target ? target.span : span;
      const env: FunctionEnv = {
        now: () => this.now(span),
        listItems: (value) => {
          const items = this.listItems(value, receiverSpan);
          return items instanceof Failure ? { ok: false, kind: items.kind, reason: items.reason } : { ok: true, value: items };
        },
        listLength: (value) => {
          const list = this.checkedList(value, receiverSpan);
          return list instanceof Failure ? { ok: false, kind: list.kind, reason: list.reason } : { ok: true, value: list.length };
        },
        charge: (steps) => this.charge(steps, span),
      };
      const result = def.invoke(receiver, argValues, env);
      return result.ok ? result.value : new Failure(result.kind, `${name}(): ${result.reason}`, span);
    });
  }

  /** `time.now` for CronSpan. */
  private now(span: Span): FnResult<TimestampValue> {
    const time = this.read(ownProperty(this.context, 'time'), span, () => 'time is not available');
    if (time instanceof Failure) return { ok: false, kind: time.kind, reason: time.reason };
    if (!isHostObject(time)) return { ok: false, kind: 'type', reason: 'time is not a struct' };
    const now = this.read(ownProperty(time, 'now'), span, () => 'time.now is not available');
    if (now instanceof Failure) return { ok: false, kind: now.kind, reason: now.reason };
    if (!(now instanceof TimestampValue)) return { ok: false, kind: 'type', reason: `time.now is ${aOrAn(runtimeTypeName(now))}, not a timestamp` };
    return { ok: true, value: now };
  }

  private evalComprehension(node: Comprehension, scope: Scope | null): Result {
    const range = this.eval(node.range, scope);
    if (range instanceof Failure) return range;
    const items = this.listItems(range, node.range.span);
    if (items instanceof Failure) return items;
    let failure: Failure | null = null;
    const kept: Value[] = [];
    let all = true;
    let any = false;
    for (const item of items) {
      const result = this.eval(node.predicate, { name: node.variable, value: item, parent: scope });
      if (result instanceof Failure) {
        failure = worse(failure, result);
      } else if (typeof result !== 'boolean') {
        failure = worse(failure, new Failure('type', `the predicate of ${node.mode}() is ${aOrAn(runtimeTypeName(result))}, not a bool`, node.predicate.span));
      } else {
        all &&= result;
        any ||= result;
        if (result) kept.push(item);
      }
    }
    if (failure) return failure;
    switch (node.mode) {
      case 'all':
        return all;
      case 'any':
        return any;
      case 'filter':
        return Object.freeze(kept);
    }
  }
}

/**
 * Evaluates a compiled expression against one request's context.
 *
 * Never throws for any context: malformed data, missing keywords, exhausted budgets and even a
 * getter that throws come back as `{ok: false, error}` with a position in the expression.
 *
 * @example
 * const r = evaluatePolicyExpression(compiled, { eth: { tx } });
 * const matches = r.ok ? r.value : evaluationErrorApplies(effect, r.error);
 */
export function evaluatePolicyExpression(expression: CompiledPolicyExpression, context: PolicyContext, options: EvaluateOptions = {}): EvaluationResult {
  const limits = resolveLimits(options.limits);
  const root: unknown = context;
  const span = expression.ast.span;
  if (!isHostObject(root)) {
    return { ok: false, error: Object.freeze({ kind: 'internal', message: 'the evaluation context must be an object', span, position: positionAt(expression.source, span.start) }), steps: 0 };
  }
  const evaluation = new Evaluation(expression, root, limits);
  try {
    return evaluation.run();
  } catch (err) {
    if (err instanceof BudgetExhausted) return { ok: false, error: evaluation.toError('limit', err.reason, err.span), steps: evaluation.steps };
    // A getter in the context threw, or the stack ran out on a hand-built AST: report, never match.
    const reason = err instanceof Error ? err.message : String(err);
    return { ok: false, error: evaluation.toError('internal', `evaluation failed: ${reason}`, span), steps: evaluation.steps };
  }
}
