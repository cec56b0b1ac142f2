// Small byte helpers shared by the crypto core: strict hex parsing, lowercase hex output,
// concatenation and fixed-width integers. Buffer is used underneath because it is the fastest hex
// codec in Node; results are returned as plain Uint8Array views so callers never depend on Buffer.

import { CryptoInputError } from './errors.js';

const HEX_RE = /^[0-9a-fA-F]*$/;

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
  if (body.length % 2 !== 0 || !HEX_RE.test(body)) {
    throw new CryptoInputError('INVALID_HEX', `invalid ${what}: expected an even number of hex digits`);
  }
  return new Uint8Array(Buffer.from(body, 'hex'));
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let len = 0;
  for (const p of parts) len += p.length;
  const out = new Uint8Array(len);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
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

