// What an evaluation error means for the policy that produced it (docs/reference/policies.md "Evaluation of one policy"
// "Errors"). The engine (src/pipeline) owns the decision; this is the rule Sigil recommends, kept
// next to the language so the error kinds and the rule cannot drift apart.
//
// A field whose error does not count as a match leaves the policy at `OUTCOME_ERROR`; a DENY whose
// error counts as a match (below) is recorded by the engine as the deny it applies. Then:
//
// EFFECT_ALLOW + any error  → the field does not match, so the policy does not apply.
//   An error never allows (docs/reference/policies.md "Evaluation of one policy": "An erroring EFFECT_ALLOW policy fails closed").
//
// EFFECT_DENY + `missing`   → the field does not match, so the policy does not apply.
//   The reference service skips an erroring DENY policy. This is also the only workable reading
//   given that the language never short-circuits: a DENY about `eth.tx.value`, `bitcoin.tx.fee` or
//   `activity.params.hash_function` references data most activities do not carry, and treating that
//   as a match would make every such policy deny every other kind of activity.
//
// EFFECT_DENY + anything else (`type`, `index`, `value`, `limit`, `internal`) → the field MATCHES.
//   Conservative, and a deliberate deviation from the reference service, which skips these too.
//   These errors come from the request's own content, which the requester controls: a transaction
//   padded until the evaluation budget runs out, a value of an unexpected type, a list shorter
//   than the policy indexes. Skipping the deny in those cases would let a requester escape a DENY
//   by shaping the request; honouring it costs at worst a denied malformed request.
//
// When several clauses fail at once the evaluator reports the most severe error, so a `missing`
// clause cannot hide a budget exhaustion elsewhere in the same expression.

import type { PolicyEvalError } from './errors.js';
import type { EvaluationResult } from './evaluator.js';

export type PolicyEffect = 'EFFECT_ALLOW' | 'EFFECT_DENY';

/** Whether a policy field whose evaluation failed with `error` counts as matching. */
export function evaluationErrorApplies(effect: PolicyEffect, error: PolicyEvalError): boolean {
  if (effect === 'EFFECT_ALLOW') return false;
  return error.kind !== 'missing';
}

/**
 * Whether one evaluated policy field (condition, consensus or time) counts as matching for a
 * policy with this effect. A policy applies when every field it has matches.
 */
export function fieldMatches(effect: PolicyEffect, result: EvaluationResult): boolean {
  return result.ok ? result.value : evaluationErrorApplies(effect, result.error);
}
