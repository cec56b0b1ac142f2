// BIP32 derivation path strings: parsing, validation and canonical form.
// Spec: docs/reference/addresses.md "Derivation" (pathFormat is always PATH_FORMAT_BIP32; on ed25519 every
// segment is treated as hardened, so `m/44'/501'/0'/0` and `m/44'/501'/0'/0'` are the same key) and
// BIP-0032 (index < 2^31, hardened = index + 2^31, depth fits one byte).
//
// Accepted syntax: `m` followed by `/`-separated decimal indexes, each optionally suffixed with `'`,
// `h` or `H` for hardened. Rejected: whitespace, empty segments, signs, leading zeros (so that one key
// has one spelling and "a path may not be reused" can compare canonical strings), indexes >= 2^31.

import { CryptoInputError, describeValue } from './errors.js';
import type { Curve } from './curves.js';

export const HARDENED_OFFSET = 0x80000000;
/** BIP32 serialises depth in one byte. */
export const MAX_PATH_DEPTH = 255;
const MAX_PATH_LENGTH = 4096;
const SEGMENT_RE = /^(0|[1-9][0-9]{0,9})(['hH]?)$/;

function invalid(reason: string): never {
  throw new CryptoInputError('INVALID_PATH', `invalid path: ${reason}`);
}

/** Parse `m/44'/60'/0'/0/0` into child indexes (hardened ones have 2^31 added). */
export function parseDerivationPath(path: string): number[] {
  if (typeof path !== 'string') invalid(`expected a string, got ${describeValue(path)}`);
  if (path.length > MAX_PATH_LENGTH) invalid('path is too long');
  const segments = path.split('/');
  if (segments[0] !== 'm') invalid(`${describeValue(path)} must start with "m"`);
  if (segments.length - 1 > MAX_PATH_DEPTH) invalid(`more than ${MAX_PATH_DEPTH} levels`);
  const indexes: number[] = [];
  for (let i = 1; i < segments.length; i++) {
    const seg = segments[i]!;
    const m = SEGMENT_RE.exec(seg);
    if (!m) {
      invalid(
        seg === ''
          ? `empty segment at level ${i} in ${describeValue(path)}`
          : `segment ${i} (${describeValue(seg)}) of ${describeValue(path)} is not a decimal index with an optional ' or h suffix`,
      );
    }
    const n = Number(m[1]);
    if (n >= HARDENED_OFFSET) invalid(`segment ${i} of ${describeValue(path)} is out of range (index must be below 2^31)`);
    indexes.push(m[2] ? n + HARDENED_OFFSET : n);
  }
  return indexes;
}

/** Format child indexes as a path string with `'` for hardened levels. */
export function formatDerivationPath(indexes: readonly number[]): string {
  let out = 'm';
  for (const i of indexes) {
    out += i >= HARDENED_OFFSET ? `/${i - HARDENED_OFFSET}'` : `/${i}`;
  }
  return out;
}

/**
 * The one spelling of the key a path selects on `curve`: `h`/`H` become `'`, and on ed25519 every
 * level is hardened. Two paths select the same key iff their canonical forms are equal, which is
 * what the "path may not be reused within one wallet" rule needs.
 */
export function canonicalDerivationPath(curve: Curve, path: string): string {
  const indexes = parseDerivationPath(path);
  return formatDerivationPath(curve === 'CURVE_ED25519' ? indexes.map(hardenIndex) : indexes);
}

export function hardenIndex(index: number): number {
  return index >= HARDENED_OFFSET ? index : index + HARDENED_OFFSET;
}

export function isValidDerivationPath(path: string): boolean {
  try {
    parseDerivationPath(path);
    return true;
  } catch {
    return false;
  }
}
