// ADDRESS_FORMAT_TON_V3R2 / _V4R2 / _V5R1: address of the standard wallet contract deployed with the
// account's ed25519 key. Spec: docs/reference/addresses.md TON row: StateInit hash of the standard wallet
// contract, workchain 0, wallet_id 698983191 (V3R2/V4R2) or 2147483409 (V5R1: mainnet, workchain 0,
// subwallet 0); user-friendly form non-bounceable, url-safe ("UQ...").
//
// Initial data layouts follow the @ton/ton wallet classes (the de-facto reference for these
// contracts): V3R2 seqno:32 wallet_id:32 pubkey:256; V4R2 adds an empty plugins dict (1 bit);
// V5R1 is_signature_allowed:1 (=1) seqno:32 wallet_id:32 pubkey:256 extensions dict (1 bit, empty).
// V5R1 wallet_id = networkGlobalId(-239) XOR (1<<31 | wc<<23 | version 0<<15 | subwallet 0) = 0x7fffff11.

import { base64urlnopad } from '@scure/base';
import { CryptoInputError } from '../../crypto/errors.js';
import { concatBytes, fromHex } from '../../crypto/bytes.js';
import { crc16xmodem } from './encoding.js';
import { BitWriter, bocRootHash, type CellRef } from '../ton/cell.js';
import { WALLET_V3R2_CODE_BOC_BASE64, WALLET_V4R2_CODE_BOC_BASE64, WALLET_V5R1_CODE_BOC_HEX } from '../ton/contracts.js';

export type TonWalletVersion = 'V3R2' | 'V4R2' | 'V5R1';

export const TON_DEFAULT_WALLET_ID: Record<TonWalletVersion, number> = {
  V3R2: 698983191,
  V4R2: 698983191,
  V5R1: 2147483409,
};

const CODE_BOCS: Record<TonWalletVersion, () => Uint8Array> = {
  V3R2: () => new Uint8Array(Buffer.from(WALLET_V3R2_CODE_BOC_BASE64, 'base64')),
  V4R2: () => new Uint8Array(Buffer.from(WALLET_V4R2_CODE_BOC_BASE64, 'base64')),
  V5R1: () => fromHex(WALLET_V5R1_CODE_BOC_HEX),
};

const codeCache = new Map<TonWalletVersion, CellRef>();

/** Representation hash and depth of the wallet code cell (parsed once from the embedded BOC). */
export function tonWalletCode(version: TonWalletVersion): CellRef {
  let code = codeCache.get(version);
  if (!code) {
    code = bocRootHash(CODE_BOCS[version]());
    codeCache.set(version, code);
  }
  return code;
}

function dataCell(version: TonWalletVersion, publicKey: Uint8Array, walletId: number): CellRef {
  const w = new BitWriter();
  if (version === 'V5R1') w.writeBit(1); // is_signature_allowed
  w.writeUint(0, 32); // seqno
  w.writeUint(walletId >>> 0, 32);
  w.writeBytes(publicKey);
  if (version !== 'V3R2') w.writeBit(0); // empty plugins (V4R2) / extensions (V5R1) dictionary
  return w.toCell([]);
}

/** Account id (32-byte hash) of the wallet's StateInit: split_depth:0 special:0 code:1 data:1 library:0. */
export function tonWalletAccountId(version: TonWalletVersion, publicKey: Uint8Array, walletId = TON_DEFAULT_WALLET_ID[version]): Uint8Array {
  if (publicKey.length !== 32) {
    throw new CryptoInputError('INVALID_PUBLIC_KEY', 'invalid public key: TON wallets need a 32-byte ed25519 key');
  }
  const stateInit = new BitWriter().writeBit(0).writeBit(0).writeBit(1).writeBit(1).writeBit(0);
  return stateInit.toCell([tonWalletCode(version), dataCell(version, publicKey, walletId)]).hash;
}

/** User-friendly address: base64url(flags || workchain || account id || crc16-xmodem BE). */
export function tonFriendlyAddress(
  workchain: number,
  accountId: Uint8Array,
  opts: { bounceable: boolean; testOnly: boolean } = { bounceable: false, testOnly: false },
): string {
  const flags = (opts.bounceable ? 0x11 : 0x51) | (opts.testOnly ? 0x80 : 0);
  const body = concatBytes(Uint8Array.of(flags, workchain & 0xff), accountId);
  const crc = crc16xmodem(body);
  return base64urlnopad.encode(concatBytes(body, Uint8Array.of(crc >> 8, crc & 0xff)));
}

/** The pinned form: workchain 0, default wallet id, non-bounceable, mainnet, url-safe ("UQ..."). */
export function tonAddress(version: TonWalletVersion, ed25519PublicKey: Uint8Array): string {
  return tonFriendlyAddress(0, tonWalletAccountId(version, ed25519PublicKey));
}
