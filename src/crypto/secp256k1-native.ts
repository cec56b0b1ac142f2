// Loader for libsecp256k1 through the `secp256k1` npm package's native addon.
// Spec: docs/design.md "Stack" (sign with recovery id: native 20.8k/s, WASM 7.5k/s, pure JS 1.8k/s).
//
// Why `secp256k1/bindings` and not `secp256k1`: the package's main entry silently falls back to a
// pure-JS (elliptic) implementation when the addon cannot load. `bindings.js` requires the prebuilt
// addon through node-gyp-build and throws if it is missing, so Sigil fails at start-up instead of
// running ten times slower. The package is CommonJS without type declarations, hence createRequire
// and the narrow interface below (only the calls this folder uses).

import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';

export interface NativeSecp256k1 {
  contextRandomize(seed: Uint8Array | null): void;
  privateKeyVerify(privateKey: Uint8Array): boolean;
  /** Adds `tweak` to `privateKey` IN PLACE (mod n); throws if tweak >= n or the result is zero. */
  privateKeyTweakAdd(privateKey: Uint8Array, tweak: Uint8Array): Uint8Array;
  /** Negates `privateKey` IN PLACE. */
  privateKeyNegate(privateKey: Uint8Array): Uint8Array;
  /** Multiplies `privateKey` by `tweak` IN PLACE (mod n); throws if tweak is zero or >= n. */
  privateKeyTweakMul(privateKey: Uint8Array, tweak: Uint8Array): Uint8Array;
  publicKeyVerify(publicKey: Uint8Array): boolean;
  publicKeyCreate(privateKey: Uint8Array, compressed?: boolean): Uint8Array;
  publicKeyConvert(publicKey: Uint8Array, compressed?: boolean): Uint8Array;
  publicKeyTweakAdd(publicKey: Uint8Array, tweak: Uint8Array, compressed?: boolean): Uint8Array;
  /** RFC 6979 deterministic nonce; libsecp256k1 always returns the low-S form. */
  ecdsaSign(msg32: Uint8Array, privateKey: Uint8Array): { signature: Uint8Array; recid: number };
  ecdsaVerify(signature: Uint8Array, msg32: Uint8Array, publicKey: Uint8Array): boolean;
  ecdsaRecover(signature: Uint8Array, recid: number, msg32: Uint8Array, compressed?: boolean): Uint8Array;
}

const require = createRequire(import.meta.url);

function load(): NativeSecp256k1 {
  const lib = require('secp256k1/bindings') as NativeSecp256k1;
  // Blinding of the context against timing/power side channels, as libsecp256k1 recommends.
  lib.contextRandomize(randomBytes(32));
  return lib;
}

/** The native libsecp256k1 binding. Importing this module throws if the addon is unavailable. */
export const secp256k1Native: NativeSecp256k1 = load();

/** Group order n of secp256k1. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
