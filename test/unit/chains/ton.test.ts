// TON wallet addresses: embedded contract codes vs published code hashes, our cell hashing vs
// @ton/core, published address vectors, and SLIP-10 keys from mnemonics vs @ton/core + @ton/crypto.
import { describe, it, expect } from 'vitest';
import { Address, Cell, beginCell, contractAddress } from '@ton/core';
import { keyPairFromSeed } from '@ton/crypto';
import { encodeAddress } from '../../../src/chains/addresses/index.js';
import { tonWalletCode, tonWalletAccountId, tonFriendlyAddress, TON_DEFAULT_WALLET_ID, type TonWalletVersion } from '../../../src/chains/addresses/ton.js';
import {
  WALLET_V3R2_CODE_BOC_BASE64,
  WALLET_V4R2_CODE_BOC_BASE64,
  WALLET_V5R1_CODE_BOC_HEX,
} from '../../../src/chains/ton/contracts.js';
import { bocRootHash } from '../../../src/chains/ton/cell.js';
import { deriveKey } from '../../../src/crypto/hd.js';
import { mnemonicToSeed, generateMnemonic } from '../../../src/crypto/bip39.js';
import { publicKeyFromPrivate } from '../../../src/crypto/keys.js';
import { loadVectors, hex, unhex, MNEMONICS } from '../crypto/helpers.js';

const vectors = loadVectors('ton-wallets.json');
const VERSIONS: TonWalletVersion[] = ['V3R2', 'V4R2', 'V5R1'];
const CODE: Record<TonWalletVersion, Cell> = {
  V3R2: Cell.fromBoc(Buffer.from(WALLET_V3R2_CODE_BOC_BASE64, 'base64'))[0]!,
  V4R2: Cell.fromBoc(Buffer.from(WALLET_V4R2_CODE_BOC_BASE64, 'base64'))[0]!,
  V5R1: Cell.fromBoc(Buffer.from(WALLET_V5R1_CODE_BOC_HEX, 'hex'))[0]!,
};

/** The @ton/core construction of the same wallets (data layouts of @ton/ton's wallet classes). */
function referenceAddress(version: TonWalletVersion, publicKey: Uint8Array): Address {
  const pk = Buffer.from(publicKey);
  let data: Cell;
  if (version === 'V3R2') data = beginCell().storeUint(0, 32).storeUint(698983191, 32).storeBuffer(pk).endCell();
  else if (version === 'V4R2') data = beginCell().storeUint(0, 32).storeUint(698983191, 32).storeBuffer(pk).storeBit(0).endCell();
  else {
    // @ton/ton storeWalletIdV5R1: networkGlobalId(-239) XOR context(1 | wc:8 | version:8 | subwallet:15).
    const context = beginCell().storeUint(1, 1).storeInt(0, 8).storeUint(0, 8).storeUint(0, 15).endCell().beginParse().loadInt(32);
    data = beginCell().storeUint(1, 1).storeUint(0, 32).storeInt(BigInt(-239) ^ BigInt(context), 32).storeBuffer(pk, 32).storeBit(0).endCell();
  }
  return contractAddress(0, { code: CODE[version], data });
}

describe('embedded wallet contract code', () => {
  for (const v of VERSIONS) {
    it(`${v}: code hash equals the published hash, and our BOC reader agrees with @ton/core`, () => {
      const ours = tonWalletCode(v);
      expect(hex(ours.hash)).toBe(vectors.codeHashes[`ADDRESS_FORMAT_TON_${v}`]);
      expect(hex(ours.hash)).toBe(CODE[v].hash().toString('hex'));
      expect(ours.depth).toBe(CODE[v].depth());
    });
  }

  it('refuses a corrupted BOC (crc32c)', () => {
    const boc = unhex(WALLET_V5R1_CODE_BOC_HEX);
    boc[40]! ^= 1;
    expect(() => bocRootHash(boc)).toThrow(/crc32c/);
  });

  it('V5R1 default wallet id is 2147483409 (mainnet, workchain 0, subwallet 0)', () => {
    expect(TON_DEFAULT_WALLET_ID.V5R1).toBe(2147483409);
    expect(TON_DEFAULT_WALLET_ID.V4R2).toBe(698983191);
  });
});

describe('published TON address vectors', () => {
  for (const v of vectors.fromPublicKey) {
    it(`${v.addressFormat} ${v.origin}`, () => {
      const ours = encodeAddress(v.addressFormat, 'CURVE_ED25519', unhex(v.publicKey));
      expect(Address.parse(ours).equals(Address.parse(v.address))).toBe(true);
      expect(ours.startsWith('UQ')).toBe(true);
    });
  }
  for (const v of vectors.fromPrivateKey) {
    it(`${v.addressFormat} ${v.origin}`, () => {
      const pub = publicKeyFromPrivate('CURVE_ED25519', unhex(v.privateKey));
      if (v.publicKey) expect(hex(pub)).toBe(v.publicKey);
      const ours = encodeAddress(v.addressFormat, 'CURVE_ED25519', pub);
      expect(ours).toBe(Address.parse(v.address).toString({ urlSafe: true, bounceable: false }));
    });
  }
  for (const v of vectors.fromMnemonic) {
    it(`${v.addressFormat} from mnemonic at ${v.path} (${v.origin})`, () => {
      const k = deriveKey(mnemonicToSeed(v.mnemonic, v.passphrase), 'CURVE_ED25519', v.path);
      expect(encodeAddress(v.addressFormat, 'CURVE_ED25519', k.publicKey)).toBe(v.address);
    });
  }
});

describe('TON addresses vs @ton/core on derived keys', () => {
  const mnemonics = [MNEMONICS[0], MNEMONICS[2], generateMnemonic()];
  for (const mnemonic of mnemonics) {
    it(mnemonic.slice(0, 30), () => {
      const seed = mnemonicToSeed(mnemonic);
      for (const i of [0, 1, 3]) {
        const k = deriveKey(seed, 'CURVE_ED25519', `m/44'/607'/${i}'/0'/0'`);
        // @ton/crypto recomputes the public key from the derived private key (tweetnacl).
        const pub = new Uint8Array(keyPairFromSeed(Buffer.from(k.privateKey)).publicKey);
        expect(hex(pub)).toBe(hex(k.publicKey));
        for (const v of VERSIONS) {
          const ref = referenceAddress(v, pub);
          const ours = encodeAddress(`ADDRESS_FORMAT_TON_${v}`, 'CURVE_ED25519', k.publicKey);
          // Pinned form: non-bounceable, url-safe, mainnet.
          expect(ours).toBe(ref.toString({ urlSafe: true, bounceable: false, testOnly: false }));
          expect(ours).toMatch(/^UQ[A-Za-z0-9_-]{46}$/);
          expect(hex(tonWalletAccountId(v, k.publicKey))).toBe(ref.hash.toString('hex'));
        }
      }
    });
  }

  it('friendly-address flag variants match @ton/core', () => {
    const id = tonWalletAccountId('V4R2', unhex(vectors.fromPublicKey[2].publicKey));
    const a = new Address(0, Buffer.from(id));
    for (const bounceable of [true, false]) {
      for (const testOnly of [true, false]) {
        expect(tonFriendlyAddress(0, id, { bounceable, testOnly })).toBe(a.toString({ urlSafe: true, bounceable, testOnly }));
      }
    }
  });
});
