// Recursive-descent parser of the policy language (docs/reference/policies.md "The language").
//
// Grammar, lowest precedence first:
//   expr     := and ( '||' and )*
//   and      := relation ( '&&' relation )*
//   relation := unary ( ( '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' ) unary )?
//   unary    := '!' unary | '-' INT | postfix
//   postfix  := primary ( '.' IDENT [ '(' args ')' ] | '[' expr [ '..' expr ] ']' )*
//   primary  := INT | STRING | 'true' | 'false' | IDENT [ '(' args ')' ] | '(' expr ')' | '[' [ args ] ']'
//   args     := expr ( ',' expr )*
//
// Decisions (and why):
// - Comparisons do not chain (`a == b == c` is rejected with a hint): chaining is never what a
//   policy author means, and rejecting it keeps the typing of `==` simple.
// - `!` binds tighter than comparisons, as in CEL: `!a == b` is `(!a) == b`.
// - Unary minus exists only in front of an integer literal. The language has no arithmetic, but
//   its `int` is signed (i128), so negative literals must be writable.
// - `x.count` without parentheses parses as `x.count()`: the docs use both spellings
//   (`solana.tx.transfers.count == 1`, docs/reference/policies.md) and no struct has a field named `count`.
// - `all`/`any`/`filter` are expanded here into comprehension nodes (macros.ts).
// - `&&` / `||` chains become one n-ary node, so long allowlists do not nest.
// Limits: source length, AST node count, nesting depth and list literal length (limits.ts). The
// nesting limit is enforced while parsing, so `((((…` cannot exhaust the stack.

import type { Expr, IntLiteral, RelationOp, Span } from './ast.js';
import { depthOf } from './ast.js';
import type { Diagnostic } from './errors.js';
import { makeDiagnostic } from './errors.js';
import type { Token, TokenKind } from './lexer.js';
import { SyntaxFailure, describeToken, tokenize } from './lexer.js';
import type { PolicyLimits } from './limits.js';
import { resolveLimits } from './limits.js';
import { expandMacro, isMacro } from './macros.js';

export type ParseResult = { readonly ok: true; readonly ast: Expr } | { readonly ok: false; readonly diagnostic: Diagnostic };

const RELATION_OPS: ReadonlySet<TokenKind> = new Set<TokenKind>(['==', '!=', '<', '<=', '>', '>=', 'in']);

/** u256 maximum and i128 minimum: the range of integer literals (docs/reference/policies.md "The language"). */
export const MAX_INT_LITERAL = (1n << 256n) - 1n;
export const MIN_INT_LITERAL = -(1n << 127n);

function spanFrom(start: Span, end: Span): Span {
  return { start: start.start, end: end.end };
}

class Parser {
  private pos = 0;
  private depth = 0;
  private nodeCount = 0;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly limits: PolicyLimits,
  ) {}

  parseRoot(): Expr {
    if (this.peek().kind === 'eof') throw new SyntaxFailure(this.peek().span, 'empty expression');
    const expr = this.parseExpr();
    const trailing = this.peek();
    if (trailing.kind !== 'eof') {
      throw new SyntaxFailure(trailing.span, `unexpected ${describeToken(trailing)} after the end of the expression`);
    }
    return expr;
  }

  private peek(): Token {
    return this.tokens[this.pos]!;
  }

  private next(): Token {
    const token = this.tokens[this.pos]!;
    if (token.kind !== 'eof') this.pos++;
    return token;
  }

  private accept(kind: TokenKind): Token | null {
    return this.peek().kind === kind ? this.next() : null;
  }

  private expect(kind: TokenKind, what: string): Token {
    const token = this.peek();
    if (token.kind !== kind) throw new SyntaxFailure(token.span, `expected ${what}, found ${describeToken(token)}`);
    return this.next();
  }

  /** Registers a node against the node budget and freezes it. */
  private node<T extends Expr>(node: T): T {
    this.nodeCount++;
    if (this.nodeCount > this.limits.maxAstNodes) {
      throw new SyntaxFailure(node.span, `expression too large: more than ${this.limits.maxAstNodes} nodes`);
    }
    return Object.freeze(node);
  }

  private enter(at: Span): void {
    this.depth++;
    if (this.depth > this.limits.maxDepth) {
      throw new SyntaxFailure(at, `expression nested too deeply: more than ${this.limits.maxDepth} levels`);
    }
  }

  private leave(): void {
    this.depth--;
  }

  private parseExpr(): Expr {
    this.enter(this.peek().span);
    try {
      return this.parseLogical('||', () => this.parseLogical('&&', () => this.parseRelation()));
    } finally {
      this.leave();
    }
  }

  private parseLogical(op: '&&' | '||', operand: () => Expr): Expr {
    const first = operand();
    if (this.peek().kind !== op) return first;
    const operands: Expr[] = [first];
    while (this.accept(op)) operands.push(operand());
    return this.node({
      kind: 'logical',
      op,
      operands: Object.freeze(operands),
      span: spanFrom(first.span, operands[operands.length - 1]!.span),
    });
  }

  private parseRelation(): Expr {
    const left = this.parseUnary();
    const opToken = this.peek();
    if (!RELATION_OPS.has(opToken.kind)) return left;
    this.next();
    const right = this.parseUnary();
    const after = this.peek();
    if (RELATION_OPS.has(after.kind)) {
      throw new SyntaxFailure(after.span, `comparison operators cannot be chained; combine comparisons with '&&'`);
    }
    return this.node({
      kind: 'relation',
      op: opToken.kind as RelationOp,
      opSpan: opToken.span,
      left,
      right,
      span: spanFrom(left.span, right.span),
    });
  }

  private parseUnary(): Expr {
    const token = this.peek();
    if (token.kind === '!') {
      this.next();
      this.enter(token.span);
      try {
        const operand = this.parseUnary();
        return this.node({ kind: 'not', operand, span: spanFrom(token.span, operand.span) });
      } finally {
        this.leave();
      }
    }
    if (token.kind === '-') {
      this.next();
      const literal = this.peek();
      if (literal.kind !== 'int') {
        throw new SyntaxFailure(token.span, "'-' is only allowed directly before an integer literal");
      }
      this.next();
      return this.intLiteral(-(literal.value as bigint), spanFrom(token.span, literal.span));
    }
    return this.parsePostfix(this.parsePrimary());
  }

  private intLiteral(value: bigint, span: Span): IntLiteral {
    if (value > MAX_INT_LITERAL) {
      throw new SyntaxFailure(span, 'integer literal out of range: the largest supported value is 2^256-1 (u256)');
    }
    if (value < MIN_INT_LITERAL) {
      throw new SyntaxFailure(span, 'integer literal out of range: the smallest supported value is -2^127 (i128)');
    }
    return this.node({ kind: 'int', value, span });
  }

  private parsePostfix(base: Expr): Expr {
    let expr = base;
    while (true) {
      if (this.accept('.')) {
        const name = this.expect('ident', 'a field or function name after "."');
        if (this.peek().kind === '(') {
          this.next();
          const args = Object.freeze(this.parseArgs(')'));
          const close = this.expect(')', "')' to close the argument list");
          const span = spanFrom(expr.span, close.span);
          expr = isMacro(name.text)
            ? this.node(expandMacro(name.text, expr, args, name.span, span))
            : this.node({ kind: 'call', target: expr, name: name.text, nameSpan: name.span, args, bare: false, span });
        } else if (name.text === 'count') {
          expr = this.node({ kind: 'call', target: expr, name: 'count', nameSpan: name.span, args: Object.freeze([]), bare: true, span: spanFrom(expr.span, name.span) });
        } else {
          expr = this.node({ kind: 'member', object: expr, field: name.text, fieldSpan: name.span, span: spanFrom(expr.span, name.span) });
        }
        continue;
      }
      const open = this.accept('[');
      if (open) {
        const index = this.parseExpr();
        if (this.accept('..')) {
          const end = this.parseExpr();
          const close = this.expect(']', "']' to close the slice");
          expr = this.node({ kind: 'slice', object: expr, start: index, end, span: spanFrom(expr.span, close.span) });
        } else {
          const close = this.expect(']', "']' or '..' in the index");
          expr = this.node({ kind: 'index', object: expr, index, span: spanFrom(expr.span, close.span) });
        }
        continue;
      }
      return expr;
    }
  }

  /** Comma-separated expressions up to (not including) `close`. */
  private parseArgs(close: TokenKind): Expr[] {
    const args: Expr[] = [];
    if (this.peek().kind === close) return args;
    do {
      args.push(this.parseExpr());
    } while (this.accept(','));
    return args;
  }

  private parsePrimary(): Expr {
    const token = this.next();
    switch (token.kind) {
      case 'int':
        return this.intLiteral(token.value as bigint, token.span);
      case 'string':
        return this.node({ kind: 'string', value: token.value as string, span: token.span });
      case 'true':
      case 'false':
        return this.node({ kind: 'bool', value: token.kind === 'true', span: token.span });
      case 'ident': {
        if (this.peek().kind !== '(') return this.node({ kind: 'ident', name: token.text, span: token.span });
        this.next();
        const args = Object.freeze(this.parseArgs(')'));
        const close = this.expect(')', "')' to close the argument list");
        return this.node({ kind: 'call', target: null, name: token.text, nameSpan: token.span, args, bare: false, span: spanFrom(token.span, close.span) });
      }
      case '(': {
        const inner = this.parseExpr();
        this.expect(')', "')'");
        // The parentheses only group; the node keeps the inner span so errors point at the clause.
        return inner;
      }
      case '[': {
        const elements = this.parseArgs(']');
        const close = this.expect(']', "',' or ']' in the list");
        if (elements.length > this.limits.maxListLiteralElements) {
          throw new SyntaxFailure(token.span, `list literal too long: more than ${this.limits.maxListLiteralElements} elements`);
        }
        return this.node({ kind: 'list', elements: Object.freeze(elements), span: spanFrom(token.span, close.span) });
      }
      default:
        throw new SyntaxFailure(token.span, `expected an expression, found ${describeToken(token)}`);
    }
  }
}

/**
 * Parses one policy expression into a frozen AST. Does not check keywords or types (checker.ts).
 * @example parsePolicyExpression("eth.tx.to == '0xabc'")
 */
export function parsePolicyExpression(source: string, limits?: Partial<PolicyLimits>): ParseResult {
  const resolved = resolveLimits(limits);
  if (source.length > resolved.maxSourceLength) {
    const span = { start: resolved.maxSourceLength, end: source.length };
    return { ok: false, diagnostic: makeDiagnostic(source, span, `expression too long: more than ${resolved.maxSourceLength} characters`) };
  }
  try {
    const ast = new Parser(tokenize(source), resolved).parseRoot();
    // Postfix chains (`a.b[0].c…`) deepen the tree without recursing in the parser; check the
    // depth of the finished tree too, since the checker and evaluator do recurse over it.
    const depth = depthOf(ast);
    if (depth > resolved.maxDepth) {
      return { ok: false, diagnostic: makeDiagnostic(source, ast.span, `expression nested too deeply: more than ${resolved.maxDepth} levels`) };
    }
    return { ok: true, ast };
  } catch (err) {
    if (err instanceof SyntaxFailure) return { ok: false, diagnostic: makeDiagnostic(source, err.span, err.reason) };
    throw err;
  }
}
