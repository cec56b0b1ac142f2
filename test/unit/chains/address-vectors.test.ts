// Published address vectors: BIP84 / BIP49 / BIP86 examples, Stellar SEP-0005, Spark identity.
import { describe, it, expect } from 'vitest';
import { base58check } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';
import { bech32m } from 'bech32';
import { StrKey } from '@stellar/stellar-base';
import { encodeAddress } from '../../../src/chains/addresses/index.js';
import { stellarSecretSeed } from '../../../src/chains/addresses/stellar.js';
import { p2wpkhScript } from '../../../src/chains/addresses/bitcoin.js';
import { taprootOutputKey } from '../../../src/crypto/taproot.js';
import { deriveKey } from '../../../src/crypto/hd.js';
import { mnemonicToSeed } from '../../../src/crypto/bip39.js';
import { hash160 } from '../../../src/crypto/hash.js';
import { loadVectors, hex } from '../crypto/helpers.js';

const bips = loadVectors('bitcoin-bips.json');
const sep5 = loadVectors('stellar-sep0005.json');
const spark = loadVectors('spark.json');

describe('BIP84 / BIP49 / BIP86 test vectors', () => {
  const seed = mnemonicToSeed(bips.mnemonic);
  const wif = base58check(sha256);

  for (const v of bips.bip84) {
    it(`BIP84 ${v.path}`, () => {
      const k = deriveKey(seed, 'CURVE_SECP256K1', v.path);
      expect(hex(k.publicKey)).toBe(v.pubkey);
      const raw = wif.decode(v.privkeyWif); // 0x80 || key || 0x01 (compressed)
      expect(hex(k.privateKey)).toBe(hex(raw.slice(1, 33)));
      expect(encodeAddress(v.addressFormat, 'CURVE_SECP256K1', k.publicKey)).toBe(v.address);
    });
  }

  for (const v of bips.bip49) {
    it(`BIP49 ${v.path} (P2SH is P2SH-P2WPKH)`, () => {
      const k = deriveKey(seed, 'CURVE_SECP256K1', v.path);
      expect(hex(k.privateKey)).toBe(v.privkeyHex);
      expect(hex(k.publicKey)).toBe(v.pubkey);
      expect(hex(hash160(k.publicKey))).toBe(v.keyhash);
      expect(hex(hash160(p2wpkhScript(k.publicKey)))).toBe(v.addressBytes);
      expect(encodeAddress(v.addressFormat, 'CURVE_SECP256K1', k.publicKey)).toBe(v.address);
    });
  }

  for (const v of bips.bip86) {
    it(`BIP86 ${v.path} (P2TR key path, no script tree)`, () => {
      const k = deriveKey(seed, 'CURVE_SECP256K1', v.path);
      expect(hex(k.publicKey.slice(1))).toBe(v.internalKey);
      expect(hex(taprootOutputKey(k.publicKey).outputKey)).toBe(v.outputKey);
      expect(encodeAddress(v.addressFormat, 'CURVE_SECP256K1', k.publicKey)).toBe(v.address);
    });
  }
});

describe('Stellar SEP-0005 test vectors', () => {
  for (const t of sep5.tests) {
    it(t.name, () => {
      const seed = mnemonicToSeed(t.mnemonic, t.passphrase);
      expect(hex(seed)).toBe(t.seed);
      expect(hex(deriveKey(seed, 'CURVE_ED25519', "m/44'/148'").privateKey)).toBe(t.m44h148h);
      for (const [path, address, secret] of t.keys as [string, string, string][]) {
        const k = deriveKey(seed, 'CURVE_ED25519', path);
        expect(encodeAddress('ADDRESS_FORMAT_XLM', 'CURVE_ED25519', k.publicKey), path).toBe(address);
        expect(stellarSecretSeed(k.privateKey), path).toBe(secret);
        expect(StrKey.decodeEd25519SecretSeed(secret)).toEqual(Buffer.from(k.privateKey));
      }
    });
  }
});

describe('Spark identity addresses', () => {
  for (const v of spark.fromPublicKey) {
    it(`public key ${v.publicKey.slice(0, 12)}...`, () => {
      expect(encodeAddress(v.addressFormat, 'CURVE_SECP256K1', Buffer.from(v.publicKey, 'hex'))).toBe(v.address);
    });
  }
  for (const v of spark.fromMnemonic) {
    it(`mnemonic at ${v.path}`, () => {
      const k = deriveKey(mnemonicToSeed(v.mnemonic, v.passphrase), 'CURVE_SECP256K1', v.path);
      expect(encodeAddress(v.addressFormat, 'CURVE_SECP256K1', k.publicKey)).toBe(v.address);
    });
  }

  it('decodes with an independent bech32m implementation to 0x0a 0x21 || identity key, HRP spark / sparkrt', () => {
    const k = deriveKey(mnemonicToSeed(spark.fromMnemonic[0].mnemonic), 'CURVE_SECP256K1', "m/8797555'/1'/0'");
    for (const [format, hrp] of [
      ['ADDRESS_FORMAT_SPARK_MAINNET', 'spark'],
      ['ADDRESS_FORMAT_SPARK_REGTEST', 'sparkrt'],
    ] as const) {
      const addr = encodeAddress(format, 'CURVE_SECP256K1', k.publicKey);
      const decoded = bech32m.decode(addr, 200);
      expect(decoded.prefix).toBe(hrp);
      expect(hex(Uint8Array.from(bech32m.fromWords(decoded.words)))).toBe('0a21' + hex(k.publicKey));
    }
  });
});
