// ADDRESS_FORMAT_COMPRESSED / ADDRESS_FORMAT_UNCOMPRESSED: the public key itself as lowercase hex.
// Spec: docs/reference/addresses.md encodings table (COMPRESSED: 33-byte SEC1, or the 32-byte key on ed25519;
// UNCOMPRESSED: 65-byte SEC1, secp256k1 or P-256 only).

import { CryptoInputError } from '../../crypto/errors.js';
import { toHex } from '../../crypto/bytes.js';

export function compressedAddress(compressedPublicKey: Uint8Array): string {
  if (compressedPublicKey.length !== 33 && compressedPublicKey.length !== 32) {
    throw new CryptoInputError('INVALID_PUBLIC_KEY', 'invalid public key: expected a 33-byte SEC1 or 32-byte ed25519 key');
  }
  return toHex(compressedPublicKey);
}

export function uncompressedAddress(uncompressedPublicKey: Uint8Array): string {
  if (uncompressedPublicKey.length !== 65 || uncompressedPublicKey[0] !== 4) {
    throw new CryptoInputError('INVALID_PUBLIC_KEY', 'invalid public key: expected a 65-byte uncompressed SEC1 key');
  }
  return toHex(uncompressedPublicKey);
}
