// ADDRESS_FORMAT_TRON: base58check(0x41 || keccak256(uncompressed[1:])[12:]), giving "T...".
// Spec: docs/reference/addresses.md encodings table (TRON row). The 20-byte body is the Ethereum account id.

import { concatBytes } from '../../crypto/bytes.js';
import { ethereumAddressBytes } from './ethereum.js';
import { base58check } from './encoding.js';

export function tronAddress(uncompressedPublicKey: Uint8Array): string {
  return base58check(concatBytes(Uint8Array.of(0x41), ethereumAddressBytes(uncompressedPublicKey)));
}
