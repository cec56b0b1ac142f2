// Small byte helpers shared by the transaction codecs (hex in and out, concatenation, big-endian
// integers). Hex output is always lowercase without 0x: the API returns `signedTransaction` without a
// prefix (turnkey-contract.md §6 and Trap 8); input is accepted with or without 0x.

import { TransactionError, type TxChain } from './errors.js';

const HEX_RE = /^[0-9a-fA-F]*$/;

/** Decodes hex with or without a 0x prefix; odd length or a non-hex character is INVALID_TRANSACTION. */
export function hexToBytes(chain: TxChain, input: string): Uint8Array {
  if (typeof input !== 'string') throw new TransactionError(chain, 'INVALID_TRANSACTION', 'transaction must be a hex string');
  const h = input.startsWith('0x') || input.startsWith('0X') ? input.slice(2) : input;
  if (h.length === 0) throw new TransactionError(chain, 'INVALID_TRANSACTION', 'transaction is empty');
  if (h.length % 2 !== 0 || !HEX_RE.test(h)) {
    throw new TransactionError(chain, 'INVALID_TRANSACTION', 'transaction is not valid hex');
  }
  return Uint8Array.from(Buffer.from(h, 'hex'));
}

/** Lowercase hex, no prefix. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** Concatenation, shared with the crypto core. */
export { concatBytes as concat } from '../crypto/bytes.js';

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

/** Big-endian unsigned integer of any length (empty = 0). */
export function bytesToBigInt(b: Uint8Array): bigint {
  let n = 0n;
  for (const x of b) n = (n << 8n) | BigInt(x);
  return n;
}

/** Minimal big-endian bytes of a non-negative integer (0 → empty), as RLP wants integers. */
export function bigIntToMinimalBytes(n: bigint): Uint8Array {
  if (n < 0n) throw new RangeError('negative integer');
  if (n === 0n) return new Uint8Array(0);
  let h = n.toString(16);
  if (h.length % 2) h = '0' + h;
  return Uint8Array.from(Buffer.from(h, 'hex'));
}

/** Drops leading zero bytes (a 32-byte r or s becomes its minimal integer encoding). */
export function stripLeadingZeros(b: Uint8Array): Uint8Array {
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  return b.subarray(i);
}
