// Lexer edge cases (src/policy/lexer.ts; the literals of docs/reference/policies.md "The language").
import { describe, expect, it } from 'vitest';
import { SyntaxFailure, tokenize } from '../../../src/policy/lexer.js';

function kinds(source: string): string[] {
  return tokenize(source).map((t) => t.kind);
}

function failure(source: string): SyntaxFailure {
  try {
    tokenize(source);
  } catch (err) {
    if (err instanceof SyntaxFailure) return err;
    throw err;
  }
  throw new Error(`expected ${JSON.stringify(source)} to fail`);
}

describe('lexer', () => {
  it('splits operators greedily, two-character operators first', () => {
    expect(kinds('a<=b>=c==d!=e&&f||!g<h>i')).toEqual(['ident', '<=', 'ident', '>=', 'ident', '==', 'ident', '!=', 'ident', '&&', 'ident', '||', '!', 'ident', '<', 'ident', '>', 'ident', 'eof']);
  });

  it('lexes slices of integer literals as int .. int', () => {
    const tokens = tokenize('x[0..10]');
    expect(tokens.map((t) => t.kind)).toEqual(['ident', '[', 'int', '..', 'int', ']', 'eof']);
    expect(tokens[2]!.value).toBe(0n);
    expect(tokens[4]!.value).toBe(10n);
  });

  it('distinguishes . from ..', () => {
    expect(kinds('a.b..c')).toEqual(['ident', '.', 'ident', '..', 'ident', 'eof']);
  });

  it('reserves true, false and in, but not prefixes of them', () => {
    expect(kinds('true false in truex inside')).toEqual(['true', 'false', 'in', 'ident', 'ident', 'eof']);
  });

  it('decodes integers as bigints of any size', () => {
    const [token] = tokenize('115792089237316195423570985008687907853269984665640564039457584007913129639935');
    expect(token!.value).toBe((1n << 256n) - 1n);
  });

  it('decodes single- and double-quoted strings without escapes', () => {
    const tokens = tokenize(`'it"s' "it's" 'back\\slash' ''`);
    expect(tokens.slice(0, 4).map((t) => t.value)).toEqual(['it"s', "it's", 'back\\slash', '']);
  });

  it('keeps non-ASCII text in strings', () => {
    expect(tokenize("'héllo 🌍'")[0]!.value).toBe('héllo 🌍');
  });

  it('records exact spans', () => {
    const tokens = tokenize("  eth.tx  == 'a'");
    expect(tokens.map((t) => [t.span.start, t.span.end])).toEqual([
      [2, 5],
      [5, 6],
      [6, 8],
      [10, 12],
      [13, 16],
      [16, 16],
    ]);
  });

  it('accepts tabs and line breaks as whitespace between tokens', () => {
    expect(kinds('a\n&&\tb\r\n')).toEqual(['ident', '&&', 'ident', 'eof']);
  });

  it.each([
    ["'abc", 'unterminated string literal', 0],
    ['"abc', 'unterminated string literal', 0],
    ["'a\nb'", 'string literals cannot contain line breaks', 2],
    ["'a\tb'", 'string literals cannot contain control characters', 2],
    ['0x1f', "invalid number literal '0x1f'", 0],
    ['12abc', "invalid number literal '12abc'", 0],
    ['007', 'leading zeros are not allowed', 0],
    ['a = b', "use '=='", 2],
    ['a & b', "'&&'", 2],
    ['a | b', "'||'", 2],
    ['{ id: 1 }', 'struct literals are not supported', 0],
    ['a # b', "unexpected character '#'", 2],
    ['a 🌍', "unexpected character '🌍'", 2],
    ['a;', "unexpected character ';'", 1],
  ])('rejects %j with %j at offset %i', (source, reason, offset) => {
    const err = failure(source);
    expect(err.reason).toContain(reason);
    expect(err.span.start).toBe(offset);
  });

  it('allows a lone 0', () => {
    expect(tokenize('0')[0]!.value).toBe(0n);
  });
});
