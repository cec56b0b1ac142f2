// Macros of the policy language: `x.all(item, pred)`, `x.any(item, pred)`, `x.filter(item, pred)`
// (docs/reference/policies.md "The language").
//
// They are not functions: their first argument is a variable name that the second argument binds,
// so they cannot be evaluated like calls. As in cel-go (parser/macro.go), the parser expands them
// into a single `comprehension` node, and the checker and evaluator handle one loop construct.
// Their error semantics follow `&&` / `||` in this language: every element is evaluated and any
// predicate error makes the whole comprehension an error (no short-circuit, docs/reference/policies.md "The language").

import type { ComprehensionMode, Comprehension, Expr, Span } from './ast.js';
import { SyntaxFailure } from './lexer.js';

interface MacroDef {
  readonly mode: ComprehensionMode;
  readonly example: string;
}

const MACROS: ReadonlyMap<string, MacroDef> = new Map<string, MacroDef>([
  ['all', { mode: 'all', example: 'list.all(item, item == 1)' }],
  ['any', { mode: 'any', example: 'list.any(item, item == 1)' }],
  ['filter', { mode: 'filter', example: 'list.filter(item, item == 1)' }],
]);

export function isMacro(name: string): boolean {
  return MACROS.has(name);
}

/**
 * Expands `target.name(args…)` into a comprehension node.
 * @throws SyntaxFailure when the arguments do not have the macro's shape.
 */
export function expandMacro(name: string, target: Expr, args: readonly Expr[], nameSpan: Span, span: Span): Comprehension {
  const def = MACROS.get(name);
  if (def === undefined) throw new Error(`not a macro: ${name}`);
  if (args.length !== 2) {
    throw new SyntaxFailure(nameSpan, `${name}() takes 2 arguments (a variable name and a predicate), got ${args.length}; e.g. ${def.example}`);
  }
  const [variable, predicate] = args as [Expr, Expr];
  if (variable.kind !== 'ident') {
    throw new SyntaxFailure(variable.span, `the first argument of ${name}() must be a variable name; e.g. ${def.example}`);
  }
  return {
    kind: 'comprehension',
    mode: def.mode,
    range: target,
    variable: variable.name,
    variableSpan: variable.span,
    predicate,
    span,
  };
}
