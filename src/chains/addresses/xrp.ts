// ADDRESS_FORMAT_XRP: Ripple-alphabet base58check(0x00 || ripemd160(sha256(compressed key))) -> "r...".
// Spec: docs/reference/addresses.md encodings table (XRP row, secp256k1).

import { CryptoInputError } from '../../crypto/errors.js';
import { concatBytes } from '../../crypto/bytes.js';
import { hash160 } from '../../crypto/hash.js';
import { base58checkXrp } from './encoding.js';

export function xrpAddress(compressedPublicKey: Uint8Array): string {
  if (compressedPublicKey.length !== 33) {
    throw new CryptoInputError('INVALID_PUBLIC_KEY', 'invalid public key: XRP addresses need the 33-byte compressed key');
  }
  return base58checkXrp(concatBytes(Uint8Array.of(0x00), hash160(compressedPublicKey)));
}
