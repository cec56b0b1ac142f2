// The context contract (src/policy/context.ts, schema.ts, context-check.ts; docs/reference/policies.md
// "Keywords"): every documented field is reachable from the language under its documented name.
import { describe, expect, it } from 'vitest';
import type { ExpressionKind, PolicyContext } from '../../../src/policy/index.js';
import { KEYWORDS_BY_KIND, validatePolicyContext } from '../../../src/policy/index.js';
import { ROOT, kindOfKeyword } from '../../../src/policy/schema.js';
import type { PolicyType } from '../../../src/policy/types.js';
import { FULL_CONTEXT } from './context-fixture.js';
import { outcome } from './helpers.js';

/** One self-comparison (or count) per field path reachable in the schema. */
function accessPaths(type: PolicyType, path: string, out: string[]): void {
  switch (type.kind) {
    case 'struct':
      for (const [name, field] of Object.entries(type.fields)) accessPaths(field.type, path ? `${path}.${name}` : name, out);
      return;
    case 'list':
      out.push(`${path}.count() > 0`);
      accessPaths(type.elem, `${path}[0]`, out);
      return;
    case 'map':
      // Every map in the fixture has an entry 'k'.
      accessPaths(type.value, `${path}['k']`, out);
      return;
    default:
      out.push(`${path} == ${path}`);
  }
}

describe('evaluation context', () => {
  it('assigns every top-level keyword to exactly one policy field (velocity controls to condition and consensus)', () => {
    const assigned = Object.values(KEYWORDS_BY_KIND).flat().sort();
    expect([...new Set(assigned)]).toEqual(Object.keys(ROOT.fields).sort());
    // `controls` is read by conditions and consensus alike (docs/velocity-controls.md); every other
    // keyword by one field.
    expect(assigned.filter((k, i) => assigned.indexOf(k) !== i)).toEqual(['controls']);
    expect(KEYWORDS_BY_KIND.condition).toContain('controls');
    expect(KEYWORDS_BY_KIND.consensus).toContain('controls');
    expect(kindOfKeyword('approvers')).toBe('consensus');
    expect(kindOfKeyword('eth')).toBe('condition');
    expect(kindOfKeyword('time')).toBe('time');
    expect(kindOfKeyword('user')).toBeUndefined();
  });

  it('the complete fixture matches the schema', () => {
    expect(validatePolicyContext(FULL_CONTEXT)).toEqual([]);
  });

  const paths: string[] = [];
  accessPaths(ROOT, '', paths);

  it('covers the documented structs', () => {
    expect(paths.length).toBeGreaterThan(250);
    for (const expected of [
      'approvers[0].tags[0] == approvers[0].tags[0]',
      'eth.tx.max_fee_per_blob_gas == eth.tx.max_fee_per_blob_gas',
      "solana.tx.instructions[0].parsed_instruction_data.named_accounts['k'] == solana.tx.instructions[0].parsed_instruction_data.named_accounts['k']",
      'tron.tx.contract[0].actives[0].keys[0].weight == tron.tx.contract[0].actives[0].keys[0].weight',
      'activity.params.transfer.leaves[0].new_leaf_derivation.static_deposit.index == activity.params.transfer.leaves[0].new_leaf_derivation.static_deposit.index',
      'wallet_account.path_hardened[0] == wallet_account.path_hardened[0]',
      'time.now == time.now',
    ]) {
      expect(paths).toContain(expected);
    }
  });

  it.each(paths)('%s', (source) => {
    const kind = kindOfKeyword(source.split(/[.[]/)[0]!) as ExpressionKind;
    expect(outcome(source, FULL_CONTEXT, kind)).toBe(true);
  });
});

describe('validatePolicyContext', () => {
  it('reports unknown keys, wrong types and missing required fields', () => {
    const broken = {
      activity: { type: 'ACTIVITY_TYPE_CREATE_WALLET', kind: 'CREATE_WALLET', resource: 'WALLET', params: { walletId: 'w' } },
      eth: { tx: { ...FULL_CONTEXT.eth!.tx!, value: '1', chainId: 1, nonce: 1.5 } },
      approvers: [{ id: 'u', tags: 'admin', email: '', alias: '' }, null],
      wallet: 'w',
      unknown_keyword: true,
    };
    expect(validatePolicyContext(broken)).toEqual([
      'unknown_keyword: unknown field of PolicyContext',
      "approvers[0].tags: expected list<string>, got string",
      'approvers[1]: null element',
      'activity.action: required field of Activity is missing',
      'activity.params.walletId: unknown field of ActivityParams',
      'eth.tx.chainId: unknown field of EthereumTransaction',
      'eth.tx.value: expected int, got string',
      'eth.tx.nonce: the context holds the number 1.5, which is not a safe integer (use a bigint)',
      'wallet: expected Wallet, got string',
    ]);
  });

  it('accepts a minimal context and leaves dynamic data alone', () => {
    const minimal: PolicyContext = { activity: { type: 'ACTIVITY_TYPE_CREATE_WALLET', kind: 'CREATE_WALLET', resource: 'WALLET', action: 'CREATE', params: {} } };
    expect(validatePolicyContext(minimal)).toEqual([]);
    expect(validatePolicyContext({ eth: { eip_712: { primary_type: 'X', domain: { name: '', version: '', verifying_contract: '' }, message: { anything: [{ goes: 1.5 }] } } } })).toEqual([]);
    expect(validatePolicyContext(null)).toEqual(['the context must be a plain object']);
  });
});
