// Public keys from private keys, key validation, and SEC1 point (de)compression, per curve.
// Spec: docs/reference/addresses.md "Derivation" and the COMPRESSED/UNCOMPRESSED rows (33/65-byte SEC1 for
// secp256k1 and P-256, the 32-byte RFC 8032 key for ed25519).
//
// Each curve uses its fastest available backend: libsecp256k1 (native addon) for secp256k1, and
// OpenSSL through node:crypto for P-256 (ECDH objects do point multiplication and conversion) and
// Ed25519 (PKCS#8 import, SPKI export). The one pure-JS step is decoding a foreign ed25519 public
// key to check it is a curve point, which OpenSSL does not do and which is off the signing path.

import { ed25519 } from '@noble/curves/ed25519.js';
import { createECDH, createPrivateKey, createPublicKey, ECDH, type KeyObject } from 'node:crypto';
import { CryptoInputError } from './errors.js';
import type { Curve } from './curves.js';
import { assertCurve } from './curves.js';
import { secp256k1Native } from './secp256k1-native.js';
import { bytesToBigInt, concatBytes, fromHex } from './bytes.js';

export const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;

// DER prefixes: PKCS#8 PrivateKeyInfo and SPKI for id-Ed25519 (RFC 8410); the raw key follows.
const ED25519_PKCS8_PREFIX = fromHex('302e020100300506032b657004220420');
const ED25519_SPKI_PREFIX = fromHex('302a300506032b6570032100');

export function ed25519PrivateKeyObject(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) {
    throw new CryptoInputError('INVALID_PRIVATE_KEY', `invalid private key: ed25519 keys are 32 bytes, got ${seed.length}`);
  }
  const der = Buffer.from(concatBytes(ED25519_PKCS8_PREFIX, seed));
  try {
    return createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  } finally {
    der.fill(0);
  }
}

export function ed25519PublicKeyObject(publicKey: Uint8Array): KeyObject {
  if (publicKey.length !== 32) {
    throw new CryptoInputError('INVALID_PUBLIC_KEY', `invalid public key: ed25519 keys are 32 bytes, got ${publicKey.length}`);
  }
  return createPublicKey({ key: Buffer.from(concatBytes(ED25519_SPKI_PREFIX, publicKey)), format: 'der', type: 'spki' });
}

export function ed25519PublicKeyFromKeyObject(privateKey: KeyObject): Uint8Array {
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return new Uint8Array(spki.subarray(spki.length - 32));
}

function p256Ecdh(privateKey: Uint8Array): ECDH {
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(Buffer.from(privateKey));
  return ecdh;
}

/** True iff `privateKey` is a usable secret scalar on `curve`. */
export function isValidPrivateKey(curve: Curve, privateKey: Uint8Array): boolean {
  if (!(privateKey instanceof Uint8Array) || privateKey.length !== 32) return false;
  switch (curve) {
    case 'CURVE_SECP256K1':
      return secp256k1Native.privateKeyVerify(privateKey);
    case 'CURVE_P256': {
      const d = bytesToBigInt(privateKey);
      return d > 0n && d < P256_N;
    }
    case 'CURVE_ED25519':
      return true; // any 32-byte seed is an RFC 8032 private key
    default:
      return false;
  }
}

export function assertValidPrivateKey(curve: Curve, privateKey: Uint8Array): void {
  if (!isValidPrivateKey(assertCurve(curve), privateKey)) {
    throw new CryptoInputError('INVALID_PRIVATE_KEY', `invalid private key for ${curve}`);
  }
}

/**
 * Public key of `privateKey`: compressed SEC1 (33 bytes) for secp256k1/P-256 unless
 * `compressed` is false (65 bytes); always the 32-byte key for ed25519.
 */
export function publicKeyFromPrivate(curve: Curve, privateKey: Uint8Array, compressed = true): Uint8Array {
  assertValidPrivateKey(curve, privateKey);
  switch (curve) {
    case 'CURVE_SECP256K1':
      return secp256k1Native.publicKeyCreate(privateKey, compressed);
    case 'CURVE_P256':
      return new Uint8Array(p256Ecdh(privateKey).getPublicKey(null, compressed ? 'compressed' : 'uncompressed'));
    case 'CURVE_ED25519':
      return ed25519PublicKeyFromKeyObject(ed25519PrivateKeyObject(privateKey));
  }
}

/** True iff `publicKey` is a valid encoded point of `curve` (33/65 bytes SEC1, or 32 bytes ed25519). */
export function isValidPublicKey(curve: Curve, publicKey: Uint8Array): boolean {
  try {
    normalizePublicKey(curve, publicKey);
    return true;
  } catch {
    return false;
  }
}

/** Both encodings of a public key. `uncompressed` is null for ed25519, which has one encoding. */
export interface PublicKeyForms {
  curve: Curve;
  /** 33-byte SEC1 compressed point, or the 32-byte ed25519 key. */
  compressed: Uint8Array;
  /** 65-byte SEC1 uncompressed point (secp256k1 and P-256 only). */
  uncompressed: Uint8Array | null;
}

/**
 * Validate a public key (either SEC1 form for secp256k1/P-256; 32 bytes for ed25519) and return
 * both of its encodings. The point is checked to be on the curve.
 */
export function normalizePublicKey(curve: Curve, publicKey: Uint8Array): PublicKeyForms {
  assertCurve(curve);
  const bad = (why: string): never => {
    throw new CryptoInputError('INVALID_PUBLIC_KEY', `invalid public key for ${curve}: ${why}`);
  };
  if (!(publicKey instanceof Uint8Array)) bad('expected bytes');
  if (curve === 'CURVE_ED25519') {
    if (publicKey.length !== 32) bad(`expected 32 bytes, got ${publicKey.length}`);
    // OpenSSL imports any 32 bytes as an Ed25519 key, so the point is decoded with noble instead.
    try {
      ed25519.Point.fromBytes(publicKey);
    } catch {
      bad('not a point on the curve');
    }
    return { curve, compressed: new Uint8Array(publicKey), uncompressed: null };
  }
  const okPrefix =
    (publicKey.length === 33 && (publicKey[0] === 2 || publicKey[0] === 3)) ||
    (publicKey.length === 65 && publicKey[0] === 4);
  if (!okPrefix) bad('expected a 33-byte compressed (02/03) or 65-byte uncompressed (04) SEC1 point');
  try {
    if (curve === 'CURVE_SECP256K1') {
      return {
        curve,
        compressed: secp256k1Native.publicKeyConvert(publicKey, true),
        uncompressed: secp256k1Native.publicKeyConvert(publicKey, false),
      };
    }
    const key = Buffer.from(publicKey);
    return {
      curve,
      compressed: new Uint8Array(ECDH.convertKey(key, 'prime256v1', undefined, undefined, 'compressed') as Buffer),
      uncompressed: new Uint8Array(ECDH.convertKey(key, 'prime256v1', undefined, undefined, 'uncompressed') as Buffer),
    };
  } catch (e) {
    if (e instanceof CryptoInputError) throw e;
    return bad('not a point on the curve');
  }
}

export function compressPublicKey(curve: Curve, publicKey: Uint8Array): Uint8Array {
  return normalizePublicKey(curve, publicKey).compressed;
}

export function decompressPublicKey(curve: Curve, publicKey: Uint8Array): Uint8Array {
  const forms = normalizePublicKey(curve, publicKey);
  if (!forms.uncompressed) {
    throw new CryptoInputError('CURVE_MISMATCH', 'ed25519 public keys have no uncompressed form');
  }
  return forms.uncompressed;
}
