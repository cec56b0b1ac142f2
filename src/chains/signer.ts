// Signer callbacks: how the transaction code asks for a signature without touching key storage.
// The caller (src/domain) decrypts the key and hands in a closure; this folder never sees a private key.
// Signing rules follow docs/reference/addresses.md "Signatures": secp256k1 ECDSA with RFC 6979 nonces,
// low-S and a recovery id; Ed25519 per RFC 8032; BIP340 Schnorr with the BIP341 tweak for taproot.
// The callbacks are synchronous on purpose: native/WASM secp256k1 and node:crypto Ed25519 are
// synchronous, and a synchronous API keeps parse → policy → sign one straight line.

import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToBigInt } from '../crypto/bytes.js';
import { TransactionError, type TxChain } from './errors.js';

/** ECDSA over secp256k1 on a 32-byte digest (no further hashing). */
export interface Secp256k1Signature {
  r: Uint8Array; // 32 bytes, big-endian
  s: Uint8Array; // 32 bytes, big-endian, low-S expected (normalized here anyway)
  recovery: 0 | 1; // parity of R.y, i.e. Ethereum yParity
}
export type Secp256k1Signer = (digest32: Uint8Array) => Secp256k1Signature;

/** RFC 8032 Ed25519 over the whole message; returns the 64-byte signature R‖S. */
export type Ed25519Signer = (message: Uint8Array) => Uint8Array;

/**
 * BIP340 Schnorr over a 32-byte digest. `tweak` is the 32-byte BIP341 TapTweak hash
 * t = taggedHash("TapTweak", xonly(P) ‖ merkleRoot); when given, the signer must sign with the
 * tweaked secret (see `taprootTweakPrivateKey` in src/crypto/taproot.ts). Returns the 64-byte signature.
 */
export type SchnorrSigner = (digest32: Uint8Array, tweak?: Uint8Array) => Uint8Array;

const N = secp256k1.Point.CURVE().n;
const HALF_N = N >> 1n;

function to32(n: bigint): Uint8Array {
  return Uint8Array.from(Buffer.from(n.toString(16).padStart(64, '0'), 'hex'));
}

/** A validated, low-S ECDSA signature as integers and 32-byte arrays. */
export interface NormalizedEcdsa {
  r: bigint;
  s: bigint;
  r32: Uint8Array;
  s32: Uint8Array;
  recovery: 0 | 1;
}

/**
 * Calls the secp256k1 signer and checks its answer: r and s in [1, n), 32 bytes each. A high-S
 * answer is turned into its low-S twin (s → n − s flips the recovery id), because every chain here
 * (Ethereum since Homestead, Bitcoin standardness, Tron) wants low-S.
 */
export function callSecp256k1Signer(chain: TxChain, signer: Secp256k1Signer, digest32: Uint8Array): NormalizedEcdsa {
  if (digest32.length !== 32) throw new Error('digest must be 32 bytes');
  const sig = signer(digest32);
  if (
    !sig ||
    !(sig.r instanceof Uint8Array) ||
    !(sig.s instanceof Uint8Array) ||
    sig.r.length !== 32 ||
    sig.s.length !== 32 ||
    (sig.recovery !== 0 && sig.recovery !== 1)
  ) {
    throw new TransactionError(chain, 'SIGNER_FAILURE', 'secp256k1 signer returned a malformed signature');
  }
  const r = bytesToBigInt(sig.r);
  let s = bytesToBigInt(sig.s);
  let recovery: 0 | 1 = sig.recovery;
  if (r === 0n || r >= N || s === 0n || s >= N) {
    throw new TransactionError(chain, 'SIGNER_FAILURE', 'secp256k1 signer returned an out-of-range signature');
  }
  if (s > HALF_N) {
    s = N - s;
    recovery = recovery === 0 ? 1 : 0;
  }
  return { r, s, r32: to32(r), s32: to32(s), recovery };
}

export function callEd25519Signer(chain: TxChain, signer: Ed25519Signer, message: Uint8Array): Uint8Array {
  const sig = signer(message);
  if (!(sig instanceof Uint8Array) || sig.length !== 64) {
    throw new TransactionError(chain, 'SIGNER_FAILURE', 'ed25519 signer returned a malformed signature');
  }
  return sig;
}

export function callSchnorrSigner(chain: TxChain, signer: SchnorrSigner, digest32: Uint8Array, tweak?: Uint8Array): Uint8Array {
  const sig = signer(digest32, tweak);
  if (!(sig instanceof Uint8Array) || sig.length !== 64) {
    throw new TransactionError(chain, 'SIGNER_FAILURE', 'schnorr signer returned a malformed signature');
  }
  return sig;
}
