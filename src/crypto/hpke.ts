// HPKE as Turnkey uses it: RFC 9180 base mode (0x00), single shot, with
//   KEM  DHKEM(P-256, HKDF-SHA256)  0x0010
//   KDF  HKDF-SHA256                0x0001
//   AEAD AES-256-GCM                0x0002
//   info = "turnkey_hpke"
//   AAD  = enc(65 B uncompressed) ‖ pkR(65 B uncompressed)   <- non-standard: plain HPKE uses an empty AAD
// Follows docs/reference/bundles.md and the reference key schedule in docs/reference/bundles.md, and docs/reference/bundles.md.
// The client side is `hpkeEncrypt` / `hpkeDecrypt` in @turnkey/crypto (packages/crypto/src/crypto.ts).
//
// Implemented directly on node:crypto (HMAC-SHA256, AES-256-GCM, ECDH) rather than @hpke/core because
// it is synchronous, small enough to read against the RFC, and the AAD rule must be applied exactly;
// the tests cross-check both directions against @hpke/core and the SDK.

import { createCipheriv, createDecipheriv, createHmac } from 'node:crypto';
import {
  type BytesLike,
  CryptoError,
  concatBytes,
  decompressPublicKey,
  ecdhWithPublic,
  generateP256KeyPair,
  toBytes,
} from './p256.js';

export const HPKE_INFO = 'turnkey_hpke';

const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const HPKE_V1 = utf8('HPKE-v1');
const SUITE_ID_KEM = concatBytes(utf8('KEM'), Uint8Array.of(0x00, 0x10));
const SUITE_ID_HPKE = concatBytes(utf8('HPKE'), Uint8Array.of(0x00, 0x10, 0x00, 0x01, 0x00, 0x02));
const EMPTY = new Uint8Array(0);
const NK = 32; // AES-256 key length
const NN = 12; // GCM nonce length
const NT = 16; // GCM tag length
const NH = 32; // SHA-256 output length

function hmacSha256(key: Uint8Array, data: Uint8Array): Uint8Array {
  return new Uint8Array(createHmac('sha256', key).update(data).digest());
}

/** RFC 9180 §4 LabeledExtract. An empty salt equals HashLen zero bytes under HMAC, per RFC 5869. */
function labeledExtract(salt: Uint8Array, label: string, ikm: Uint8Array, suiteId: Uint8Array): Uint8Array {
  return hmacSha256(salt, concatBytes(HPKE_V1, suiteId, utf8(label), ikm));
}

/** RFC 9180 §4 LabeledExpand (HKDF-Expand with info = I2OSP(L,2) ‖ "HPKE-v1" ‖ suite ‖ label ‖ info). */
function labeledExpand(
  prk: Uint8Array,
  label: string,
  info: Uint8Array,
  length: number,
  suiteId: Uint8Array,
): Uint8Array {
  const labeledInfo = concatBytes(Uint8Array.of(length >> 8, length & 0xff), HPKE_V1, suiteId, utf8(label), info);
  const out = new Uint8Array(length);
  let t: Uint8Array = EMPTY;
  for (let i = 1, off = 0; off < length; i++) {
    t = hmacSha256(prk, concatBytes(t, labeledInfo, Uint8Array.of(i)));
    out.set(t.subarray(0, Math.min(NH, length - off)), off);
    off += NH;
  }
  return out;
}

/**
 * key_schedule_context = mode(0x00) ‖ psk_id_hash ‖ info_hash. Constant for base mode with a fixed
 * info, so it is computed once. Exported for the test that pins it to the SDK's AES_KEY_INFO bytes.
 */
export const KEY_SCHEDULE_CONTEXT: Uint8Array = concatBytes(
  Uint8Array.of(0x00),
  labeledExtract(EMPTY, 'psk_id_hash', EMPTY, SUITE_ID_HPKE),
  labeledExtract(EMPTY, 'info_hash', utf8(HPKE_INFO), SUITE_ID_HPKE),
);

/** DHKEM ExtractAndExpand then the base-mode key schedule: (AES key, base nonce). */
function keySchedule(dh: Uint8Array, enc65: Uint8Array, pkR65: Uint8Array): { key: Uint8Array; nonce: Uint8Array } {
  const eaePrk = labeledExtract(EMPTY, 'eae_prk', dh, SUITE_ID_KEM);
  const sharedSecret = labeledExpand(eaePrk, 'shared_secret', concatBytes(enc65, pkR65), NH, SUITE_ID_KEM);
  // psk = "" in base mode.
  const secret = labeledExtract(sharedSecret, 'secret', EMPTY, SUITE_ID_HPKE);
  return {
    key: labeledExpand(secret, 'key', KEY_SCHEDULE_CONTEXT, NK, SUITE_ID_HPKE),
    nonce: labeledExpand(secret, 'base_nonce', KEY_SCHEDULE_CONTEXT, NN, SUITE_ID_HPKE),
  };
}

export interface HpkeSealed {
  /** Ephemeral public key `enc`, 65 bytes uncompressed. */
  encappedPublic: Uint8Array;
  /** AES-256-GCM ciphertext with the 16-byte tag appended. */
  ciphertext: Uint8Array;
}

/**
 * Seal `plaintext` to `receiverPublicKey` (33-byte compressed or 65-byte uncompressed, hex or bytes).
 * The key is uncompressed before use because the client derives pkR uncompressed from its private key
 * for both kem_context and AAD, whatever form it sent (docs/reference/bundles.md).
 */
export function seal(receiverPublicKey: BytesLike, plaintext: Uint8Array): HpkeSealed {
  const ephemeral = generateP256KeyPair();
  try {
    return sealWithEphemeralKey(ephemeral.privateKey, receiverPublicKey, plaintext);
  } finally {
    ephemeral.privateKey.fill(0);
  }
}

/**
 * `seal` with a caller-chosen ephemeral private key. Deterministic, so it exists for test vectors
 * only: re-using an ephemeral key across messages to the same receiver re-uses the AES key and nonce.
 */
export function sealWithEphemeralKey(
  ephemeralPrivateKey: BytesLike,
  receiverPublicKey: BytesLike,
  plaintext: Uint8Array,
): HpkeSealed {
  if (!(plaintext instanceof Uint8Array)) throw new CryptoError('INVALID_INPUT', 'plaintext must be bytes');
  const pkR = decompressPublicKey(receiverPublicKey);
  const { sharedSecret: dh, ownPublicKeyUncompressed: enc } = ecdhWithPublic(ephemeralPrivateKey, pkR);
  const { key, nonce } = keySchedule(dh, enc, pkR);
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: NT });
  cipher.setAAD(concatBytes(enc, pkR));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  key.fill(0);
  return { encappedPublic: enc, ciphertext: new Uint8Array(body) };
}

/**
 * Open a single-shot HPKE ciphertext with `receiverPrivateKey` (32 bytes, hex or bytes).
 * `encappedPublic` may be 65-byte uncompressed (export/import/OTP JSON) or 33-byte compressed
 * (credential bundles); it is uncompressed before use, as the client does.
 * Throws CryptoError: INVALID_PUBLIC_KEY / INVALID_PRIVATE_KEY for bad keys, DECRYPTION_FAILED when
 * authentication fails (wrong key, tampered ciphertext, enc or AAD).
 */
export function open(receiverPrivateKey: BytesLike, encappedPublic: BytesLike, ciphertext: BytesLike): Uint8Array {
  const enc = decompressPublicKey(encappedPublic);
  const ct = toBytes(ciphertext);
  if (ct.length < NT) throw new CryptoError('DECRYPTION_FAILED', 'HPKE ciphertext is shorter than the GCM tag');
  const { sharedSecret: dh, ownPublicKeyUncompressed: pkR } = ecdhWithPublic(receiverPrivateKey, enc);
  const { key, nonce } = keySchedule(dh, enc, pkR);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: NT });
    decipher.setAAD(concatBytes(enc, pkR));
    decipher.setAuthTag(ct.subarray(ct.length - NT));
    return new Uint8Array(Buffer.concat([decipher.update(ct.subarray(0, ct.length - NT)), decipher.final()]));
  } catch {
    throw new CryptoError('DECRYPTION_FAILED', 'HPKE decryption failed: wrong key or tampered ciphertext');
  } finally {
    key.fill(0);
  }
}
