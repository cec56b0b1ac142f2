// Hash functions used by the crypto core, plus `hashPayload` for the signing API's hashFunction.
// Spec: docs/reference/keys.md "Signing" (v1HashFunction values) and docs/reference/keys.md "Signing" (NO_OP signs the
// payload bytes as given; NOT_APPLICABLE is the only value for Ed25519, which hashes internally).
// SHA-256 goes through node:crypto (OpenSSL) for speed; keccak, RIPEMD-160, BLAKE2b-256 and SHA3-256
// come from @noble/hashes because OpenSSL's keccak/ripemd availability differs between builds.

import { hash } from 'node:crypto';
import { keccak_256, sha3_256 as nobleSha3_256 } from '@noble/hashes/sha3.js';
import { ripemd160 as nobleRipemd160 } from '@noble/hashes/legacy.js';
import { blake2b } from '@noble/hashes/blake2.js';
import { CryptoInputError, describeValue } from './errors.js';

export function sha256(data: Uint8Array): Uint8Array {
  return new Uint8Array(hash('sha256', data, 'buffer'));
}

export function sha256d(data: Uint8Array): Uint8Array {
  return sha256(sha256(data));
}

export function keccak256(data: Uint8Array): Uint8Array {
  return keccak_256(data);
}

export function sha3_256(data: Uint8Array): Uint8Array {
  return nobleSha3_256(data);
}

export function ripemd160(data: Uint8Array): Uint8Array {
  return nobleRipemd160(data);
}

/** RIPEMD160(SHA256(x)), Bitcoin's HASH160. */
export function hash160(data: Uint8Array): Uint8Array {
  return nobleRipemd160(sha256(data));
}

export function blake2b256(data: Uint8Array): Uint8Array {
  return blake2b(data, { dkLen: 32 });
}

export const HASH_FUNCTIONS = [
  'HASH_FUNCTION_NO_OP',
  'HASH_FUNCTION_SHA256',
  'HASH_FUNCTION_KECCAK256',
  'HASH_FUNCTION_NOT_APPLICABLE',
] as const;
export type HashFunction = (typeof HASH_FUNCTIONS)[number];

export function isHashFunction(value: unknown): value is HashFunction {
  return typeof value === 'string' && (HASH_FUNCTIONS as readonly string[]).includes(value);
}

/**
 * Apply the request's hash function to the payload bytes. NO_OP and NOT_APPLICABLE return the
 * payload unchanged (for NOT_APPLICABLE the signature scheme hashes internally, i.e. Ed25519).
 * Which hash function is valid for which curve is checked by sign.ts, not here.
 */
export function hashPayload(hashFunction: HashFunction | string, payload: Uint8Array): Uint8Array {
  switch (hashFunction) {
    case 'HASH_FUNCTION_NO_OP':
    case 'HASH_FUNCTION_NOT_APPLICABLE':
      return payload;
    case 'HASH_FUNCTION_SHA256':
      return sha256(payload);
    case 'HASH_FUNCTION_KECCAK256':
      return keccak_256(payload);
    default:
      throw new CryptoInputError(
        'INVALID_HASH_FUNCTION',
        `invalid hash function: ${describeValue(hashFunction)}; expected one of ${HASH_FUNCTIONS.join(', ')}`,
      );
  }
}
