// ADDRESS_FORMAT_SOLANA: base58 of the 32-byte ed25519 public key.
// Spec: docs/reference/addresses.md encodings table (SOLANA row).

import { base58 } from '@scure/base';
import { CryptoInputError } from '../../crypto/errors.js';

export function solanaAddress(ed25519PublicKey: Uint8Array): string {
  if (ed25519PublicKey.length !== 32) {
    throw new CryptoInputError('INVALID_PUBLIC_KEY', 'invalid public key: Solana addresses need a 32-byte ed25519 key');
  }
  return base58.encode(ed25519PublicKey);
}
