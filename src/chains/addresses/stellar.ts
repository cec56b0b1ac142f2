// ADDRESS_FORMAT_XLM: Stellar StrKey account id, base32(0x30 || public key || crc16-xmodem LE) -> "G...".
// Spec: docs/reference/addresses.md encodings table (XLM row); stellar-protocol SEP-0023 StrKey (version byte
// 6 << 3 = 0x30 for ED25519 public keys, checksum little-endian, RFC 4648 base32 without padding).

import { base32nopad } from '@scure/base';
import { CryptoInputError } from '../../crypto/errors.js';
import { concatBytes } from '../../crypto/bytes.js';
import { crc16xmodem } from './encoding.js';

const VERSION_ACCOUNT_ID = 6 << 3; // "G"
const VERSION_SEED = 18 << 3; // "S"

function strkey(version: number, key: Uint8Array): string {
  const payload = concatBytes(Uint8Array.of(version), key);
  const crc = crc16xmodem(payload);
  return base32nopad.encode(concatBytes(payload, Uint8Array.of(crc & 0xff, crc >> 8)));
}

export function stellarAddress(ed25519PublicKey: Uint8Array): string {
  if (ed25519PublicKey.length !== 32) {
    throw new CryptoInputError('INVALID_PUBLIC_KEY', 'invalid public key: Stellar addresses need a 32-byte ed25519 key');
  }
  return strkey(VERSION_ACCOUNT_ID, ed25519PublicKey);
}

/** StrKey secret seed ("S..."), the form Stellar wallets export a private key in. */
export function stellarSecretSeed(ed25519PrivateKey: Uint8Array): string {
  if (ed25519PrivateKey.length !== 32) {
    throw new CryptoInputError('INVALID_PRIVATE_KEY', 'invalid private key: Stellar seeds are 32 bytes');
  }
  return strkey(VERSION_SEED, ed25519PrivateKey);
}
