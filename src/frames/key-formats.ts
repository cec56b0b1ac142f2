// The private-key encodings @turnkey/iframe-stamper names as `KeyFormat` (docs/embedded-wallets.md):
// what the export frames show and what the import frame reads. A key is 32 bytes; the formats are
// the wallets' own: 0x-hex (Ethereum, Tron), base58 of seed ‖ public key (Solana: Phantom, Solflare),
// WIF of a compressed key (Bitcoin main and test net), and bech32 "suiprivkey" with the Ed25519 flag.
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58, bech32 } from '@scure/base';
import { base58check, fromHex, toHex } from './common.js';

export const KEY_FORMATS = ['HEXADECIMAL', 'SOLANA', 'BITCOIN_MAINNET_WIF', 'BITCOIN_TESTNET_WIF', 'SUI_BECH32'] as const;
export type KeyFormat = (typeof KEY_FORMATS)[number];

export function keyFormat(value: unknown): KeyFormat {
  if (value === undefined || value === null || value === '') return 'HEXADECIMAL';
  if (typeof value === 'string' && (KEY_FORMATS as readonly string[]).includes(value)) return value as KeyFormat;
  throw new Error(`unsupported key format ${JSON.stringify(String(value).slice(0, 40))}: one of ${KEY_FORMATS.join(', ')}`);
}

function require32(key: Uint8Array): Uint8Array {
  if (key.length !== 32) throw new Error(`invalid private key length: expected 32 bytes, got ${key.length}`);
  return key;
}

const WIF_VERSION = { BITCOIN_MAINNET_WIF: 0x80, BITCOIN_TESTNET_WIF: 0xef } as const;

export function encodeKey(key: Uint8Array, format: KeyFormat): string {
  switch (format) {
    case 'HEXADECIMAL':
      return '0x' + toHex(key);
    case 'SOLANA': {
      const seed = require32(key);
      const full = new Uint8Array(64);
      full.set(seed, 0);
      full.set(ed25519.getPublicKey(seed), 32);
      return base58.encode(full);
    }
    case 'BITCOIN_MAINNET_WIF':
    case 'BITCOIN_TESTNET_WIF': {
      const payload = new Uint8Array(34);
      payload[0] = WIF_VERSION[format];
      payload.set(require32(key), 1);
      payload[33] = 0x01; // compressed public key
      return base58check.encode(payload);
    }
    case 'SUI_BECH32': {
      const payload = new Uint8Array(33);
      payload[0] = 0x00; // Ed25519 scheme flag
      payload.set(require32(key), 1);
      return bech32.encode('suiprivkey', bech32.toWords(payload));
    }
  }
}

/** The 32 key bytes of `text` written in `format`; a Solana key's public half must match its seed. */
export function decodeKey(text: string, format: KeyFormat): Uint8Array {
  const t = text.trim();
  switch (format) {
    case 'HEXADECIMAL':
      return require32(fromHex(t, 'private key'));
    case 'SOLANA': {
      let bytes: Uint8Array;
      try {
        bytes = base58.decode(t);
      } catch {
        throw new Error('the Solana private key is not base58');
      }
      if (bytes.length === 64) {
        const seed = bytes.slice(0, 32);
        if (toHex(ed25519.getPublicKey(seed)) !== toHex(bytes.subarray(32))) throw new Error('the Solana private key does not match its public key');
        return seed;
      }
      return require32(bytes);
    }
    case 'BITCOIN_MAINNET_WIF':
    case 'BITCOIN_TESTNET_WIF': {
      let bytes: Uint8Array;
      try {
        bytes = base58check.decode(t);
      } catch {
        throw new Error('the WIF key is not valid base58check');
      }
      if (bytes[0] !== WIF_VERSION[format] || (bytes.length !== 33 && !(bytes.length === 34 && bytes[33] === 0x01))) {
        throw new Error(`the WIF key is not a ${format === 'BITCOIN_MAINNET_WIF' ? 'main' : 'test'} net key`);
      }
      return bytes.slice(1, 33);
    }
    case 'SUI_BECH32': {
      const { prefix, words } = bech32.decode(t as `${string}1${string}`);
      const bytes = bech32.fromWords(words);
      if (prefix !== 'suiprivkey' || bytes.length !== 33 || bytes[0] !== 0x00) throw new Error('the key is not a Sui Ed25519 private key (suiprivkey…)');
      return Uint8Array.from(bytes.slice(1));
    }
  }
}
