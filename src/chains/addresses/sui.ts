// ADDRESS_FORMAT_SUI: 0x + hex(blake2b-256(0x00 || ed25519 public key)).
// Spec: docs/reference/addresses.md encodings table (SUI row); 0x00 is Sui's signature-scheme flag for Ed25519.

import { CryptoInputError } from '../../crypto/errors.js';
import { concatBytes, toHex } from '../../crypto/bytes.js';
import { blake2b256 } from '../../crypto/hash.js';

export function suiAddress(ed25519PublicKey: Uint8Array): string {
  if (ed25519PublicKey.length !== 32) {
    throw new CryptoInputError('INVALID_PUBLIC_KEY', 'invalid public key: Sui addresses need a 32-byte ed25519 key');
  }
  return '0x' + toHex(blake2b256(concatBytes(Uint8Array.of(0x00), ed25519PublicKey)));
}
