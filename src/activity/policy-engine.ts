// The policy decision of docs/reference/policies.md "Evaluation of one policy", over compiled policies and one context: each
// policy applies only when its time, condition and consensus all hold (absent fields impose
// nothing); any applying DENY wins; else any applying ALLOW allows; an ALLOW whose condition holds
// but whose consensus does not yet asks for more approvals; otherwise nothing allows (implicit deny).
// Evaluation errors never allow (src/policy/outcome.ts decides how a failed field counts).
import { evaluatePolicyExpression, fieldMatches, type PolicyContext } from '../policy/index.js';
import type { CompiledPolicy } from '../domain/governance/policies.js';

export type PolicyOutcome =
  | 'OUTCOME_ALLOW'
  | 'OUTCOME_DENY_EXPLICIT'
  | 'OUTCOME_DENY_IMPLICIT'
  | 'OUTCOME_REQUIRES_CONSENSUS'
  | 'OUTCOME_ERROR'
  | 'OUTCOME_TIME_INACTIVE';

export interface PolicyEvaluation {
  policyId: string;
  outcome: PolicyOutcome;
}

export type PolicyDecision = 'allow' | 'deny' | 'consensus' | 'none';

function outcomeOf(p: CompiledPolicy, context: PolicyContext): PolicyOutcome {
  const field = (e: CompiledPolicy['condition']) => (e ? evaluatePolicyExpression(e, context) : undefined);
  const time = field(p.time);
  if (time && !fieldMatches(p.effect, time)) return time.ok ? 'OUTCOME_TIME_INACTIVE' : 'OUTCOME_ERROR';
  const condition = field(p.condition);
  if (condition && !fieldMatches(p.effect, condition)) return condition.ok ? 'OUTCOME_DENY_IMPLICIT' : 'OUTCOME_ERROR';
  const consensus = field(p.consensus);
  if (consensus && !fieldMatches(p.effect, consensus)) {
    // Only a consensus that evaluated to false can still be met by more approvals; an erroring
    // one never applies, or the activity would wait for approvals that can never count.
    if (!consensus.ok) return 'OUTCOME_ERROR';
    return p.effect === 'EFFECT_DENY' ? 'OUTCOME_DENY_IMPLICIT' : 'OUTCOME_REQUIRES_CONSENSUS';
  }
  return p.effect === 'EFFECT_ALLOW' ? 'OUTCOME_ALLOW' : 'OUTCOME_DENY_EXPLICIT';
}

/** How much an outcome stands in the way of an activity: a batch shows each policy's worst. */
const OUTCOME_WEIGHT: Record<PolicyOutcome, number> = {
  OUTCOME_ALLOW: 0,
  OUTCOME_REQUIRES_CONSENSUS: 1,
  OUTCOME_TIME_INACTIVE: 2,
  OUTCOME_DENY_IMPLICIT: 3,
  OUTCOME_ERROR: 4,
  OUTCOME_DENY_EXPLICIT: 5,
};

/** Decisions from the most to the least restrictive: a batch takes the most restrictive of its parts. */
const DECISION_ORDER: PolicyDecision[] = ['deny', 'none', 'consensus', 'allow'];

/**
 * One activity judged over several contexts (a batch, one context per element): it is allowed only
 * if every element is, denied if any is; each policy's recorded outcome is its worst over the elements.
 */
export function evaluatePoliciesForEach(policies: CompiledPolicy[], contexts: PolicyContext[]): { decision: PolicyDecision; evaluations: PolicyEvaluation[] } {
  const judged = contexts.map((c) => evaluatePolicies(policies, c));
  if (judged.length === 1) return judged[0];
  const decision = DECISION_ORDER.find((d) => judged.some((j) => j.decision === d)) ?? 'none';
  const evaluations = policies.map((p, i) => ({
    policyId: p.id,
    outcome: judged.map((j) => j.evaluations[i].outcome).reduce((a, b) => (OUTCOME_WEIGHT[b] > OUTCOME_WEIGHT[a] ? b : a)),
  }));
  return { decision, evaluations };
}

export function evaluatePolicies(policies: CompiledPolicy[], context: PolicyContext): { decision: PolicyDecision; evaluations: PolicyEvaluation[] } {
  const evaluations = policies.map((p) => ({ policyId: p.id, outcome: outcomeOf(p, context) }));
  const has = (o: PolicyOutcome) => evaluations.some((e) => e.outcome === o);
  const decision: PolicyDecision = has('OUTCOME_DENY_EXPLICIT')
    ? 'deny'
    : has('OUTCOME_ALLOW')
      ? 'allow'
      : has('OUTCOME_REQUIRES_CONSENSUS')
        ? 'consensus'
        : 'none';
  return { decision, evaluations };
}
