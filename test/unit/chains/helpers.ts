// Test-only signer callbacks built on @noble/curves, standing in for key storage.
import { secp256k1, schnorr } from '@noble/curves/secp256k1.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import type { Secp256k1Signer, Ed25519Signer, SchnorrSigner } from '../../../src/chains/signer.js';

export function secpSigner(priv: Uint8Array, calls?: Uint8Array[]): Secp256k1Signer {
  return (digest) => {
    calls?.push(digest);
    const rec = secp256k1.sign(digest, priv, { prehash: false, format: 'recovered', lowS: true });
    return { recovery: rec[0] as 0 | 1, r: rec.slice(1, 33), s: rec.slice(33, 65) };
  };
}

export function edSigner(priv: Uint8Array): Ed25519Signer {
  return (msg) => ed25519.sign(msg, priv);
}

/**
 * BIP341 taproot_tweak_seckey written out on @noble/curves, independent of src/crypto/taproot.ts so a
 * signature made with it checks Sigil's tweak: d' = (P.y even ? d : n - d) + t mod n.
 */
export function bip341TweakSecretKey(secret: Uint8Array, tweak: Uint8Array): Uint8Array {
  const n = secp256k1.Point.CURVE().n;
  let d = BigInt('0x' + toHex(secret));
  if (secp256k1.Point.BASE.multiply(d).y % 2n === 1n) d = n - d;
  const out = (d + BigInt('0x' + toHex(tweak))) % n;
  return Uint8Array.from(Buffer.from(out.toString(16).padStart(64, '0'), 'hex'));
}

/** Zero aux randomness so signatures are reproducible and comparable with btc-signer's own. */
export const ZERO_AUX = new Uint8Array(32);

export function schnorrSigner(priv: Uint8Array): SchnorrSigner {
  return (digest, tweak) => schnorr.sign(digest, tweak ? bip341TweakSecretKey(priv, tweak) : priv, ZERO_AUX);
}

export function hexKey(byte: number): Uint8Array {
  return new Uint8Array(32).fill(byte);
}

export function toHex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}
