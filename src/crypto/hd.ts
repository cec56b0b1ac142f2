// Hierarchical deterministic key derivation from a BIP39 seed, for the three API curves.
// Spec: docs/reference/addresses.md "Derivation": CURVE_SECP256K1 = BIP32 ("Bitcoin seed");
// CURVE_ED25519 = SLIP-10 ed25519 ("ed25519 seed") with EVERY segment treated as hardened;
// CURVE_P256 = SLIP-10 NIST P-256 ("Nist256p1 seed"). SLIP-0010 text: satoshilabs/slips slip-0010.md.
//
// Implementation choice (measured, see test/unit/crypto/hd.test.ts "speed"): HMAC-SHA512 from
// node:crypto and scalar addition in libsecp256k1 (privateKeyTweakAdd) instead of @scure/bip32,
// which does the same in pure JS and is an order of magnitude slower (docs/design.md: 90 µs vs 2.7 ms).
//
// Invalid intermediate keys (IL >= n or a zero child, probability ~2^-127 on secp256k1) follow the
// SLIP-10 retry rule for both secp256k1 and P-256: master: S := I and retry; child: I = HMAC(c,
// 0x01 || IR || ser32(i)) and retry. SLIP-10 states this is compatible with BIP32 wherever BIP32
// yields a key; it differs only where BIP32 libraries would throw. The SLIP-10 "retry" vectors
// for nist256p1 exercise this code path.

import { createHmac } from 'node:crypto';
import { CryptoInputError } from './errors.js';
import type { Curve } from './curves.js';
import { assertCurve } from './curves.js';
import { parseDerivationPath, formatDerivationPath, hardenIndex, HARDENED_OFFSET } from './hd-path.js';
import { secp256k1Native } from './secp256k1-native.js';
import { P256_N, decompressPublicKey, publicKeyFromPrivate } from './keys.js';
import { bigIntToBytes, bytesToBigInt, concatBytes, u32be } from './bytes.js';
import { hash160 } from './hash.js';

const SEED_KEYS: Record<Curve, Buffer> = {
  CURVE_SECP256K1: Buffer.from('Bitcoin seed', 'utf8'),
  CURVE_ED25519: Buffer.from('ed25519 seed', 'utf8'),
  CURVE_P256: Buffer.from('Nist256p1 seed', 'utf8'),
};

/** A private extended key: 32-byte secret and 32-byte chain code. */
export interface ExtendedPrivateKey {
  privateKey: Uint8Array;
  chainCode: Uint8Array;
}

export interface DerivedKey extends ExtendedPrivateKey {
  curve: Curve;
  /** Canonical path actually derived (ed25519: every level hardened). */
  path: string;
  /** Compressed SEC1 (33 bytes) for secp256k1/P-256; the 32-byte key for ed25519. */
  publicKey: Uint8Array;
  /** Uncompressed SEC1 (65 bytes) for secp256k1/P-256; absent for ed25519. */
  uncompressedPublicKey?: Uint8Array;
}

function hmacSha512(key: Uint8Array, data: Uint8Array): Buffer {
  return createHmac('sha512', key).update(data).digest();
}

/** IL is a usable scalar for `curve` (0 < IL < n). */
function validScalar(curve: Curve, il: Uint8Array): boolean {
  if (curve === 'CURVE_SECP256K1') return secp256k1Native.privateKeyVerify(il);
  const d = bytesToBigInt(il);
  return d > 0n && d < P256_N;
}

/** Master key from a seed (BIP32 "Master key generation", SLIP-10 variant with seed retry). */
export function masterKeyFromSeed(curve: Curve, seed: Uint8Array): ExtendedPrivateKey {
  assertCurve(curve);
  if (!(seed instanceof Uint8Array) || seed.length < 16 || seed.length > 64) {
    throw new CryptoInputError('INVALID_SEED', 'invalid seed: expected 16 to 64 bytes');
  }
  let I = hmacSha512(SEED_KEYS[curve], seed);
  if (curve !== 'CURVE_ED25519') {
    while (!validScalar(curve, I.subarray(0, 32))) I = hmacSha512(SEED_KEYS[curve], I);
  }
  const out = { privateKey: new Uint8Array(I.subarray(0, 32)), chainCode: new Uint8Array(I.subarray(32)) };
  I.fill(0);
  return out;
}

/** CKDpriv: one private child. On ed25519 the index must be hardened (SLIP-10). */
export function deriveChild(curve: Curve, parent: ExtendedPrivateKey, index: number): ExtendedPrivateKey {
  if (!Number.isInteger(index) || index < 0 || index > 0xffffffff) {
    throw new CryptoInputError('INVALID_PATH', 'invalid path: child index out of range');
  }
  const hardened = index >= HARDENED_OFFSET;
  const ser32 = u32be(index);
  if (curve === 'CURVE_ED25519') {
    if (!hardened) throw new CryptoInputError('INVALID_PATH', 'invalid path: ed25519 supports hardened derivation only');
    const I = hmacSha512(parent.chainCode, concatBytes(Uint8Array.of(0), parent.privateKey, ser32));
    const out = { privateKey: new Uint8Array(I.subarray(0, 32)), chainCode: new Uint8Array(I.subarray(32)) };
    I.fill(0);
    return out;
  }
  let data = hardened
    ? concatBytes(Uint8Array.of(0), parent.privateKey, ser32)
    : concatBytes(publicKeyFromPrivate(curve, parent.privateKey, true), ser32);
  for (;;) {
    const I = hmacSha512(parent.chainCode, data);
    data.fill(0);
    const il = I.subarray(0, 32);
    const ir = I.subarray(32);
    const child = addScalars(curve, parent.privateKey, il);
    if (child) {
      const out = { privateKey: child, chainCode: new Uint8Array(ir) };
      I.fill(0);
      return out;
    }
    // SLIP-10 step 5: invalid key, rehash with 0x01 || IR || ser32(i).
    data = concatBytes(Uint8Array.of(1), ir, ser32);
    I.fill(0);
  }
}

/** (IL + k) mod n, or null when IL >= n or the sum is zero. */
function addScalars(curve: Curve, k: Uint8Array, il: Uint8Array): Uint8Array | null {
  if (curve === 'CURVE_SECP256K1') {
    const child = new Uint8Array(k); // privateKeyTweakAdd works in place
    try {
      return secp256k1Native.privateKeyTweakAdd(child, il);
    } catch {
      child.fill(0);
      return null; // tweak >= n or result zero
    }
  }
  const t = bytesToBigInt(il);
  if (t >= P256_N) return null;
  const sum = (t + bytesToBigInt(k)) % P256_N;
  return sum === 0n ? null : bigIntToBytes(sum, 32);
}

/** Derive along already-parsed indexes from a master key. */
export function deriveFromMaster(curve: Curve, master: ExtendedPrivateKey, indexes: readonly number[]): ExtendedPrivateKey {
  let node = master;
  for (const index of indexes) {
    const next = deriveChild(curve, node, index);
    if (node !== master) node.privateKey.fill(0);
    node = next;
  }
  return node === master ? { privateKey: new Uint8Array(master.privateKey), chainCode: new Uint8Array(master.chainCode) } : node;
}

/**
 * Derive the account key at `path` from a BIP39 seed on `curve`.
 * ed25519: every level is hardened whatever its spelling (docs/reference/addresses.md).
 */
export function deriveKey(seed: Uint8Array, curve: Curve, path: string): DerivedKey {
  assertCurve(curve);
  let indexes = parseDerivationPath(path);
  if (curve === 'CURVE_ED25519') indexes = indexes.map(hardenIndex);
  const master = masterKeyFromSeed(curve, seed);
  const node = deriveFromMaster(curve, master, indexes);
  master.privateKey.fill(0);
  const publicKey = publicKeyFromPrivate(curve, node.privateKey, true);
  const result: DerivedKey = { curve, path: formatDerivationPath(indexes), privateKey: node.privateKey, chainCode: node.chainCode, publicKey };
  if (curve !== 'CURVE_ED25519') result.uncompressedPublicKey = decompressPublicKey(curve, publicKey);
  return result;
}

/** BIP32 key identifier prefix: first 4 bytes of HASH160(compressed public key). */
export function fingerprint(compressedPublicKey: Uint8Array): Uint8Array {
  return hash160(compressedPublicKey).slice(0, 4);
}

/** Fingerprint of the master key of `seed` (what PSBT bip32Derivation entries reference). */
export function masterFingerprint(seed: Uint8Array, curve: Curve = 'CURVE_SECP256K1'): Uint8Array {
  if (curve === 'CURVE_ED25519') throw new CryptoInputError('INVALID_CURVE', 'invalid curve: fingerprints are defined for SEC1 curves');
  const master = masterKeyFromSeed(curve, seed);
  try {
    return fingerprint(publicKeyFromPrivate(curve, master.privateKey, true));
  } finally {
    master.privateKey.fill(0);
  }
}
