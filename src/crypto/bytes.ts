// The one bytes/hex module of Sigil (crypto primitives and chain codecs alike): strict hex parsing,
// lowercase hex output, concatenation, comparison and big-endian integers. Hex goes through Buffer
// because it is the fastest hex codec in Node (this is on the signing hot path, docs/design.md); what
// `@noble/hashes/utils` already does well (concatenation, UTF-8) is re-exported from it rather than
// written again. Results are plain Uint8Array views so callers never depend on Buffer.

import { CryptoInputError } from './errors.js';

export { concatBytes, utf8ToBytes } from '@noble/hashes/utils.js';

const HEX_RE = /^[0-9a-fA-F]*$/;

/** True for an even number of hex digits with no prefix (the empty string included). */
export function isHexBody(hex: string): boolean {
  return hex.length % 2 === 0 && HEX_RE.test(hex);
}

/** Lowercase hex, no 0x. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * Strict hex decode. `0x`/`0X` prefix is accepted because the API accepts payloads both ways
 * (docs/reference/keys.md "Signing": "The hex payload parser must accept input both with and without 0x").
 */
export function fromHex(hex: string, what = 'hex string'): Uint8Array {
  if (typeof hex !== 'string') throw new CryptoInputError('INVALID_HEX', `invalid ${what}: expected a string`);
  const body = hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex;
  if (!isHexBody(body)) {
    throw new CryptoInputError('INVALID_HEX', `invalid ${what}: expected an even number of hex digits`);
  }
  return new Uint8Array(Buffer.from(body, 'hex'));
}

/** Big-endian 32-bit unsigned integer. */
export function u32be(n: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n >>> 0, false);
  return out;
}

export function bytesToBigInt(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt('0x' + toHex(bytes));
}

/** Big-endian, left-padded to `len` bytes. Throws if the value does not fit. */
export function bigIntToBytes(n: bigint, len = 32): Uint8Array {
  if (n < 0n) throw new RangeError('negative value');
  const hex = n.toString(16).padStart(len * 2, '0');
  if (hex.length > len * 2) throw new RangeError(`value does not fit in ${len} bytes`);
  return fromHex(hex);
}


/** Minimal big-endian bytes of a non-negative integer (0 gives empty bytes), as RLP wants integers. */
export function bigIntToMinimalBytes(n: bigint): Uint8Array {
  if (n < 0n) throw new RangeError('negative integer');
  if (n === 0n) return new Uint8Array(0);
  const hex = n.toString(16);
  return fromHex(hex.length % 2 ? '0' + hex : hex);
}

/** Drops leading zero bytes (a 32-byte r or s becomes its minimal integer encoding). */
export function stripLeadingZeros(b: Uint8Array): Uint8Array {
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  return b.subarray(i);
}

/** Constant-time comparison of two byte strings (length is not secret). */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}
