// Compilation of one policy expression: parse (parser.ts) then check (checker.ts) for the policy
// field it belongs to (docs/reference/policies.md "The language": invalid expressions are rejected at create time).
//
// A compiled expression is immutable, holds no reference to any request, and can be cached and
// shared across requests and threads of control: compile once when a policy is created or updated,
// evaluate many times.

import type { Expr, Member } from './ast.js';
import { checkPolicyExpression } from './checker.js';
import type { Diagnostic, ExpressionKind, PolicyCompileError } from './errors.js';
import { compileErrorMessage, makeDiagnostic } from './errors.js';
import type { PolicyLimits } from './limits.js';
import { parsePolicyExpression } from './parser.js';

export interface CompiledPolicyExpression {
  /** The policy field the expression was checked for; decides which keywords it may read. */
  readonly kind: ExpressionKind;
  readonly source: string;
  readonly ast: Expr;
  /**
   * Resolved at compile time: the `x.field` nodes whose field compares case-insensitively
   * (`eth.tx.to`, …). Read by the evaluator; not meant for callers.
   */
  readonly caseInsensitiveReads: ReadonlySet<Member>;
  /** The velocity controls the expression reads (`controls.<identifier>`), resolved at compile time. */
  readonly controls: ReadonlySet<string>;
  /** The top-level keywords the expression reads. */
  readonly keywords: ReadonlySet<string>;
}

export type CompileResult =
  | { readonly ok: true; readonly expression: CompiledPolicyExpression }
  | { readonly ok: false; readonly error: PolicyCompileError };

export interface CompileOptions {
  readonly limits?: Partial<PolicyLimits>;
  /**
   * The organization's velocity control identifiers: given when a policy is created or updated, so
   * `controls.<unknown>` is refused (checker.ts ControlsCheck); left out for stored policies.
   */
  readonly controls?: ReadonlySet<string>;
}

function failure(kind: ExpressionKind, diagnostics: readonly Diagnostic[]): CompileResult {
  return {
    ok: false,
    error: Object.freeze({ kind, message: compileErrorMessage(kind, diagnostics[0]!), diagnostics: Object.freeze([...diagnostics]) }),
  };
}

/**
 * Parses and checks a policy `condition`, `consensus` or `time` expression.
 *
 * An empty (or blank) expression is a syntax error, as the reference service answers for an empty
 * consensus (docs/reference/policies.md); a policy field that is simply absent is the caller's "no
 * constraint" and never reaches this function.
 *
 * @example
 * const r = compilePolicyExpression("eth.tx.to == '0xabc'", 'condition');
 * if (!r.ok) throw badRequest(r.error.message); // "invalid policy condition: 1:…: …"
 */
export function compilePolicyExpression(source: string, kind: ExpressionKind, options: CompileOptions = {}): CompileResult {
  if (typeof source !== 'string') {
    return failure(kind, [makeDiagnostic('', { start: 0, end: 0 }, 'the expression must be a string')]);
  }
  const parsed = parsePolicyExpression(source, options.limits);
  if (!parsed.ok) return failure(kind, [parsed.diagnostic]);
  const checked = checkPolicyExpression(parsed.ast, kind, source, { known: options.controls });
  if (checked.diagnostics.length > 0) return failure(kind, checked.diagnostics);
  return { ok: true, expression: Object.freeze({ kind, source, ast: parsed.ast, caseInsensitiveReads: checked.caseInsensitive, controls: checked.controls, keywords: checked.keywords }) };
}
