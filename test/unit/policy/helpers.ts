// Shared helpers for the policy unit tests: compile-or-throw and evaluate in one call.
import type { CompiledPolicyExpression, EvaluationResult, ExpressionKind, PolicyContext, PolicyLimits } from '../../../src/policy/index.js';
import { compilePolicyExpression, evaluatePolicyExpression } from '../../../src/policy/index.js';

export function compile(source: string, kind: ExpressionKind = 'condition'): CompiledPolicyExpression {
  const result = compilePolicyExpression(source, kind);
  if (!result.ok) throw new Error(result.error.message);
  return result.expression;
}

export function run(source: string, context: unknown, kind: ExpressionKind = 'condition', limits?: Partial<PolicyLimits>): EvaluationResult {
  return evaluatePolicyExpression(compile(source, kind), context as PolicyContext, { limits });
}

/** `true`/`false`, or `error:<kind>` — compact for tables. */
export function outcome(source: string, context: unknown, kind: ExpressionKind = 'condition', limits?: Partial<PolicyLimits>): boolean | string {
  const result = run(source, context, kind, limits);
  return result.ok ? result.value : `error:${result.error.kind}`;
}
