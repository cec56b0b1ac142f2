// P-256 (secp256r1 / prime256v1) primitives for Sigil: key encoding, key generation, ECDSA-P256-SHA256
// signing and verification, ECDH. Pure bytes -> bytes on top of node:crypto (OpenSSL).
//
// Wire rules followed (docs/reference/api.md):
//  - docs/reference/api.md "Stamps": API-key public keys travel as compressed 33-byte hex; the bundle signer key as
//    uncompressed 65-byte lowercase hex (`04‖X‖Y`). Both forms are accepted everywhere as input.
//  - docs/reference/api.md "Stamps": stamp signatures are ASN.1 DER hex, possibly high-S, and wallet (EIP-191)
//    stamps can be non-minimal DER (`toDerSignature` keeps leading 0x00 bytes). OpenSSL rejects
//    non-canonical DER, so DER is parsed here leniently (as the SDK's `fromDerSignature` does) and
//    verified as IEEE-P1363 r‖s. No low-S rule on verify.
//  - docs/reference/sessions.md "Login activities": `clientSignature` is raw r‖s hex (64 bytes); `verifyP256Raw` covers it.
//  - docs/reference/bundles.md: bundle signatures are DER hex of ECDSA_P256_SHA256 over the bytes of `data`.
//
// Why node:crypto rather than pure JS: P-256 verify is ~35x faster in OpenSSL (docs/design.md "Stack"), and
// verification sits on every request. Public KeyObjects are cached per key for the same reason.

import {
  createECDH,
  createHash,
  createPrivateKey,
  createPublicKey,
  diffieHellman as nodeDiffieHellman,
  ECDH,
  sign as nodeSign,
  verify as nodeVerify,
  type KeyObject,
} from 'node:crypto';
import { bigIntToBytes, bytesToBigInt, concatBytes, fromHex, isHexBody, toHex } from './bytes.js';

// The bytes helpers are src/crypto/bytes.ts's; these names are what the bundle, stamp and WebAuthn
// code imports from here.
export { toHex as bytesToHex, concatBytes } from './bytes.js';

/** Hex (no `0x` prefix, either case) or raw bytes. */
export type BytesLike = Uint8Array | string;

/** Error thrown for malformed or invalid cryptographic input. Messages never contain secrets. */
export class CryptoError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'CryptoError';
    this.code = code;
  }
}

const CURVE = 'prime256v1';
/** Group order n of P-256. */
export const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const HALF_N = P256_N >> 1n;


// ---------------------------------------------------------------------------------------------------
// hex / bytes

/** Strict hex decode: even length, hex digits only, no `0x`. Empty string gives empty bytes. */
export function hexToBytes(hex: string): Uint8Array {
  if (typeof hex !== 'string' || !isHexBody(hex)) {
    throw new CryptoError('INVALID_HEX', 'expected an even-length hex string without 0x prefix');
  }
  return fromHex(hex);
}

/** Hex string -> bytes; bytes are returned as a plain Uint8Array copy-free view. */
export function toBytes(input: BytesLike): Uint8Array {
  if (typeof input === 'string') return hexToBytes(input);
  if (input instanceof Uint8Array) return input;
  throw new CryptoError('INVALID_INPUT', 'expected hex string or Uint8Array');
}

export function sha256(data: Uint8Array): Uint8Array {
  return new Uint8Array(createHash('sha256').update(data).digest());
}


// ---------------------------------------------------------------------------------------------------
// public keys

/** Shape check plus on-curve check (OpenSSL); returns the raw bytes of a 33- or 65-byte SEC1 point. */
function checkedPoint(publicKey: BytesLike): Uint8Array {
  let pub: Uint8Array;
  try {
    pub = toBytes(publicKey);
  } catch {
    throw new CryptoError('INVALID_PUBLIC_KEY', 'P-256 public key is not valid hex');
  }
  const okShape =
    (pub.length === 33 && (pub[0] === 0x02 || pub[0] === 0x03)) || (pub.length === 65 && pub[0] === 0x04);
  if (!okShape) {
    throw new CryptoError(
      'INVALID_PUBLIC_KEY',
      'P-256 public key must be 33 bytes (02/03 prefix) or 65 bytes (04 prefix)',
    );
  }
  return pub;
}

function convertPoint(pub: Uint8Array, format: 'compressed' | 'uncompressed'): Uint8Array {
  try {
    // ECDH.convertKey decodes with EC_POINT_oct2point, which rejects points not on the curve.
    return new Uint8Array(ECDH.convertKey(pub, CURVE, undefined, undefined, format) as Buffer);
  } catch {
    throw new CryptoError('INVALID_PUBLIC_KEY', 'P-256 public key is not a point on the curve');
  }
}

/** 33-byte compressed point from a compressed or uncompressed public key (validated on-curve). */
export function compressPublicKey(publicKey: BytesLike): Uint8Array {
  return convertPoint(checkedPoint(publicKey), 'compressed');
}

/** 65-byte uncompressed point (`04‖X‖Y`) from a compressed or uncompressed public key (validated). */
export function decompressPublicKey(publicKey: BytesLike): Uint8Array {
  return convertPoint(checkedPoint(publicKey), 'uncompressed');
}

/** Lowercase hex (66 chars) of the compressed key: the form API keys are registered and stamped with. */
export function compressPublicKeyHex(publicKey: BytesLike): string {
  return toHex(compressPublicKey(publicKey));
}

/**
 * Whether two hex P-256 public keys (compressed or not, any case, optional 0x) are the same point;
 * false when either is not a key.
 */
export function samePublicKey(a: string, b: string): boolean {
  try {
    return compressPublicKeyHex(a.toLowerCase().replace(/^0x/, '')) === compressPublicKeyHex(b.toLowerCase().replace(/^0x/, ''));
  } catch {
    return false;
  }
}

/** Lowercase hex (130 chars) of the uncompressed key: the form bundles carry (`enclaveQuorumPublic`, `targetPublic`). */
export function decompressPublicKeyHex(publicKey: BytesLike): string {
  return toHex(decompressPublicKey(publicKey));
}

/** True when the input decodes to a valid P-256 point in either encoding. */
export function isValidPublicKey(publicKey: BytesLike): boolean {
  try {
    decompressPublicKey(publicKey);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------------
// private keys

/** 32-byte scalar in [1, n-1]; throws INVALID_PRIVATE_KEY otherwise. */
function checkedPrivateKey(privateKey: BytesLike): Uint8Array {
  let d: Uint8Array;
  try {
    d = toBytes(privateKey);
  } catch {
    throw new CryptoError('INVALID_PRIVATE_KEY', 'P-256 private key is not valid hex');
  }
  if (d.length !== 32) throw new CryptoError('INVALID_PRIVATE_KEY', 'P-256 private key must be 32 bytes');
  const k = bytesToBigInt(d);
  if (k === 0n || k >= P256_N) {
    throw new CryptoError('INVALID_PRIVATE_KEY', 'P-256 private key is out of range');
  }
  return d;
}

/** An OpenSSL ECDH context loaded with a private key (also gives us the public key for free). */
function ecdhContext(privateKey: BytesLike) {
  const ecdh = createECDH(CURVE);
  ecdh.setPrivateKey(checkedPrivateKey(privateKey));
  return ecdh;
}

export function isValidPrivateKey(privateKey: BytesLike): boolean {
  try {
    checkedPrivateKey(privateKey);
    return true;
  } catch {
    return false;
  }
}

/** Public key of a private key: 33 bytes compressed by default, 65 bytes uncompressed otherwise. */
export function publicKeyFromPrivate(privateKey: BytesLike, compressed = true): Uint8Array {
  return new Uint8Array(ecdhContext(privateKey).getPublicKey(null, compressed ? 'compressed' : 'uncompressed'));
}

export interface P256KeyPair {
  /** 32-byte scalar. Secret: keep inside crypto/ and barrier/, never log. */
  privateKey: Uint8Array;
  /** 33-byte compressed point. */
  publicKey: Uint8Array;
  /** 65-byte uncompressed point (`04‖X‖Y`). */
  publicKeyUncompressed: Uint8Array;
}

/** Fresh random key pair from OpenSSL's CSPRNG. */
export function generateP256KeyPair(): P256KeyPair {
  const ecdh = createECDH(CURVE);
  ecdh.generateKeys();
  // getPrivateKey() is the minimal big-endian encoding; left-pad to the fixed 32-byte width.
  const raw = ecdh.getPrivateKey();
  const privateKey = new Uint8Array(32);
  privateKey.set(raw, 32 - raw.length);
  return {
    privateKey,
    publicKey: new Uint8Array(ecdh.getPublicKey(null, 'compressed')),
    publicKeyUncompressed: new Uint8Array(ecdh.getPublicKey(null, 'uncompressed')),
  };
}

// ---------------------------------------------------------------------------------------------------
// ECDH

/**
 * Raw ECDH on P-256: the 32-byte x-coordinate of d·Q (what RFC 9180 DHKEM(P-256) uses as `dh`).
 * `publicKey` may be compressed or uncompressed; invalid points are rejected.
 */
export function ecdhP256(privateKey: BytesLike, publicKey: BytesLike): Uint8Array {
  return ecdhWithPublic(privateKey, publicKey).sharedSecret;
}

/**
 * ECDH plus the uncompressed public key of `privateKey`, computed with a single OpenSSL context.
 * HPKE open needs both (dh for the KEM, pkR for kem_context and AAD).
 */
export function ecdhWithPublic(
  privateKey: BytesLike,
  publicKey: BytesLike,
): { sharedSecret: Uint8Array; ownPublicKeyUncompressed: Uint8Array } {
  const pub = checkedPoint(publicKey);
  const ecdh = ecdhContext(privateKey);
  let secret: Buffer;
  try {
    secret = ecdh.computeSecret(pub);
  } catch {
    throw new CryptoError('INVALID_PUBLIC_KEY', 'P-256 public key is not a point on the curve');
  }
  return {
    sharedSecret: new Uint8Array(secret),
    ownPublicKeyUncompressed: new Uint8Array(ecdh.getPublicKey(null, 'uncompressed')),
  };
}

// ---------------------------------------------------------------------------------------------------
// DER signatures

/**
 * Parse an ECDSA DER signature into 64-byte r‖s, leniently in the same ways as the SDK's
 * `fromDerSignature` (packages/crypto/src/crypto.ts):
 *  - integers may carry extra leading 0x00 bytes (non-minimal DER from `toDerSignature`), as long
 *    as the value fits in 32 bytes;
 *  - integers are read as unsigned big-endian (a missing sign byte is tolerated);
 *  - only the short-form SEQUENCE length is supported (a P-256 signature is at most 72 bytes).
 * Stricter than the SDK in one respect: the SEQUENCE length must match and no bytes may trail the
 * two integers (no SDK path emits either, and rejecting them keeps one signature = one encoding
 * per value of r and s, modulo zero padding).
 * Throws CryptoError('INVALID_SIGNATURE') on anything else.
 */
export function parseDerSignature(signature: BytesLike): Uint8Array {
  const bad = (why: string) => new CryptoError('INVALID_SIGNATURE', `malformed DER signature: ${why}`);
  let der: Uint8Array;
  try {
    der = toBytes(signature);
  } catch {
    throw bad('not valid hex');
  }
  if (der.length < 8) throw bad('too short');
  if (der[0] !== 0x30) throw bad('missing SEQUENCE tag');
  if (der[1] >= 0x80) throw bad('unsupported long-form length');
  if (der[1] !== der.length - 2) throw bad('SEQUENCE length does not match signature length');
  let i = 2;
  const readInt = (name: string): Uint8Array => {
    if (der[i] !== 0x02) throw bad(`invalid tag for ${name}`);
    const len = der[i + 1];
    if (len === undefined || len === 0 || len > 33) throw bad(`unexpected length for ${name}`);
    const start = i + 2;
    const end = start + len;
    if (end > der.length) throw bad(`${name} runs past the end`);
    let s = start;
    while (s < end && der[s] === 0) s++;
    if (end - s > 32) throw bad(`${name} does not fit in 32 bytes`);
    const out = new Uint8Array(32);
    out.set(der.subarray(s, end), 32 - (end - s));
    i = end;
    return out;
  };
  const r = readInt('r');
  const s = readInt('s');
  if (i !== der.length) throw bad('trailing bytes after s');
  return concatBytes(r, s);
}

/** Minimal (canonical) DER encoding of a 64-byte r‖s signature. */
export function rawToDerSignature(raw: Uint8Array): Uint8Array {
  if (raw.length !== 64) throw new CryptoError('INVALID_SIGNATURE', 'raw signature must be 64 bytes');
  const int = (v: Uint8Array): Uint8Array => {
    let s = 0;
    while (s < v.length - 1 && v[s] === 0) s++;
    const body = v.subarray(s);
    const pad = body[0] & 0x80 ? [0] : [];
    return Uint8Array.from([0x02, body.length + pad.length, ...pad, ...body]);
  };
  const r = int(raw.subarray(0, 32));
  const s = int(raw.subarray(32));
  return Uint8Array.from([0x30, r.length + s.length, ...r, ...s]);
}

// ---------------------------------------------------------------------------------------------------
// verify

// Bounded cache of public KeyObjects. Importing a key costs a point decode (a modular square root
// for compressed points); stamps re-use the same few keys, but keys also come from untrusted input,
// so the map is capped and evicts the oldest entry (insertion order, refreshed on hit).
const KEY_CACHE_MAX = 4096;
const publicKeyCache = new Map<string, KeyObject>();

/**
 * Marks a cache entry most recently used (Map iteration order is insertion order). Only once the map
 * is half full: below that nothing is evicted until it has grown by half its cap again, and a key in
 * use is refreshed by its next hit long before. Re-inserting on every hit made the map's table be
 * rebuilt again and again, garbage that outlived the young generation (docs/design.md "The hot path").
 */
function refreshed(id: string, key: KeyObject): KeyObject {
  if (publicKeyCache.size <= KEY_CACHE_MAX / 2) return key;
  const canonical = id.toLowerCase();
  publicKeyCache.delete(canonical);
  publicKeyCache.set(canonical, key);
  return key;
}

function publicKeyObject(publicKey: BytesLike): KeyObject {
  // A key seen before is found by its hex before any decoding: stamps re-use the same few keys, and
  // only keys that passed the checks below are ever cached (under their canonical lowercase hex).
  const seen = typeof publicKey === 'string' ? publicKeyCache.get(publicKey.toLowerCase()) : undefined;
  if (seen) return refreshed(publicKey as string, seen);
  const pub = checkedPoint(publicKey);
  const id = toHex(pub);
  const hit = publicKeyCache.get(id);
  if (hit) return refreshed(id, hit);
  let key: KeyObject;
  try {
    // Imported from its coordinates (JWK): node builds the key from them directly, where an SPKI
    // document goes through OpenSSL 3's decoder lookup first (188 → 133 µs a key measured here; a
    // request from an end user no process has seen lately imports one, docs/design.md "The cold path
    // (one sub-organization per end user)"). Both reject a point that is not on the curve.
    const point = pub.length === 33 ? convertPoint(pub, 'uncompressed') : pub;
    key = createPublicKey({
      key: { kty: 'EC', crv: 'P-256', x: Buffer.from(point.subarray(1, 33)).toString('base64url'), y: Buffer.from(point.subarray(33, 65)).toString('base64url') },
      format: 'jwk',
    });
  } catch {
    throw new CryptoError('INVALID_PUBLIC_KEY', 'P-256 public key is not a point on the curve');
  }
  if (publicKeyCache.size >= KEY_CACHE_MAX) {
    const oldest = publicKeyCache.keys().next().value;
    if (oldest !== undefined) publicKeyCache.delete(oldest);
  }
  publicKeyCache.set(id, key);
  return key;
}

/**
 * Verify an ECDSA-P256-SHA256 signature given as 64-byte r‖s (bytes or 128 hex chars) over `message`
 * (hashed here with SHA-256). High-S is accepted. Returns false for a wrong or malformed signature;
 * throws CryptoError('INVALID_PUBLIC_KEY') if the key itself is unusable.
 */
export function verifyP256Raw(publicKey: BytesLike, message: Uint8Array, signature: BytesLike): boolean {
  return verifyWithKey(publicKeyObject(publicKey), message, signature);
}

const N_BYTES = Buffer.from(bigIntToBytes(P256_N, 32));
const ZERO_32 = Buffer.alloc(32);

/** r‖s against an imported key: each of r and s in [1, n-1] (compared as bytes), then OpenSSL. */
function verifyWithKey(key: KeyObject, message: Uint8Array, signature: BytesLike): boolean {
  let raw: Uint8Array;
  try {
    raw = toBytes(signature);
  } catch {
    return false;
  }
  if (raw.length !== 64) return false;
  const sig = Buffer.from(raw.buffer, raw.byteOffset, 64);
  for (const half of [sig.subarray(0, 32), sig.subarray(32)]) {
    if (half.equals(ZERO_32) || half.compare(N_BYTES) >= 0) return false;
  }
  return nodeVerify('sha256', message, { key, dsaEncoding: 'ieee-p1363' }, sig);
}

/**
 * Verify a DER signature (hex or bytes, leniently parsed, see `parseDerSignature`) over `message`
 * with ECDSA-P256-SHA256. Same return/throw contract as `verifyP256Raw`.
 */
export function verifyP256Der(publicKey: BytesLike, message: Uint8Array, signature: BytesLike): boolean {
  // Resolve the key first so a bad key throws even when the signature is also bad.
  const key = publicKeyObject(publicKey);
  let raw: Uint8Array;
  try {
    raw = parseDerSignature(signature);
  } catch {
    return false;
  }
  return verifyWithKey(key, message, raw);
}

// ---------------------------------------------------------------------------------------------------
// sign

/**
 * A P-256 signing key held as an OpenSSL KeyObject, for long-lived keys such as the deployment's
 * bundle signer: the raw scalar is not retained by this object, and signing skips re-importing.
 */
export class P256Signer {
  /** 33-byte compressed public key. */
  readonly publicKey: Uint8Array;
  /** 65-byte uncompressed public key. */
  readonly publicKeyUncompressed: Uint8Array;
  readonly #key: KeyObject;

  constructor(privateKey: BytesLike) {
    const d = checkedPrivateKey(privateKey);
    const ecdh = ecdhContext(d);
    const uncompressed = new Uint8Array(ecdh.getPublicKey(null, 'uncompressed'));
    this.publicKeyUncompressed = uncompressed;
    this.publicKey = new Uint8Array(ecdh.getPublicKey(null, 'compressed'));
    const b64u = (b: Uint8Array) => Buffer.from(b).toString('base64url');
    this.#key = createPrivateKey({
      key: {
        kty: 'EC',
        crv: 'P-256',
        d: b64u(d),
        x: b64u(uncompressed.subarray(1, 33)),
        y: b64u(uncompressed.subarray(33, 65)),
      },
      format: 'jwk',
    });
  }

  /** Lowercase uncompressed hex: exactly the string clients compare `enclaveQuorumPublic` against. */
  get publicKeyUncompressedHex(): string {
    return toHex(this.publicKeyUncompressed);
  }

  /** Lowercase compressed hex (66 chars). */
  get publicKeyHex(): string {
    return toHex(this.publicKey);
  }

  /**
   * ECDSA-P256-SHA256 over `message`, as 64-byte r‖s. S is normalised to the low half: verifiers
   * that do not care accept either, and verifiers that insist on low-S accept only this one.
   */
  signRaw(message: Uint8Array): Uint8Array {
    const raw = new Uint8Array(nodeSign('sha256', message, { key: this.#key, dsaEncoding: 'ieee-p1363' }));
    const s = bytesToBigInt(raw.subarray(32));
    if (s > HALF_N) raw.set(bigIntToBytes(P256_N - s, 32), 32);
    return raw;
  }

  /** ECDSA-P256-SHA256 over `message`, minimal DER, lowercase hex (the `dataSignature` / stamp form). */
  signDer(message: Uint8Array): string {
    return toHex(rawToDerSignature(this.signRaw(message)));
  }

  /**
   * ECDH with this key: the 32-byte x-coordinate of d·Q, for secrets clients encrypt to the signer's
   * published key (OAuth 2.0 client secrets, docs/reference/bundles.md). Invalid points are rejected.
   */
  ecdh(publicKey: BytesLike): Uint8Array {
    return new Uint8Array(nodeDiffieHellman({ privateKey: this.#key, publicKey: publicKeyObject(publicKey) }));
  }
}

/** One-shot ECDSA-P256-SHA256 signature over `message`, minimal DER lowercase hex. */
export function signP256Der(privateKey: BytesLike, message: Uint8Array): string {
  return new P256Signer(privateKey).signDer(message);
}

/** One-shot ECDSA-P256-SHA256 signature over `message`, 64-byte r‖s. */
export function signP256Raw(privateKey: BytesLike, message: Uint8Array): Uint8Array {
  return new P256Signer(privateKey).signRaw(message);
}
