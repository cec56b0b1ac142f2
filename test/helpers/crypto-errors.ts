// The code of the CryptoError a pure crypto function throws (src/crypto/p256.ts), or undefined when
// it returns: crypto unit tests assert refusals by code, not by message.
import { expect } from 'vitest';
import { CryptoError } from '../../src/crypto/p256.js';

export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CryptoError);
    return (e as CryptoError).code;
  }
  return undefined;
}
