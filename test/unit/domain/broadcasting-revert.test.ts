// Revert data decoding for get_send_transaction_status's error.revertChain (swagger v1RevertChainEntry,
// v1NativeRevertError, v1UnknownRevertError): Error(string), Panic(uint256), a bare revert, and a custom
// error Sigil cannot name. src/domain/keys/broadcasting.ts `revertEntry`.
import { describe, expect, it } from 'vitest';
import { encodeErrorResult, parseAbi } from 'viem';
import { revertEntry } from '../../../src/domain/keys/broadcasting.js';

const at = '0x00000000000000000000000000000000000bad01';

describe('revertEntry', () => {
  it('decodes Error(string) as a native error_string', () => {
    const data = encodeErrorResult({ abi: parseAbi(['error Error(string)']), errorName: 'Error', args: ['insufficient balance'] });
    expect(revertEntry(at, data, 'execution reverted')).toEqual({
      address: at,
      errorType: 'native',
      displayMessage: 'execution reverted: insufficient balance',
      native: { nativeType: 'error_string', message: 'insufficient balance' },
    });
  });

  it('decodes Panic(uint256) with its code', () => {
    const data = encodeErrorResult({ abi: parseAbi(['error Panic(uint256)']), errorName: 'Panic', args: [0x11n] });
    expect(revertEntry(at, data, '')).toEqual({ address: at, errorType: 'native', displayMessage: 'panic: 0x11', native: { nativeType: 'panic', panicCode: '17' } });
  });

  it('a revert without data is execution_reverted with the node message', () => {
    expect(revertEntry(at, undefined, 'execution reverted')).toEqual({ address: at, errorType: 'native', displayMessage: 'execution reverted', native: { nativeType: 'execution_reverted' } });
    expect(revertEntry(at, '0x', '')).toMatchObject({ native: { nativeType: 'execution_reverted' }, displayMessage: 'execution reverted' });
  });

  it('a custom error is unknown, with its selector and data', () => {
    const data = encodeErrorResult({ abi: parseAbi(['error NotOwner(address who)']), errorName: 'NotOwner', args: [at] });
    expect(revertEntry(at, data, 'execution reverted')).toEqual({
      address: at,
      errorType: 'unknown',
      displayMessage: `execution reverted with custom error ${data.slice(0, 10)}`,
      unknown: { selector: data.slice(0, 10), data },
    });
  });
});
