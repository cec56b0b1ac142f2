// Public facade of the policy language (docs/reference/policies.md "The language"). Pure: imports nothing
// from the rest of src/, does no I/O, never uses eval/new Function.
//
//   compilePolicyExpression(source, kind)  → parse + check, once per policy create/update
//   evaluatePolicyExpression(compiled, ctx) → boolean or a reported error, per request and vote
//   evaluationErrorApplies(effect, error)   → what an error means for an ALLOW or DENY policy
//
// The context shapes the pipeline fills in are in context.ts.

export type { Expr, Span } from './ast.js';
export { printExpr } from './ast.js';
export type { CompileOptions, CompileResult, CompiledPolicyExpression } from './compile.js';
export { compilePolicyExpression } from './compile.js';
export type * from './context.js';
export type { Diagnostic, EvalErrorKind, ExpressionKind, PolicyCompileError, PolicyEvalError, SourcePosition } from './errors.js';
export { formatDiagnostic } from './errors.js';
export type { EvaluateOptions, EvaluationResult } from './evaluator.js';
export { evaluatePolicyExpression } from './evaluator.js';
export type { PolicyLimits } from './limits.js';
export { DEFAULT_LIMITS } from './limits.js';
export type { PolicyEffect } from './outcome.js';
export { evaluationErrorApplies, fieldMatches } from './outcome.js';
export { KEYWORDS_BY_KIND } from './schema.js';
export { CaseInsensitiveText, Unavailable, caseInsensitive } from './values.js';
export { validatePolicyContext } from './context-check.js';
