// Request stamps: the `X-Stamp` header (base64url of JSON {publicKey, scheme, signature}) and the
// `X-Stamp-Webauthn` header (plain JSON), as the official SDK produces them (docs/reference/api.md
// docs/reference/api.md "Stamps"). Verification always runs over the raw body bytes as received, never a re-serialization.
// DER signatures are parsed leniently (non-minimal integers accepted, no low-S rule), because the
// SDK's wallet stamper emits non-minimal DER and Node/WebCrypto may emit high-S (docs/reference/api.md "Stamps").
import { createPublicKey, verify as nodeVerify, type KeyObject } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { parseDerSignature, verifyP256Der } from '../crypto/p256.js';
import { SigilError } from '../errors/errors.js';

export const STAMP_SCHEMES = [
  'SIGNATURE_SCHEME_TK_API_P256',
  'SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191',
  'SIGNATURE_SCHEME_TK_API_ED25519',
] as const;
export type StampScheme = (typeof STAMP_SCHEMES)[number];

/** The credential type an API key of each scheme is registered with. */
export const SCHEME_CURVE: Record<StampScheme, string> = {
  SIGNATURE_SCHEME_TK_API_P256: 'API_KEY_CURVE_P256',
  SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191: 'API_KEY_CURVE_SECP256K1',
  SIGNATURE_SCHEME_TK_API_ED25519: 'API_KEY_CURVE_ED25519',
};

export interface ApiKeyStamp {
  kind: 'api_key';
  publicKey: string;
  scheme: StampScheme;
  signature: string;
}

export interface WebauthnStamp {
  kind: 'webauthn';
  authenticatorData: string;
  clientDataJson: string;
  credentialId: string;
  signature: string;
}

/**
 * `X-Stamp-Attested` (docs/reference/api.md "Stamps"): a P-256 key signs the body, and an attestation of
 * that key (an OTP verification token bound to it, or an OIDC id_token whose nonce commits to it)
 * says whose it is. Sent by @turnkey/core's loginWithOtp / loginWithOauth to stamp_login only.
 */
export interface AttestedStamp {
  kind: 'attested';
  scheme: AttestedScheme;
  /** Compressed P-256 public key, lowercase hex. */
  publicKey: string;
  publicKeyAttestation: string;
  signature: string;
}

export const ATTESTED_SCHEMES = ['STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN', 'STAMP_ATTESTED_SCHEME_P256_OIDC'] as const;
export type AttestedScheme = (typeof ATTESTED_SCHEMES)[number];

export type Stamp = ApiKeyStamp | WebauthnStamp | AttestedStamp;

const malformed = (message = 'malformed activity stamp') => new SigilError('SIGNATURE_INVALID', message);

function isHex(s: unknown, bytes?: number): s is string {
  return typeof s === 'string' && /^[0-9a-fA-F]*$/.test(s) && s.length % 2 === 0 && (bytes === undefined || s.length === bytes * 2);
}

/** Reads the stamp headers of a request; throws the SDK-visible errors for missing or malformed stamps. */
export function parseStamp(headers: Record<string, string | string[] | undefined>): Stamp {
  // Node lowercases header names, so X-Stamp-Webauthn and X-Stamp-WebAuthn arrive as one name.
  const apiStamp = headers['x-stamp'];
  const webauthnStamp = headers['x-stamp-webauthn'];
  if (typeof apiStamp === 'string' && apiStamp !== '') return parseApiKeyStamp(apiStamp);
  if (typeof webauthnStamp === 'string' && webauthnStamp !== '') return parseWebauthnStamp(webauthnStamp);
  const attestedStamp = headers['x-stamp-attested'];
  if (typeof attestedStamp === 'string' && attestedStamp !== '') return parseAttestedStamp(attestedStamp);
  throw new SigilError(
    'SIGNATURE_MISSING',
    'cannot authenticate public API activity request without a stamp (X-Stamp/X-Stamp-Webauthn header)',
  );
}

function parseAttestedStamp(value: string): AttestedStamp {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8'));
  } catch {
    throw malformed('could not extract attested stamp: the X-Stamp-Attested header is not base64url-encoded JSON');
  }
  const { publicKeyAttestation, scheme, publicKey, signature } = parsed ?? {};
  if (!ATTESTED_SCHEMES.includes(scheme as AttestedScheme)) {
    throw malformed(`could not extract attested stamp: unsupported scheme ${JSON.stringify(scheme)}; expected ${ATTESTED_SCHEMES.join(' or ')}`);
  }
  if (typeof publicKeyAttestation !== 'string' || publicKeyAttestation === '') throw malformed('could not extract attested stamp: missing publicKeyAttestation');
  if (!isHex(publicKey, 33) || !isHex(signature) || signature.length === 0) {
    throw malformed('could not extract attested stamp: publicKey must be a compressed P-256 key and signature DER, both hex');
  }
  return { kind: 'attested', scheme: scheme as AttestedScheme, publicKey: publicKey.toLowerCase(), publicKeyAttestation, signature: signature.toLowerCase() };
}

/** The attested stamp's own signature: DER ECDSA P-256/SHA-256 over the body by its public key. */
export function verifyAttestedStamp(stamp: AttestedStamp, rawBody: Uint8Array): void {
  if (!verifyP256Stamp(stamp.publicKey, rawBody, Buffer.from(stamp.signature, 'hex'))) {
    throw new SigilError('SIGNATURE_INVALID', 'could not verify attested stamp signature');
  }
}

function parseApiKeyStamp(value: string): ApiKeyStamp {
  let parsed: Record<string, unknown>;
  try {
    const json = Buffer.from(value.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8');
    parsed = JSON.parse(json);
  } catch {
    throw malformed('could not extract api key stamp: the X-Stamp header is not base64url-encoded JSON');
  }
  if (parsed === null || typeof parsed !== 'object') throw malformed('could not extract api key stamp');
  const { publicKey, scheme, signature } = parsed;
  if (!STAMP_SCHEMES.includes(scheme as StampScheme)) {
    throw malformed(`could not extract api key stamp: unsupported signature scheme ${JSON.stringify(scheme)}`);
  }
  if (!isHex(publicKey) || publicKey.length === 0 || !isHex(signature) || signature.length === 0) {
    throw malformed('could not extract api key stamp: publicKey and signature must be hex strings');
  }
  return { kind: 'api_key', publicKey: publicKey.toLowerCase(), scheme: scheme as StampScheme, signature: signature.toLowerCase() };
}

function parseWebauthnStamp(value: string): WebauthnStamp {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw malformed('could not extract webauthn stamp: the X-Stamp-Webauthn header is not JSON');
  }
  const { authenticatorData, clientDataJson, credentialId, signature } = parsed ?? {};
  for (const [k, v] of Object.entries({ authenticatorData, clientDataJson, credentialId, signature })) {
    if (typeof v !== 'string' || v === '') throw malformed(`could not extract webauthn stamp: missing ${k}`);
  }
  return {
    kind: 'webauthn',
    authenticatorData: authenticatorData as string,
    clientDataJson: clientDataJson as string,
    credentialId: credentialId as string,
    signature: signature as string,
  };
}

const ED25519_SPKI = Buffer.from('302a300506032b6570032100', 'hex');

// Ed25519 verifying keys are cached: importing a key costs more than verifying with it.
const ed25519Keys = new Map<string, KeyObject>();
const KEY_CACHE_MAX = 4096;

function ed25519Key(publicKeyHex: string): KeyObject {
  let k = ed25519Keys.get(publicKeyHex);
  if (!k) {
    k = createPublicKey({ key: Buffer.concat([ED25519_SPKI, Buffer.from(publicKeyHex, 'hex')]), format: 'der', type: 'spki' });
    if (ed25519Keys.size >= KEY_CACHE_MAX) ed25519Keys.delete(ed25519Keys.keys().next().value as string);
    ed25519Keys.set(publicKeyHex, k);
  }
  return k;
}

function verifyP256Stamp(publicKeyHex: string, message: Uint8Array, signature: Uint8Array): boolean {
  try {
    return verifyP256Der(publicKeyHex, message, signature);
  } catch {
    return false; // not a P-256 point
  }
}

function verifyEd25519(publicKeyHex: string, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKeyHex.length !== 64 || signature.length !== 64) return false;
  try {
    return nodeVerify(null, message, ed25519Key(publicKeyHex), signature);
  } catch {
    return false;
  }
}

/** EIP-191 personal_sign: keccak256("\x19Ethereum Signed Message:\n" + len + body), secp256k1, v dropped. */
function verifyEip191(publicKeyHex: string, message: Uint8Array, signature: Uint8Array): boolean {
  let rs: Uint8Array;
  try {
    rs = parseDerSignature(signature);
  } catch {
    return false;
  }
  const prefix = Buffer.from(`\x19Ethereum Signed Message:\n${message.length}`, 'utf8');
  const digest = keccak_256(Buffer.concat([prefix, message]));
  try {
    return secp256k1.verify(rs, digest, Buffer.from(publicKeyHex, 'hex'), {
      prehash: false,
      lowS: false,
    });
  } catch {
    return false;
  }
}

/** Verifies an API key stamp over the raw body; throws the SDK-visible error when it does not hold. */
export function verifyApiKeyStamp(stamp: ApiKeyStamp, rawBody: Uint8Array): void {
  const sig = Buffer.from(stamp.signature, 'hex');
  let ok: boolean;
  switch (stamp.scheme) {
    case 'SIGNATURE_SCHEME_TK_API_P256':
      ok = verifyP256Stamp(stamp.publicKey, rawBody, sig);
      break;
    case 'SIGNATURE_SCHEME_TK_API_ED25519':
      ok = verifyEd25519(stamp.publicKey, rawBody, sig);
      break;
    case 'SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191':
      ok = verifyEip191(stamp.publicKey, rawBody, sig);
      break;
  }
  if (!ok) throw new SigilError('SIGNATURE_INVALID', 'could not verify api key signature');
}
