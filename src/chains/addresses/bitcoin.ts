// ADDRESS_FORMAT_BITCOIN_<NETWORK>_<KIND>: 4 networks x 5 script kinds, secp256k1 compressed keys.
// Spec: docs/reference/addresses.md encodings table (BITCOIN rows), with its pinned rules:
//  - P2PKH: base58check(0x00 main / 0x6f test,signet,regtest || hash160(pk)).
//  - P2SH = P2SH-P2WPKH (BIP49 nested segwit): redeemScript OP_0 <hash160(pk)>, version 0x05 / 0xc4.
//  - P2WPKH: segwit v0 bech32 of hash160(pk); HRP bc / tb (testnet and signet) / bcrt (BIP173).
//  - P2WSH = 1-of-1 multisig: witnessScript OP_1 <pk> OP_1 OP_CHECKMULTISIG, program sha256(script).
//  - P2TR: BIP86 key-path-only taproot (BIP341 tweak, no script tree), segwit v1 bech32m (BIP350).

import { bech32, bech32m } from '@scure/base';
import { CryptoInputError } from '../../crypto/errors.js';
import { concatBytes } from '../../crypto/bytes.js';
import { hash160, sha256 } from '../../crypto/hash.js';
import { taprootOutputKey } from '../../crypto/taproot.js';
import { base58check } from './encoding.js';

export const BITCOIN_NETWORKS = ['MAINNET', 'TESTNET', 'SIGNET', 'REGTEST'] as const;
export type BitcoinNetwork = (typeof BITCOIN_NETWORKS)[number];
export const BITCOIN_KINDS = ['P2PKH', 'P2SH', 'P2WPKH', 'P2WSH', 'P2TR'] as const;
export type BitcoinKind = (typeof BITCOIN_KINDS)[number];

interface NetworkParams {
  pubKeyHash: number;
  scriptHash: number;
  hrp: string;
}

export const BITCOIN_NETWORK_PARAMS: Record<BitcoinNetwork, NetworkParams> = {
  MAINNET: { pubKeyHash: 0x00, scriptHash: 0x05, hrp: 'bc' },
  TESTNET: { pubKeyHash: 0x6f, scriptHash: 0xc4, hrp: 'tb' },
  SIGNET: { pubKeyHash: 0x6f, scriptHash: 0xc4, hrp: 'tb' },
  REGTEST: { pubKeyHash: 0x6f, scriptHash: 0xc4, hrp: 'bcrt' },
};

const OP_0 = 0x00;
const OP_1 = 0x51;
const OP_CHECKMULTISIG = 0xae;

function checkKey(compressedPublicKey: Uint8Array): void {
  if (compressedPublicKey.length !== 33 || (compressedPublicKey[0] !== 2 && compressedPublicKey[0] !== 3)) {
    throw new CryptoInputError('INVALID_PUBLIC_KEY', 'invalid public key: Bitcoin addresses need the 33-byte compressed key');
  }
}

/** BIP49 redeemScript: OP_0 PUSH20 hash160(pk). */
export function p2wpkhScript(compressedPublicKey: Uint8Array): Uint8Array {
  checkKey(compressedPublicKey);
  return concatBytes(Uint8Array.of(OP_0, 20), hash160(compressedPublicKey));
}

/** The pinned P2WSH witnessScript: OP_1 PUSH33 pk OP_1 OP_CHECKMULTISIG (1-of-1 multisig). */
export function oneOfOneMultisigScript(compressedPublicKey: Uint8Array): Uint8Array {
  checkKey(compressedPublicKey);
  return concatBytes(Uint8Array.of(OP_1, 33), compressedPublicKey, Uint8Array.of(OP_1, OP_CHECKMULTISIG));
}

function segwit(version: 0 | 1, hrp: string, program: Uint8Array): string {
  const words = [version, ...bech32.toWords(program)];
  return version === 0 ? bech32.encode(hrp, words) : bech32m.encode(hrp, words);
}

export function bitcoinAddress(network: BitcoinNetwork, kind: BitcoinKind, compressedPublicKey: Uint8Array): string {
  checkKey(compressedPublicKey);
  const params = BITCOIN_NETWORK_PARAMS[network];
  switch (kind) {
    case 'P2PKH':
      return base58check(concatBytes(Uint8Array.of(params.pubKeyHash), hash160(compressedPublicKey)));
    case 'P2SH':
      return base58check(concatBytes(Uint8Array.of(params.scriptHash), hash160(p2wpkhScript(compressedPublicKey))));
    case 'P2WPKH':
      return segwit(0, params.hrp, hash160(compressedPublicKey));
    case 'P2WSH':
      return segwit(0, params.hrp, sha256(oneOfOneMultisigScript(compressedPublicKey)));
    case 'P2TR':
      return segwit(1, params.hrp, taprootOutputKey(compressedPublicKey).outputKey);
  }
}
