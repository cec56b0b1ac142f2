// HD derivation: SLIP-10 vectors (secp256k1 = BIP32 TV1/TV2, nist256p1 incl. retry cases, ed25519),
// path parsing, the pinned all-hardened ed25519 rule, and cross-checks against @scure/bip32 and the
// Sui / Aptos SDKs' own SLIP-10 ed25519 derivation.
import { describe, it, expect } from 'vitest';
import { HDKey } from '@scure/bip32';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { Ed25519PrivateKey } from '@aptos-labs/ts-sdk';
import { deriveKey, masterKeyFromSeed, deriveChild, masterFingerprint, fingerprint } from '../../../src/crypto/hd.js';
import {
  parseDerivationPath,
  canonicalDerivationPath,
  formatDerivationPath,
  HARDENED_OFFSET,
} from '../../../src/crypto/hd-path.js';
import { mnemonicToSeed } from '../../../src/crypto/bip39.js';
import { CryptoInputError } from '../../../src/crypto/errors.js';
import { loadVectors, hex, unhex, MNEMONICS } from './helpers.js';

const slip10 = loadVectors('slip10.json');

describe('SLIP-10 / BIP32 published vectors', () => {
  for (const vector of slip10.vectors) {
    describe(vector.name, () => {
      for (const chain of vector.chains) {
        it(chain.path, () => {
          const key = deriveKey(unhex(vector.seed), vector.curve, chain.path);
          expect(hex(key.privateKey)).toBe(chain.privateKey);
          expect(hex(key.chainCode)).toBe(chain.chainCode);
          const expectedPub = vector.curve === 'CURVE_ED25519' ? chain.publicKey.slice(2) : chain.publicKey;
          expect(hex(key.publicKey)).toBe(expectedPub);
          if (chain.path !== 'm') {
            // The vector's fingerprint is HASH160 of the parent's public key (ed25519: 00 || key).
            const parent = deriveKey(unhex(vector.seed), vector.curve, chain.path.slice(0, chain.path.lastIndexOf('/')));
            const serP = vector.curve === 'CURVE_ED25519' ? new Uint8Array([0, ...parent.publicKey]) : parent.publicKey;
            expect(hex(fingerprint(serP))).toBe(chain.fingerprint);
          }
        });
      }
    });
  }
});

describe('deriveKey shape', () => {
  const seed = mnemonicToSeed(MNEMONICS[0]);

  it('returns compressed and uncompressed SEC1 keys for secp256k1 and P-256, 32 bytes for ed25519', () => {
    const k1 = deriveKey(seed, 'CURVE_SECP256K1', "m/44'/60'/0'/0/0");
    expect(k1.publicKey).toHaveLength(33);
    expect(k1.uncompressedPublicKey).toHaveLength(65);
    const r1 = deriveKey(seed, 'CURVE_P256', "m/44'/60'/0'/0/0");
    expect(r1.publicKey).toHaveLength(33);
    expect(r1.uncompressedPublicKey![0]).toBe(4);
    const ed = deriveKey(seed, 'CURVE_ED25519', "m/44'/501'/0'/0'");
    expect(ed.publicKey).toHaveLength(32);
    expect(ed.uncompressedPublicKey).toBeUndefined();
    expect(ed.path).toBe("m/44'/501'/0'/0'");
  });

  it('derives the master key for path "m"', () => {
    const k = deriveKey(seed, 'CURVE_SECP256K1', 'm');
    expect(hex(k.privateKey)).toBe(hex(HDKey.fromMasterSeed(seed).privateKey!));
  });

  it('curves use different master keys (SLIP-10 HMAC keys)', () => {
    const a = deriveKey(seed, 'CURVE_SECP256K1', "m/0'");
    const b = deriveKey(seed, 'CURVE_P256', "m/0'");
    const c = deriveKey(seed, 'CURVE_ED25519', "m/0'");
    expect(new Set([hex(a.privateKey), hex(b.privateKey), hex(c.privateKey)]).size).toBe(3);
  });

  it('rejects bad seeds and curves', () => {
    expect(() => deriveKey(new Uint8Array(8), 'CURVE_SECP256K1', 'm/0')).toThrow(/invalid seed/);
    expect(() => deriveKey(seed, 'CURVE_FOO' as never, 'm/0')).toThrow(/invalid curve/);
  });
});

describe('secp256k1 BIP32 matches @scure/bip32', () => {
  const paths = ["m/44'/60'/0'/0/0", "m/44'/60'/0'/0/7", "m/84'/0'/0'/1/3", "m/48'/1'/0'/2'/0/0", 'm/0/1/2/3', "m/8797555'/0'/0'", "m/0'/0"];
  for (const mnemonic of MNEMONICS) {
    it(mnemonic.slice(0, 24), () => {
      const seed = mnemonicToSeed(mnemonic);
      const root = HDKey.fromMasterSeed(seed);
      expect(hex(masterFingerprint(seed))).toBe(root.fingerprint.toString(16).padStart(8, '0'));
      for (const path of paths) {
        const ours = deriveKey(seed, 'CURVE_SECP256K1', path);
        const theirs = root.derive(path);
        expect(hex(ours.privateKey), path).toBe(hex(theirs.privateKey!));
        expect(hex(ours.publicKey), path).toBe(hex(theirs.publicKey!));
        expect(hex(ours.chainCode), path).toBe(hex(theirs.chainCode!));
      }
    });
  }

  it('random seeds and paths', () => {
    for (let i = 0; i < 30; i++) {
      const seed = crypto.getRandomValues(new Uint8Array(16 + (i % 49)));
      const indexes = Array.from({ length: 1 + (i % 6) }, (_, j) =>
        (crypto.getRandomValues(new Uint32Array(1))[0]! >>> 1) + (j % 2 ? HARDENED_OFFSET : 0),
      );
      const path = formatDerivationPath(indexes);
      expect(hex(deriveKey(seed, 'CURVE_SECP256K1', path).privateKey), path).toBe(
        hex(HDKey.fromMasterSeed(seed).derive(path).privateKey!),
      );
    }
  });
});

describe('ed25519: every segment is hardened (docs/reference/addresses.md)', () => {
  const seed = mnemonicToSeed(MNEMONICS[0]);

  it("m/44'/501'/0'/0 and m/44'/501'/0'/0' give the same key", () => {
    const soft = deriveKey(seed, 'CURVE_ED25519', "m/44'/501'/0'/0");
    const hard = deriveKey(seed, 'CURVE_ED25519', "m/44'/501'/0'/0'");
    const allSoft = deriveKey(seed, 'CURVE_ED25519', 'm/44/501/0/0');
    expect(hex(soft.privateKey)).toBe(hex(hard.privateKey));
    expect(hex(allSoft.privateKey)).toBe(hex(hard.privateKey));
    expect(soft.path).toBe("m/44'/501'/0'/0'");
  });

  it('deriveChild refuses a non-hardened ed25519 index', () => {
    const master = masterKeyFromSeed('CURVE_ED25519', seed);
    expect(() => deriveChild('CURVE_ED25519', master, 0)).toThrow(/hardened/);
  });

  for (const mnemonic of MNEMONICS) {
    it(`matches the Sui and Aptos SDK derivations (${mnemonic.slice(0, 16)}...)`, () => {
      const s = mnemonicToSeed(mnemonic);
      for (const i of [0, 1, 5]) {
        const suiPath = `m/44'/784'/${i}'/0'/0'`;
        const sui = Ed25519Keypair.deriveKeypair(mnemonic, suiPath);
        expect(hex(deriveKey(s, 'CURVE_ED25519', suiPath).publicKey)).toBe(hex(sui.getPublicKey().toRawBytes()));
        const aptosPath = `m/44'/637'/${i}'/0'/0'`;
        const aptos = Ed25519PrivateKey.fromDerivationPath(aptosPath, mnemonic);
        expect(hex(deriveKey(s, 'CURVE_ED25519', aptosPath).privateKey)).toBe(hex(aptos.toUint8Array()));
      }
    });
  }
});

describe('path parsing', () => {
  it('accepts the usual spellings', () => {
    expect(parseDerivationPath('m')).toEqual([]);
    expect(parseDerivationPath("m/44'/60'/0'/0/0")).toEqual([
      44 + HARDENED_OFFSET,
      60 + HARDENED_OFFSET,
      HARDENED_OFFSET,
      0,
      0,
    ]);
    expect(parseDerivationPath('m/44h/60H/0/2147483647')).toEqual([44 + HARDENED_OFFSET, 60 + HARDENED_OFFSET, 0, 2147483647]);
  });

  it('rejects bad syntax with a clear "invalid path" error', () => {
    const bad = [
      '',
      'M/0',
      '/0',
      '44/0',
      'm/',
      'm//0',
      'm/0/',
      'm/01',
      'm/-1',
      'm/+1',
      'm/1x',
      "m/1''",
      'm/ 1',
      'm/1 ',
      'm/2147483648',
      "m/2147483648'",
      'm/99999999999',
      'm/0x10',
      `m${'/0'.repeat(256)}`,
    ];
    for (const p of bad) {
      let err: unknown;
      try {
        parseDerivationPath(p);
      } catch (e) {
        err = e;
      }
      expect(err, p).toBeInstanceOf(CryptoInputError);
      expect((err as Error).message, p).toMatch(/^invalid path: /);
    }
    expect(() => parseDerivationPath(42 as unknown as string)).toThrow(/invalid path/);
  });

  it('canonical forms identify the same key', () => {
    expect(canonicalDerivationPath('CURVE_SECP256K1', 'm/44h/60H/0h/0/0')).toBe("m/44'/60'/0'/0/0");
    expect(canonicalDerivationPath('CURVE_ED25519', "m/44'/501'/0'/0")).toBe("m/44'/501'/0'/0'");
    expect(canonicalDerivationPath('CURVE_SECP256K1', "m/44'/501'/0'/0")).not.toBe(
      canonicalDerivationPath('CURVE_SECP256K1', "m/44'/501'/0'/0'"),
    );
  });

  it('fingerprint is HASH160 prefix of the public key', () => {
    const seed = mnemonicToSeed(MNEMONICS[1]);
    const k = deriveKey(seed, 'CURVE_SECP256K1', "m/84'/0'/0'");
    const child = HDKey.fromMasterSeed(seed).derive("m/84'/0'/0'/0");
    expect(hex(fingerprint(k.publicKey))).toBe(child.parentFingerprint.toString(16).padStart(8, '0'));
  });
});

describe('speed', () => {
  it('a 5-level secp256k1 derivation agrees with @scure/bip32 (timings printed, not asserted: the machines are noisy)', () => {
    const seed = mnemonicToSeed(MNEMONICS[0]);
    const n = 300;
    let t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) deriveKey(seed, 'CURVE_SECP256K1', `m/44'/60'/0'/0/${i}`);
    const ours = Number(process.hrtime.bigint() - t) / n / 1000;
    t = process.hrtime.bigint();
    for (let i = 0; i < 30; i++) HDKey.fromMasterSeed(seed).derive(`m/44'/60'/0'/0/${i}`);
    const scure = Number(process.hrtime.bigint() - t) / 30 / 1000;
    console.log(`5-level secp256k1 derivation: ${ours.toFixed(0)} µs (node HMAC + libsecp256k1) vs ${scure.toFixed(0)} µs (@scure/bip32)`);
    expect(hex(deriveKey(seed, 'CURVE_SECP256K1', "m/44'/60'/0'/0/7").publicKey)).toBe(hex(HDKey.fromMasterSeed(seed).derive("m/44'/60'/0'/0/7").publicKey!));
  });
});
