// Test-only signer callbacks built on @noble/curves, standing in for key storage.
import { secp256k1, schnorr } from '@noble/curves/secp256k1.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import type { Secp256k1Signer, Ed25519Signer, SchnorrSigner } from '../../../src/chains/signer.js';
import { bip341TweakSecretKey } from '../../../src/chains/bitcoin/psbt.js';

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
