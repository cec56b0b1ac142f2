// BIP340 Schnorr signing on libsecp256k1 primitives.
// Spec: BIP-0340 "Default Signing" (nonce from tagged hashes of the key, aux randomness and
// message; R and P with even y; s = k + e*d mod n); docs/reference/addresses.md (P2TR: BIP340 with the
// BIP341 tweak, applied by the caller via taproot.ts).
//
// Why not @noble/curves' schnorr.sign: pure JS, three scalar multiplications per signature
// (~4 ms here). Here the two point multiplications (P = d*G, R = k*G) and the scalar arithmetic
// (negate, multiply, add mod n) run in the native addon. Tests check every BIP340 signing vector
// byte for byte and verify random signatures with @noble/curves and tiny-secp256k1.

import { randomBytes } from 'node:crypto';
import { CryptoInputError } from './errors.js';
import { secp256k1Native, SECP256K1_N } from './secp256k1-native.js';
import { bigIntToBytes, bytesToBigInt, concatBytes } from './bytes.js';
import { taggedHash } from './taproot.js';

/** BIP340 signature (64 bytes: x(R) || s) of the 32-byte `message` with secret key `privateKey`. */
export function schnorrSignNative(privateKey: Uint8Array, message: Uint8Array, auxRand?: Uint8Array): Uint8Array {
  if (message.length !== 32) throw new CryptoInputError('INVALID_PAYLOAD', 'invalid payload: the message to sign must be 32 bytes');
  if (!secp256k1Native.privateKeyVerify(privateKey)) {
    throw new CryptoInputError('INVALID_PRIVATE_KEY', 'invalid private key for CURVE_SECP256K1');
  }
  const aux = auxRand ?? new Uint8Array(randomBytes(32));
  if (aux.length !== 32) throw new CryptoInputError('INVALID_PAYLOAD', 'invalid auxiliary randomness: expected 32 bytes');

  // d = d' if P = d'G has even y, else n - d'.
  const P = secp256k1Native.publicKeyCreate(privateKey, true);
  const px = P.subarray(1);
  const d = new Uint8Array(privateKey);
  if (P[0] === 3) secp256k1Native.privateKeyNegate(d);
  try {
    // t = bytes(d) xor hash_aux(a); rand = hash_nonce(t || bytes(P) || m); k' = int(rand) mod n.
    const t = taggedHash('BIP0340/aux', aux);
    for (let i = 0; i < 32; i++) t[i]! ^= d[i]!;
    const kPrime = bytesToBigInt(taggedHash('BIP0340/nonce', t, px, message)) % SECP256K1_N;
    t.fill(0);
    if (kPrime === 0n) throw new Error('BIP340 nonce is zero'); // probability ~2^-256
    const k = bigIntToBytes(kPrime, 32);
    const R = secp256k1Native.publicKeyCreate(k, true);
    if (R[0] === 3) secp256k1Native.privateKeyNegate(k); // k = n - k' when R has odd y
    const rx = R.subarray(1);
    // e = int(hash_challenge(bytes(R) || bytes(P) || m)) mod n; s = (k + e*d) mod n.
    const e = bigIntToBytes(bytesToBigInt(taggedHash('BIP0340/challenge', rx, px, message)) % SECP256K1_N, 32);
    let s: Uint8Array;
    if (e.every((b) => b === 0)) {
      s = k; // e = 0 (probability ~2^-256): s = k
    } else {
      const ed = secp256k1Native.privateKeyTweakMul(new Uint8Array(d), e);
      s = secp256k1Native.privateKeyTweakAdd(ed, k);
    }
    const sig = concatBytes(rx, s);
    k.fill(0);
    return sig;
  } finally {
    d.fill(0);
  }
}
