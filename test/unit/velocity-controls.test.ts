// Velocity controls below the API (docs/velocity-controls.md "Velocity controls"): the test clock's gate
// (src/config/config.ts), the threshold's fixed-point arithmetic and the CAIP-19 assets
// chainAssetTransfer accepts, with the base unit each is counted in
// (src/domain/keys/velocity-controls.ts), and which controls a compiled expression reads, with unknown
// identifiers refused when the organization's are given (src/policy/checker.ts).
import { describe, expect, it } from 'vitest';
import { loadConfig, TEST_CLOCK_CONSENT } from '../../src/config/config.js';
import { assetOf, checkControlIntent, formatAmount, parseThreshold, SCALE } from '../../src/domain/keys/velocity-controls.js';
import { compilePolicyExpression } from '../../src/policy/index.js';

describe('the test clock', () => {
  it('is refused without the explicit consent, honoured with it, absent by default', () => {
    expect(() => loadConfig({}, { SIGIL_TEST_VELOCITY_CLOCK_FILE: '/tmp/clock' })).toThrow(/exists for tests only; it needs SIGIL_ENABLE_TEST_CLOCK=yes-this-is-a-test/);
    expect(() => loadConfig({}, { SIGIL_TEST_VELOCITY_CLOCK_FILE: '/tmp/clock', SIGIL_ENABLE_TEST_CLOCK: '1' })).toThrow(/exists for tests only/);
    expect(loadConfig({}, { SIGIL_TEST_VELOCITY_CLOCK_FILE: '/tmp/clock', SIGIL_ENABLE_TEST_CLOCK: TEST_CLOCK_CONSENT }).testVelocityClockFile).toBe('/tmp/clock');
    expect(loadConfig({}, { SIGIL_ENABLE_TEST_CLOCK: TEST_CLOCK_CONSENT }).testVelocityClockFile).toBeUndefined();
  });
});

describe('thresholds', () => {
  it('are fixed-point with 18 fractional digits, exactly', () => {
    expect(parseThreshold('10')).toBe(10n * SCALE);
    expect(parseThreshold('0.000000000000000001')).toBe(1n);
    expect(parseThreshold('12345678901234567890.123456789012345678')).toBe(12345678901234567890123456789012345678n);
    for (const t of ['0', '10', '2.5', '0.000000000000000001', '99999999999999999999.999999999999999999']) expect(formatAmount(parseThreshold(t))).toBe(t);
    expect(() => parseThreshold('1.')).toThrow(/non-negative base-10 decimal string/);
    expect(() => parseThreshold('.5')).toThrow(/non-negative base-10 decimal string/);
    expect(() => parseThreshold(' 1')).toThrow(/non-negative base-10 decimal string/);
  });
});

describe('controls.<identifier> in compiled expressions', () => {
  it('records the controls read, and refuses unknown ones when the organization’s are given', () => {
    const r = compilePolicyExpression("!controls.daily && controls['weekly'] && approvers.count() > 0 || true", 'consensus');
    expect(r.ok && [...r.expression.controls].sort()).toEqual(['daily', 'weekly']);
    const known = new Set(['daily']);
    const refused = compilePolicyExpression('!controls.dayly', 'condition', { controls: known });
    expect(!refused.ok && refused.error.message).toMatch(/unknown velocity control 'dayly': the organization has no control with that identifier; its controls are daily/);
    const none = compilePolicyExpression('controls.daily', 'condition', { controls: new Set() });
    expect(!none.ok && none.error.message).toMatch(/unknown velocity control 'daily'.*; it has none/);
    // A comprehension variable named `controls` shadows the keyword.
    const shadow = compilePolicyExpression("approvers.any(controls, controls.id == 'u')", 'consensus', { controls: new Set() });
    expect(shadow.ok && [...shadow.expression.controls]).toEqual([]);
  });
});

describe('chainAssetTransfer assets', () => {
  const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
  it('name what a transfer is matched on: chain and lowercased contract for Ethereum, no cluster for Solana, the network for bitcoin, none for Tron', () => {
    expect(assetOf('eip155:1/slip44:60')).toEqual({ key: 'eth:1', decimals: 18, label: 'ether' });
    expect(assetOf('eip155:137/erc20:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48')).toEqual({ key: 'erc20:137:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48' });
    expect(assetOf('solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp/slip44:501')).toEqual({ key: 'sol', decimals: 9, label: 'SOL' });
    expect(assetOf(`solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1/token:${USDC}`)).toEqual({ key: `spl:${USDC}` });
    expect(assetOf('bip122:000000000019d6689c085ae165831e93/slip44:0')).toEqual({ key: 'btc:mainnet', decimals: 8, label: 'bitcoin' });
    expect(assetOf('bip122:000000000933ea01ad0ee984209779ba/slip44:0')).toEqual({ key: 'btc:testnet3', decimals: 8, label: 'bitcoin' });
    expect(assetOf('bip122:00000008819873e925422c1ff0f99f7c/slip44:0')).toEqual({ key: 'btc:signet', decimals: 8, label: 'bitcoin' });
    // Tron: every spelling of every network is one key (a Tron transaction names no network).
    for (const network of ['0x2b6653dc', '728126428', 'mainnet', '0xcd8690dc', 'nile', 'shasta']) {
      expect(assetOf(`tron:${network}/slip44:195`)).toEqual({ key: 'trx', decimals: 6, label: 'TRX' });
      expect(assetOf(`tron:${network}/trc20:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t`)).toEqual({ key: 'trc20:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' });
    }
    for (const refused of [
      'eip155:01/slip44:60',
      'eip155:1/slip44:0',
      'eip155:1/erc721:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
      'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp/token:0OIl',
      // Litecoin's genesis, an uppercase genesis prefix, bitcoin under another coin type.
      'bip122:12a765e31ffd4059bada1e25190f6e98/slip44:2',
      'bip122:12a765e31ffd4059bada1e25190f6e98/slip44:0',
      'bip122:000000000019D6689C085AE165831E93/slip44:0',
      'bip122:000000000019d6689c085ae165831e93/slip44:60',
      'tron:0xdeadbeef/slip44:195',
      'tron:0x2b6653dc/slip44:60',
      'tron:0x2b6653dc/trc20:0xa614f803b6fd780986a42c78ec9c7f77e6ded13c',
      'tron:0x2b6653dc/trc20:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u',
    ]) {
      expect(assetOf(refused)).toHaveProperty('refused');
    }
  });

  it('count a base unit as 10^(18 - decimals) of the threshold fixed point', () => {
    const control = (definition: { caip19: string; decimals: string }[]) =>
      checkControlIntent(
        {
          name: 'n',
          identifier: 'x',
          dataSource: { chainAssetTransfer: { definition } },
          aggregation: { method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM', operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN', threshold: '1', window: { infinite: {} }, groupBy: { organization: {} } },
        },
        new Set(),
      ).source;
    const source = control([
      { caip19: 'eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', decimals: '6' },
      { caip19: `solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp/token:${USDC}`, decimals: '0' },
      { caip19: 'eip155:1/slip44:60', decimals: '18' },
    ]);
    expect(source.kind === 'chainAssetTransfer' && [...source.assets.values()]).toEqual([
      { key: 'erc20:1:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', unit: 10n ** 12n },
      { key: `spl:${USDC}`, unit: SCALE },
      { key: 'eth:1', unit: 1n },
    ]);
    expect(() => control([{ caip19: 'eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', decimals: '19' }])).toThrow(/decimals: must be a whole number from "0" to "18"/);
  });
});
