// Encodings shared by several address families: Base58Check (Bitcoin and Ripple alphabets, checksum =
// first 4 bytes of double SHA-256) and CRC-16/XMODEM (Stellar StrKey, TON user-friendly addresses).
// Spec: docs/reference/addresses.md encodings table (TRON, XRP, DOGE, Bitcoin P2PKH/P2SH, XLM, TON rows).

import { base58, base58xrp } from '@scure/base';
import { concatBytes } from '../../crypto/bytes.js';
import { sha256d } from '../../crypto/hash.js';

function withChecksum(payload: Uint8Array): Uint8Array {
  return concatBytes(payload, sha256d(payload).subarray(0, 4));
}

/** Base58Check with the Bitcoin alphabet. */
export function base58check(payload: Uint8Array): string {
  return base58.encode(withChecksum(payload));
}

/** Base58Check with the Ripple alphabet (`rpshnaf39w...`), as XRP addresses use. */
export function base58checkXrp(payload: Uint8Array): string {
  return base58xrp.encode(withChecksum(payload));
}

/** CRC-16/XMODEM: polynomial 0x1021, initial value 0, no reflection, no final XOR. */
export function crc16xmodem(data: Uint8Array): number {
  let crc = 0;
  for (const byte of data) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc;
}
