// Error type of the crypto core (bip39, hd, keys, addresses, sign).
// Spec: docs/reference/addresses.md ("a mismatch is a clear REQUEST_INVALID error") and docs/design.md ("Bad input
// always gets a clear {code, message, details} error"). Every CryptoInputError is caused by the
// caller's input, so src/domain can map the whole class to REQUEST_INVALID in one place; `code`
// lets it refine the mapping without parsing messages. Messages never contain key material.

export type CryptoInputErrorCode =
  | 'INVALID_MNEMONIC'
  | 'INVALID_MNEMONIC_LENGTH'
  | 'INVALID_PATH'
  | 'INVALID_CURVE'
  | 'INVALID_ADDRESS_FORMAT'
  | 'CURVE_MISMATCH'
  | 'INVALID_PUBLIC_KEY'
  | 'INVALID_PRIVATE_KEY'
  | 'INVALID_SEED'
  | 'INVALID_HASH_FUNCTION'
  | 'INVALID_PAYLOAD'
  | 'INVALID_HEX';

export class CryptoInputError extends Error {
  override readonly name = 'CryptoInputError';
  readonly code: CryptoInputErrorCode;

  constructor(code: CryptoInputErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

export function isCryptoInputError(e: unknown): e is CryptoInputError {
  return e instanceof CryptoInputError;
}

/** Short, safe description of an untrusted value for error messages (never echoes long input). */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return value.length > 64 ? `"${value.slice(0, 61)}..."` : `"${value}"`;
  if (value === undefined || value === null) return String(value);
  return typeof value;
}
