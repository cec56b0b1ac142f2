// Curve names of the Turnkey API (swagger `v1Curve`, verbatim) and the key sizes per curve.
// Spec: docs/reference/addresses.md "Derivation" (three curves: secp256k1 BIP32, ed25519 and P-256 SLIP-10).

import { CryptoInputError, describeValue } from './errors.js';

export const CURVES = ['CURVE_SECP256K1', 'CURVE_ED25519', 'CURVE_P256'] as const;
export type Curve = (typeof CURVES)[number];

export function isCurve(value: unknown): value is Curve {
  return typeof value === 'string' && (CURVES as readonly string[]).includes(value);
}

/** Narrow an untrusted string to a Curve, or throw a clear input error. */
export function assertCurve(value: unknown): Curve {
  if (!isCurve(value)) {
    throw new CryptoInputError('INVALID_CURVE', `invalid curve: ${describeValue(value)}; expected one of ${CURVES.join(', ')}`);
  }
  return value;
}
