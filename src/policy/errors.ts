// Diagnostics of the policy language: compile-time rejects and evaluation errors
// (docs/reference/policies.md for the service messages, docs/reference/policies.md "The language" and docs/reference/policies.md "Evaluation of one policy" for what an error means).
//
// Compile errors are what `create_policy` turns into a 400: their message always starts with
// `invalid policy condition` / `invalid policy consensus` / `invalid policy time`, the strings the
// reference service returns (docs/reference/api.md "Errors"), followed by `line:column` and the reason.
//
// Evaluation errors are values, never exceptions that escape: `evaluate()` returns them to the
// engine, which records `OUTCOME_ERROR` and decides with `evaluationErrorApplies()` (outcome.ts).
// Their `kind` exists so the engine can tell "this activity does not carry that data" (`missing`)
// from "the data is malformed or too big" (everything else) — the two are treated differently for
// DENY policies.

import type { Span } from './ast.js';

/** Which policy field an expression is written for; decides the keywords it may use (docs/reference/policies.md "Keywords"). */
export type ExpressionKind = 'condition' | 'consensus' | 'time';

export interface SourcePosition {
  /** UTF-16 offset into the source. */
  readonly offset: number;
  /** 1-based line. */
  readonly line: number;
  /** 1-based column, in UTF-16 code units. */
  readonly column: number;
}

export interface Diagnostic {
  /** The reason, without the `invalid policy …` prefix or the position. */
  readonly reason: string;
  readonly span: Span;
  readonly position: SourcePosition;
}

export interface PolicyCompileError {
  readonly kind: ExpressionKind;
  /**
   * `invalid policy <kind>: <line>:<column>: <reason>` for the first diagnostic. Safe to return to
   * the API caller: it quotes only the caller's own expression.
   */
  readonly message: string;
  /** Every problem found (the parser stops at the first; the checker reports up to a few). */
  readonly diagnostics: readonly Diagnostic[];
}

/**
 * - `missing`: a keyword the activity does not populate (`eth.tx` on a wallet creation), a struct
 *   field that is not exposed (`activity.params.user_ids` on a signing request, an ABI-only field
 *   without an ABI) or a map key that is absent: Turnkey's `MissingField`.
 * - `type`: an operand of the wrong type at run time (the caller put a string where an int belongs,
 *   a dynamic EIP-712 value was compared with the wrong literal type, …).
 * - `index`: a list or string index outside its bounds, or a malformed slice.
 * - `value`: a value that cannot be interpreted (bad timestamp or cron text computed at run time,
 *   an invalid `Date` in the context).
 * - `limit`: an evaluation budget was exhausted (steps, list length).
 * - `internal`: the context could not be read (for example a getter threw). Should never happen.
 */
export type EvalErrorKind = 'missing' | 'type' | 'index' | 'value' | 'limit' | 'internal';

export interface PolicyEvalError {
  readonly kind: EvalErrorKind;
  /** Human-readable reason, e.g. `MissingField: eth.tx is not available for this activity`. */
  readonly message: string;
  readonly span: Span;
  readonly position: SourcePosition;
}

/**
 * Severity used when several clauses fail at once (there is no short-circuit, so `a && b` may
 * produce two errors): the most severe one is reported. A `missing` error must not hide a
 * budget exhaustion or malformed data in another clause, because the engine treats `missing` more
 * leniently for DENY policies.
 */
export const EVAL_ERROR_SEVERITY: Readonly<Record<EvalErrorKind, number>> = {
  missing: 1,
  type: 2,
  index: 2,
  value: 2,
  limit: 3,
  internal: 3,
};

/** `a string`, `an int`, `an Activity`: a type name with its indefinite article, for messages. */
export function aOrAn(name: string): string {
  return `${/^[aeiou]/i.test(name) ? 'an' : 'a'} ${name}`;
}

/** 1-based line and column of a UTF-16 offset. */
export function positionAt(source: string, offset: number): SourcePosition {
  const clamped = Math.max(0, Math.min(offset, source.length));
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < clamped; i++) {
    if (source.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { offset: clamped, line, column: clamped - lineStart + 1 };
}

export function makeDiagnostic(source: string, span: Span, reason: string): Diagnostic {
  return { reason, span, position: positionAt(source, span.start) };
}

export function compileErrorMessage(kind: ExpressionKind, diagnostic: Diagnostic): string {
  const { line, column } = diagnostic.position;
  return `invalid policy ${kind}: ${line}:${column}: ${diagnostic.reason}`;
}

/**
 * cel-go style rendering with a caret under the offending column, for logs and CLI output:
 * ```
 * ERROR: <condition>:1:8: unknown field 'too' on EthereumTransaction
 *  | eth.tx.too == 'x'
 *  | .......^
 * ```
 */
export function formatDiagnostic(source: string, label: string, diagnostic: Diagnostic): string {
  const { line, column } = diagnostic.position;
  const text = source.split('\n')[line - 1] ?? '';
  const caret = '.'.repeat(Math.max(0, column - 1)) + '^';
  return `ERROR: <${label}>:${line}:${column}: ${diagnostic.reason}\n | ${text}\n | ${caret}`;
}
