// SIGIL_EVM_ASSETS (docs/broadcasting.md "Assets and balances"): the operator's ERC-20 list is
// checked when the configuration is read, so a mistake stops the start with a message naming it.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';

const RPC = { SIGIL_EVM_RPC_11155111: 'http://127.0.0.1:8545' };
const token = { address: '0x1C7D4B196Cb0C7B01d743Fbc6116a902379C7238', symbol: 'USDC', decimals: 6, name: 'USD Coin', stable: true };
const load = (assets: unknown) => loadConfig({}, { ...RPC, SIGIL_EVM_ASSETS: typeof assets === 'string' ? assets : JSON.stringify(assets) });

describe('SIGIL_EVM_ASSETS', () => {
  it('reads tokens per chain, addresses lower-cased, stable false unless given', () => {
    expect(loadConfig({}, RPC).evmAssets).toEqual({});
    expect(load({ 'eip155:11155111': [token, { ...token, address: '0x' + '11'.repeat(20), symbol: 'X', stable: undefined }] }).evmAssets).toEqual({
      'eip155:11155111': [
        { ...token, address: token.address.toLowerCase() },
        { ...token, address: '0x' + '11'.repeat(20), symbol: 'X', stable: false },
      ],
    });
  });

  it('refuses what it cannot use, saying what and where', () => {
    expect(() => load('not json')).toThrow(/SIGIL_EVM_ASSETS must be a JSON object of CAIP-2 chain ids/);
    expect(() => load([token])).toThrow(/SIGIL_EVM_ASSETS must be a JSON object/);
    expect(() => load({ 'solana:x': [token] })).toThrow(/"solana:x" is not an EVM CAIP-2 chain id/);
    expect(() => load({ 'eip155:1': [token] })).toThrow(/SIGIL_EVM_ASSETS\["eip155:1"\]: the chain has no JSON-RPC URL.*SIGIL_EVM_RPC_1\b/);
    expect(() => load({ 'eip155:11155111': token })).toThrow(/must be a list of tokens/);
    expect(() => load({ 'eip155:11155111': [{ ...token, address: '0x12' }] })).toThrow(/\[0\]\.address must be a 0x-prefixed 20-byte hex address/);
    expect(() => load({ 'eip155:11155111': [{ ...token, decimals: 6.5 }] })).toThrow(/\[0\]\.decimals must be an integer from 0 to 77/);
    expect(() => load({ 'eip155:11155111': [{ ...token, symbol: '' }] })).toThrow(/\[0\]\.symbol must be a non-empty string/);
    expect(() => load({ 'eip155:11155111': [{ ...token, stable: 'yes' }] })).toThrow(/\[0\]\.stable must be true or false/);
    expect(() => load({ 'eip155:11155111': [token, { ...token, address: token.address.toLowerCase() }] })).toThrow(/\[1\]\.address .* is listed twice/);
  });
});
