// What every Sigil frame shares (docs/embedded-wallets.md): the settings the frames server wrote
// into the page, the message channel the parent opens with @turnkey/iframe-stamper's
// TURNKEY_INIT_MESSAGE_CHANNEL, the embedded P-256 key in localStorage, HPKE as @turnkey/crypto does
// it (RFC 9180 base mode, DHKEM(P-256, HKDF-SHA256), AES-256-GCM, info "turnkey_hpke", AAD = enc ‖ pkR),
// and the check of the deployment's signature on export and import bundles.
//
// This is browser code bundled by scripts/build-frames.mjs; docs/design.md lets src/frames/ import nothing
// of src/, so the HPKE key schedule here is the browser twin of src/crypto/hpke.ts (same RFC, pure JS
// from @noble instead of node:crypto), and test/e2e/frames.test.ts checks the two against each other.
import { p256 } from '@noble/curves/nist.js';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base64urlnopad, createBase58check, hex } from '@scure/base';

export interface FrameSettings {
  /** Uncompressed hex of the deployment's bundle signer key. */
  signerPublicKey: string;
  /** Origins allowed to open the channel; ['*'] allows any. */
  allowedOrigins: string[];
}

export function readSettings(): FrameSettings {
  const el = document.getElementById('sigil-frame-settings');
  const parsed = JSON.parse(el?.textContent ?? 'null') as FrameSettings | null;
  if (!parsed || typeof parsed.signerPublicKey !== 'string' || !Array.isArray(parsed.allowedOrigins)) {
    throw new Error('frame settings are missing: this page must be served by Sigil');
  }
  return parsed;
}

export const utf8 = new TextEncoder();
export const base58check = createBase58check(sha256);

export function toHex(bytes: Uint8Array): string {
  return hex.encode(bytes);
}

export function fromHex(text: string, what: string): Uint8Array {
  const s = text.startsWith('0x') ? text.slice(2) : text;
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) throw new Error(`${what} is not valid hex`);
  return hex.decode(s.toLowerCase());
}

// ---------------------------------------------------------------------------------------------------
// The channel to the parent page

export type Message = { type: string; requestId?: string; value?: unknown; [field: string]: unknown };
export type Handler = (message: Message) => Promise<{ type: string; value: unknown } | void>;

let port: MessagePort | null = null;

/** Sends one message to the parent through the channel it opened; nothing goes anywhere else. */
export function sendUp(type: string, value: unknown, requestId?: string): void {
  port?.postMessage({ type, value, requestId });
}

/** A readable message for the parent's rejected promise, never a stack or a secret. */
function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name === 'Error' ? 'Error' : err.name}: ${err.message}` : String(err);
}

/**
 * Waits for the parent's TURNKEY_INIT_MESSAGE_CHANNEL: it must come from the window embedding this
 * frame, from an origin the operator allows, and carry a port. The first such message wins; every
 * later one (another window, a second channel) is ignored. `ready` gives the value of
 * PUBLIC_KEY_READY; `handlers` answer the requests arriving on the port, each answer or error carrying
 * the request's id.
 */
export function openChannel(settings: FrameSettings, ready: (ttlMs: number | undefined) => Promise<string>, handlers: Record<string, Handler>): void {
  const allowAny = settings.allowedOrigins.includes('*');
  const onInit = async (event: MessageEvent) => {
    const data = event.data as { type?: unknown; dangerouslyOverrideIframeKeyTtl?: unknown } | null;
    if (!data || data.type !== 'TURNKEY_INIT_MESSAGE_CHANNEL') return;
    if (event.source !== window.parent || window.parent === window) return;
    if (!allowAny && !settings.allowedOrigins.includes(event.origin)) {
      console.warn(`Sigil frame: refused a channel from ${event.origin}, which the operator does not allow`);
      return;
    }
    const offered = event.ports?.[0];
    if (!offered || port) return;
    port = offered;
    window.removeEventListener('message', onInit);
    port.onmessage = (e: MessageEvent) => void dispatch(e.data as Message);
    const ttl = typeof data.dangerouslyOverrideIframeKeyTtl === 'number' && data.dangerouslyOverrideIframeKeyTtl > 0 ? data.dangerouslyOverrideIframeKeyTtl : undefined;
    try {
      sendUp('PUBLIC_KEY_READY', await ready(ttl));
    } catch (err) {
      sendUp('ERROR', errorText(err));
    }
  };
  const dispatch = async (message: Message) => {
    if (!message || typeof message.type !== 'string') return;
    const requestId = typeof message.requestId === 'string' ? message.requestId : undefined;
    const handler = Object.hasOwn(handlers, message.type) ? handlers[message.type] : undefined;
    if (!handler) {
      sendUp('ERROR', `unsupported message type ${JSON.stringify(message.type.slice(0, 64))} for this frame`, requestId);
      return;
    }
    try {
      const answer = await handler(message);
      if (answer) sendUp(answer.type, answer.value, requestId);
    } catch (err) {
      sendUp('ERROR', errorText(err), requestId);
    }
  };
  window.addEventListener('message', onInit);
}

// ---------------------------------------------------------------------------------------------------
// The embedded key: a P-256 key pair in this origin's localStorage, with an expiry, as the stamper
// expects (it reads the public half from PUBLIC_KEY_READY and may ask to reset or re-create it).

const EMBEDDED_KEY = 'SIGIL_EMBEDDED_KEY';
export const DEFAULT_KEY_TTL_MS = 48 * 60 * 60 * 1000;

/**
 * localStorage when the browser grants it to this embedded, usually cross-site, page; browsers that
 * block third-party storage (Chromium with third-party cookies blocked throws on the mere read of
 * window.localStorage) get the page's memory instead, which lasts as long as the frame, the span of
 * one export or login.
 */
const storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> = (() => {
  try {
    const s = window.localStorage;
    s.getItem(EMBEDDED_KEY);
    return s;
  } catch {
    const memory = new Map<string, string>();
    return {
      getItem: (k: string) => memory.get(k) ?? null,
      setItem: (k: string, v: string) => void memory.set(k, v),
      removeItem: (k: string) => void memory.delete(k),
    };
  }
})();

export function getEmbeddedKey(): Uint8Array | null {
  const raw = storage.getItem(EMBEDDED_KEY);
  if (!raw) return null;
  try {
    const item = JSON.parse(raw) as { privateKey: string; expiry: number };
    if (typeof item.expiry !== 'number' || Date.now() >= item.expiry) {
      storage.removeItem(EMBEDDED_KEY);
      return null;
    }
    return fromHex(item.privateKey, 'embedded key');
  } catch {
    storage.removeItem(EMBEDDED_KEY);
    return null;
  }
}

/** The embedded key, created (with `ttlMs`) when there is none or it expired. */
export function ensureEmbeddedKey(ttlMs = DEFAULT_KEY_TTL_MS): Uint8Array {
  const existing = getEmbeddedKey();
  if (existing) return existing;
  const privateKey = p256.utils.randomSecretKey();
  storage.setItem(EMBEDDED_KEY, JSON.stringify({ privateKey: toHex(privateKey), expiry: Date.now() + ttlMs }));
  return privateKey;
}

export function resetEmbeddedKey(): void {
  storage.removeItem(EMBEDDED_KEY);
}

export function publicKeyHex(privateKey: Uint8Array): string {
  return toHex(p256.getPublicKey(privateKey, false));
}

/** GET_EMBEDDED_PUBLIC_KEY, INIT_EMBEDDED_KEY and RESET_EMBEDDED_KEY, as every keyed frame answers them. */
export const embeddedKeyHandlers: Record<string, Handler> = {
  GET_EMBEDDED_PUBLIC_KEY: async () => {
    const key = getEmbeddedKey();
    return { type: 'EMBEDDED_PUBLIC_KEY', value: key ? publicKeyHex(key) : '' };
  },
  INIT_EMBEDDED_KEY: async () => ({ type: 'EMBEDDED_PUBLIC_KEY', value: publicKeyHex(ensureEmbeddedKey()) }),
  RESET_EMBEDDED_KEY: async () => {
    resetEmbeddedKey();
    return { type: 'EMBEDDED_KEY_RESET', value: null };
  },
};

// ---------------------------------------------------------------------------------------------------
// HPKE (RFC 9180 base mode) as @turnkey/crypto uses it

const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
};
const HPKE_V1 = utf8.encode('HPKE-v1');
const SUITE_KEM = concat(utf8.encode('KEM'), Uint8Array.of(0x00, 0x10));
const SUITE_HPKE = concat(utf8.encode('HPKE'), Uint8Array.of(0x00, 0x10, 0x00, 0x01, 0x00, 0x02));
const EMPTY = new Uint8Array(0);
const INFO = utf8.encode('turnkey_hpke');

const labeledExtract = (salt: Uint8Array, label: string, ikm: Uint8Array, suite: Uint8Array) =>
  hmac(sha256, salt.length ? salt : new Uint8Array(32), concat(HPKE_V1, suite, utf8.encode(label), ikm));

function labeledExpand(prk: Uint8Array, label: string, info: Uint8Array, length: number, suite: Uint8Array): Uint8Array {
  const labeledInfo = concat(Uint8Array.of(length >> 8, length & 0xff), HPKE_V1, suite, utf8.encode(label), info);
  const out = new Uint8Array(length);
  let t: Uint8Array = EMPTY;
  for (let i = 1, off = 0; off < length; i++, off += 32) {
    t = hmac(sha256, prk, concat(t, labeledInfo, Uint8Array.of(i)));
    out.set(t.subarray(0, Math.min(32, length - off)), off);
  }
  return out;
}

const KEY_SCHEDULE_CONTEXT = concat(Uint8Array.of(0), labeledExtract(EMPTY, 'psk_id_hash', EMPTY, SUITE_HPKE), labeledExtract(EMPTY, 'info_hash', INFO, SUITE_HPKE));

async function aesKey(sharedPoint: Uint8Array, enc: Uint8Array, pkR: Uint8Array) {
  const dh = sharedPoint.subarray(1, 33); // the x coordinate
  const sharedSecret = labeledExpand(labeledExtract(EMPTY, 'eae_prk', dh, SUITE_KEM), 'shared_secret', concat(enc, pkR), 32, SUITE_KEM);
  const secret = labeledExtract(sharedSecret, 'secret', EMPTY, SUITE_HPKE);
  const raw = labeledExpand(secret, 'key', KEY_SCHEDULE_CONTEXT, 32, SUITE_HPKE);
  const iv = labeledExpand(secret, 'base_nonce', KEY_SCHEDULE_CONTEXT, 12, SUITE_HPKE);
  const key = await crypto.subtle.importKey('raw', own(raw), 'AES-GCM', false, ['encrypt', 'decrypt']);
  raw.fill(0);
  return { key, iv: own(iv) };
}

/** WebCrypto takes ArrayBuffer-backed views only (TypeScript's BufferSource). */
const own = (bytes: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array(bytes);

const uncompressed = (publicKey: Uint8Array) => p256.Point.fromBytes(publicKey).toBytes(false);

/** Opens a sealed message with the receiver's private key; `enc` compressed or uncompressed. */
export async function hpkeOpen(receiverPrivateKey: Uint8Array, encappedPublic: Uint8Array, ciphertext: Uint8Array): Promise<Uint8Array> {
  const enc = uncompressed(encappedPublic);
  const pkR = p256.getPublicKey(receiverPrivateKey, false);
  const { key, iv } = await aesKey(p256.getSharedSecret(receiverPrivateKey, enc, true), enc, pkR);
  try {
    return new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv, additionalData: own(concat(enc, pkR)), tagLength: 128 }, key, own(ciphertext)));
  } catch {
    throw new Error('decryption failed: this bundle was not encrypted to this frame\'s key, or it was altered');
  }
}

/** Seals `plaintext` to `receiverPublicKey`; the answer is formatHpkeBuf's JSON. */
export async function hpkeSeal(receiverPublicKey: Uint8Array, plaintext: Uint8Array): Promise<string> {
  const pkR = uncompressed(receiverPublicKey);
  const ephemeral = p256.utils.randomSecretKey();
  const enc = p256.getPublicKey(ephemeral, false);
  const { key, iv } = await aesKey(p256.getSharedSecret(ephemeral, pkR, true), enc, pkR);
  ephemeral.fill(0);
  const ciphertext = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: own(concat(enc, pkR)), tagLength: 128 }, key, own(plaintext)));
  return JSON.stringify({ encappedPublic: toHex(enc), ciphertext: toHex(ciphertext) });
}

// ---------------------------------------------------------------------------------------------------
// Signed bundles: {"version":"v1.0.0","data":hex(JSON),"dataSignature":DER hex,"enclaveQuorumPublic":hex}

/**
 * The signed data of an export or import bundle, once its signature is checked against THIS
 * deployment's signer key (the one the frames server gave the page; never the key the bundle names)
 * and its organization (and user, for imports) against what the parent says it expects.
 */
export function verifySignedBundle(bundle: unknown, settings: FrameSettings, expect: { organizationId?: unknown; userId?: unknown }): Record<string, unknown> {
  if (typeof bundle !== 'string') throw new Error('the bundle must be a string');
  let envelope: Record<string, unknown>;
  try {
    envelope = JSON.parse(bundle) as Record<string, unknown>;
  } catch {
    throw new Error('the bundle is not JSON');
  }
  if (envelope.version !== 'v1.0.0') throw new Error(`unsupported bundle version: ${String(envelope.version).slice(0, 32)}`);
  if (typeof envelope.data !== 'string' || typeof envelope.dataSignature !== 'string') throw new Error('the bundle lacks "data" or "dataSignature"');
  const expected = settings.signerPublicKey.toLowerCase();
  if (typeof envelope.enclaveQuorumPublic !== 'string' || envelope.enclaveQuorumPublic.toLowerCase() !== expected) {
    throw new Error("the bundle was not signed by this deployment's signer key");
  }
  const data = fromHex(envelope.data, 'bundle data');
  let valid = false;
  try {
    valid = p256.verify(fromHex(envelope.dataSignature, 'bundle signature'), data, fromHex(expected, 'signer key'), { format: 'der', lowS: false });
  } catch {
    valid = false;
  }
  if (!valid) throw new Error("the bundle's signature does not verify with this deployment's signer key");
  const signed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data)) as Record<string, unknown>;
  if (typeof expect.organizationId !== 'string' || expect.organizationId === '') throw new Error('organizationId is required');
  if (signed.organizationId !== expect.organizationId) throw new Error(`the bundle was issued for another organization than ${expect.organizationId}`);
  if ('userId' in expect) {
    if (typeof expect.userId !== 'string' || expect.userId === '') throw new Error('userId is required');
    if (signed.userId !== expect.userId) throw new Error(`the bundle was issued for another user than ${expect.userId}`);
  }
  return signed;
}

/** Decrypts the export bundle sealed to `receiverPrivateKey`, after verifySignedBundle. */
export async function openExportBundle(bundle: unknown, organizationId: unknown, settings: FrameSettings, receiverPrivateKey: Uint8Array): Promise<Uint8Array> {
  const signed = verifySignedBundle(bundle, settings, { organizationId });
  if (typeof signed.encappedPublic !== 'string' || typeof signed.ciphertext !== 'string') throw new Error('the bundle lacks "encappedPublic" or "ciphertext"');
  return hpkeOpen(receiverPrivateKey, fromHex(signed.encappedPublic, 'encappedPublic'), fromHex(signed.ciphertext, 'ciphertext'));
}

// ---------------------------------------------------------------------------------------------------
// The stamp the auth frame signs requests with (X-Stamp, docs/reference/api.md "Transport")

export function stampWith(privateKey: Uint8Array, payload: string): string {
  const signature = p256.sign(utf8.encode(payload), privateKey, { format: 'der' });
  const stamp = { publicKey: toHex(p256.getPublicKey(privateKey, true)), scheme: 'SIGNATURE_SCHEME_TK_API_P256', signature: toHex(signature) };
  return base64urlnopad.encode(utf8.encode(JSON.stringify(stamp)));
}

// ---------------------------------------------------------------------------------------------------
// APPLY_SETTINGS: the parent may restyle the one element that shows or takes the secret, within a
// fixed list of properties and plain values (no url(), no expressions), and nothing else.

const STYLE_PROPERTIES = [
  'padding', 'margin', 'borderWidth', 'borderStyle', 'borderColor', 'borderRadius', 'fontSize', 'fontWeight', 'fontFamily', 'color',
  'backgroundColor', 'width', 'height', 'maxWidth', 'maxHeight', 'lineHeight', 'boxShadow', 'textAlign', 'overflowWrap', 'wordWrap', 'resize',
] as const;
const STYLE_VALUE = /^[a-zA-Z0-9#%.,()'" /-]{0,200}$/;

function applyStyles(el: HTMLElement | null, styles: unknown): void {
  if (!el || !styles || typeof styles !== 'object') return;
  for (const [name, value] of Object.entries(styles as Record<string, unknown>)) {
    if (name === 'labelColor') {
      if (typeof value === 'string' && STYLE_VALUE.test(value)) for (const l of document.querySelectorAll<HTMLElement>('label')) l.style.color = value;
      continue;
    }
    if (!(STYLE_PROPERTIES as readonly string[]).includes(name)) throw new Error(`style "${name.slice(0, 40)}" cannot be set`);
    if (typeof value !== 'string' || !STYLE_VALUE.test(value) || /url\s*\(|expression/i.test(value)) throw new Error(`style "${name}" has a value that cannot be set`);
    el.style.setProperty(name.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase()), value);
  }
}

export function applySettingsHandler(mainElementId: string, passphraseElementId?: string): Handler {
  return async (message) => {
    const settings = JSON.parse(String(message.value ?? '{}')) as { styles?: unknown; passphraseStyles?: unknown; enablePassphrase?: unknown };
    applyStyles(document.getElementById(mainElementId), settings.styles);
    if (passphraseElementId) {
      const passphrase = document.getElementById(passphraseElementId);
      applyStyles(passphrase, settings.passphraseStyles);
      if (typeof settings.enablePassphrase === 'boolean') passphrase?.closest('.passphrase')?.toggleAttribute('hidden', !settings.enablePassphrase);
    }
    return { type: 'SETTINGS_APPLIED', value: true };
  };
}
