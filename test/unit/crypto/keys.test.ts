// Keys per curve: public key derivation vs @noble/curves, SEC1 (de)compression, validation, and the
// native secp256k1 binding (never the JS fallback).
import { describe, it, expect } from 'vitest';
import { createRequire } from 'node:module';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { p256 } from '@noble/curves/nist.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import {
  publicKeyFromPrivate,
  normalizePublicKey,
  compressPublicKey,
  decompressPublicKey,
  isValidPrivateKey,
  isValidPublicKey,
  P256_N,
} from '../../../src/crypto/keys.js';
import { secp256k1Native } from '../../../src/crypto/secp256k1-native.js';
import { hashPayload } from '../../../src/crypto/hash.js';
import { fromHex, toHex } from '../../../src/crypto/bytes.js';
import { hex } from './helpers.js';

describe('native secp256k1 binding', () => {
  it('is the compiled addon, not the elliptic fallback', () => {
    const require = createRequire(import.meta.url);
    const pkgMain = require('secp256k1'); // main entry falls back to JS when the addon is missing
    const bindings = require('secp256k1/bindings');
    expect(secp256k1Native).toBe(bindings);
    expect(pkgMain).toBe(bindings); // the main entry resolved to the addon too, so it loaded
  });
});

describe('publicKeyFromPrivate', () => {
  it('matches @noble/curves on every curve', () => {
    for (let i = 0; i < 20; i++) {
      const k1 = secp256k1.utils.randomSecretKey();
      expect(hex(publicKeyFromPrivate('CURVE_SECP256K1', k1))).toBe(hex(secp256k1.getPublicKey(k1, true)));
      expect(hex(publicKeyFromPrivate('CURVE_SECP256K1', k1, false))).toBe(hex(secp256k1.getPublicKey(k1, false)));
      const r1 = p256.utils.randomSecretKey();
      expect(hex(publicKeyFromPrivate('CURVE_P256', r1))).toBe(hex(p256.getPublicKey(r1, true)));
      expect(hex(publicKeyFromPrivate('CURVE_P256', r1, false))).toBe(hex(p256.getPublicKey(r1, false)));
      const ed = ed25519.utils.randomSecretKey();
      expect(hex(publicKeyFromPrivate('CURVE_ED25519', ed))).toBe(hex(ed25519.getPublicKey(ed)));
    }
  });
});

describe('SEC1 forms', () => {
  it('round-trips compressed <-> uncompressed for secp256k1 and P-256', () => {
    for (const [curve, lib] of [
      ['CURVE_SECP256K1', secp256k1],
      ['CURVE_P256', p256],
    ] as const) {
      const sk = lib.utils.randomSecretKey();
      const c = lib.getPublicKey(sk, true);
      const u = lib.getPublicKey(sk, false);
      expect(hex(decompressPublicKey(curve, c))).toBe(hex(u));
      expect(hex(compressPublicKey(curve, u))).toBe(hex(c));
      const forms = normalizePublicKey(curve, u);
      expect(hex(forms.compressed)).toBe(hex(c));
    }
  });

  it('rejects points that are not on the curve and wrong lengths', () => {
    const u = p256.getPublicKey(p256.utils.randomSecretKey(), false);
    u[64]! ^= 1; // y no longer matches x
    expect(isValidPublicKey('CURVE_P256', u)).toBe(false);
    const k = secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), false);
    k[64]! ^= 1;
    expect(isValidPublicKey('CURVE_SECP256K1', k)).toBe(false);
    expect(isValidPublicKey('CURVE_SECP256K1', new Uint8Array(32))).toBe(false);
    expect(isValidPublicKey('CURVE_ED25519', new Uint8Array(33))).toBe(false);
    expect(() => decompressPublicKey('CURVE_ED25519', ed25519.getPublicKey(ed25519.utils.randomSecretKey()))).toThrow(
      /no uncompressed form/,
    );
  });
});

describe('private key validation', () => {
  it('enforces 0 < d < n for SEC1 curves, any 32 bytes for ed25519', () => {
    const nMinus1 = fromHex((P256_N - 1n).toString(16));
    expect(isValidPrivateKey('CURVE_P256', nMinus1)).toBe(true);
    expect(isValidPrivateKey('CURVE_P256', fromHex(P256_N.toString(16)))).toBe(false);
    expect(isValidPrivateKey('CURVE_SECP256K1', new Uint8Array(32))).toBe(false);
    expect(isValidPrivateKey('CURVE_SECP256K1', new Uint8Array(32).fill(0xff))).toBe(false);
    expect(isValidPrivateKey('CURVE_ED25519', new Uint8Array(32))).toBe(true);
    expect(isValidPrivateKey('CURVE_ED25519', new Uint8Array(31))).toBe(false);
  });
});

describe('hashPayload and hex helpers', () => {
  it('hashes per hash function and rejects unknown ones', () => {
    const data = new TextEncoder().encode('abc');
    expect(toHex(hashPayload('HASH_FUNCTION_SHA256', data))).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(toHex(hashPayload('HASH_FUNCTION_KECCAK256', data))).toBe('4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45');
    expect(hashPayload('HASH_FUNCTION_NO_OP', data)).toBe(data);
    expect(() => hashPayload('HASH_FUNCTION_SHA512', data)).toThrow(/invalid hash function/);
  });

  it('parses hex with or without 0x and refuses junk', () => {
    expect(toHex(fromHex('0xABcd'))).toBe('abcd');
    expect(toHex(fromHex('abcd'))).toBe('abcd');
    expect(() => fromHex('abc')).toThrow(/invalid hex/);
    expect(() => fromHex('zz')).toThrow(/invalid hex/);
  });
});
