// Raw signing per curve, in the shape the API returns (r, s, v as lowercase hex, no 0x).
// Spec: docs/reference/addresses.md "Signatures"; docs/reference/keys.md "Signing" (r and s each exactly 64 hex
// chars, zero-padded; v is the DECIMAL string "00"/"01" because viem parses it with BigInt(v) and
// ethers with parseInt(v)+27; Ed25519 returns R as r, S as s and v "00"); docs/reference/keys.md "Signing"
// (Ed25519 requires HASH_FUNCTION_NOT_APPLICABLE; NO_OP signs a precomputed digest; P2TR and Spark
// identity keys sign BIP340 Schnorr with v "00").
//
// Backends, chosen for speed on the request path (docs/design.md "Stack"):
//  - secp256k1 ECDSA: libsecp256k1 native addon (RFC 6979 nonces, always low-S, recovery id).
//  - Ed25519: node:crypto with the private key imported ONCE as a KeyObject (24k/s vs 2.1k/s).
//  - P-256 ECDSA over a given digest: p256-digest-sign.ts (RFC 6979 nonces, k*G in OpenSSL, since
//    node:crypto cannot sign a raw digest and pure JS is ~1 ms); low-S so that strict verifiers
//    (e.g. Cosmos secp256r1) accept it as well as lenient ones.
//  - BIP340 Schnorr: schnorr.ts on libsecp256k1 primitives, BIP341 tweak from taproot.ts.
// A SigningKey holds the imported key; getSigningKey() keeps a bounded cache of them so a hot
// account is not re-imported per request.

import { createHmac, randomBytes, sign as nodeSign, type KeyObject } from 'node:crypto';
import { CryptoInputError, describeValue } from './errors.js';
import type { Curve } from './curves.js';
import { assertCurve } from './curves.js';
import { secp256k1Native } from './secp256k1-native.js';
import { assertValidPrivateKey, ed25519PrivateKeyObject, ed25519PublicKeyFromKeyObject, publicKeyFromPrivate } from './keys.js';
import { hashPayload, isHashFunction, type HashFunction } from './hash.js';
import { toHex } from './bytes.js';
import { taprootTweakPrivateKey } from './taproot.js';
import { signP256DigestNative } from './p256-digest-sign.js';
import { schnorrSignNative } from './schnorr.js';

/** The API's signature result: r and s are 64 lowercase hex chars, v is "00" or "01". */
export interface RawSignature {
  r: string;
  s: string;
  v: string;
}

export interface EcdsaSignature {
  r: Uint8Array; // 32 bytes big-endian
  s: Uint8Array; // 32 bytes big-endian, low-S
  recovery: 0 | 1;
}

/**
 * ECDSA: curve-native ECDSA. EDDSA: RFC 8032 Ed25519. BIP340: Schnorr with the untweaked key
 * (Spark identity). BIP340_TAPROOT: Schnorr with the BIP341 key-path tweak (P2TR accounts).
 */
export type SignatureScheme = 'ECDSA' | 'EDDSA' | 'BIP340' | 'BIP340_TAPROOT';

function checkDigest(digest: Uint8Array, what = 'digest'): void {
  if (!(digest instanceof Uint8Array) || digest.length !== 32) {
    throw new CryptoInputError('INVALID_PAYLOAD', `invalid payload: the ${what} to sign must be 32 bytes, got ${digest?.length ?? 0}`);
  }
}

function ecdsaToRaw(sig: EcdsaSignature): RawSignature {
  return { r: toHex(sig.r), s: toHex(sig.s), v: sig.recovery === 1 ? '01' : '00' };
}

function splitSignature64(sig: Uint8Array): RawSignature {
  return { r: toHex(sig.subarray(0, 32)), s: toHex(sig.subarray(32, 64)), v: '00' };
}

/** secp256k1 ECDSA over a 32-byte digest (libsecp256k1: RFC 6979, low-S). */
export function signSecp256k1Digest(privateKey: Uint8Array, digest: Uint8Array): EcdsaSignature {
  checkDigest(digest);
  let out: { signature: Uint8Array; recid: number };
  try {
    out = secp256k1Native.ecdsaSign(digest, privateKey);
  } catch {
    throw new CryptoInputError('INVALID_PRIVATE_KEY', 'invalid private key for CURVE_SECP256K1');
  }
  return { r: out.signature.slice(0, 32), s: out.signature.slice(32, 64), recovery: (out.recid & 1) as 0 | 1 };
}

/** P-256 ECDSA over a 32-byte digest (no further hashing; RFC 6979; low-S). */
export function signP256Digest(privateKey: Uint8Array, digest: Uint8Array): EcdsaSignature {
  checkDigest(digest);
  const sig = signP256DigestNative(privateKey, digest);
  return { r: sig.r, s: sig.s, recovery: (sig.recovery & 1) as 0 | 1 };
}

/** RFC 8032 Ed25519 over the message bytes; 64-byte R || S. */
export function signEd25519(privateKey: Uint8Array | KeyObject, message: Uint8Array): Uint8Array {
  const key = privateKey instanceof Uint8Array ? ed25519PrivateKeyObject(privateKey) : privateKey;
  return new Uint8Array(nodeSign(null, message, key));
}

export interface SchnorrOptions {
  /** Apply the BIP341 key-path tweak (P2TR). With `merkleRoot`, commit to that script tree. */
  taproot?: boolean;
  merkleRoot?: Uint8Array;
  /** The TapTweak hash t itself, when the caller already has it (implies taproot). */
  tapTweak?: Uint8Array;
  /** BIP340 auxiliary randomness; fresh random bytes when omitted (as BIP340 recommends). */
  auxRand?: Uint8Array;
}

/** BIP340 Schnorr over a 32-byte message, optionally with the BIP341 tweak; 64-byte signature. */
export function signSchnorr(privateKey: Uint8Array, digest: Uint8Array, opts: SchnorrOptions = {}): Uint8Array {
  checkDigest(digest);
  assertValidPrivateKey('CURVE_SECP256K1', privateKey);
  const tweaked = opts.taproot || opts.tapTweak || opts.merkleRoot;
  const key = tweaked ? taprootTweakPrivateKey(privateKey, { merkleRoot: opts.merkleRoot, tweak: opts.tapTweak }) : privateKey;
  try {
    return schnorrSignNative(key, digest, opts.auxRand);
  } finally {
    if (key !== privateKey) key.fill(0);
  }
}

/** Which hash functions each curve accepts (docs/reference/keys.md "Signing"). */
function checkHashFunction(curve: Curve, scheme: SignatureScheme, hashFunction: string): HashFunction {
  if (!isHashFunction(hashFunction)) {
    throw new CryptoInputError('INVALID_HASH_FUNCTION', `invalid hash function: ${describeValue(hashFunction)}`);
  }
  if (scheme === 'EDDSA') {
    if (hashFunction !== 'HASH_FUNCTION_NOT_APPLICABLE') {
      throw new CryptoInputError(
        'INVALID_HASH_FUNCTION',
        `invalid hash function: ${hashFunction} is not supported for ${curve}; Ed25519 signing requires HASH_FUNCTION_NOT_APPLICABLE`,
      );
    }
  } else if (hashFunction === 'HASH_FUNCTION_NOT_APPLICABLE') {
    throw new CryptoInputError(
      'INVALID_HASH_FUNCTION',
      `invalid hash function: HASH_FUNCTION_NOT_APPLICABLE is only valid for CURVE_ED25519; use HASH_FUNCTION_NO_OP, HASH_FUNCTION_SHA256 or HASH_FUNCTION_KECCAK256 for ${curve}`,
    );
  }
  return hashFunction;
}

function defaultScheme(curve: Curve): SignatureScheme {
  return curve === 'CURVE_ED25519' ? 'EDDSA' : 'ECDSA';
}

/**
 * A private key prepared for repeated signing: Ed25519 keys are imported into OpenSSL once.
 * Keep one per account (or use getSigningKey) instead of re-importing per request.
 */
export class SigningKey {
  readonly curve: Curve;
  readonly #secret: Uint8Array;
  readonly #edKey: KeyObject | null;
  #publicKey: Uint8Array | null = null;

  constructor(curve: Curve, privateKey: Uint8Array) {
    this.curve = assertCurve(curve);
    assertValidPrivateKey(curve, privateKey);
    this.#secret = new Uint8Array(privateKey);
    this.#edKey = curve === 'CURVE_ED25519' ? ed25519PrivateKeyObject(this.#secret) : null;
  }

  /** Compressed SEC1 (33 bytes) or the 32-byte ed25519 key; computed on first use. */
  get publicKey(): Uint8Array {
    if (!this.#publicKey) {
      this.#publicKey = this.#edKey ? ed25519PublicKeyFromKeyObject(this.#edKey) : publicKeyFromPrivate(this.curve, this.#secret, true);
    }
    return this.#publicKey;
  }

  /** ECDSA over a 32-byte digest (secp256k1 or P-256). */
  signDigest(digest: Uint8Array): EcdsaSignature {
    if (this.curve === 'CURVE_SECP256K1') return signSecp256k1Digest(this.#secret, digest);
    if (this.curve === 'CURVE_P256') return signP256Digest(this.#secret, digest);
    throw new CryptoInputError('CURVE_MISMATCH', 'ECDSA digest signing is not available for CURVE_ED25519');
  }

  /** Ed25519 over the whole message. */
  signMessage(message: Uint8Array): Uint8Array {
    if (!this.#edKey) throw new CryptoInputError('CURVE_MISMATCH', `Ed25519 signing is not available for ${this.curve}`);
    return signEd25519(this.#edKey, message);
  }

  /** BIP340 Schnorr (secp256k1 only), optionally taproot-tweaked. */
  signSchnorr(digest: Uint8Array, opts: SchnorrOptions = {}): Uint8Array {
    if (this.curve !== 'CURVE_SECP256K1') {
      throw new CryptoInputError('CURVE_MISMATCH', `Schnorr signing is not available for ${this.curve}`);
    }
    return signSchnorr(this.#secret, digest, opts);
  }

  /**
   * sign_raw_payload semantics: hash `payload` with `hashFunction`, sign with `scheme` (default:
   * ECDSA for secp256k1/P-256, EdDSA for ed25519), return {r, s, v} hex.
   */
  signPayload(payload: Uint8Array, hashFunction: HashFunction | string, scheme: SignatureScheme = defaultScheme(this.curve)): RawSignature {
    const hf = checkHashFunction(this.curve, scheme, hashFunction);
    switch (scheme) {
      case 'EDDSA':
        return splitSignature64(this.signMessage(payload));
      case 'ECDSA':
      case 'BIP340':
      case 'BIP340_TAPROOT': {
        const digest = hashPayload(hf, payload);
        if (digest.length !== 32) {
          throw new CryptoInputError(
            'INVALID_PAYLOAD',
            `invalid payload: with HASH_FUNCTION_NO_OP the payload must be a 32-byte digest, got ${digest.length} bytes`,
          );
        }
        if (scheme === 'ECDSA') return ecdsaToRaw(this.signDigest(digest));
        return splitSignature64(this.signSchnorr(digest, { taproot: scheme === 'BIP340_TAPROOT' }));
      }
      default:
        throw new CryptoInputError('INVALID_PAYLOAD', `invalid signature scheme: ${describeValue(scheme)}`);
    }
  }

  /** Overwrite the retained secret (the OpenSSL KeyObject for ed25519 is freed by GC). */
  destroy(): void {
    this.#secret.fill(0);
  }
}

// ---------------------------------------------------------------------------------------------
// Bounded cache of SigningKeys. Keyed either by HMAC(per-process random key, curve || secret), so the
// map never holds secrets as its keys and entries cannot be guessed from outside the process, or by
// the sealed copy a key was opened from (signingKeyForSealed): a public ciphertext, never the secret.

const CACHE_LIMIT = 10_000;
const CACHE_MAC_KEY = randomBytes(32);
const cache = new Map<string, SigningKey>();

function cacheKey(curve: Curve, privateKey: Uint8Array): string {
  return createHmac('sha256', CACHE_MAC_KEY).update(curve).update(privateKey).digest('base64');
}

/** The cached key under `id`, refreshed as most recently used; or the one `make` builds, cached. */
function cached(id: string, make: () => SigningKey): SigningKey {
  let key = cache.get(id);
  if (key) {
    // Refresh recency: Map iteration order is insertion order, so re-insert to mark as newest. Only
    // once the map is half full (as the P-256 key cache in p256.ts): below that nothing is evicted
    // before a key in use is hit again, and re-inserting on every hit rebuilt the map's table.
    if (cache.size > CACHE_LIMIT / 2) {
      cache.delete(id);
      cache.set(id, key);
    }
    return key;
  }
  key = make();
  cache.set(id, key);
  if (cache.size > CACHE_LIMIT) {
    // Evicted keys are not destroyed: a caller may still hold one. GC reclaims them.
    cache.delete(cache.keys().next().value as string);
  }
  return key;
}

/** A cached SigningKey for (curve, privateKey); imports the key on first use. */
export function getSigningKey(curve: Curve, privateKey: Uint8Array): SigningKey {
  return cached(cacheKey(assertCurve(curve), privateKey), () => new SigningKey(curve, privateKey));
}

/**
 * A cached SigningKey for the key sealed as `sealedId` (where it is stored and its ciphertext: one
 * sealed copy of one key). `open` unseals the secret on the first use only, so a hot account signs
 * without an AES-GCM open and a keyed hash per request (25–30 µs of a signature). A copy
 * sealed anew, elsewhere or differently, has another id and is opened again.
 */
export function signingKeyForSealed(sealedId: string, curve: Curve, open: () => Uint8Array): SigningKey {
  return cached(`sealed:${sealedId}`, () => {
    const secret = open();
    try {
      return new SigningKey(curve, secret);
    } finally {
      secret.fill(0);
    }
  });
}

/** Drop every cached key (e.g. on shutdown or key rotation). */
export function clearSigningKeyCache(): void {
  cache.clear();
}

/**
 * One-shot sign_raw_payload: `payload` is the decoded payload bytes, `hashFunction` the request's
 * value. Uses the SigningKey cache. Throws CryptoInputError on an invalid combination.
 */
export function signRawPayload(
  curve: Curve,
  privateKey: Uint8Array,
  payload: Uint8Array,
  hashFunction: HashFunction | string,
  scheme?: SignatureScheme,
): RawSignature {
  return getSigningKey(curve, privateKey).signPayload(payload, hashFunction, scheme);
}
