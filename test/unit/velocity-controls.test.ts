// Velocity controls below the API (issue 17): the test clock's gate (src/config/config.ts), the
// threshold's fixed-point arithmetic (src/domain/velocity-controls.ts), and which controls a
// compiled expression reads, with unknown identifiers refused when the organization's are given
// (src/policy/checker.ts).
import { describe, expect, it } from 'vitest';
import { loadConfig, TEST_CLOCK_CONSENT } from '../../src/config/config.js';
import { formatAmount, parseThreshold, SCALE } from '../../src/domain/velocity-controls.js';
import { compilePolicyExpression } from '../../src/policy/index.js';

describe('the test clock', () => {
  it('is refused without the explicit consent, honoured with it, absent by default', () => {
    expect(() => loadConfig({}, { SIGIL_TEST_VELOCITY_CLOCK_FILE: '/tmp/clock' })).toThrow(/exists for tests only; it needs SIGIL_ENABLE_TEST_CLOCK=yes-this-is-a-test/);
    expect(() => loadConfig({}, { SIGIL_TEST_VELOCITY_CLOCK_FILE: '/tmp/clock', SIGIL_ENABLE_TEST_CLOCK: '1' })).toThrow(/exists for tests only/);
    expect(loadConfig({}, { SIGIL_TEST_VELOCITY_CLOCK_FILE: '/tmp/clock', SIGIL_ENABLE_TEST_CLOCK: TEST_CLOCK_CONSENT }).testVelocityClockFile).toBe('/tmp/clock');
    expect(loadConfig({}, { SIGIL_ENABLE_TEST_CLOCK: TEST_CLOCK_CONSENT }).testVelocityClockFile).toBeUndefined();
  });
});

describe('thresholds', () => {
  it('are fixed-point with 18 fractional digits, exactly', () => {
    expect(parseThreshold('10')).toBe(10n * SCALE);
    expect(parseThreshold('0.000000000000000001')).toBe(1n);
    expect(parseThreshold('12345678901234567890.123456789012345678')).toBe(12345678901234567890123456789012345678n);
    for (const t of ['0', '10', '2.5', '0.000000000000000001', '99999999999999999999.999999999999999999']) expect(formatAmount(parseThreshold(t))).toBe(t);
    expect(() => parseThreshold('1.')).toThrow(/non-negative base-10 decimal string/);
    expect(() => parseThreshold('.5')).toThrow(/non-negative base-10 decimal string/);
    expect(() => parseThreshold(' 1')).toThrow(/non-negative base-10 decimal string/);
  });
});

describe('controls.<identifier> in compiled expressions', () => {
  it('records the controls read, and refuses unknown ones when the organization’s are given', () => {
    const r = compilePolicyExpression("!controls.daily && controls['weekly'] && approvers.count() > 0 || true", 'consensus');
    expect(r.ok && [...r.expression.controls].sort()).toEqual(['daily', 'weekly']);
    const known = new Set(['daily']);
    const refused = compilePolicyExpression('!controls.dayly', 'condition', { controls: known });
    expect(!refused.ok && refused.error.message).toMatch(/unknown velocity control 'dayly': the organization has no control with that identifier; its controls are daily/);
    const none = compilePolicyExpression('controls.daily', 'condition', { controls: new Set() });
    expect(!none.ok && none.error.message).toMatch(/unknown velocity control 'daily'.*; it has none/);
    // A comprehension variable named `controls` shadows the keyword.
    const shadow = compilePolicyExpression("approvers.any(controls, controls.id == 'u')", 'consensus', { controls: new Set() });
    expect(shadow.ok && [...shadow.expression.controls]).toEqual([]);
  });
});
