// Property tests with a seeded generator (no extra dependencies): the parser and evaluator never
// throw, printing round-trips, and the logical operators behave like logic whenever nothing errors.
import { describe, expect, it } from 'vitest';
import { printExpr } from '../../../src/policy/ast.js';
import type { PolicyContext } from '../../../src/policy/index.js';
import { compilePolicyExpression, evaluatePolicyExpression } from '../../../src/policy/index.js';
import { parsePolicyExpression } from '../../../src/policy/parser.js';
import { outcome } from './helpers.js';

/** mulberry32: small, fast, deterministic. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(r: () => number, items: readonly T[]): T {
  return items[Math.floor(r() * items.length)]!;
}

// Atoms over a context where some keywords are present and some are not, so errors occur.
const ATOMS = [
  'true',
  'false',
  "activity.kind == 'SIGN_TRANSACTION'",
  "activity.action != 'SIGN'",
  'eth.tx.nonce < 5',
  'eth.tx.value >= 1000',
  "eth.tx.to == '0xaa'",
  "eth.tx.data[0..4] == '0xa9'",
  "'u1' in activity.params.user_ids",
  'activity.params.user_ids.count() > 1',
  "activity.params.user_ids.any(u, u == 'u2')",
  "activity.params.user_ids.all(u, u != '')",
  "activity.params.user_ids[3] == 'x'",
  "wallet.id == 'w'",
  "private_key.id == 'k'",
  "eth.tx.contract_call_args['n'] > 1",
  "eth.tx.contract_call_args['s'] == 'x'",
  "CaseInsensitiveString(eth.tx.from) == '0xABC'",
];

function randomExpr(r: () => number, depth: number): string {
  if (depth <= 0 || r() < 0.3) return pick(r, ATOMS);
  const roll = r();
  if (roll < 0.15) return `!(${randomExpr(r, depth - 1)})`;
  if (roll < 0.25) return `[1, 2, 3].${pick(r, ['any', 'all'])}(x, x == 2 && (${randomExpr(r, depth - 1)}))`;
  const op = roll < 0.6 ? '&&' : '||';
  return `(${randomExpr(r, depth - 1)} ${op} ${randomExpr(r, depth - 1)})`;
}

const CONTEXTS: PolicyContext[] = [
  {
    activity: { type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2', kind: 'SIGN_TRANSACTION', resource: 'PRIVATE_KEY', action: 'SIGN', params: { type: 'TRANSACTION_TYPE_ETHEREUM' } },
    eth: { tx: { from: '0xabc', to: '0xAA', data: '0xa9059cbb', value: 5000n, gas: 1, gas_price: 1, chain_id: 1, nonce: 2, type: 'TYPE_2', contract_call_args: { n: 2, s: 'x' } } },
    wallet: { id: 'w', imported: false, exported: false, label: '' },
  },
  {
    activity: { type: 'ACTIVITY_TYPE_DELETE_USERS', kind: 'DELETE_USERS', resource: 'USER', action: 'DELETE', params: { user_ids: ['u1', 'u2'] } },
    private_key: { id: 'k', tags: [], imported: false, exported: false, label: '' },
  },
  {
    activity: { type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2', kind: 'SIGN_TRANSACTION', resource: 'PRIVATE_KEY', action: 'SIGN', params: { user_ids: ['u1', 'u2', 'u3', 'x'] } },
    eth: { tx: { from: '0xabc', to: '0xaa', data: '0x', value: 1n, gas: 1, gas_price: 1, chain_id: 1, nonce: 9, type: 'TYPE_2', contract_call_args: { n: 'two', s: 3 } } },
  },
];

const cases = (() => {
  const r = rng(20260310);
  return Array.from({ length: 400 }, () => randomExpr(r, 4));
})();

describe('properties', () => {
  it('every generated expression compiles, and printing the tree round-trips', () => {
    for (const source of cases) {
      const parsed = parsePolicyExpression(source);
      expect(parsed.ok, source).toBe(true);
      if (!parsed.ok) continue;
      const printed = printExpr(parsed.ast);
      const again = parsePolicyExpression(printed);
      expect(again.ok && printExpr(again.ast), source).toBe(printed);
      expect(compilePolicyExpression(source, 'condition').ok, source).toBe(true);
    }
  });

  it('a && b == b && a and a || b == b || a whenever neither side errors; errors are symmetric too', () => {
    const r = rng(7);
    let compared = 0;
    for (let i = 0; i < 300; i++) {
      const a = pick(r, cases);
      const b = pick(r, cases);
      for (const context of CONTEXTS) {
        for (const op of ['&&', '||']) {
          const ab = outcome(`(${a}) ${op} (${b})`, context);
          const ba = outcome(`(${b}) ${op} (${a})`, context);
          // Without short-circuit, whether the combination errors cannot depend on the order.
          expect(typeof ab === 'string', `${a} ${op} ${b}`).toBe(typeof ba === 'string');
          if (typeof ab === 'boolean') {
            expect(ab, `${a} ${op} ${b}`).toBe(ba);
            compared++;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(100);
  });

  it('negation flips a clean result and preserves an error', () => {
    for (const source of cases.slice(0, 200)) {
      for (const context of CONTEXTS) {
        const plain = outcome(source, context);
        const negated = outcome(`!(${source})`, context);
        expect(negated, source).toBe(typeof plain === 'boolean' ? !plain : plain);
      }
    }
  });

  it('an error in either operand makes && and || fail (no short-circuit)', () => {
    const failing = "wallet_account.address == 'x'";
    for (const source of cases.slice(0, 100)) {
      for (const context of CONTEXTS) {
        expect(outcome(`(${source}) && ${failing}`, context), source).toMatch(/^error:/);
        expect(outcome(`${failing} || (${source})`, context), source).toMatch(/^error:/);
      }
    }
  });

  it('the parser never throws on arbitrary input', () => {
    const r = rng(42);
    const alphabet = "abcxyz_019 .,()[]'\"!&|=<>-{}#\n\t\\é🌍";
    for (let i = 0; i < 3000; i++) {
      const length = Math.floor(r() * 40);
      let source = '';
      for (let j = 0; j < length; j++) source += pick(r, Array.from(alphabet));
      for (const kind of ['condition', 'consensus', 'time'] as const) {
        const result = compilePolicyExpression(source, kind);
        if (!result.ok) expect(result.error.message.startsWith(`invalid policy ${kind}: `)).toBe(true);
      }
    }
  });

  it('mutating a valid expression never throws either', () => {
    const r = rng(99);
    for (const source of cases.slice(0, 300)) {
      const at = Math.floor(r() * source.length);
      const mutated = source.slice(0, at) + pick(r, ['', '(', ')', "'", '.', '[', '..', '&&', '!', '0x', '-']) + source.slice(at + 1);
      const result = compilePolicyExpression(mutated, 'condition');
      if (result.ok) {
        for (const context of CONTEXTS) {
          const evaluated = evaluatePolicyExpression(result.expression, context);
          expect(evaluated.ok ? typeof evaluated.value : evaluated.error.kind).toMatch(/^(boolean|missing|type|index|value|limit)$/);
        }
      }
    }
  });

  it('evaluation never throws on randomly corrupted contexts', () => {
    const r = rng(5);
    const junk: unknown[] = [null, undefined, 1.5, 2 ** 60, 'str', 7, 7n, true, [], {}, [null], () => 1, Symbol('s'), new Date('x'), new Date(0)];
    const corrupt = (value: unknown, depth: number): unknown => {
      if (r() < 0.15) return pick(r, junk);
      if (depth > 6 || value === null || typeof value !== 'object' || value instanceof Date) return value;
      if (Array.isArray(value)) return value.map((v) => corrupt(v, depth + 1));
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, corrupt(v, depth + 1)]));
    };
    for (let i = 0; i < 300; i++) {
      const context = corrupt(pick(r, CONTEXTS), 0) as PolicyContext;
      const source = pick(r, cases);
      const compiled = compilePolicyExpression(source, 'condition');
      if (!compiled.ok) throw new Error(source);
      const result = evaluatePolicyExpression(compiled.expression, context);
      expect(result.ok ? typeof result.value : result.error.kind, source).toMatch(/^(boolean|missing|type|index|value|limit|internal)$/);
    }
  });
});
