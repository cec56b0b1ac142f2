// ADDRESS_FORMAT_ETHEREUM: 0x + EIP-55 checksummed keccak256(uncompressed[1:])[12:].
// Spec: docs/reference/addresses.md encodings table (ETHEREUM row); EIP-55 mixed-case checksum.

import { CryptoInputError } from '../../crypto/errors.js';
import { toHex } from '../../crypto/bytes.js';
import { keccak256 } from '../../crypto/hash.js';

/** The 20-byte account id of a 65-byte uncompressed secp256k1 key. */
export function ethereumAddressBytes(uncompressedPublicKey: Uint8Array): Uint8Array {
  if (uncompressedPublicKey.length !== 65 || uncompressedPublicKey[0] !== 4) {
    throw new CryptoInputError('INVALID_PUBLIC_KEY', 'invalid public key: Ethereum addresses need the 65-byte uncompressed key');
  }
  return keccak256(uncompressedPublicKey.subarray(1)).slice(12);
}

/** EIP-55: a hex letter is upper case iff the matching nibble of keccak256(lowercase hex) is >= 8. */
export function toChecksumAddress(addressHex: string): string {
  const lower = addressHex.toLowerCase().replace(/^0x/, '');
  const hash = toHex(keccak256(new TextEncoder().encode(lower)));
  let out = '0x';
  for (let i = 0; i < lower.length; i++) {
    const c = lower[i]!;
    out += parseInt(hash[i]!, 16) >= 8 ? c.toUpperCase() : c;
  }
  return out;
}

export function ethereumAddress(uncompressedPublicKey: Uint8Array): string {
  return toChecksumAddress(toHex(ethereumAddressBytes(uncompressedPublicKey)));
}
