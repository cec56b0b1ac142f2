// ADDRESS_FORMAT_COSMOS and ADDRESS_FORMAT_SEI: bech32(HRP, ripemd160(sha256(compressed key))).
// Spec: docs/reference/addresses.md encodings table (COSMOS, SEI rows; both secp256k1, HRP "cosmos" / "sei").

import { bech32 } from '@scure/base';
import { CryptoInputError } from '../../crypto/errors.js';
import { hash160 } from '../../crypto/hash.js';

export function cosmosStyleAddress(hrp: string, compressedPublicKey: Uint8Array): string {
  if (compressedPublicKey.length !== 33) {
    throw new CryptoInputError('INVALID_PUBLIC_KEY', 'invalid public key: Cosmos addresses need the 33-byte compressed key');
  }
  return bech32.encode(hrp, bech32.toWords(hash160(compressedPublicKey)));
}

export function cosmosAddress(compressedPublicKey: Uint8Array): string {
  return cosmosStyleAddress('cosmos', compressedPublicKey);
}

export function seiAddress(compressedPublicKey: Uint8Array): string {
  return cosmosStyleAddress('sei', compressedPublicKey);
}
