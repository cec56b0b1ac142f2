// Create-time checker (src/policy/checker.ts; docs/reference/policies.md "The language" for types,
// "Keywords").
import { describe, expect, it } from 'vitest';
import { compilePolicyExpression } from '../../../src/policy/compile.js';
import type { ExpressionKind } from '../../../src/policy/errors.js';
import { printExpr } from '../../../src/policy/ast.js';

function errorOf(source: string, kind: ExpressionKind = 'condition'): string {
  const result = compilePolicyExpression(source, kind);
  if (result.ok) throw new Error(`expected ${JSON.stringify(source)} to be rejected`);
  return result.error.message;
}

function accepts(source: string, kind: ExpressionKind = 'condition'): void {
  const result = compilePolicyExpression(source, kind);
  expect(result.ok ? '' : result.error.message).toBe('');
}

describe('checker: keywords per policy field', () => {
  it.each<[ExpressionKind, string]>([
    ['consensus', "approvers.any(u, u.id == 'x') && credentials.all(c, c.type != '')"],
    ['condition', "activity.kind == 'X' && wallet.id == 'w' && wallets.count() > 0 && private_key.tags.contains('t')"],
    ['condition', "wallet_account.address == 'a' && secret.static_properties['k'] == 'v'"],
    ['condition', "eth.tx.to == '' && eth.eip_712.primary_type == '' && eth.eip_7702_authorization.nonce == 0"],
    ['condition', "solana.tx.recent_blockhash == '' && tron.tx.data == '' && bitcoin.tx.version == '2' && tempo.tx.chain_id == 1"],
    ['time', "time.now > Timestamp('2026-01-01T00:00:00Z') && CronSpan('0 9 * * 1-5', '8h', 'UTC')"],
  ])('%s accepts its keywords: %s', (kind, source) => accepts(source, kind));

  it.each<[ExpressionKind, string, string]>([
    ['condition', 'approvers.count() > 1', "'approvers' cannot be used in a policy condition: it is a consensus keyword"],
    ['condition', "credentials[0].id == 'x'", 'it is a consensus keyword'],
    ['consensus', "wallet.id == 'x'", "'wallet' cannot be used in a policy consensus: it is a condition keyword"],
    ['consensus', "eth.tx.to == 'x'", 'it is a condition keyword'],
    ['time', "activity.kind == 'X'", 'it is a condition keyword'],
    ['condition', "time.now == Timestamp('2026-01-01T00:00:00Z')", 'it is a time keyword'],
  ])('%s rejects %s', (kind, source, message) => {
    expect(errorOf(source, kind)).toContain(message);
  });

  it('uses the service message prefix for every field', () => {
    expect(errorOf('x', 'condition')).toMatch(/^invalid policy condition: 1:1: /);
    expect(errorOf('x', 'consensus')).toMatch(/^invalid policy consensus: 1:1: /);
    expect(errorOf('x', 'time')).toMatch(/^invalid policy time: 1:1: /);
  });

  it('suggests the nearest keyword for a typo', () => {
    expect(errorOf("activty.kind == 'X'")).toContain("unknown identifier 'activty'; did you mean 'activity'?");
    expect(errorOf("user.id == 'x'")).toBe("invalid policy condition: 1:1: unknown identifier 'user'");
  });

  it('lets comprehension variables shadow keywords, lexically', () => {
    accepts("wallets.all(wallet, wallet.label != '') && wallet.id == 'w'");
    expect(errorOf("wallets.all(w, w.label != '') && w.id == 'x'")).toContain("unknown identifier 'w'");
  });

  it('binds nested comprehension variables with their element types', () => {
    accepts("solana.tx.instructions.all(i, i.accounts.any(a, a.writable && a.account_key == i.program_key))");
    expect(errorOf('solana.tx.instructions.all(i, i.accounts.any(a, a.program_key == 1))')).toContain("unknown field 'program_key' on Account");
  });
});

describe('checker: fields (structs)', () => {
  it('knows every documented spelling, including draft-branch fields', () => {
    accepts("wallet_account.path_indexes[0] == 44 && wallet_account.path_hardened.all(h, h) && wallet_account.curve == 'CURVE_SECP256K1'");
    accepts('solana.tx.address_table_lookup_references.all(r, r.index >= 0 && r.writable)');
    accepts("tron.tx.contract[0].owner.keys.all(k, k.weight > 0 && k.address != '')");
    accepts("activity.params.signatures.all(s, s.derivation.static_deposit.index == 0 && s.operator_commitments.count() > 0)");
    accepts("solana.tx.instructions[0].parsed_instruction_data.named_accounts['authority'] == 'x'");
  });

  it.each([
    ["eth.tx.too == 'x'", "1:8: unknown field 'too' on EthereumTransaction; did you mean 'to'?"],
    ["activity.parms.type == 'x'", "1:10: unknown field 'parms' on Activity; did you mean 'params'?"],
    ["activity.params.user_idz.count() == 1", "unknown field 'user_idz' on ActivityParams; did you mean 'user_ids'?"],
    ["eth.transaction.to == 'x'", "1:5: unknown field 'transaction' on eth"],
    ['solana.tx.transfers.amount > 0', "1:21: a list<Transfer> has no field 'amount'"],
    ['eth.tx.value.low > 0', "an int has no field 'low'"],
    ['eth.tx.contract_call_args.wad > 0', "'wad': entries of a map<string, dyn> are read with ['wad']"],
    ["eth.tx['to'] == 'x'", "fields of EthereumTransaction are read with '.field', not an index; use .to"],
    ['eth.tx.value[0] == 1', 'an int cannot be indexed'],
    ['eth.tx.contract_call_args[0] == 1', 'a map key must be a string, got int'],
    ["activity.params.user_ids['a'] == 'x'", 'a list index must be an int, got string'],
    ["secret.static_properties['kind'] == 1", 'cannot compare string with int'],
  ])('%s', (source, message) => {
    expect(errorOf(source)).toContain(message);
  });

  it('lets anything through on dynamic data (ABI and EIP-712 values)', () => {
    accepts("eth.tx.contract_call_args['calls'][0][1] == 0 && eth.tx.contract_call_args['calls'].all(c, c['x'].y == 'z')");
    accepts("eth.eip_712.message['permitted'].count() <= 2 && eth.eip_712.message['amount'] < 5 && eth.eip_712.message['to'] == 'x'");
  });
});

describe('checker: operators (types)', () => {
  it.each([
    ["activity.kind == 'X'"],
    ['wallet.imported == false'],
    ['eth.tx.value >= 0 && eth.tx.nonce < 10 && eth.tx.gas <= 1 && eth.tx.chain_id > 0'],
    ["time.now < Timestamp('2026-01-01T00:00:00Z')"],
    ["activity.kind in ['A', 'B']"],
    ['eth.tx.chain_id in [1, 8453]'],
    ["'u' in activity.params.user_ids"],
    ['eth.tx.value in []'],
    ["CaseInsensitiveString(wallet_account.address) == CaseInsensitiveString('0xab')"],
    ["eth.tx.data[0..10] == '0x' && eth.tx.data[2] == 'a'"],
    ['!wallet.exported && !(wallet.imported)'],
  ])('accepts %s', (source) => {
    const kind: ExpressionKind = source.includes('time.now') ? 'time' : 'condition';
    accepts(source, kind);
  });

  it.each([
    ["eth.tx.value == '1'", "1:14: cannot compare int with string using '==' (write the number without quotes: 1)"],
    ["'8453' != eth.tx.chain_id", "cannot compare string with int using '!=' (write the number without quotes: 8453)"],
    ["eth.tx.to < 'b'", "1:11: strings can only be compared with '==' and '!='"],
    ['wallet.imported < true', "cannot order bool and bool with '<' (only ints and timestamps are ordered)"],
    ["Timestamp('2026-01-01T00:00:00Z') > 5", 'cannot order timestamp and int'],
    ['wallet.tags == 1', "unknown field 'tags' on Wallet"],
    ['private_key.tags == private_key.tags', 'cannot compare list<string> with list<string>'],
    ['wallet == wallet', 'cannot compare Wallet with Wallet'],
    ["1 in activity.kind", "the right side of 'in' must be a list, got string"],
    ["1 in activity.params.user_ids", 'cannot look for an int in a list<string>'],
    ["private_key.tags.contains(1)", 'cannot look for an int in a list<string>'],
    ["activity.kind.contains('X')", 'contains() applies to lists, not string'],
    ['activity.kind.count() == 1', 'count() applies to lists, not string'],
    ["activity.kind.all(c, c == 'X')", 'all() applies to lists, not string'],
    ['wallet.imported[0..1] == true', 'only lists and strings can be sliced, not bool'],
    ["eth.tx.data['a'..2] == ''", 'a slice bound must be an int, got string'],
    ["eth.tx.data[-1..2] == ''", 'a slice bound must not be negative'],
    ["eth.tx.data[5..4] == ''", 'slice start is after its end'],
    ['activity.kind && true', "an operand of '&&' must be a bool, got string"],
    ['!eth.tx.value', "the operand of '!' must be a bool, got int"],
    ['activity.kind', 'a policy condition must evaluate to a bool, got string'],
    ["[1, 'a'] == [1]", 'list elements must all have the same type: found int and string'],
    ["Timestamp(1) == Timestamp('2026-01-01T00:00:00Z')", 'argument 1 of Timestamp() must be a string, got int'],
    ['CaseInsensitiveString(wallet.imported) == true', 'argument 1 of CaseInsensitiveString() must be a string, got bool'],
    ["wallet.id.contains('a', 'b')", 'contains() takes 1 argument, got 2'],
    ["Timestamp() == Timestamp('x')", 'Timestamp() takes 1 argument, got 0'],
    ["contains(wallet.id)", 'contains is called as list.contains(value)'],
    ['wallets.Timestamp()', 'Timestamp is called as'],
    ["wallets.exists(w, w.id == 'x')", "unknown function 'exists'; use any(item, predicate)"],
    ["wallets.size() > 0", "unknown function 'size'; use count()"],
    ['Timestamp == 1', "'Timestamp' is a function: call it as Timestamp('2026-01-01T00:00:00Z')"],
  ])('rejects %s', (source, message) => {
    expect(errorOf(source)).toContain(message);
  });

  it('validates literal arguments at create time', () => {
    expect(errorOf("time.now > Timestamp('2026-01-01 00:00:00Z')", 'time')).toContain("invalid timestamp '2026-01-01 00:00:00Z'");
    expect(errorOf("CronSpan('0 25 * * *', '1h', 'UTC')", 'time')).toContain("hour '25': values must be within 0-23");
    expect(errorOf("CronSpan('0 9 * * *', '1h', 'America/Nowhere')", 'time')).toContain('unknown IANA time zone');
    // A computed argument can only be checked when it is evaluated.
    accepts("CronSpan('0 9 * * *', '1h', 'UTC') || time.now == Timestamp(CaseInsensitiveString('x'))", 'time');
  });

  it('reports every problem, not only the first', () => {
    const result = compilePolicyExpression("eth.tx.too == 1 && wallet.idd == 'x' && approvers.count() > 1", 'condition');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.diagnostics.map((d) => d.reason)).toEqual([
      "unknown field 'too' on EthereumTransaction; did you mean 'to'?",
      "unknown field 'idd' on Wallet; did you mean 'id'?",
      "'approvers' cannot be used in a policy condition: it is a consensus keyword",
    ]);
    expect(result.error.diagnostics.map((d) => d.position.column)).toEqual([8, 27, 41]);
  });
});

describe('checker: case-insensitive fields', () => {
  it('resolves the engine-normalized fields at compile time', () => {
    const result = compilePolicyExpression(
      "eth.tx.to == 'a' && eth.tx.from == 'b' && eth.tx.data == 'c' && tempo.tx.calls.all(c, c.to == 'd' && c.input == 'e') && wallet_account.address == 'f'",
      'condition',
    );
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const reads = [...result.expression.caseInsensitiveReads].map(printExpr).sort();
    expect(reads).toEqual(['c.input', 'c.to', 'eth.tx.from', 'eth.tx.to']);
  });
});
