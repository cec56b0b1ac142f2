// Budgets that keep every policy expression cheap to compile and to evaluate, whoever wrote it and
// whatever request it is evaluated against. Modelled on cel-js `DEFAULT_LIMITS` (lib/options.js)
// and cel-go's `CostLimit`; the reference service documents no numbers, so these are Sigil's.
//
// Why each exists:
// - source length, AST nodes, nesting depth: a policy is stored and re-evaluated on every request
//   and every vote of its organization; these bound compile time, memory and the recursion depth
//   of the checker and evaluator (the parser also uses `maxDepth` to stop runaway `((((…`).
// - list literal elements: allowlists are legitimate (`eth.tx.to in [...]`), 1,000 entries is far
//   beyond any documented example and still evaluates in microseconds.
// - evaluation steps: the data a policy iterates over comes from the request (Solana instructions,
//   EIP-712 arrays, …), and comprehensions nest, so the cost is bounded at run time too. An
//   exhausted budget is an evaluation error of kind `limit`, which never allows and, for a DENY
//   policy, counts as matching (outcome.ts): a request cannot be made large to escape a deny.
// - runtime list length: no single request list the language iterates may exceed this.

export interface PolicyLimits {
  /** Maximum expression length in UTF-16 code units. */
  readonly maxSourceLength: number;
  /** Maximum number of AST nodes after macro expansion. */
  readonly maxAstNodes: number;
  /** Maximum nesting depth of the AST (and of the parser's recursion). */
  readonly maxDepth: number;
  /** Maximum number of elements in one list literal. */
  readonly maxListLiteralElements: number;
  /** Maximum evaluation steps (roughly: nodes visited plus elements iterated). */
  readonly maxEvalSteps: number;
  /** Maximum length of a list read from the evaluation context. */
  readonly maxRuntimeListLength: number;
}

export const DEFAULT_LIMITS: PolicyLimits = Object.freeze({
  maxSourceLength: 16_384,
  maxAstNodes: 4_096,
  maxDepth: 64,
  maxListLiteralElements: 1_000,
  maxEvalSteps: 100_000,
  maxRuntimeListLength: 10_000,
});

/** DEFAULT_LIMITS with some entries overridden; rejects non-positive or non-integer values. */
export function resolveLimits(overrides: Partial<PolicyLimits> | undefined): PolicyLimits {
  if (overrides === undefined) return DEFAULT_LIMITS;
  const merged: PolicyLimits = { ...DEFAULT_LIMITS, ...overrides };
  for (const [name, value] of Object.entries(merged)) {
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new RangeError(`policy limit ${name} must be a positive integer, got ${String(value)}`);
    }
  }
  return Object.freeze(merged);
}
