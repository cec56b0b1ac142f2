// Lexer of the policy language (docs/reference/policies.md "The language").
//
// Tokens: decimal integer literals; string literals in single quotes (the documented form) or double
// quotes (what `JSON.stringify(allowlist)` produces in the docs' cookbooks, Appendix A P124);
// identifiers `[A-Za-z_][A-Za-z0-9_]*`; the reserved words `true`, `false`, `in`; and the operators
// `&& || ! == != < <= > >= ( ) [ ] , . .. -`.
//
// What always holds:
// - Strings have no escape sequences: the reference grammar has none ("single-quoted literals cannot
//   contain `'`"), so a backslash is an ordinary character and a string simply cannot contain its
//   own quote character. Control characters (including line breaks) are rejected inside strings so
//   an expression cannot hide text from a reviewer.
// - Numbers are decimal only: `0x…` is rejected with a message instead of lexing as `0` followed by
//   the identifier `x…`, and leading zeros are rejected so nobody expects octal.
// - Every token and every error carries a precise source span.

import type { Span } from './ast.js';

export type TokenKind =
  | 'int'
  | 'string'
  | 'ident'
  | 'true'
  | 'false'
  | 'in'
  | '&&'
  | '||'
  | '!'
  | '=='
  | '!='
  | '<'
  | '<='
  | '>'
  | '>='
  | '('
  | ')'
  | '['
  | ']'
  | ','
  | '.'
  | '..'
  | '-'
  | 'eof';

export interface Token {
  readonly kind: TokenKind;
  /** The exact source text of the token (empty for `eof`). */
  readonly text: string;
  /** Decoded value: the string contents for `string`, the number for `int`. */
  readonly value?: string | bigint;
  readonly span: Span;
}

/** A lexing or parsing failure at a source span. Caught by the parser's caller, never escapes. */
export class SyntaxFailure extends Error {
  constructor(
    readonly span: Span,
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'SyntaxFailure';
  }
}

const RESERVED: ReadonlyMap<string, TokenKind> = new Map<string, TokenKind>([
  ['true', 'true'],
  ['false', 'false'],
  ['in', 'in'],
]);

/** Two-character operators first, so `<=` never lexes as `<` `=`. */
const OPERATORS: readonly TokenKind[] = ['&&', '||', '==', '!=', '<=', '>=', '..', '!', '<', '>', '(', ')', '[', ']', ',', '.', '-'];

/** Hints for characters that are not operators on their own but look like a typo of one. */
const LONE_CHARACTER_HINTS: Readonly<Record<string, string>> = {
  '&': "unexpected '&': the logical and operator is '&&'",
  '|': "unexpected '|': the logical or operator is '||'",
  '=': "unexpected '=': use '==' to compare",
  '{': 'struct literals are not supported in policy expressions',
  '}': "unexpected '}'",
};

function isIdentStart(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

function isIdentPart(code: number): boolean {
  return isIdentStart(code) || isDigit(code);
}

function isWhitespace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

/** Splits `source` into tokens, ending with one `eof` token. @throws SyntaxFailure */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  while (true) {
    while (pos < source.length && isWhitespace(source.charCodeAt(pos))) pos++;
    if (pos >= source.length) {
      tokens.push({ kind: 'eof', text: '', span: { start: pos, end: pos } });
      return tokens;
    }
    const start = pos;
    const code = source.charCodeAt(pos);

    if (isDigit(code)) {
      while (pos < source.length && isIdentPart(source.charCodeAt(pos))) pos++;
      const text = source.slice(start, pos);
      const span = { start, end: pos };
      if (!/^[0-9]+$/.test(text)) {
        throw new SyntaxFailure(span, `invalid number literal '${text}': only decimal integers are supported`);
      }
      if (text.length > 1 && text.startsWith('0')) {
        throw new SyntaxFailure(span, `invalid number literal '${text}': leading zeros are not allowed`);
      }
      tokens.push({ kind: 'int', text, value: BigInt(text), span });
      continue;
    }

    if (isIdentStart(code)) {
      while (pos < source.length && isIdentPart(source.charCodeAt(pos))) pos++;
      const text = source.slice(start, pos);
      tokens.push({ kind: RESERVED.get(text) ?? 'ident', text, span: { start, end: pos } });
      continue;
    }

    if (code === 39 || code === 34) {
      const quote = source[pos];
      pos++;
      while (pos < source.length && source[pos] !== quote) {
        const c = source.charCodeAt(pos);
        if (c < 32 || c === 127) {
          const what = c === 10 || c === 13 ? 'line breaks' : 'control characters';
          throw new SyntaxFailure({ start: pos, end: pos + 1 }, `string literals cannot contain ${what}`);
        }
        pos++;
      }
      if (pos >= source.length) {
        throw new SyntaxFailure({ start, end: start + 1 }, 'unterminated string literal');
      }
      pos++;
      const text = source.slice(start, pos);
      tokens.push({ kind: 'string', text, value: text.slice(1, -1), span: { start, end: pos } });
      continue;
    }

    const op = OPERATORS.find((candidate) => source.startsWith(candidate, pos));
    if (op !== undefined) {
      pos += op.length;
      tokens.push({ kind: op, text: op, span: { start, end: pos } });
      continue;
    }

    const char = String.fromCodePoint(source.codePointAt(pos)!);
    const span = { start, end: start + char.length };
    throw new SyntaxFailure(span, LONE_CHARACTER_HINTS[char] ?? `unexpected character '${char}'`);
  }
}

/** How a token is named in "expected X, found Y" messages. */
export function describeToken(token: Token): string {
  switch (token.kind) {
    case 'eof':
      return 'end of expression';
    case 'int':
      return `number ${token.text}`;
    case 'string':
      return `string ${token.text}`;
    case 'ident':
      return `identifier '${token.text}'`;
    default:
      return `'${token.text}'`;
  }
}
