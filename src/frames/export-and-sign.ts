// The export-and-sign frame (docs/embedded-wallets.md): INJECT_KEY_EXPORT_BUNDLE keeps an exported
// key in this page's memory (24 hours at most, by address), and SIGN_MESSAGE / SIGN_TRANSACTION sign
// Ethereum (EIP-191 messages, serialized transactions, with viem) and Solana (Ed25519 messages, wire
// transactions) payloads with it; the parent gets signatures, never the key. SET_EMBEDDED_KEY_OVERRIDE
// swaps the decryption key for one delivered in a bundle; CLEAR_EMBEDDED_PRIVATE_KEY forgets keys.
import { ed25519 } from '@noble/curves/ed25519.js';
import { base58 } from '@scure/base';
import { parseTransaction, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  embeddedKeyHandlers,
  ensureEmbeddedKey,
  fromHex,
  getEmbeddedKey,
  openChannel,
  openExportBundle,
  publicKeyHex,
  readSettings,
  toHex,
  utf8,
  type Message,
} from './common.js';
import { keyFormat, type KeyFormat } from './key-formats.js';

const KEY_TTL_MS = 24 * 60 * 60 * 1000;
const settings = readSettings();
ensureEmbeddedKey();

interface HeldKey {
  organizationId: string;
  key: Uint8Array;
  format: KeyFormat;
  expiry: number;
}
const keys = new Map<string, HeldKey>();
/** The decryption key SET_EMBEDDED_KEY_OVERRIDE delivered; memory only, used instead of the embedded key. */
let override: Uint8Array | null = null;

function heldKey(address: unknown): HeldKey {
  const name = typeof address === 'string' && address !== '' ? address : 'default';
  const held = keys.get(name);
  if (!held || Date.now() >= held.expiry) {
    if (held) {
      held.key.fill(0);
      keys.delete(name);
    }
    throw new Error(`no key for address ${name}: inject its export bundle into this frame first (addresses are case sensitive)`);
  }
  return held;
}

function payload(message: Message, field: 'message' | 'transaction'): { text: string; type: string } {
  const parsed = JSON.parse(String(message.value ?? '')) as Record<string, unknown>;
  if (typeof parsed[field] !== 'string' || typeof parsed.type !== 'string') throw new Error(`the request needs "${field}" and "type"`);
  return { text: parsed[field] as string, type: parsed.type };
}

const ethereumAccount = (held: HeldKey) => {
  if (held.format !== 'HEXADECIMAL') throw new Error(`an Ethereum payload needs a key injected in HEXADECIMAL format, not ${held.format}`);
  return privateKeyToAccount(`0x${toHex(held.key)}`);
};

/** Reads a compact-u16 (Solana's short vector length) at `offset`. */
function shortVec(bytes: Uint8Array, offset: number): { value: number; next: number } {
  let value = 0;
  for (let i = 0; i < 3; i++) {
    const b = bytes[offset + i];
    if (b === undefined) throw new Error('the Solana transaction is truncated');
    value |= (b & 0x7f) << (7 * i);
    if ((b & 0x80) === 0) return { value, next: offset + i + 1 };
  }
  throw new Error('the Solana transaction has an invalid length prefix');
}

/** Signs a Solana wire transaction (legacy or versioned) in the signature slot of this key's account. */
function signSolanaTransaction(seed: Uint8Array, wire: Uint8Array): Uint8Array {
  const { value: signatures, next: sigStart } = shortVec(wire, 0);
  const messageStart = sigStart + 64 * signatures;
  let p = messageStart;
  if (wire[p] === undefined) throw new Error('the Solana transaction has no message');
  if (wire[p] & 0x80) p += 1; // versioned message prefix
  const required = wire[p];
  const { value: accountCount, next: keysStart } = shortVec(wire, p + 3);
  if (required > signatures || required > accountCount) throw new Error('the Solana transaction has inconsistent signature counts');
  const publicKey = ed25519.getPublicKey(seed);
  const own = toHex(publicKey);
  for (let i = 0; i < required; i++) {
    const account = wire.subarray(keysStart + 32 * i, keysStart + 32 * (i + 1));
    if (toHex(account) === own) {
      const signed = wire.slice();
      signed.set(ed25519.sign(wire.subarray(messageStart), seed), sigStart + 64 * i);
      return signed;
    }
  }
  throw new Error(`the Solana transaction does not need a signature of ${base58.encode(publicKey)}`);
}

async function decryptionKey(): Promise<Uint8Array> {
  const key = override ?? getEmbeddedKey();
  if (!key) throw new Error('this frame has no embedded key: initialize one first');
  return key;
}

openChannel(settings, async (ttl) => publicKeyHex(ensureEmbeddedKey(ttl)), {
  ...embeddedKeyHandlers,
  INJECT_KEY_EXPORT_BUNDLE: async (message) => {
    const format = keyFormat(message.keyFormat);
    const key = await openExportBundle(message.value, message.organizationId, settings, await decryptionKey());
    if (key.length !== 32) throw new Error(`the bundle holds ${key.length} bytes, not a 32-byte private key`);
    const name = typeof message.address === 'string' && message.address !== '' ? message.address : 'default';
    keys.get(name)?.key.fill(0);
    keys.set(name, { organizationId: String(message.organizationId), key, format, expiry: Date.now() + KEY_TTL_MS });
    return { type: 'BUNDLE_INJECTED', value: true };
  },
  SIGN_MESSAGE: async (message) => {
    const held = heldKey(message.address);
    const { text, type } = payload(message, 'message');
    if (type === 'SOLANA') return { type: 'MESSAGE_SIGNED', value: toHex(ed25519.sign(utf8.encode(text), held.key)) };
    if (type === 'ETHEREUM') return { type: 'MESSAGE_SIGNED', value: await ethereumAccount(held).signMessage({ message: text }) };
    throw new Error(`unsupported message type ${JSON.stringify(type.slice(0, 40))}: ETHEREUM or SOLANA`);
  },
  SIGN_TRANSACTION: async (message) => {
    const held = heldKey(message.address);
    const { text, type } = payload(message, 'transaction');
    if (type === 'SOLANA') return { type: 'TRANSACTION_SIGNED', value: toHex(signSolanaTransaction(held.key, fromHex(text, 'transaction'))) };
    if (type === 'ETHEREUM') {
      const hexText = (text.startsWith('0x') ? text : `0x${text}`) as Hex;
      return { type: 'TRANSACTION_SIGNED', value: await ethereumAccount(held).signTransaction(parseTransaction(hexText)) };
    }
    throw new Error(`unsupported transaction type ${JSON.stringify(type.slice(0, 40))}: ETHEREUM or SOLANA`);
  },
  CLEAR_EMBEDDED_PRIVATE_KEY: async (message) => {
    if (typeof message.address === 'string' && message.address !== '') {
      const held = keys.get(message.address);
      if (!held) throw new Error(`no key for address ${message.address} (addresses are case sensitive)`);
      held.key.fill(0);
      keys.delete(message.address);
    } else {
      for (const held of keys.values()) held.key.fill(0);
      keys.clear();
    }
    return { type: 'EMBEDDED_PRIVATE_KEY_CLEARED', value: true };
  },
  SET_EMBEDDED_KEY_OVERRIDE: async (message) => {
    const embedded = getEmbeddedKey();
    if (!embedded) throw new Error('this frame has no embedded key: initialize one first');
    const key = await openExportBundle(message.value, message.organizationId, settings, embedded);
    if (key.length !== 32) throw new Error('the override bundle does not hold a 32-byte P-256 private key');
    publicKeyHex(key); // refuses a scalar that is not a P-256 private key
    override?.fill(0);
    override = key;
    return { type: 'EMBEDDED_KEY_OVERRIDE_SET', value: true };
  },
  RESET_TO_DEFAULT_EMBEDDED_KEY: async () => {
    override?.fill(0);
    override = null;
    return { type: 'RESET_TO_DEFAULT_EMBEDDED_KEY', value: true };
  },
});
