// ADDRESS_FORMAT_APTOS: 0x + hex(sha3-256(public key || 0x00)), always 64 hex digits.
// Spec: docs/reference/addresses.md encodings table (APTOS row); 0x00 is Aptos' single-Ed25519 scheme byte.

import { CryptoInputError } from '../../crypto/errors.js';
import { concatBytes, toHex } from '../../crypto/bytes.js';
import { sha3_256 } from '../../crypto/hash.js';

export function aptosAddress(ed25519PublicKey: Uint8Array): string {
  if (ed25519PublicKey.length !== 32) {
    throw new CryptoInputError('INVALID_PUBLIC_KEY', 'invalid public key: Aptos addresses need a 32-byte ed25519 key');
  }
  return '0x' + toHex(sha3_256(concatBytes(ed25519PublicKey, Uint8Array.of(0x00))));
}
