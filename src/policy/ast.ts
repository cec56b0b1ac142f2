// The abstract syntax tree of the policy language (docs/reference/policies.md "The language").
//
// Every node carries the half-open UTF-16 span [start, end) of the source text it came from, so
// compile errors and evaluation errors can point at the exact clause. Two shapes differ from the
// surface syntax on purpose:
// - `a && b && c` is one `logical` node with three operands, not a left-deep tree: the docs recommend
//   long `||` chains instead of `in` for allowlists, and a flat node keeps the nesting depth (and
//   so the recursion depth of the checker and evaluator) independent of the chain's length.
// - `x.all(v, p)`, `x.any(v, p)` and `x.filter(v, p)` are expanded at parse time into a single
//   `comprehension` node (macros.ts, after cel-go parser/macro.go), so the evaluator has one loop.
// Nodes are frozen after parsing; nothing mutates an AST once it leaves the parser.

/** Half-open range of UTF-16 code unit offsets into the expression source. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

export type RelationOp = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in';
export type LogicalOp = '&&' | '||';
export type ComprehensionMode = 'all' | 'any' | 'filter';

export interface BoolLiteral {
  readonly kind: 'bool';
  readonly value: boolean;
  readonly span: Span;
}

/** Integer literal. Policy integers are i128/u256 (docs/reference/policies.md "The language"), so they are bigints from the start. */
export interface IntLiteral {
  readonly kind: 'int';
  readonly value: bigint;
  readonly span: Span;
}

export interface StringLiteral {
  readonly kind: 'string';
  readonly value: string;
  readonly span: Span;
}

export interface ListLiteral {
  readonly kind: 'list';
  readonly elements: readonly Expr[];
  readonly span: Span;
}

/** A keyword (`activity`, `eth`, `approvers`, …) or a comprehension variable. */
export interface Identifier {
  readonly kind: 'ident';
  readonly name: string;
  readonly span: Span;
}

/** `object.field` */
export interface Member {
  readonly kind: 'member';
  readonly object: Expr;
  readonly field: string;
  readonly fieldSpan: Span;
  readonly span: Span;
}

/** `object[index]`: list element, string character or map entry. */
export interface Index {
  readonly kind: 'index';
  readonly object: Expr;
  readonly index: Expr;
  readonly span: Span;
}

/** `object[start..end]`, end exclusive. */
export interface Slice {
  readonly kind: 'slice';
  readonly object: Expr;
  readonly start: Expr;
  readonly end: Expr;
  readonly span: Span;
}

export interface Not {
  readonly kind: 'not';
  readonly operand: Expr;
  readonly span: Span;
}

export interface Logical {
  readonly kind: 'logical';
  readonly op: LogicalOp;
  /** Two or more operands, in source order. */
  readonly operands: readonly Expr[];
  readonly span: Span;
}

export interface Relation {
  readonly kind: 'relation';
  readonly op: RelationOp;
  /** The operator token, where type errors of the comparison are reported. */
  readonly opSpan: Span;
  readonly left: Expr;
  readonly right: Expr;
  readonly span: Span;
}

/**
 * A function call: a method (`target.contains(v)`, `target.count()`) or a global function
 * (`Timestamp('…')`, `CronSpan(…)`, `CaseInsensitiveString(…)`). Which names exist is decided by
 * the function registry at check time, not by the parser.
 */
export interface Call {
  readonly kind: 'call';
  readonly target: Expr | null;
  readonly name: string;
  readonly nameSpan: Span;
  readonly args: readonly Expr[];
  /** True for `.count` written without parentheses (accepted, docs/reference/policies.md). */
  readonly bare: boolean;
  readonly span: Span;
}

/** `range.all(variable, predicate)` and friends, after macro expansion. */
export interface Comprehension {
  readonly kind: 'comprehension';
  readonly mode: ComprehensionMode;
  readonly range: Expr;
  readonly variable: string;
  readonly variableSpan: Span;
  readonly predicate: Expr;
  readonly span: Span;
}

export type Expr =
  | BoolLiteral
  | IntLiteral
  | StringLiteral
  | ListLiteral
  | Identifier
  | Member
  | Index
  | Slice
  | Not
  | Logical
  | Relation
  | Call
  | Comprehension;

/** The direct children of a node, in source order. */
export function childrenOf(node: Expr): readonly Expr[] {
  switch (node.kind) {
    case 'bool':
    case 'int':
    case 'string':
    case 'ident':
      return [];
    case 'list':
      return node.elements;
    case 'member':
      return [node.object];
    case 'index':
      return [node.object, node.index];
    case 'slice':
      return [node.object, node.start, node.end];
    case 'not':
      return [node.operand];
    case 'logical':
      return node.operands;
    case 'relation':
      return [node.left, node.right];
    case 'call':
      return node.target ? [node.target, ...node.args] : node.args;
    case 'comprehension':
      return [node.range, node.predicate];
  }
}

/** Depth of the tree (a leaf has depth 1). Iterative, so it cannot overflow the stack itself. */
export function depthOf(root: Expr): number {
  let max = 0;
  const stack: Array<[Expr, number]> = [[root, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > max) max = depth;
    for (const child of childrenOf(node)) stack.push([child, depth + 1]);
  }
  return max;
}

function quote(value: string): string {
  // Literals cannot contain their own quote character (there are no escapes, docs/reference/policies.md "The language"), so a string
  // holding a single quote is printed with double quotes.
  return value.includes("'") ? `"${value}"` : `'${value}'`;
}

/**
 * Canonical, fully parenthesised source text for a tree. Re-parsing the output gives the same tree
 * (spans aside); the parser tests and the property tests rely on that.
 */
export function printExpr(node: Expr): string {
  switch (node.kind) {
    case 'bool':
      return String(node.value);
    case 'int':
      return node.value.toString();
    case 'string':
      return quote(node.value);
    case 'list':
      return `[${node.elements.map(printExpr).join(', ')}]`;
    case 'ident':
      return node.name;
    case 'member':
      return `${printExpr(node.object)}.${node.field}`;
    case 'index':
      return `${printExpr(node.object)}[${printExpr(node.index)}]`;
    case 'slice':
      return `${printExpr(node.object)}[${printExpr(node.start)}..${printExpr(node.end)}]`;
    case 'not':
      return `!${printExpr(node.operand)}`;
    case 'logical':
      return `(${node.operands.map(printExpr).join(` ${node.op} `)})`;
    case 'relation':
      return `(${printExpr(node.left)} ${node.op} ${printExpr(node.right)})`;
    case 'call': {
      const args = node.args.map(printExpr).join(', ');
      return node.target ? `${printExpr(node.target)}.${node.name}(${args})` : `${node.name}(${args})`;
    }
    case 'comprehension':
      return `${printExpr(node.range)}.${node.mode}(${node.variable}, ${printExpr(node.predicate)})`;
  }
}
