// Evaluator semantics (src/policy/evaluator.ts; docs/reference/policies.md "The language", "Evaluation
// of one policy").
import { describe, expect, it } from 'vitest';
import type { CompiledPolicyExpression } from '../../../src/policy/index.js';
import { caseInsensitive, evaluatePolicyExpression } from '../../../src/policy/index.js';
import { parsePolicyExpression } from '../../../src/policy/parser.js';
import { compile, outcome, run } from './helpers.js';

const tx = {
  from: '0xabc',
  to: '0x00000000000000000000000000000000000000aa',
  data: '0xa9059cbb00000000',
  value: 10n ** 18n,
  gas: 21000,
  gas_price: 1,
  chain_id: 1,
  nonce: 7,
  type: 'TYPE_2',
};
const ctx = {
  activity: { type: 'ACTIVITY_TYPE_DELETE_USERS', kind: 'DELETE_USERS', resource: 'USER', action: 'DELETE', params: { user_ids: ['u1', 'u2'] } },
  eth: { tx },
  wallet: { id: 'w1', imported: false, exported: true, label: 'main' },
};

describe('evaluator: operators', () => {
  it.each([
    ['true && true', true],
    ['true && false', false],
    ['false || true', true],
    ['false || false', false],
    ['!false', true],
    ['!wallet.imported && wallet.exported', true],
    ["wallet.label == 'main'", true],
    ["wallet.label != 'main'", false],
    ['eth.tx.nonce == 7 && eth.tx.nonce != 8', true],
    ['eth.tx.nonce < 8 && eth.tx.nonce <= 7 && eth.tx.nonce > 6 && eth.tx.nonce >= 7', true],
    ['eth.tx.value == 1000000000000000000', true],
    ['eth.tx.value > 999999999999999999 && eth.tx.value < 1000000000000000001', true],
    ['eth.tx.value > -1', true],
    ["'u2' in activity.params.user_ids", true],
    ["'u3' in activity.params.user_ids", false],
    ['eth.tx.chain_id in [1, 10, 8453]', true],
    ["activity.params.user_ids.contains('u1')", true],
    ['activity.params.user_ids.count() == 2', true],
    ['activity.params.user_ids.count == 2', true],
    ["activity.params.user_ids[1] == 'u2'", true],
    ["activity.params.user_ids[0..1].count() == 1 && activity.params.user_ids[0..1][0] == 'u1'", true],
    ["activity.params.user_ids.all(u, u != '')", true],
    ["activity.params.user_ids.any(u, u == 'u2')", true],
    ["activity.params.user_ids.any(u, u == 'u9')", false],
    ["activity.params.user_ids.filter(u, u != 'u1') == activity.params.user_ids.filter(u, u != 'u1')", 'compile'],
    ["activity.params.user_ids.filter(u, u != 'u1')[0] == 'u2'", true],
    ["activity.params.user_ids.filter(u, false).count() == 0", true],
    ["eth.tx.data[0..10] == '0xa9059cbb'", true],
    ["eth.tx.data[2] == 'a'", true],
    ["activity.params.user_ids.all(a, activity.params.user_ids.any(b, a == b))", true],
  ])('%s → %s', (source, expected) => {
    if (expected === 'compile') {
      expect(() => compile(source)).toThrow(/cannot compare list<string> with list<string>/);
      return;
    }
    expect(outcome(source, ctx)).toBe(expected);
  });

  it('treats numbers and bigints from the context as the same integers', () => {
    expect(outcome('eth.tx.gas == 21000 && eth.tx.value == 1000000000000000000', { eth: { tx: { ...tx, gas: 21000n, value: 10n ** 18n } } })).toBe(true);
    expect(outcome('eth.tx.gas == 21000', { eth: { tx: { ...tx, gas: 21000 } } })).toBe(true);
  });

  it('compares u256-sized values exactly', () => {
    const max = (1n << 256n) - 1n;
    const c = { eth: { tx: { ...tx, value: max } } };
    expect(outcome('eth.tx.value == 115792089237316195423570985008687907853269984665640564039457584007913129639935', c)).toBe(true);
    expect(outcome('eth.tx.value > 115792089237316195423570985008687907853269984665640564039457584007913129639934', c)).toBe(true);
  });

  it('indexes and slices strings by code point', () => {
    const c = { wallet: { ...ctx.wallet, label: '🌍é-x' } };
    expect(outcome("wallet.label[0] == '🌍' && wallet.label[1] == 'é' && wallet.label[1..3] == 'é-'", c)).toBe(true);
    expect(outcome('wallet.label[4] == "x"', c)).toBe('error:index');
  });

  it('clamps slices to the length, in both directions', () => {
    expect(outcome("eth.tx.data[0..1000] == eth.tx.data && eth.tx.data[100..200] == ''", ctx)).toBe(true);
    expect(outcome('activity.params.user_ids[1..99].count() == 1 && activity.params.user_ids[5..9].count() == 0', ctx)).toBe(true);
  });

  it('rejects computed slice bounds that are negative or reversed', () => {
    const c = { ...ctx, eth: { tx: { ...tx, nonce: -1, gas: 3, gas_price: 2 } } };
    expect(outcome("eth.tx.data[eth.tx.nonce..2] == ''", c)).toBe('error:index');
    expect(outcome("eth.tx.data[eth.tx.gas..eth.tx.gas_price] == ''", c)).toBe('error:index');
    expect(outcome("activity.params.user_ids[eth.tx.nonce] == ''", c)).toBe('error:index');
  });

  it('reports out-of-range list indexes with the length', () => {
    const result = run("activity.params.user_ids[2] == 'x'", ctx);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ kind: 'index', message: 'index 2 is out of range for activity.params.user_ids (length 2)' });
    expect(result.error.position).toMatchObject({ line: 1, column: 1 });
  });
});

describe('evaluator: no short-circuit and error severity', () => {
  it.each([
    ["false && eth.tx.to == 'x'", { activity: ctx.activity }, 'error:missing'],
    ["true || eth.tx.to == 'x'", { activity: ctx.activity }, 'error:missing'],
    ["eth.tx.to == 'x' || true", { activity: ctx.activity }, 'error:missing'],
    ["[1, 2].any(x, x == 1 || wallet.id == 'w')", {}, 'error:missing'],
    ["[1, 2].all(x, x == 5 && wallet.id == 'w')", {}, 'error:missing'],
    ["[1, 2].filter(x, wallet.id == 'w').count() == 0", {}, 'error:missing'],
  ])('%s → %s', (source, context, expected) => {
    expect(outcome(source, context)).toBe(expected);
  });

  it('reports the most severe error whatever the order of the clauses', () => {
    const c = { activity: ctx.activity };
    expect(outcome("eth.tx.to == 'x' && activity.params.user_ids[9] == 'x'", c)).toBe('error:index');
    expect(outcome("activity.params.user_ids[9] == 'x' && eth.tx.to == 'x'", c)).toBe('error:index');
    expect(outcome("eth.tx.to == 'x' || eth.tx.from == 'y'", c)).toBe('error:missing');
  });

  it('keeps the first of equally severe errors', () => {
    const result = run("wallet.id == 'a' && eth.tx.to == 'b'", {});
    expect(result.ok ? '' : result.error.message).toBe('MissingField: wallet is not available for this activity');
  });

  it('evaluates every element of a comprehension even after the answer is known', () => {
    const ids = Array.from({ length: 100 }, (_, i) => `u${i}`);
    const c = { activity: { ...ctx.activity, params: { user_ids: ids } } };
    const any = run("activity.params.user_ids.any(u, u == 'u0')", c);
    const all = run("activity.params.user_ids.all(u, u == 'zzz')", c);
    expect(any.ok && any.value).toBe(true);
    expect(all.ok && !all.value).toBe(true);
    // Each iteration visits the predicate's nodes: the step counts grow with the list, not with the answer.
    expect(any.steps).toBeGreaterThan(300);
    expect(all.steps).toBe(any.steps);
  });
});

describe('evaluator: missing data (MissingField)', () => {
  it.each([
    ["eth.tx.to == 'x'", {}, 'MissingField: eth is not available for this activity', 1],
    ["eth.tx.to == 'x'", { eth: {} }, 'MissingField: eth.tx is not available for this activity', 1],
    ["eth.tx.to == 'x'", { eth: { tx: { from: 'a' } } }, 'MissingField: eth.tx.to is not available for this activity', 1],
    ["eth.tx.function_name == 'x'", { eth: { tx } }, 'MissingField: eth.tx.function_name is not available for this activity', 1],
    ["activity.params.hash_function == 'x'", { activity: ctx.activity }, 'MissingField: activity.params.hash_function is not available for this activity', 1],
    ["true && eth.tx.contract_call_args['wad'] == 1", { eth: { tx: { ...tx, contract_call_args: {} } } }, "MissingField: eth.tx.contract_call_args has no entry 'wad'", 9],
    ["eth.tx.to == 'x'", { eth: { tx: { ...tx, to: null } } }, 'MissingField: eth.tx.to is not available for this activity', 1],
    ["activity.params.user_ids.all(u, u != '')", { activity: { ...ctx.activity, params: { user_ids: ['a', null] } } }, 'MissingField: element 1 of activity.params.user_ids is null', 1],
  ])('%s', (source, context, message, column) => {
    const result = run(source, context);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.kind).toBe('missing');
    expect(result.error.message).toBe(message);
    expect(result.error.position.column).toBe(column);
  });

  it('reads own properties only, never the prototype chain', () => {
    const props = { kind: 'card' };
    expect(outcome("secret.static_properties['constructor'] == 'x'", { secret: { static_properties: props } })).toBe('error:missing');
    expect(outcome("secret.static_properties['__proto__'] == 'x'", { secret: { static_properties: props } })).toBe('error:missing');
    expect(outcome("secret.static_properties['toString'] == 'x'", { secret: { static_properties: props } })).toBe('error:missing');
    class Inherited {
      get id(): string {
        return 'w1';
      }
    }
    expect(outcome("wallet.id == 'w1'", { wallet: new Inherited() })).toBe('error:missing');
    // A JSON-parsed "__proto__" key is an own property and is read as such.
    const parsed = JSON.parse('{"static_properties": {"__proto__": "x"}}');
    expect(outcome("secret.static_properties['__proto__'] == 'x'", { secret: parsed })).toBe(true);
  });
});

describe('evaluator: run-time types (the context is never trusted)', () => {
  it.each([
    ['eth.tx.value > 5', { eth: { tx: { ...tx, value: '600' } } }, 'error:type'],
    ['eth.tx.value > 5', { eth: { tx: { ...tx, value: 1.5 } } }, 'error:type'],
    ['eth.tx.value > 5', { eth: { tx: { ...tx, value: 2 ** 60 } } }, 'error:type'],
    ['eth.tx.value > 5', { eth: { tx: { ...tx, value: Number.NaN } } }, 'error:type'],
    ["eth.tx.to == 'x'", { eth: { tx: { ...tx, to: Symbol('x') } } }, 'error:type'],
    ["eth.tx.to == 'x'", { eth: { tx: { ...tx, to: () => 'x' } } }, 'error:type'],
    ["eth.tx.to == 'x'", { eth: { tx: { ...tx, to: 7 } } }, 'error:type'],
    ["wallet.id == 'x'", { wallet: 'w1' }, 'error:type'],
    ["activity.params.user_ids.contains('x')", { activity: { ...ctx.activity, params: { user_ids: 'x' } } }, 'error:type'],
    ["'x' in activity.params.user_ids", { activity: { ...ctx.activity, params: { user_ids: [1, 2] } } }, 'error:type'],
    ["activity.params.user_ids.contains('x')", { activity: { ...ctx.activity, params: { user_ids: [1] } } }, 'error:type'],
    ['activity.params.user_ids.count() == 1', { activity: { ...ctx.activity, params: { user_ids: { length: 1 } } } }, 'error:type'],
    ["eth.tx.contract_call_args['calls'][0]['target'] == 'x'", { eth: { tx: { ...tx, contract_call_args: { calls: [['0xa', 0]] } } } }, 'error:type'],
    ["eth.tx.contract_call_args['x'].y == 'z'", { eth: { tx: { ...tx, contract_call_args: { x: ['y'] } } } }, 'error:type'],
    ["eth.tx.contract_call_args['flag']", { eth: { tx: { ...tx, contract_call_args: { flag: 'yes' } } } }, 'error:type'],
    ["eth.tx.contract_call_args['flag']", { eth: { tx: { ...tx, contract_call_args: { flag: true } } } }, true],
    ["eth.tx.contract_call_args['n'] && true", { eth: { tx: { ...tx, contract_call_args: { n: 1 } } } }, 'error:type'],
    ["!eth.tx.contract_call_args['n']", { eth: { tx: { ...tx, contract_call_args: { n: 1 } } } }, 'error:type'],
    ["eth.tx.contract_call_args['l'].all(x, x)", { eth: { tx: { ...tx, contract_call_args: { l: [true, 1] } } } }, 'error:type'],
    ["eth.tx.contract_call_args['s'][0..1] == 'a'", { eth: { tx: { ...tx, contract_call_args: { s: 5 } } } }, 'error:type'],
  ])('%s', (source, context, expected) => {
    expect(outcome(source, context)).toBe(expected);
  });

  it('reports an invalid Date as a value error', () => {
    expect(outcome("time.now > Timestamp('2026-01-01T00:00:00Z')", { time: { now: new Date('nope') } }, 'time')).toBe('error:value');
  });

  it('reports a throwing getter as an internal error instead of throwing', () => {
    const wallet = {
      get id(): string {
        throw new Error('boom');
      },
    };
    const result = run("wallet.id == 'x'", { wallet });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ kind: 'internal', message: 'evaluation failed: boom' });
  });

  it('survives a hostile Proxy context', () => {
    const hostile = new Proxy(
      {},
      {
        getOwnPropertyDescriptor() {
          throw new Error('trap');
        },
        has() {
          throw new Error('trap');
        },
        get() {
          throw new Error('trap');
        },
      },
    );
    expect(outcome("wallet.id == 'x'", hostile)).toBe('error:internal');
    expect(outcome("wallet.id == 'x'", { wallet: hostile })).toBe('error:internal');
  });

  it('refuses a context that is not an object', () => {
    for (const bad of [null, undefined, 5, 'ctx', [ctx]]) {
      expect(outcome('true', bad)).toBe('error:internal');
    }
  });

  it('reads only the keywords of the expression field, even for a hand-built expression', () => {
    const parsed = parsePolicyExpression("activity.kind == 'X'");
    if (!parsed.ok) throw new Error('parse');
    const forged: CompiledPolicyExpression = { kind: 'consensus', source: "activity.kind == 'X'", ast: parsed.ast, caseInsensitiveReads: new Set() };
    const result = evaluatePolicyExpression(forged, { activity: { ...ctx.activity, kind: 'X' } });
    expect(result.ok ? 'ok' : result.error.kind).toBe('internal');
  });

  it('does not modify the context', () => {
    const frozen = structuredClone(ctx);
    const deepFreeze = (o: object): void => {
      Object.freeze(o);
      for (const v of Object.values(o)) if (typeof v === 'object' && v !== null) deepFreeze(v);
    };
    deepFreeze(frozen);
    expect(outcome("activity.params.user_ids.filter(u, u == 'u1').count() == 1 && eth.tx.data[0..4] == '0xa9'", frozen)).toBe(true);
  });
});

describe('evaluator: case-insensitive strings', () => {
  const upper = { ...tx, to: '0x00000000000000000000000000000000000000AA', from: '0xABC' };

  it('compares engine-normalized fields ignoring case, everything else exactly', () => {
    expect(outcome("eth.tx.to == '0x00000000000000000000000000000000000000aa'", { eth: { tx: upper } })).toBe(true);
    expect(outcome("eth.tx.from in ['0xabc']", { eth: { tx: upper } })).toBe(true);
    expect(outcome("eth.tx.data == '0XA9059CBB00000000'", { eth: { tx } })).toBe(false);
    expect(outcome("wallet.label == 'MAIN'", ctx)).toBe(false);
  });

  it('keeps the flag through slices and indexes', () => {
    const tempo = { chain_id: 1, from: '0xa', nonce: 0, gas_limit: 1, max_fee_per_gas: 1, max_priority_fee_per_gas: 1, fee_token: '0xF', valid_before: 0, valid_after: 0, calls: [{ to: '0xAB', input: '0xDEADbeef', function_signature: '0xdeadbeef' }] };
    expect(outcome("tempo.tx.calls[0].input[2..6] == 'dead' && tempo.tx.calls[0].input[2] == 'd'", { tempo: { tx: tempo } })).toBe(true);
    expect(outcome("tempo.tx.calls.all(c, c.to == '0xab')", { tempo: { tx: tempo } })).toBe(true);
  });

  it('makes CaseInsensitiveString compare ignoring case on either side', () => {
    const c = { wallet_account: { address: '0xAbC' } };
    expect(outcome("CaseInsensitiveString(wallet_account.address) == '0xabc'", c)).toBe(true);
    expect(outcome("'0XABC' == CaseInsensitiveString(wallet_account.address)", c)).toBe(true);
    expect(outcome("CaseInsensitiveString(wallet_account.address) == CaseInsensitiveString('0xABC')", c)).toBe(true);
    expect(outcome("CaseInsensitiveString(wallet_account.address) != '0xabd'", c)).toBe(true);
    expect(outcome("wallet_account.address == '0xabc'", c)).toBe(false);
  });

  it('honours values the pipeline marked with caseInsensitive()', () => {
    const c = { eth: { tx: { ...tx, contract_call_args: { dst: caseInsensitive('0xDDDD'), memo: 'Hello' } } } };
    expect(outcome("eth.tx.contract_call_args['dst'] == '0xdddd'", c)).toBe(true);
    expect(outcome("eth.tx.contract_call_args['memo'] == 'hello'", c)).toBe(false);
    expect(outcome("[CaseInsensitiveString('A')].contains('a') && 'a' in [CaseInsensitiveString('A')]", {})).toBe(true);
  });
});

describe('evaluator: budgets', () => {
  it('stops at the step budget with a limit error', () => {
    const approvers = Array.from({ length: 30 }, (_, i) => ({ id: `u${i}`, tags: [], email: '', alias: '' }));
    const source = "approvers.all(a, approvers.all(b, a.id != '' && b.id != ''))";
    expect(outcome(source, { approvers }, 'consensus')).toBe(true);
    expect(outcome(source, { approvers }, 'consensus', { maxEvalSteps: 1000 })).toBe('error:limit');
  });

  it('counts list elements scanned by in and contains', () => {
    const ids = Array.from({ length: 500 }, (_, i) => `u${i}`);
    const c = { activity: { ...ctx.activity, params: { user_ids: ids } } };
    expect(outcome("'u499' in activity.params.user_ids", c, 'condition', { maxEvalSteps: 510 })).toBe(true);
    expect(outcome("'u499' in activity.params.user_ids", c, 'condition', { maxEvalSteps: 400 })).toBe('error:limit');
    expect(outcome("activity.params.user_ids.contains('u1')", c, 'condition', { maxEvalSteps: 400 })).toBe('error:limit');
  });

  it('refuses context lists longer than the runtime list limit, for every list operation', () => {
    const ids = Array.from({ length: 11 }, (_, i) => `u${i}`);
    const c = { activity: { ...ctx.activity, params: { user_ids: ids } } };
    const limits = { maxRuntimeListLength: 10 };
    for (const source of [
      "'u1' in activity.params.user_ids",
      "activity.params.user_ids.contains('u1')",
      'activity.params.user_ids.count() > 0',
      "activity.params.user_ids[0] == 'u0'",
      'activity.params.user_ids[0..1].count() == 1',
      "activity.params.user_ids.any(u, u == 'u1')",
    ]) {
      expect(outcome(source, c, 'condition', limits), source).toBe('error:limit');
    }
    expect(outcome('activity.params.user_ids.count() == 10', { activity: { ...ctx.activity, params: { user_ids: ids.slice(1) } } }, 'condition', limits)).toBe(true);
  });

  it('lets a limit error win over every other error', () => {
    const approvers = Array.from({ length: 30 }, (_, i) => ({ id: `u${i}`, tags: [], email: '', alias: '' }));
    const result = run("approvers.all(a, approvers.all(b, a.id != b.email)) && approvers[99].id == 'x'", { approvers }, 'consensus', { maxEvalSteps: 500 });
    expect(result.ok ? 'ok' : result.error.kind).toBe('limit');
  });

  it('charges long strings proportionally when they are sliced', () => {
    const data = '0x' + 'ab'.repeat(512 * 1024);
    const small = run("eth.tx.data[0..10] == '0xabababab'", { eth: { tx: { ...tx, data: '0xabababab' } } });
    const big = run("eth.tx.data[0..10] == '0xabababab'", { eth: { tx: { ...tx, data } } });
    expect(big.ok && small.ok).toBe(true);
    expect(big.steps - small.steps).toBe(1024);
  });
});

describe('evaluator: results', () => {
  it('reports how many steps it used', () => {
    const result = run("wallet.id == 'w1'", ctx);
    expect(result).toEqual({ ok: true, value: true, steps: 4 });
  });

  it('is deterministic and leaves the compiled expression reusable', () => {
    const compiled = compile("activity.params.user_ids.any(u, u == 'u2') && eth.tx.value > 5");
    const a = evaluatePolicyExpression(compiled, ctx as never);
    const b = evaluatePolicyExpression(compiled, { ...ctx, eth: { tx: { ...tx, value: 1 } } } as never);
    const c = evaluatePolicyExpression(compiled, ctx as never);
    expect([a, b, c].map((r) => r.ok && r.value)).toEqual([true, false, true]);
    expect(a).toEqual(c);
  });
});
