// Every address format against the chain's own library, on several mnemonics and paths, plus the
// curve/format table, the swagger enum, and error cases. Libraries only ever see our derived key
// (usually the private key, so they also recompute the public key independently).
import { describe, it, expect } from 'vitest';
import { publicKeyToAddress, privateKeyToAddress } from 'viem/accounts';
import { computeAddress } from 'ethers';
import { Keypair as SolanaKeypair } from '@solana/web3.js';
import { encodeSecp256k1Pubkey, pubkeyToAddress } from '@cosmjs/amino';
import { TronWeb } from 'tronweb';
import { Ed25519Keypair } from '@mysten/sui/keypairs/ed25519';
import { Ed25519PrivateKey } from '@aptos-labs/ts-sdk';
import { Keypair as StellarKeypair } from '@stellar/stellar-base';
import { deriveAddress as rippleDeriveAddress } from 'ripple-keypairs';
import * as bitcoin from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import * as btc from '@scure/btc-signer';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { p256 } from '@noble/curves/nist.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { readFileSync } from 'node:fs';
import {
  ADDRESS_FORMATS,
  ADDRESS_FORMAT_TABLE,
  encodeAddress,
  curvesForAddressFormat,
  type AddressFormat,
} from '../../../src/chains/addresses/index.js';
import { deriveKey } from '../../../src/crypto/hd.js';
import { mnemonicToSeed, generateMnemonic } from '../../../src/crypto/bip39.js';
import { CryptoInputError } from '../../../src/crypto/errors.js';
import { hex, MNEMONICS } from '../crypto/helpers.js';

bitcoin.initEccLib(ecc);

// Two fixed mnemonics (BIP39 vectors) and one fresh per run; a failure message names the mnemonic.
const mnemonics = [MNEMONICS[0], MNEMONICS[1], generateMnemonic(24)];

function keyAt(mnemonic: string, curve: 'CURVE_SECP256K1' | 'CURVE_ED25519' | 'CURVE_P256', path: string) {
  return deriveKey(mnemonicToSeed(mnemonic), curve, path);
}

const ACCOUNTS = [0, 1, 7];

describe('address format table', () => {
  it('lists exactly the swagger v1AddressFormat enum, in order', () => {
    const defs = JSON.parse(readFileSync(new URL('../../../src/schemas/turnkey-definitions.json', import.meta.url), 'utf8'));
    expect([...ADDRESS_FORMATS]).toEqual(defs.definitions.v1AddressFormat.enum);
    expect(ADDRESS_FORMATS).toHaveLength(38);
    expect(Object.keys(ADDRESS_FORMAT_TABLE).sort()).toEqual([...ADDRESS_FORMATS].sort());
  });

  it('pins the curve of every format (docs/reference/addresses.md)', () => {
    const ed = ['SOLANA', 'SUI', 'APTOS', 'XLM', 'TON_V3R2', 'TON_V4R2', 'TON_V5R1'];
    for (const f of ADDRESS_FORMATS) {
      const short = f.replace('ADDRESS_FORMAT_', '');
      const expected =
        short === 'COMPRESSED'
          ? ['CURVE_SECP256K1', 'CURVE_ED25519', 'CURVE_P256']
          : short === 'UNCOMPRESSED'
            ? ['CURVE_SECP256K1', 'CURVE_P256']
            : ed.includes(short)
              ? ['CURVE_ED25519']
              : ['CURVE_SECP256K1'];
      expect([...curvesForAddressFormat(f)].sort(), f).toEqual(expected.sort());
    }
  });

  it('rejects a curve that does not fit the format with a clear error', () => {
    const m = MNEMONICS[0];
    const ed = keyAt(m, 'CURVE_ED25519', "m/44'/501'/0'/0'").publicKey;
    const k1 = keyAt(m, 'CURVE_SECP256K1', "m/44'/60'/0'/0/0").publicKey;
    const r1 = keyAt(m, 'CURVE_P256', "m/44'/60'/0'/0/0").publicKey;
    const cases: [string, string, Uint8Array][] = [
      ['ADDRESS_FORMAT_ETHEREUM', 'CURVE_ED25519', ed],
      ['ADDRESS_FORMAT_ETHEREUM', 'CURVE_P256', r1],
      ['ADDRESS_FORMAT_SOLANA', 'CURVE_SECP256K1', k1],
      ['ADDRESS_FORMAT_UNCOMPRESSED', 'CURVE_ED25519', ed],
      ['ADDRESS_FORMAT_SPARK_MAINNET', 'CURVE_ED25519', ed],
      ['ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR', 'CURVE_P256', r1],
      ['ADDRESS_FORMAT_TON_V4R2', 'CURVE_SECP256K1', k1],
    ];
    for (const [format, curve, pk] of cases) {
      let err: unknown;
      try {
        encodeAddress(format, curve, pk);
      } catch (e) {
        err = e;
      }
      expect(err, `${format} ${curve}`).toBeInstanceOf(CryptoInputError);
      expect((err as CryptoInputError).code).toBe('CURVE_MISMATCH');
      expect((err as Error).message).toContain(format);
      expect((err as Error).message).toContain(curve);
    }
  });

  it('rejects unknown formats and curves, and keys that are not curve points', () => {
    const k1 = keyAt(MNEMONICS[0], 'CURVE_SECP256K1', "m/44'/60'/0'/0/0").publicKey;
    expect(() => encodeAddress('ADDRESS_FORMAT_DOGECOIN', 'CURVE_SECP256K1', k1)).toThrow(/invalid address format/);
    expect(() => encodeAddress('ADDRESS_FORMAT_ETHEREUM', 'CURVE_BLS', k1)).toThrow(/invalid curve/);
    const offCurve = new Uint8Array(33).fill(0xff);
    offCurve[0] = 2;
    expect(() => encodeAddress('ADDRESS_FORMAT_ETHEREUM', 'CURVE_SECP256K1', offCurve)).toThrow(/invalid public key/);
    expect(() => encodeAddress('ADDRESS_FORMAT_ETHEREUM', 'CURVE_SECP256K1', k1.slice(1))).toThrow(/invalid public key/);
    // about half of all 32-byte strings are not ed25519 points; find one and expect a refusal
    let notPoint: Uint8Array | null = null;
    for (let i = 0; !notPoint; i++) {
      const c = new Uint8Array(32).fill(i);
      try {
        ed25519.Point.fromBytes(c);
      } catch {
        notPoint = c;
      }
    }
    expect(() => encodeAddress('ADDRESS_FORMAT_SOLANA', 'CURVE_ED25519', notPoint!)).toThrow(/invalid public key/);
  });

  it('accepts either SEC1 form of a key and gives the same address', () => {
    const k = keyAt(MNEMONICS[1], 'CURVE_SECP256K1', "m/44'/60'/0'/0/0");
    for (const f of ['ADDRESS_FORMAT_ETHEREUM', 'ADDRESS_FORMAT_BITCOIN_MAINNET_P2TR', 'ADDRESS_FORMAT_COMPRESSED'] as const) {
      expect(encodeAddress(f, 'CURVE_SECP256K1', k.uncompressedPublicKey!)).toBe(encodeAddress(f, 'CURVE_SECP256K1', k.publicKey));
    }
  });
});

describe.each(mnemonics)('mnemonic %s', (mnemonic) => {
  it('ETHEREUM = viem and ethers (EIP-55)', () => {
    for (const i of ACCOUNTS) {
      const k = keyAt(mnemonic, 'CURVE_SECP256K1', `m/44'/60'/0'/0/${i}`);
      const ours = encodeAddress('ADDRESS_FORMAT_ETHEREUM', 'CURVE_SECP256K1', k.publicKey);
      expect(ours).toBe(privateKeyToAddress(`0x${hex(k.privateKey)}`));
      expect(ours).toBe(publicKeyToAddress(`0x${hex(k.uncompressedPublicKey!)}`));
      expect(ours).toBe(computeAddress(`0x${hex(k.publicKey)}`));
    }
  });

  it('SOLANA = @solana/web3.js', () => {
    for (const i of ACCOUNTS) {
      const k = keyAt(mnemonic, 'CURVE_ED25519', `m/44'/501'/${i}'/0'`);
      expect(encodeAddress('ADDRESS_FORMAT_SOLANA', 'CURVE_ED25519', k.publicKey)).toBe(
        SolanaKeypair.fromSeed(k.privateKey).publicKey.toBase58(),
      );
    }
  });

  it('COSMOS and SEI = @cosmjs/amino', () => {
    for (const i of ACCOUNTS) {
      const k = keyAt(mnemonic, 'CURVE_SECP256K1', `m/44'/118'/0'/0/${i}`);
      const pub = encodeSecp256k1Pubkey(secp256k1.getPublicKey(k.privateKey, true));
      expect(encodeAddress('ADDRESS_FORMAT_COSMOS', 'CURVE_SECP256K1', k.publicKey)).toBe(pubkeyToAddress(pub, 'cosmos'));
      expect(encodeAddress('ADDRESS_FORMAT_SEI', 'CURVE_SECP256K1', k.publicKey)).toBe(pubkeyToAddress(pub, 'sei'));
    }
  });

  it('TRON = tronweb', () => {
    for (const i of ACCOUNTS) {
      const k = keyAt(mnemonic, 'CURVE_SECP256K1', `m/44'/195'/0'/0/${i}`);
      const ours = encodeAddress('ADDRESS_FORMAT_TRON', 'CURVE_SECP256K1', k.publicKey);
      expect(ours).toBe(TronWeb.address.fromPrivateKey(hex(k.privateKey)));
      expect(ours.startsWith('T')).toBe(true);
    }
  });

  it('SUI = @mysten/sui', () => {
    for (const i of ACCOUNTS) {
      const k = keyAt(mnemonic, 'CURVE_ED25519', `m/44'/784'/${i}'/0'/0'`);
      expect(encodeAddress('ADDRESS_FORMAT_SUI', 'CURVE_ED25519', k.publicKey)).toBe(
        Ed25519Keypair.fromSecretKey(k.privateKey).toSuiAddress(),
      );
    }
  });

  it('APTOS = @aptos-labs/ts-sdk (64 hex digits)', () => {
    for (const i of ACCOUNTS) {
      const k = keyAt(mnemonic, 'CURVE_ED25519', `m/44'/637'/${i}'/0'/0'`);
      const ours = encodeAddress('ADDRESS_FORMAT_APTOS', 'CURVE_ED25519', k.publicKey);
      expect(ours).toBe(new Ed25519PrivateKey(k.privateKey).publicKey().authKey().derivedAddress().toStringLong());
      expect(ours).toMatch(/^0x[0-9a-f]{64}$/);
    }
  });

  it('XLM = @stellar/stellar-base', () => {
    for (const i of ACCOUNTS) {
      const k = keyAt(mnemonic, 'CURVE_ED25519', `m/44'/148'/${i}'`);
      expect(encodeAddress('ADDRESS_FORMAT_XLM', 'CURVE_ED25519', k.publicKey)).toBe(
        StellarKeypair.fromRawEd25519Seed(Buffer.from(k.privateKey)).publicKey(),
      );
    }
  });

  it('XRP = ripple-keypairs', () => {
    for (const i of ACCOUNTS) {
      const k = keyAt(mnemonic, 'CURVE_SECP256K1', `m/44'/144'/0'/0/${i}`);
      const ours = encodeAddress('ADDRESS_FORMAT_XRP', 'CURVE_SECP256K1', k.publicKey);
      expect(ours).toBe(rippleDeriveAddress(hex(k.publicKey).toUpperCase()));
      expect(ours.startsWith('r')).toBe(true);
    }
  });

  it('DOGE mainnet/testnet = bitcoinjs-lib with Dogecoin network parameters', () => {
    const doge = (pubKeyHash: number, scriptHash: number, wif: number): bitcoin.Network => ({
      messagePrefix: '\x19Dogecoin Signed Message:\n',
      bech32: 'doge',
      bip32: { public: 0x02facafd, private: 0x02fac398 },
      pubKeyHash,
      scriptHash,
      wif,
    });
    for (const i of ACCOUNTS) {
      const main = keyAt(mnemonic, 'CURVE_SECP256K1', `m/44'/3'/0'/0/${i}`);
      const ours = encodeAddress('ADDRESS_FORMAT_DOGE_MAINNET', 'CURVE_SECP256K1', main.publicKey);
      expect(ours).toBe(bitcoin.payments.p2pkh({ pubkey: main.publicKey, network: doge(0x1e, 0x16, 0x9e) }).address);
      expect(ours.startsWith('D')).toBe(true);
      const test = keyAt(mnemonic, 'CURVE_SECP256K1', `m/44'/1'/0'/0/${i}`);
      const ourTest = encodeAddress('ADDRESS_FORMAT_DOGE_TESTNET', 'CURVE_SECP256K1', test.publicKey);
      expect(ourTest).toBe(bitcoin.payments.p2pkh({ pubkey: test.publicKey, network: doge(0x71, 0xc4, 0xf1) }).address);
      expect(ourTest.startsWith('n')).toBe(true);
    }
  });

  const NETS = {
    MAINNET: { coin: 0, js: bitcoin.networks.bitcoin, scure: btc.NETWORK },
    TESTNET: { coin: 1, js: bitcoin.networks.testnet, scure: btc.TEST_NETWORK },
    SIGNET: { coin: 1, js: bitcoin.networks.testnet, scure: btc.TEST_NETWORK },
    REGTEST: { coin: 1, js: bitcoin.networks.regtest, scure: { ...btc.TEST_NETWORK, bech32: 'bcrt' } },
  } as const;

  for (const [net, p] of Object.entries(NETS)) {
    it(`BITCOIN_${net}: all 5 kinds = bitcoinjs-lib and @scure/btc-signer`, () => {
      for (const i of ACCOUNTS) {
        const fmt = (kind: string) => `ADDRESS_FORMAT_BITCOIN_${net}_${kind}` as AddressFormat;
        const enc = (kind: string, path: string) => {
          const k = keyAt(mnemonic, 'CURVE_SECP256K1', path);
          return { ours: encodeAddress(fmt(kind), 'CURVE_SECP256K1', k.publicKey), pk: secp256k1.getPublicKey(k.privateKey, true) };
        };
        // P2PKH
        let r = enc('P2PKH', `m/44'/${p.coin}'/0'/0/${i}`);
        expect(r.ours).toBe(bitcoin.payments.p2pkh({ pubkey: r.pk, network: p.js }).address);
        expect(r.ours).toBe(btc.p2pkh(r.pk, p.scure).address);
        // P2SH = P2SH-P2WPKH
        r = enc('P2SH', `m/49'/${p.coin}'/0'/0/${i}`);
        expect(r.ours).toBe(
          bitcoin.payments.p2sh({ redeem: bitcoin.payments.p2wpkh({ pubkey: r.pk, network: p.js }), network: p.js }).address,
        );
        expect(r.ours).toBe(btc.p2sh(btc.p2wpkh(r.pk, p.scure), p.scure).address);
        // P2WPKH
        r = enc('P2WPKH', `m/84'/${p.coin}'/0'/0/${i}`);
        expect(r.ours).toBe(bitcoin.payments.p2wpkh({ pubkey: r.pk, network: p.js }).address);
        expect(r.ours).toBe(btc.p2wpkh(r.pk, p.scure).address);
        // P2WSH = 1-of-1 multisig
        r = enc('P2WSH', `m/48'/${p.coin}'/0'/2'/0/${i}`);
        expect(r.ours).toBe(
          bitcoin.payments.p2wsh({ redeem: bitcoin.payments.p2ms({ m: 1, pubkeys: [r.pk], network: p.js }), network: p.js }).address,
        );
        expect(r.ours).toBe(btc.p2wsh(btc.p2ms(1, [r.pk]), p.scure).address);
        // P2TR = BIP86 key path only
        r = enc('P2TR', `m/86'/${p.coin}'/0'/0/${i}`);
        expect(r.ours).toBe(bitcoin.payments.p2tr({ internalPubkey: r.pk.slice(1), network: p.js }).address);
        expect(r.ours).toBe(btc.p2tr(r.pk.slice(1), undefined, p.scure).address);
      }
    });
  }

  it('COMPRESSED / UNCOMPRESSED = SEC1 hex from @noble/curves on each curve', () => {
    const k1 = keyAt(mnemonic, 'CURVE_SECP256K1', "m/0'/0");
    const r1 = keyAt(mnemonic, 'CURVE_P256', "m/0'/0");
    const ed = keyAt(mnemonic, 'CURVE_ED25519', "m/0'/0");
    expect(encodeAddress('ADDRESS_FORMAT_COMPRESSED', 'CURVE_SECP256K1', k1.publicKey)).toBe(hex(secp256k1.getPublicKey(k1.privateKey, true)));
    expect(encodeAddress('ADDRESS_FORMAT_UNCOMPRESSED', 'CURVE_SECP256K1', k1.publicKey)).toBe(hex(secp256k1.getPublicKey(k1.privateKey, false)));
    expect(encodeAddress('ADDRESS_FORMAT_COMPRESSED', 'CURVE_P256', r1.publicKey)).toBe(hex(p256.getPublicKey(r1.privateKey, true)));
    expect(encodeAddress('ADDRESS_FORMAT_UNCOMPRESSED', 'CURVE_P256', r1.publicKey)).toBe(hex(p256.getPublicKey(r1.privateKey, false)));
    expect(encodeAddress('ADDRESS_FORMAT_COMPRESSED', 'CURVE_ED25519', ed.publicKey)).toBe(hex(ed25519.getPublicKey(ed.privateKey)));
    expect(encodeAddress('ADDRESS_FORMAT_UNCOMPRESSED', 'CURVE_P256', r1.publicKey)).toMatch(/^04[0-9a-f]{128}$/);
  });
});
