// Parser golden tables (src/policy/parser.ts; docs/reference/policies.md "The language"), after cel-go
// parser/parser_test.go: input → canonical printed tree, and input → error with a caret.
import { describe, expect, it } from 'vitest';
import type { Expr } from '../../../src/policy/ast.js';
import { depthOf, printExpr } from '../../../src/policy/ast.js';
import { formatDiagnostic } from '../../../src/policy/errors.js';
import { parsePolicyExpression } from '../../../src/policy/parser.js';

function parse(source: string): Expr {
  const result = parsePolicyExpression(source);
  if (!result.ok) throw new Error(formatDiagnostic(source, 'input', result.diagnostic));
  return result.ast;
}

function parseError(source: string, limits?: Parameters<typeof parsePolicyExpression>[1]): string {
  const result = parsePolicyExpression(source, limits);
  if (result.ok) throw new Error(`expected ${JSON.stringify(source)} not to parse`);
  return formatDiagnostic(source, 'input', result.diagnostic);
}

describe('parser: trees', () => {
  it.each([
    ['true', 'true'],
    ['42', '42'],
    ['-42', '-42'],
    ["'a'", "'a'"],
    ['"a"', "'a'"],
    ['[]', '[]'],
    ['[1, 2, 3]', '[1, 2, 3]'],
    ['a.b.c', 'a.b.c'],
    ['a[0]', 'a[0]'],
    ["m['k']['j'][0]", "m['k']['j'][0]"],
    ['a[1..2]', 'a[1..2]'],
    ['a[b.c..d[0]]', 'a[b.c..d[0]]'],
    ['!a', '!a'],
    ['!!a', '!!a'],
    ['!a == b', '(!a == b)'],
    ['!(a == b)', '!(a == b)'],
    ['a == b', '(a == b)'],
    ['a != b', '(a != b)'],
    ['a < b', '(a < b)'],
    ['a <= b', '(a <= b)'],
    ['a > b', '(a > b)'],
    ['a >= b', '(a >= b)'],
    ['a in [1, 2]', '(a in [1, 2])'],
    // && binds tighter than ||; chains are flat.
    ['a && b || c && d', '((a && b) || (c && d))'],
    ['a || b || c || d', '(a || b || c || d)'],
    ['a && (b || c) && d', '(a && (b || c) && d)'],
    ['(a)', 'a'],
    ['((a && b))', '(a && b)'],
    ['a == 1 && b != 2', '((a == 1) && (b != 2))'],
    // Method and global calls; macros become comprehensions.
    ["x.contains('v')", "x.contains('v')"],
    ['x.count()', 'x.count()'],
    ['x.count == 1', '(x.count() == 1)'],
    ['x.count.count()', 'x.count().count()'],
    ["Timestamp('2026-01-01T00:00:00Z')", "Timestamp('2026-01-01T00:00:00Z')"],
    ['x.all(i, i > 0)', 'x.all(i, (i > 0))'],
    ['x.any(i, i.y.any(j, j == i))', 'x.any(i, i.y.any(j, (j == i)))'],
    ['x.filter(i, i).count() >= 2', '(x.filter(i, i).count() >= 2)'],
    ["x.filter(u, u.tags.contains('t'))[0].id", "x.filter(u, u.tags.contains('t'))[0].id"],
    ["\"it's\" == 'x'", `("it's" == 'x')`],
  ])('%s  →  %s', (source, printed) => {
    expect(printExpr(parse(source))).toBe(printed);
  });

  it('reparses its own output to the same tree', () => {
    const source = "approvers.filter(u, u.tags.contains('a') || !(u.id in ['x', \"y'z\"])).count >= -2 && m['k'][0..3][1] == 'b'";
    const once = printExpr(parse(source));
    expect(printExpr(parse(once))).toBe(once);
  });

  it('expands macros into one comprehension node', () => {
    const ast = parse('approvers.any(user, user.id == "u")');
    expect(ast.kind).toBe('comprehension');
    if (ast.kind !== 'comprehension') return;
    expect(ast.mode).toBe('any');
    expect(ast.variable).toBe('user');
    expect(printExpr(ast.range)).toBe('approvers');
    expect(printExpr(ast.predicate)).toBe("(user.id == 'u')");
  });

  it('marks .count without parentheses as bare', () => {
    const ast = parse('x.count');
    expect(ast).toMatchObject({ kind: 'call', name: 'count', bare: true, args: [] });
  });

  it('records spans covering each node', () => {
    const source = "eth.tx.to == '0xab' && activity.params.user_ids[0] == 'u'";
    const ast = parse(source);
    expect(ast.kind).toBe('logical');
    if (ast.kind !== 'logical') return;
    const [first, second] = ast.operands as [Expr, Expr];
    expect(source.slice(first.span.start, first.span.end)).toBe("eth.tx.to == '0xab'");
    expect(source.slice(second.span.start, second.span.end)).toBe("activity.params.user_ids[0] == 'u'");
    if (second.kind !== 'relation') throw new Error('relation expected');
    expect(source.slice(second.opSpan.start, second.opSpan.end)).toBe('==');
    expect(source.slice(second.left.span.start, second.left.span.end)).toBe('activity.params.user_ids[0]');
  });

  it('produces frozen nodes', () => {
    const ast = parse('a.b == 1');
    expect(Object.isFrozen(ast)).toBe(true);
    if (ast.kind === 'relation') expect(Object.isFrozen(ast.left)).toBe(true);
  });

  it('parses a long allowlist without deepening the tree', () => {
    const source = Array.from({ length: 250 }, (_, i) => `eth.tx.to == '0x${i.toString(16).padStart(40, '0')}'`).join(' || ');
    const ast = parse(source);
    expect(depthOf(ast)).toBe(5);
  });
});

describe('parser: errors with positions', () => {
  it.each([
    ['', 'ERROR: <input>:1:1: empty expression\n | \n | ^'],
    ['a ==', 'ERROR: <input>:1:5: expected an expression, found end of expression\n | a ==\n | ....^'],
    ['a == == b', "ERROR: <input>:1:6: expected an expression, found '=='\n | a == == b\n | .....^"],
    ['(a == b', "ERROR: <input>:1:8: expected ')', found end of expression\n | (a == b\n | .......^"],
    ['a == b)', "ERROR: <input>:1:7: unexpected ')' after the end of the expression\n | a == b)\n | ......^"],
    ['a == b == c', "ERROR: <input>:1:8: comparison operators cannot be chained; combine comparisons with '&&'\n | a == b == c\n | .......^"],
    ['a in b in c', "ERROR: <input>:1:8: comparison operators cannot be chained; combine comparisons with '&&'\n | a in b in c\n | .......^"],
    ['a.', 'ERROR: <input>:1:3: expected a field or function name after ".", found end of expression\n | a.\n | ..^'],
    ['a.1', 'ERROR: <input>:1:3: expected a field or function name after ".", found number 1\n | a.1\n | ..^'],
    ['a[1', "ERROR: <input>:1:4: expected ']' or '..' in the index, found end of expression\n | a[1\n | ...^"],
    ['a[1..', 'ERROR: <input>:1:6: expected an expression, found end of expression\n | a[1..\n | .....^'],
    ['[1, 2', "ERROR: <input>:1:6: expected ',' or ']' in the list, found end of expression\n | [1, 2\n | .....^"],
    ['[1, ]', "ERROR: <input>:1:5: expected an expression, found ']'\n | [1, ]\n | ....^"],
    ['f(1, 2', "ERROR: <input>:1:7: expected ')' to close the argument list, found end of expression\n | f(1, 2\n | ......^"],
    ['-a', "ERROR: <input>:1:1: '-' is only allowed directly before an integer literal\n | -a\n | ^"],
    ['x.all(1, true)', 'ERROR: <input>:1:7: the first argument of all() must be a variable name; e.g. list.all(item, item == 1)\n | x.all(1, true)\n | ......^'],
    ['x.filter(i)', 'ERROR: <input>:1:3: filter() takes 2 arguments (a variable name and a predicate), got 1; e.g. list.filter(item, item == 1)\n | x.filter(i)\n | ..^'],
    ["a == 'x' &&\nb == ", 'ERROR: <input>:2:6: expected an expression, found end of expression\n | b == \n | .....^'],
  ])('%j', (source, message) => {
    expect(parseError(source)).toBe(message);
  });

  it('rejects out-of-range integer literals at their position', () => {
    expect(parseError('x > 115792089237316195423570985008687907853269984665640564039457584007913129639936')).toContain('<input>:1:5: integer literal out of range');
    expect(parseError('x > -170141183460469231731687303715884105729')).toContain('<input>:1:5: integer literal out of range');
    expect(printExpr(parse('x > -170141183460469231731687303715884105728'))).toBe('(x > -170141183460469231731687303715884105728)');
  });
});

describe('parser: limits', () => {
  it('stops runaway parenthesis nesting before the stack does', () => {
    const source = '('.repeat(100_000) + 'a' + ')'.repeat(100_000);
    expect(parseError(source, { maxSourceLength: 1_000_000 })).toContain('nested too deeply: more than 64 levels');
  });

  it('counts nesting through unary operators, lists and indexes', () => {
    expect(parseError('!'.repeat(70) + 'a')).toContain('nested too deeply');
    expect(parseError('['.repeat(70) + ']'.repeat(70))).toContain('nested too deeply');
    expect(parseError('a' + '[b'.repeat(70) + ']'.repeat(70))).toContain('nested too deeply');
  });

  it('checks the depth of the finished tree for long postfix chains', () => {
    expect(parseError('a' + '.b'.repeat(70))).toContain('nested too deeply');
    expect(parsePolicyExpression('a' + '.b'.repeat(60)).ok).toBe(true);
  });

  it('accepts exactly the configured depth', () => {
    expect(parsePolicyExpression('('.repeat(9) + 'a' + ')'.repeat(9), { maxDepth: 10 }).ok).toBe(true);
    expect(parsePolicyExpression('('.repeat(10) + 'a' + ')'.repeat(10), { maxDepth: 10 }).ok).toBe(false);
  });

  it('limits the number of nodes', () => {
    expect(parsePolicyExpression('a && b && c', { maxAstNodes: 4 }).ok).toBe(true);
    expect(parseError('a && b && c', { maxAstNodes: 3 })).toContain('expression too large: more than 3 nodes');
  });

  it('limits list literal length', () => {
    expect(parsePolicyExpression('[1, 2, 3]', { maxListLiteralElements: 3 }).ok).toBe(true);
    expect(parseError('[1, 2, 3, 4]', { maxListLiteralElements: 3 })).toContain('list literal too long: more than 3 elements');
  });

  it('limits the source length before lexing', () => {
    expect(parsePolicyExpression('a == 1', { maxSourceLength: 6 }).ok).toBe(true);
    expect(parseError('a == 10', { maxSourceLength: 6 })).toContain('expression too long: more than 6 characters');
  });

  it('rejects nonsensical limits', () => {
    expect(() => parsePolicyExpression('a', { maxDepth: 0 })).toThrow(RangeError);
    expect(() => parsePolicyExpression('a', { maxAstNodes: 1.5 })).toThrow(RangeError);
  });
});
