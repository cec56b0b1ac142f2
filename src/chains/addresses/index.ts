// The address-format table: every Turnkey `v1AddressFormat` value (verbatim) -> the curves it
// accepts and its encoder. Spec: docs/reference/addresses.md "Formats" (18 named formats + 20 Bitcoin
// formats = 38) and "The curve must fit the address format; a mismatch is a clear REQUEST_INVALID
// error". Encoders receive both SEC1 forms of the key (see keys.ts normalizePublicKey) and pick the
// one their chain hashes.

import { CryptoInputError, describeValue } from '../../crypto/errors.js';
import type { Curve } from '../../crypto/curves.js';
import { assertCurve } from '../../crypto/curves.js';
import { normalizePublicKey, type PublicKeyForms } from '../../crypto/keys.js';
import { ethereumAddress } from './ethereum.js';
import { solanaAddress } from './solana.js';
import { cosmosAddress, seiAddress } from './cosmos.js';
import { tronAddress } from './tron.js';
import { suiAddress } from './sui.js';
import { aptosAddress } from './aptos.js';
import { stellarAddress } from './stellar.js';
import { xrpAddress } from './xrp.js';
import { dogeAddress } from './doge.js';
import { tonAddress } from './ton.js';
import { sparkAddress } from './spark.js';
import { bitcoinAddress, BITCOIN_KINDS, BITCOIN_NETWORKS, type BitcoinKind, type BitcoinNetwork } from './bitcoin.js';
import { compressedAddress, uncompressedAddress } from './raw.js';

export interface AddressFormatSpec {
  /** Curves a key may be on to get an address of this format. */
  curves: readonly Curve[];
  encode(key: PublicKeyForms): string;
}

const SECP = ['CURVE_SECP256K1'] as const;
const ED = ['CURVE_ED25519'] as const;

function uncompressed(key: PublicKeyForms): Uint8Array {
  // Only reachable for SEC1 curves: the curve check runs before encode().
  if (!key.uncompressed) throw new CryptoInputError('CURVE_MISMATCH', 'this address format needs a SEC1 key');
  return key.uncompressed;
}

const NAMED_FORMATS = {
  ADDRESS_FORMAT_UNCOMPRESSED: { curves: ['CURVE_SECP256K1', 'CURVE_P256'], encode: (k) => uncompressedAddress(uncompressed(k)) },
  ADDRESS_FORMAT_COMPRESSED: { curves: ['CURVE_SECP256K1', 'CURVE_ED25519', 'CURVE_P256'], encode: (k) => compressedAddress(k.compressed) },
  ADDRESS_FORMAT_ETHEREUM: { curves: SECP, encode: (k) => ethereumAddress(uncompressed(k)) },
  ADDRESS_FORMAT_SOLANA: { curves: ED, encode: (k) => solanaAddress(k.compressed) },
  ADDRESS_FORMAT_COSMOS: { curves: SECP, encode: (k) => cosmosAddress(k.compressed) },
  ADDRESS_FORMAT_TRON: { curves: SECP, encode: (k) => tronAddress(uncompressed(k)) },
  ADDRESS_FORMAT_SUI: { curves: ED, encode: (k) => suiAddress(k.compressed) },
  ADDRESS_FORMAT_APTOS: { curves: ED, encode: (k) => aptosAddress(k.compressed) },
  ADDRESS_FORMAT_SEI: { curves: SECP, encode: (k) => seiAddress(k.compressed) },
  ADDRESS_FORMAT_XLM: { curves: ED, encode: (k) => stellarAddress(k.compressed) },
  ADDRESS_FORMAT_XRP: { curves: SECP, encode: (k) => xrpAddress(k.compressed) },
  ADDRESS_FORMAT_DOGE_MAINNET: { curves: SECP, encode: (k) => dogeAddress('mainnet', k.compressed) },
  ADDRESS_FORMAT_DOGE_TESTNET: { curves: SECP, encode: (k) => dogeAddress('testnet', k.compressed) },
  ADDRESS_FORMAT_TON_V3R2: { curves: ED, encode: (k) => tonAddress('V3R2', k.compressed) },
  ADDRESS_FORMAT_TON_V4R2: { curves: ED, encode: (k) => tonAddress('V4R2', k.compressed) },
  ADDRESS_FORMAT_TON_V5R1: { curves: ED, encode: (k) => tonAddress('V5R1', k.compressed) },
  ADDRESS_FORMAT_SPARK_MAINNET: { curves: SECP, encode: (k) => sparkAddress('mainnet', k.compressed) },
  ADDRESS_FORMAT_SPARK_REGTEST: { curves: SECP, encode: (k) => sparkAddress('regtest', k.compressed) },
} as const satisfies Record<string, AddressFormatSpec>;

export type BitcoinAddressFormat = `ADDRESS_FORMAT_BITCOIN_${BitcoinNetwork}_${BitcoinKind}`;
export type AddressFormat = keyof typeof NAMED_FORMATS | BitcoinAddressFormat;

function bitcoinFormats(network: BitcoinNetwork): BitcoinAddressFormat[] {
  return BITCOIN_KINDS.map((kind) => `ADDRESS_FORMAT_BITCOIN_${network}_${kind}` as const);
}

/** All 38 address formats in the order of the API enum (swagger `v1AddressFormat`). */
export const ADDRESS_FORMATS: readonly AddressFormat[] = Object.freeze([
  'ADDRESS_FORMAT_UNCOMPRESSED',
  'ADDRESS_FORMAT_COMPRESSED',
  'ADDRESS_FORMAT_ETHEREUM',
  'ADDRESS_FORMAT_SOLANA',
  'ADDRESS_FORMAT_COSMOS',
  'ADDRESS_FORMAT_TRON',
  'ADDRESS_FORMAT_SUI',
  'ADDRESS_FORMAT_APTOS',
  ...bitcoinFormats('MAINNET'),
  ...bitcoinFormats('TESTNET'),
  ...bitcoinFormats('SIGNET'),
  ...bitcoinFormats('REGTEST'),
  'ADDRESS_FORMAT_SEI',
  'ADDRESS_FORMAT_XLM',
  'ADDRESS_FORMAT_DOGE_MAINNET',
  'ADDRESS_FORMAT_DOGE_TESTNET',
  'ADDRESS_FORMAT_TON_V3R2',
  'ADDRESS_FORMAT_TON_V4R2',
  'ADDRESS_FORMAT_TON_V5R1',
  'ADDRESS_FORMAT_XRP',
  'ADDRESS_FORMAT_SPARK_MAINNET',
  'ADDRESS_FORMAT_SPARK_REGTEST',
] satisfies AddressFormat[]);

function buildTable(): Record<AddressFormat, AddressFormatSpec> {
  const table: Record<string, AddressFormatSpec> = { ...NAMED_FORMATS };
  for (const network of BITCOIN_NETWORKS) {
    for (const kind of BITCOIN_KINDS) {
      table[`ADDRESS_FORMAT_BITCOIN_${network}_${kind}`] = {
        curves: SECP,
        encode: (k) => bitcoinAddress(network, kind, k.compressed),
      };
    }
  }
  return table as Record<AddressFormat, AddressFormatSpec>;
}

/** addressFormat -> allowed curves and encoder. */
export const ADDRESS_FORMAT_TABLE: Readonly<Record<AddressFormat, AddressFormatSpec>> = Object.freeze(buildTable());

export function isAddressFormat(value: unknown): value is AddressFormat {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ADDRESS_FORMAT_TABLE, value);
}

export function assertAddressFormat(value: unknown): AddressFormat {
  if (!isAddressFormat(value)) {
    throw new CryptoInputError('INVALID_ADDRESS_FORMAT', `invalid address format: ${describeValue(value)}`);
  }
  return value;
}

/** Curves allowed for `addressFormat`. */
export function curvesForAddressFormat(addressFormat: AddressFormat): readonly Curve[] {
  return ADDRESS_FORMAT_TABLE[assertAddressFormat(addressFormat)].curves;
}

/** Throws CURVE_MISMATCH unless `curve` may be used with `addressFormat`. */
export function assertCurveFitsAddressFormat(addressFormat: string, curve: string): void {
  const format = assertAddressFormat(addressFormat);
  const c = assertCurve(curve);
  const allowed = ADDRESS_FORMAT_TABLE[format].curves;
  if (!allowed.includes(c)) {
    throw new CryptoInputError(
      'CURVE_MISMATCH',
      `invalid curve ${c} for address format ${format}: it requires ${allowed.join(' or ')}`,
    );
  }
}

/**
 * Address of `publicKey` (either SEC1 form on secp256k1/P-256, 32 bytes on ed25519) in
 * `addressFormat`. Throws CryptoInputError on an unknown format or curve, a curve that does not fit
 * the format, or a public key that is not a valid point of `curve`.
 */
export function encodeAddress(addressFormat: string, curve: string, publicKey: Uint8Array): string {
  assertCurveFitsAddressFormat(addressFormat, curve);
  const key = normalizePublicKey(curve as Curve, publicKey);
  return ADDRESS_FORMAT_TABLE[addressFormat as AddressFormat].encode(key);
}

export { BITCOIN_KINDS, BITCOIN_NETWORKS };
export type { BitcoinKind, BitcoinNetwork };
