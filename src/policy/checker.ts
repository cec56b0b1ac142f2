// Create-time checker of the policy language (docs/reference/policies.md "The language" types, docs/reference/policies.md "Keywords" keywords per
// field and struct fields). Run by `compilePolicyExpression` after parsing.
//
// It rejects, with a position, everything that would make the expression fail on *every* request:
// an unknown identifier or a keyword of another field (`approvers` in a condition), an unknown field
// (`eth.tx.too`), an unknown function or wrong arity, a comparison between types that can never be
// equal (`eth.tx.chain_id == '1'`, docs/reference/policies.md: the language is strongly typed, so such a policy
// could only ever produce `OUTCOME_ERROR`), an invalid literal argument (`Timestamp('yesterday')`),
// a statically negative index, or a result that is not a bool ("Every expression field must
// evaluate to bool").
//
// It deliberately does not reject what depends on the request: whether a keyword is populated,
// out-of-range indexes, or operations on `dyn` data (ABI arguments, EIP-712 values). Those are
// evaluation errors. The evaluator re-checks every type at run time and never trusts this pass, so a
// checker bug can reject a good policy but cannot make a bad one match.

import type { Comprehension, Expr, Member, Span } from './ast.js';
import type { Diagnostic, ExpressionKind } from './errors.js';
import { aOrAn, makeDiagnostic } from './errors.js';
import { lookupFunction, otherStyle } from './functions.js';
import { KEYWORDS_BY_KIND, ROOT, kindOfKeyword } from './schema.js';
import type { PolicyType, StructType } from './types.js';
import { BOOL, DYN, INT, STRING, equalityCompatible, listOf, orderingCompatible, typeName } from './types.js';
import type { Value } from './values.js';

/** Bound comprehension variables, innermost first. */
interface Scope {
  readonly name: string;
  readonly type: PolicyType;
  readonly parent: Scope | null;
}

/** Pointers from functions other languages have to what this one offers. */
const UNSUPPORTED_HINTS: Readonly<Record<string, string>> = {
  exists: '; use any(item, predicate)',
  exists_one: "; use filter(item, predicate).count() == 1",
  size: '; use count()',
  map: '; the language has no map(); use filter() or any()/all()',
  startsWith: '; compare a slice instead, e.g. x[0..10] == \'0xa9059cbb\'',
  lower: '; use CaseInsensitiveString(x)',
};

/** Stop collecting after this many problems; the first one is what the API reports anyway. */
const MAX_DIAGNOSTICS = 8;

function lookup(scope: Scope | null, name: string): PolicyType | undefined {
  for (let s = scope; s; s = s.parent) if (s.name === name) return s.type;
  return undefined;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

function suggestion(name: string, candidates: Iterable<string>): string {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of candidates) {
    const d = editDistance(name, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best ? `; did you mean '${best}'?` : '';
}

/** The value of a literal node, or undefined for anything else. */
function literalValue(node: Expr): Value | undefined {
  return node.kind === 'string' || node.kind === 'int' || node.kind === 'bool' ? node.value : undefined;
}

export interface CheckResult {
  /** Every problem found; empty when the expression is valid. */
  readonly diagnostics: readonly Diagnostic[];
  /** Member nodes that read a case-insensitive field (schema.ts `CI_STRING`). */
  readonly caseInsensitive: ReadonlySet<Member>;
  /** The velocity controls the expression reads (`controls.<identifier>`). */
  readonly controls: ReadonlySet<string>;
  /** The top-level keywords the expression reads (`eth`, `simulation`…), so the engine can say which data a failed policy needed. */
  readonly keywords: ReadonlySet<string>;
}

/**
 * Velocity controls (docs/velocity-controls.md) are read as `controls.<identifier>` (or `controls['identifier']`),
 * each a bool; the identifiers an expression reads are known when it is compiled, so the engine
 * computes only those. `known`, when given (a policy being created or updated), is the
 * organization's identifiers: naming another is refused, as a typo in a limit must not become a
 * policy that silently never applies. Stored policies compile without it: a control deleted since
 * is an evaluation error that fails closed (values.ts `Unavailable`).
 */
export interface ControlsCheck {
  readonly known?: ReadonlySet<string>;
}

class Checker {
  readonly diagnostics: Diagnostic[] = [];
  readonly caseInsensitive = new Set<Member>();
  readonly controls = new Set<string>();
  readonly read = new Set<string>();
  private readonly keywords: ReadonlySet<string>;

  constructor(
    private readonly source: string,
    private readonly kind: ExpressionKind,
    private readonly controlsCheck: ControlsCheck = {},
  ) {
    this.keywords = new Set(KEYWORDS_BY_KIND[kind]);
  }

  /** `controls` as the keyword (not a comprehension variable that shadows it). */
  private isControls(node: Expr, scope: Scope | null): boolean {
    return node.kind === 'ident' && node.name === 'controls' && this.keywords.has('controls') && !lookup(scope, 'controls');
  }

  private checkControl(identifier: string, span: Span): PolicyType {
    const known = this.controlsCheck.known;
    if (known && !known.has(identifier)) {
      const list = known.size > 0 ? `; its controls are ${[...known].sort().join(', ')}` : '; it has none';
      return this.fail(span, `unknown velocity control '${identifier}': the organization has no control with that identifier${list}`);
    }
    this.controls.add(identifier);
    return BOOL;
  }

  /** Records a problem; returns `dyn` so checking continues without cascading errors. */
  private fail(span: Span, reason: string): PolicyType {
    if (this.diagnostics.length < MAX_DIAGNOSTICS) this.diagnostics.push(makeDiagnostic(this.source, span, reason));
    return DYN;
  }

  private expectBool(node: Expr, type: PolicyType, what: string): void {
    if (type.kind !== 'bool' && type.kind !== 'dyn') this.fail(node.span, `${what} must be a bool, got ${typeName(type)}`);
  }

  private expectInt(node: Expr, type: PolicyType, what: string): void {
    if (type.kind !== 'int' && type.kind !== 'dyn') this.fail(node.span, `${what} must be an int, got ${typeName(type)}`);
    else if (node.kind === 'int' && node.value < 0n) this.fail(node.span, `${what} must not be negative`);
  }

  checkRoot(ast: Expr): void {
    const type = this.check(ast, null);
    if (type.kind !== 'bool' && type.kind !== 'dyn') {
      this.fail(ast.span, `a policy ${this.kind} must evaluate to a bool, got ${typeName(type)}`);
    }
  }

  check(node: Expr, scope: Scope | null): PolicyType {
    switch (node.kind) {
      case 'bool':
        return BOOL;
      case 'int':
        return INT;
      case 'string':
        return STRING;
      case 'list':
        return this.checkList(node.elements, scope);
      case 'ident':
        return this.checkIdent(node.name, node.span, scope);
      case 'member': {
        if (this.isControls(node.object, scope)) return this.checkControl(node.field, node.fieldSpan);
        const type = this.checkMember(this.check(node.object, scope), node.field, node.fieldSpan);
        if (type.kind === 'string' && type.caseInsensitive) this.caseInsensitive.add(node);
        return type;
      }
      case 'index':
        if (this.isControls(node.object, scope)) {
          if (node.index.kind === 'string') return this.checkControl(node.index.value, node.index.span);
          return this.fail(node.index.span, 'a velocity control is named in the policy: controls.<identifier>');
        }
        return this.checkIndex(node.object, node.index, scope);
      case 'slice': {
        const object = this.check(node.object, scope);
        this.expectInt(node.start, this.check(node.start, scope), 'a slice bound');
        this.expectInt(node.end, this.check(node.end, scope), 'a slice bound');
        if (node.start.kind === 'int' && node.end.kind === 'int' && node.start.value > node.end.value) {
          this.fail(node.span, 'slice start is after its end');
        }
        if (object.kind === 'list' || object.kind === 'string' || object.kind === 'dyn') return object;
        return this.fail(node.object.span, `only lists and strings can be sliced, not ${typeName(object)}`);
      }
      case 'not':
        this.expectBool(node.operand, this.check(node.operand, scope), "the operand of '!'");
        return BOOL;
      case 'logical':
        for (const operand of node.operands) this.expectBool(operand, this.check(operand, scope), `an operand of '${node.op}'`);
        return BOOL;
      case 'relation':
        return this.checkRelation(node.op, node.left, node.right, node.opSpan, scope);
      case 'call':
        return this.checkCall(node.target, node.name, node.nameSpan, node.args, node.span, scope);
      case 'comprehension':
        return this.checkComprehension(node, scope);
    }
  }

  private checkList(elements: readonly Expr[], scope: Scope | null): PolicyType {
    let elem: PolicyType = DYN;
    for (const element of elements) {
      const type = this.check(element, scope);
      if (type.kind === 'dyn') continue;
      if (elem.kind === 'dyn') elem = type;
      else if (typeName(elem) !== typeName(type)) {
        this.fail(element.span, `list elements must all have the same type: found ${typeName(elem)} and ${typeName(type)}`);
      }
    }
    return listOf(elem);
  }

  private checkIdent(name: string, span: Span, scope: Scope | null): PolicyType {
    const bound = lookup(scope, name);
    if (bound) return bound;
    if (name === 'controls' && this.keywords.has(name)) return this.fail(span, "velocity controls are read one at a time: controls.<identifier>");
    if (this.keywords.has(name)) {
      this.read.add(name);
      return ROOT.fields[name]!.type;
    }
    const owner = kindOfKeyword(name);
    if (owner) return this.fail(span, `'${name}' cannot be used in a policy ${this.kind}: it is a ${owner} keyword`);
    const fn = lookupFunction(name, false);
    if (fn) return this.fail(span, `'${name}' is a function: call it as ${fn.usage}`);
    return this.fail(span, `unknown identifier '${name}'${suggestion(name, this.keywords)}`);
  }

  private checkMember(object: PolicyType, field: string, span: Span): PolicyType {
    switch (object.kind) {
      case 'dyn':
        return DYN;
      case 'struct': {
        const def = (object as StructType).fields[field];
        if (def) return def.type;
        return this.fail(span, `unknown field '${field}' on ${object.name}${suggestion(field, Object.keys(object.fields))}`);
      }
      case 'map':
        return this.fail(span, `'${field}': entries of ${aOrAn(typeName(object))} are read with ['${field}']`);
      default:
        return this.fail(span, `${aOrAn(typeName(object))} has no field '${field}'`);
    }
  }

  private checkIndex(objectNode: Expr, indexNode: Expr, scope: Scope | null): PolicyType {
    const object = this.check(objectNode, scope);
    const index = this.check(indexNode, scope);
    switch (object.kind) {
      case 'list':
        this.expectInt(indexNode, index, 'a list index');
        return object.elem;
      case 'string':
        this.expectInt(indexNode, index, 'a string index');
        return STRING;
      case 'map':
        if (index.kind !== 'string' && index.kind !== 'dyn') this.fail(indexNode.span, `a map key must be a string, got ${typeName(index)}`);
        return object.value;
      case 'dyn':
        if (index.kind !== 'string' && index.kind !== 'int' && index.kind !== 'dyn') {
          this.fail(indexNode.span, `an index must be an int or a string, got ${typeName(index)}`);
        } else if (indexNode.kind === 'int' && indexNode.value < 0n) {
          this.fail(indexNode.span, 'an index must not be negative');
        }
        return DYN;
      case 'struct': {
        const hint = indexNode.kind === 'string' ? `; use .${indexNode.value}` : '';
        return this.fail(indexNode.span, `fields of ${object.name} are read with '.field', not an index${hint}`);
      }
      default:
        return this.fail(objectNode.span, `${aOrAn(typeName(object))} cannot be indexed`);
    }
  }

  /** Type errors are reported at the operator (`span`). */
  private checkRelation(op: string, leftNode: Expr, rightNode: Expr, span: Span, scope: Scope | null): PolicyType {
    const left = this.check(leftNode, scope);
    const right = this.check(rightNode, scope);
    if (op === 'in') {
      if (right.kind === 'dyn') return BOOL;
      if (right.kind !== 'list') {
        this.fail(rightNode.span, `the right side of 'in' must be a list, got ${typeName(right)}`);
        return BOOL;
      }
      if (!equalityCompatible(left, right.elem)) this.fail(span, `cannot look for ${aOrAn(typeName(left))} in ${aOrAn(typeName(right))}`);
      return BOOL;
    }
    if (op === '==' || op === '!=') {
      if (!equalityCompatible(left, right)) this.fail(span, `cannot compare ${typeName(left)} with ${typeName(right)} using '${op}'${quotedNumberHint(leftNode, left, rightNode, right)}`);
      return BOOL;
    }
    if (!orderingCompatible(left, right)) {
      const reason =
        left.kind === 'string' || right.kind === 'string'
          ? `strings can only be compared with '==' and '!='`
          : `cannot order ${typeName(left)} and ${typeName(right)} with '${op}' (only ints and timestamps are ordered)`;
      this.fail(span, reason + quotedNumberHint(leftNode, left, rightNode, right));
    }
    return BOOL;
  }

  private checkCall(target: Expr | null, name: string, nameSpan: Span, args: readonly Expr[], span: Span, scope: Scope | null): PolicyType {
    const receiver = target ? this.check(target, scope) : null;
    const def = lookupFunction(name, target !== null);
    if (!def) {
      // Arguments are not checked: for an unknown macro-like call (`exists(u, …)`) they would only
      // add noise such as "unknown identifier 'u'".
      const other = otherStyle(name, target !== null);
      if (other) return this.fail(nameSpan, `${name} is called as ${other.usage}`);
      return this.fail(nameSpan, `unknown function '${name}'${UNSUPPORTED_HINTS[name] ?? ''}`);
    }
    const argTypes = args.map((arg) => this.check(arg, scope));
    if (def.kinds && !def.kinds.includes(this.kind)) {
      return this.fail(nameSpan, `${name}() can only be used in a policy's ${def.kinds.join('/')} field`);
    }
    if (args.length !== def.arity) {
      return this.fail(nameSpan, `${name}() takes ${def.arity} argument${def.arity === 1 ? '' : 's'}, got ${args.length}: ${def.usage}`);
    }
    const result = def.check(receiver, argTypes);
    if (typeof result === 'string') return this.fail(span, result);
    const literals = args.map(literalValue);
    if (def.validateLiterals && args.length > 0 && literals.every((v) => v !== undefined)) {
      const reason = def.validateLiterals(literals as Value[]);
      if (reason) this.fail({ start: args[0]!.span.start, end: args[args.length - 1]!.span.end }, reason);
    }
    return result;
  }

  private checkComprehension(node: Comprehension, scope: Scope | null): PolicyType {
    const range = this.check(node.range, scope);
    let elem: PolicyType = DYN;
    if (range.kind === 'list') elem = range.elem;
    else if (range.kind !== 'dyn') this.fail(node.range.span, `${node.mode}() applies to lists, not ${typeName(range)}`);
    const inner: Scope = { name: node.variable, type: elem, parent: scope };
    this.expectBool(node.predicate, this.check(node.predicate, inner), `the predicate of ${node.mode}()`);
    return node.mode === 'filter' ? listOf(elem) : BOOL;
  }
}

/** Points at docs/reference/policies.md pitfall: a number written as a string literal (`chain_id == '1'`). */
function quotedNumberHint(leftNode: Expr, left: PolicyType, rightNode: Expr, right: PolicyType): string {
  for (const [node, other] of [
    [leftNode, right],
    [rightNode, left],
  ] as const) {
    if (node.kind === 'string' && other.kind === 'int' && /^-?[0-9]+$/.test(node.value)) {
      return ` (write the number without quotes: ${node.value})`;
    }
  }
  return '';
}

/**
 * Checks a parsed expression for the given policy field, and resolves which field reads compare
 * case-insensitively (the evaluator cannot know the static type of what it reads).
 */
export function checkPolicyExpression(ast: Expr, kind: ExpressionKind, source: string, controls: ControlsCheck = {}): CheckResult {
  const checker = new Checker(source, kind, controls);
  checker.checkRoot(ast);
  return { diagnostics: checker.diagnostics, caseInsensitive: checker.caseInsensitive, controls: checker.controls, keywords: checker.read };
}
