// QOS "quorum key" encryption, the receiving side: what @turnkey/crypto `encryptOauth2ClientSecret`
// (via `quorumKeyEncrypt`) produces, docs/reference/bundles.md Sigil is the receiver: clients pass
// the deployment signer's public key (GET /.well-known/sigil.json `signerPublicKey`) as
// `dangerouslyOverrideTlsFetcherPublicKey`, the escape hatch of docs/reference/bundles.md
//
// Envelope (borsh): nonce[12] ‖ ephemeralSenderPublic[65, uncompressed] ‖ u32le(len) ‖ ciphertext+tag[len]
// Key:  AES-256-GCM key = HMAC-SHA512(key = eph_pub ‖ receiver_pub ‖ ecdh_x, "qos_encryption_hmac_message")[0:32]
// AAD:  eph_pub ‖ len(eph_pub) ‖ receiver_pub ‖ len(receiver_pub)   (one length byte each)
// `receiver_pub` is the key exactly as the client gave it; the SDK documents it as uncompressed, a
// compressed one is tried too because the SDK would encrypt to it without complaint.
import { createDecipheriv, createHmac } from 'node:crypto';
import { type BytesLike, CryptoError, concatBytes, hexToBytes } from './p256.js';

const NONCE = 12;
const EPHEMERAL = 65;
const TAG = 16;
const HMAC_MESSAGE = Buffer.from('qos_encryption_hmac_message', 'utf8');

/** The receiving key: its ECDH and both encodings of its public key (a P256Signer fits). */
export interface QuorumKeyReceiver {
  publicKey: Uint8Array;
  publicKeyUncompressed: Uint8Array;
  ecdh(publicKey: BytesLike): Uint8Array;
}

function aad(sender: Uint8Array, receiver: Uint8Array): Uint8Array {
  return concatBytes(sender, Uint8Array.of(sender.length), receiver, Uint8Array.of(receiver.length));
}

function tryOpen(nonce: Uint8Array, sender: Uint8Array, receiver: Uint8Array, sharedX: Uint8Array, ciphertext: Uint8Array): Uint8Array | undefined {
  const key = createHmac('sha512', concatBytes(sender, receiver, sharedX)).update(HMAC_MESSAGE).digest().subarray(0, 32);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce);
    decipher.setAAD(aad(sender, receiver));
    decipher.setAuthTag(ciphertext.subarray(ciphertext.length - TAG));
    return new Uint8Array(Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - TAG)), decipher.final()]));
  } catch {
    return undefined;
  }
}

/**
 * Opens a hex envelope made by `quorumKeyEncrypt` for `receiver`. Throws CryptoError
 * ('INVALID_ENVELOPE') when it is malformed or was not encrypted to this key.
 */
export function openQuorumKeyEnvelope(envelopeHex: string, receiver: QuorumKeyReceiver): Uint8Array {
  const bad = (why: string) => new CryptoError('INVALID_ENVELOPE', why);
  let raw: Uint8Array;
  try {
    raw = hexToBytes(envelopeHex.startsWith('0x') ? envelopeHex.slice(2) : envelopeHex);
  } catch {
    throw bad('the envelope is not hex');
  }
  if (raw.length < NONCE + EPHEMERAL + 4 + TAG) throw bad('the envelope is too short');
  const nonce = raw.subarray(0, NONCE);
  const sender = raw.subarray(NONCE, NONCE + EPHEMERAL);
  const len = Buffer.from(raw.buffer, raw.byteOffset + NONCE + EPHEMERAL, 4).readUInt32LE(0);
  const ciphertext = raw.subarray(NONCE + EPHEMERAL + 4);
  if (len !== ciphertext.length || len < TAG) throw bad('the envelope length field does not match its ciphertext');
  if (sender[0] !== 0x04) throw bad('the envelope sender key is not an uncompressed P-256 point');
  let sharedX: Uint8Array;
  try {
    sharedX = receiver.ecdh(sender);
  } catch {
    throw bad('the envelope sender key is not a P-256 point');
  }
  for (const receiverKey of [receiver.publicKeyUncompressed, receiver.publicKey]) {
    const plaintext = tryOpen(nonce, sender, receiverKey, sharedX, ciphertext);
    if (plaintext) return plaintext;
  }
  throw bad('the envelope does not open with this key (was it encrypted to another key?)');
}
