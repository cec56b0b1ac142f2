// What an evaluation error means for ALLOW and DENY policies (src/policy/outcome.ts;
// docs/reference/policies.md "Evaluation of one policy").
import { describe, expect, it } from 'vitest';
import type { EvalErrorKind, EvaluationResult, PolicyEvalError } from '../../../src/policy/index.js';
import { evaluationErrorApplies, fieldMatches } from '../../../src/policy/index.js';
import { run } from './helpers.js';

const error = (kind: EvalErrorKind): PolicyEvalError => ({ kind, message: kind, span: { start: 0, end: 1 }, position: { offset: 0, line: 1, column: 1 } });

describe('evaluationErrorApplies', () => {
  it.each<[EvalErrorKind, boolean, boolean]>([
    // kind, ALLOW applies, DENY applies
    ['missing', false, false],
    ['type', false, true],
    ['index', false, true],
    ['value', false, true],
    ['limit', false, true],
    ['internal', false, true],
  ])('%s: ALLOW %s, DENY %s', (kind, allow, deny) => {
    expect(evaluationErrorApplies('EFFECT_ALLOW', error(kind))).toBe(allow);
    expect(evaluationErrorApplies('EFFECT_DENY', error(kind))).toBe(deny);
  });
});

describe('fieldMatches', () => {
  const ok = (value: boolean): EvaluationResult => ({ ok: true, value, steps: 1 });
  const failed = (kind: EvalErrorKind): EvaluationResult => ({ ok: false, error: error(kind), steps: 1 });

  it('passes clean results through for both effects', () => {
    for (const effect of ['EFFECT_ALLOW', 'EFFECT_DENY'] as const) {
      expect(fieldMatches(effect, ok(true))).toBe(true);
      expect(fieldMatches(effect, ok(false))).toBe(false);
    }
  });

  it('never lets an error allow', () => {
    for (const kind of ['missing', 'type', 'index', 'value', 'limit', 'internal'] as const) {
      expect(fieldMatches('EFFECT_ALLOW', failed(kind))).toBe(false);
    }
  });

  it('applies a DENY whose evaluation was exhausted by a large request', () => {
    const approvers = Array.from({ length: 200 }, (_, i) => ({ id: `u${i}`, tags: [], email: '', alias: '' }));
    const result = run("approvers.all(a, approvers.any(b, b.id == a.id))", { approvers }, 'consensus', { maxEvalSteps: 10_000 });
    expect(result.ok ? 'ok' : result.error.kind).toBe('limit');
    expect(fieldMatches('EFFECT_DENY', result)).toBe(true);
    expect(fieldMatches('EFFECT_ALLOW', result)).toBe(false);
  });

  it('skips a DENY about data the activity does not carry', () => {
    const result = run('bitcoin.tx.fee > 50000', { activity: { type: 'ACTIVITY_TYPE_CREATE_WALLET', kind: 'CREATE_WALLET', resource: 'WALLET', action: 'CREATE', params: {} } });
    expect(result.ok ? 'ok' : result.error.kind).toBe('missing');
    expect(fieldMatches('EFFECT_DENY', result)).toBe(false);
  });
});
