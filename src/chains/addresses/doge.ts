// ADDRESS_FORMAT_DOGE_MAINNET / _TESTNET: P2PKH base58check(version || hash160(compressed key)),
// version 0x1e ("D...") on mainnet and 0x71 ("n...") on testnet.
// Spec: docs/reference/addresses.md encodings table (DOGE rows).

import { CryptoInputError } from '../../crypto/errors.js';
import { concatBytes } from '../../crypto/bytes.js';
import { hash160 } from '../../crypto/hash.js';
import { base58check } from './encoding.js';

export const DOGE_P2PKH_VERSION = { mainnet: 0x1e, testnet: 0x71 } as const;

export function dogeAddress(network: keyof typeof DOGE_P2PKH_VERSION, compressedPublicKey: Uint8Array): string {
  if (compressedPublicKey.length !== 33) {
    throw new CryptoInputError('INVALID_PUBLIC_KEY', 'invalid public key: Dogecoin addresses need the 33-byte compressed key');
  }
  return base58check(concatBytes(Uint8Array.of(DOGE_P2PKH_VERSION[network]), hash160(compressedPublicKey)));
}
