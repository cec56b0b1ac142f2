// The raw-byte scan of src/pipeline/input-limits.ts against a plain recursive reading of the parsed
// value (property-based, fast-check): a body is refused exactly when some string or member name
// holds U+0000 or an unpaired surrogate, nesting passes the depth limit, or one array or object has
// more members than allowed; and a refusal names the field where the first problem is.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { checkJsonInput, type JsonLimits } from '../../src/pipeline/input-limits.js';
import { SigilError } from '../../src/errors/errors.js';

const limits: JsonLimits = { maxDepth: 6, maxItems: 5, maxValues: 1_000_000 };

/** What the scan must find, read from the parsed value. */
function violates(v: unknown, depth = 1): boolean {
  const badString = (s: string) => s.includes('\u0000') || !s.isWellFormed();
  if (typeof v === 'string') return badString(v);
  if (v === null || typeof v !== 'object') return false;
  if (depth > limits.maxDepth) return true;
  const entries = Array.isArray(v) ? v.map((x) => ['', x] as const) : Object.entries(v);
  if (entries.length > limits.maxItems) return true;
  return entries.some(([k, x]) => badString(k) || violates(x, depth + 1));
}

const scan = (text: string) => checkJsonInput(Buffer.from(text, 'utf8'), limits);

// Strings of plain, escaped, astral and troublesome units: quotes and backslashes (escaped in JSON),
// U+0000, control characters, lone surrogates of either half, and whole surrogate pairs.
const unit = fc.constantFrom('a', 'é', '"', '\\', '\u0000', '\u0001', '\ud800', '\udfff', '😀', '\n', '/', '\u2028');
const json = fc.jsonValue({ maxDepth: 8, stringUnit: unit });

describe('checkJsonInput', () => {
  it('refuses exactly the bodies whose parsed value breaks a limit or holds NUL or an unpaired surrogate', () => {
    fc.assert(
      fc.property(json, (v) => {
        const text = JSON.stringify(v);
        let refused = false;
        try {
          scan(text);
        } catch (err) {
          expect(err).toBeInstanceOf(SigilError);
          expect((err as SigilError).httpStatus).toBe(400);
          refused = true;
        }
        expect(refused).toBe(violates(v));
      }),
      { numRuns: 2000 },
    );
  });

  it('names the field, member names included, and the container of a long array', () => {
    const message = (text: string) => {
      try {
        scan(text);
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(message(JSON.stringify({ parameters: { users: [{}, { userName: 'a\u0000' }] } }))).toBe(
      'bad request body: parameters.users[1].userName: must not contain the NUL character (U+0000)',
    );
    expect(message(JSON.stringify({ a: { 'b\ud800': 1 } }))).toBe('bad request body: a (a member name): must be valid Unicode: it has an unpaired surrogate');
    expect(message(JSON.stringify({ a: { b: [1, 2, 3, 4, 5, 6] } }))).toBe('bad request body: a.b: has more than 5 items');
    expect(message(JSON.stringify({ 'a"b\\': [[[[[[1]]]]]] }))).toBe('bad request body: a"b\\[0][0][0][0][0]: nested deeper than 6 levels');
    expect(message(JSON.stringify({ ok: '😀 \\u0000 "\\"' }))).toBe('accepted');
    expect(message('{"a":"\\uD83D\\uDE00"}')).toBe('accepted');
    expect(message('{"a":"\\uDE00\\uD83D"}')).toMatch(/unpaired surrogate/);
    expect(() => checkJsonInput(Buffer.from([0x7b, 0x22, 0xc3, 0x22, 0x7d]), limits)).toThrow(/not valid UTF-8/);
    expect(() => checkJsonInput(Buffer.from(JSON.stringify([Array(3).fill([1, 2])])), { ...limits, maxValues: 5 })).toThrow(/more than 5 values/);
  });
});
