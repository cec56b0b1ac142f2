// Turnkey-compatible HPKE bundles, server side. Follows docs/reference/bundles.md and the
// reference code in docs/reference/bundles.md; the client side is @turnkey/crypto (packages/crypto/src/turnkey.ts).
//
//  credential bundle (docs/reference/bundles.md)  bs58check( compressed enc(33 B) ‖ ciphertext‖tag ), unsigned.
//  signed envelope  (docs/reference/bundles.md)   {"version":"v1.0.0","data":hex(JSON),"dataSignature":DER hex,"enclaveQuorumPublic":hex65}
//                            dataSignature = ECDSA-P256-SHA256(signer, bytes of data); enclaveQuorumPublic is the
//                            signer's uncompressed lowercase hex, which clients compare as an exact string with
//                            `dangerouslyOverrideSignerPublicKey`.
//  export bundle    (docs/reference/bundles.md)   envelope, data = {"encappedPublic":hex65,"ciphertext":hex,"organizationId":id}
//  import bundle    (docs/reference/bundles.md)   envelope, data = {"targetPublic":hex65,"organizationId":id,"userId":id}; the client
//                            answers with formatHpkeBuf JSON {"encappedPublic":hex65,"ciphertext":hex}.
//  OTP target       (docs/reference/bundles.md)   envelope, data = {"targetPublic":hex65}; the client answers with formatHpkeBuf JSON
//                            of the plaintext JSON.stringify({otp_code, public_key}).
// Key order inside `data` is the order of real Turnkey bundles (fixtures in test/vectors/bundles.json);
// clients only JSON.parse it, but matching it keeps our bundles indistinguishable in shape.

import { createBase58check } from '@scure/base';
import { open, seal } from './hpke.js';
import {
  type BytesLike,
  CryptoError,
  P256Signer,
  bytesToHex,
  compressPublicKey,
  concatBytes,
  decompressPublicKey,
  decompressPublicKeyHex,
  hexToBytes,
  isValidPublicKey,
  publicKeyFromPrivate,
  sha256,
  verifyP256Der,
} from './p256.js';

export { CryptoError } from './p256.js';

export const BUNDLE_VERSION = 'v1.0.0';

/**
 * Error codes thrown (as CryptoError.code) by this module, besides the key errors of p256.ts
 * (INVALID_PUBLIC_KEY, INVALID_PRIVATE_KEY) and DECRYPTION_FAILED from hpke.ts.
 */
export type BundleErrorCode =
  | 'MALFORMED_BUNDLE'
  | 'SIGNER_MISMATCH'
  | 'BAD_SIGNATURE'
  | 'ORGANIZATION_MISMATCH'
  | 'USER_MISMATCH'
  | 'TARGET_KEY_MISMATCH'
  | 'INVALID_INPUT';

const fail = (code: BundleErrorCode, message: string) => new CryptoError(code, message);

/** The bundle signer: a P256Signer (preferred for the long-lived deployment key) or a raw private key. */
export type SignerInput = P256Signer | BytesLike;

const toSigner = (s: SignerInput): P256Signer => (s instanceof P256Signer ? s : new P256Signer(s));

const base58check = createBase58check(sha256);

function requireId(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.length === 0) throw fail('INVALID_INPUT', `${name} must be a non-empty string`);
  return value;
}

function requireBytes(value: unknown, name: string): Uint8Array {
  if (!(value instanceof Uint8Array)) throw fail('INVALID_INPUT', `${name} must be a Uint8Array`);
  return value;
}

function parseJsonObject(text: unknown, what: string): Record<string, unknown> {
  if (typeof text !== 'string') throw fail('MALFORMED_BUNDLE', `${what} must be a JSON string`);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw fail('MALFORMED_BUNDLE', `${what} is not valid JSON`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw fail('MALFORMED_BUNDLE', `${what} is not a JSON object`);
  return v as Record<string, unknown>;
}

function hexField(obj: Record<string, unknown>, field: string, what: string): Uint8Array {
  const v = obj[field];
  if (typeof v !== 'string' || v.length === 0) throw fail('MALFORMED_BUNDLE', `${what} is missing "${field}"`);
  try {
    return hexToBytes(v);
  } catch {
    throw fail('MALFORMED_BUNDLE', `${what} field "${field}" is not valid hex`);
  }
}

// ---------------------------------------------------------------------------------------------------
// credential bundle (docs/reference/bundles.md)

/**
 * Credential bundle for email auth / recovery, otp_auth, oauth and read-write sessions.
 * `plaintext` is the 32-byte P-256 private key of the API key the server just registered on the user;
 * `targetPublicKey` is the client's `targetPublicKey` (compressed or uncompressed, hex or bytes).
 * Returns the bs58check string the client passes to `decryptCredentialBundle`.
 */
export function makeCredentialBundle(params: { plaintext: Uint8Array; targetPublicKey: BytesLike }): string {
  const plaintext = requireBytes(params.plaintext, 'plaintext');
  const { encappedPublic, ciphertext } = seal(params.targetPublicKey, plaintext);
  return base58check.encode(concatBytes(compressPublicKey(encappedPublic), ciphertext));
}

/**
 * Inverse of makeCredentialBundle (what the client's `decryptCredentialBundle` does), for tests and
 * tooling. Returns the plaintext bytes.
 */
export function openCredentialBundle(params: { credentialBundle: string; receiverPrivateKey: BytesLike }): Uint8Array {
  let raw: Uint8Array;
  try {
    raw = base58check.decode(params.credentialBundle);
  } catch {
    throw fail('MALFORMED_BUNDLE', 'credential bundle is not valid base58check');
  }
  if (raw.length <= 33) throw fail('MALFORMED_BUNDLE', 'credential bundle is too short');
  return open(params.receiverPrivateKey, raw.subarray(0, 33), raw.subarray(33));
}

// ---------------------------------------------------------------------------------------------------
// signed envelope (docs/reference/bundles.md)

/**
 * Sign `data` (serialized with JSON.stringify, so in the object's key order) into the envelope
 * {"version","data","dataSignature","enclaveQuorumPublic"}. Low-level: prefer the make*Bundle functions.
 */
export function makeSignedBundle(data: Record<string, string>, signerPrivateKey: SignerInput): string {
  const signer = toSigner(signerPrivateKey);
  const dataBytes = new Uint8Array(Buffer.from(JSON.stringify(data), 'utf8'));
  return JSON.stringify({
    version: BUNDLE_VERSION,
    data: bytesToHex(dataBytes),
    dataSignature: signer.signDer(dataBytes),
    enclaveQuorumPublic: signer.publicKeyUncompressedHex,
  });
}

/**
 * Verify a signed envelope the way the client's `verifyEnclaveSignature` does: `enclaveQuorumPublic`
 * must be exactly the expected signer key as lowercase uncompressed hex, and `dataSignature` (DER,
 * parsed leniently, high-S allowed) must verify over the bytes of `data`. Returns the decoded `data` object.
 * Throws CryptoError MALFORMED_BUNDLE, SIGNER_MISMATCH or BAD_SIGNATURE.
 */
export function verifySignedBundle(bundle: string, signerPublicKey: BytesLike): { data: Record<string, unknown> } {
  const env = parseJsonObject(bundle, 'signed bundle');
  const expected = decompressPublicKeyHex(signerPublicKey);
  if (typeof env.enclaveQuorumPublic !== 'string') throw fail('MALFORMED_BUNDLE', 'signed bundle is missing "enclaveQuorumPublic"');
  if (env.enclaveQuorumPublic !== expected) {
    throw fail('SIGNER_MISMATCH', 'signed bundle was not signed by the expected signer key');
  }
  const dataBytes = hexField(env, 'data', 'signed bundle');
  if (typeof env.dataSignature !== 'string' || env.dataSignature.length === 0) {
    throw fail('MALFORMED_BUNDLE', 'signed bundle is missing "dataSignature"');
  }
  if (!verifyP256Der(expected, dataBytes, env.dataSignature)) {
    throw fail('BAD_SIGNATURE', 'signed bundle signature does not verify');
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(dataBytes);
  } catch {
    throw fail('MALFORMED_BUNDLE', 'signed bundle data is not UTF-8');
  }
  return { data: parseJsonObject(text, 'signed bundle data') };
}

// ---------------------------------------------------------------------------------------------------
// formatHpkeBuf JSON: {"encappedPublic":hex65,"ciphertext":hex}

/** Same JSON as the SDK's `formatHpkeBuf`: what clients send as `encryptedBundle` / `encryptedOtpBundle`. */
export function formatHpkeBundle(sealed: { encappedPublic: Uint8Array; ciphertext: Uint8Array }): string {
  return JSON.stringify({
    encappedPublic: bytesToHex(decompressPublicKey(sealed.encappedPublic)),
    ciphertext: bytesToHex(sealed.ciphertext),
  });
}

/** Parse formatHpkeBuf JSON. Extra fields are ignored; encappedPublic must be a valid P-256 point. */
export function parseHpkeBundle(json: string, what = 'encrypted bundle'): { encappedPublic: Uint8Array; ciphertext: Uint8Array } {
  const obj = parseJsonObject(json, what);
  const encappedPublic = hexField(obj, 'encappedPublic', what);
  const ciphertext = hexField(obj, 'ciphertext', what);
  if (!isValidPublicKey(encappedPublic)) throw fail('MALFORMED_BUNDLE', `${what} "encappedPublic" is not a P-256 public key`);
  return { encappedPublic, ciphertext };
}

// ---------------------------------------------------------------------------------------------------
// export bundle (docs/reference/bundles.md)

/**
 * `exportBundle` of export_wallet / export_private_key / export_wallet_account.
 *  - plaintext: wallet -> UTF-8 bytes of the mnemonic; private key -> raw key bytes (for keyFormat
 *    SOLANA exactly the 32-byte Ed25519 seed, which the client expands to bs58(seed ‖ pub)).
 *  - targetPublicKey: the intent's `targetPublicKey` (compressed or uncompressed, hex or bytes).
 *  - organizationId: the organization the client will pass to `decryptExportBundle` (checked there).
 *  - signerPrivateKey: the deployment's bundle signer.
 * Returns the envelope JSON string.
 */
export function makeExportBundle(params: {
  plaintext: Uint8Array;
  targetPublicKey: BytesLike;
  organizationId: string;
  signerPrivateKey: SignerInput;
}): string {
  const plaintext = requireBytes(params.plaintext, 'plaintext');
  const organizationId = requireId(params.organizationId, 'organizationId');
  const { encappedPublic, ciphertext } = seal(params.targetPublicKey, plaintext);
  return makeSignedBundle(
    { encappedPublic: bytesToHex(encappedPublic), ciphertext: bytesToHex(ciphertext), organizationId },
    params.signerPrivateKey,
  );
}

/**
 * Inverse of makeExportBundle, mirroring the client's `decryptExportBundle` checks (signer, signature,
 * organizationId, encappedPublic) for tests and tooling. Returns the plaintext bytes.
 */
export function openExportBundle(params: {
  exportBundle: string;
  receiverPrivateKey: BytesLike;
  organizationId: string;
  signerPublicKey: BytesLike;
}): Uint8Array {
  const { data } = verifySignedBundle(params.exportBundle, params.signerPublicKey);
  if (data.organizationId !== params.organizationId) {
    throw fail('ORGANIZATION_MISMATCH', 'export bundle was issued for a different organization');
  }
  const encappedPublic = hexField(data, 'encappedPublic', 'export bundle data');
  const ciphertext = hexField(data, 'ciphertext', 'export bundle data');
  return open(params.receiverPrivateKey, encappedPublic, ciphertext);
}

// ---------------------------------------------------------------------------------------------------
// import bundle (docs/reference/bundles.md)

/**
 * `importBundle` of init_import_wallet / init_import_private_key: the signed target key bound to
 * organization and user. The caller generates the target key pair (p256.generateP256KeyPair), keeps
 * the private key (encrypted at rest) with this bundle for the later import_* activity, and passes the
 * public key here. Returns the envelope JSON string.
 */
export function makeImportBundle(params: {
  organizationId: string;
  userId: string;
  targetPublicKey: BytesLike;
  signerPrivateKey: SignerInput;
}): string {
  const organizationId = requireId(params.organizationId, 'organizationId');
  const userId = requireId(params.userId, 'userId');
  // Always uncompressed: the client seals to `targetPublic` exactly as given, using it verbatim in
  // kem_context and AAD, while open() derives pkR uncompressed from the private key.
  const targetPublic = decompressPublicKeyHex(params.targetPublicKey);
  return makeSignedBundle({ targetPublic, organizationId, userId }, params.signerPrivateKey);
}

/**
 * Decrypt the `encryptedBundle` of import_wallet / import_private_key (output of the client's
 * `encryptWalletToBundle` / `encryptPrivateKeyToBundle`).
 *  - importBundle: the bundle this server issued at init_import_* (as stored), re-verified with
 *    signerPublicKey so a substituted or altered record is refused;
 *  - targetPrivateKey: the private half of its targetPublic;
 *  - organizationId, userId: from the import_* request; they must equal the ones the bundle was issued for.
 * Returns the plaintext: mnemonic UTF-8 bytes (wallet), raw key bytes (HEXADECIMAL key) or the 32-byte
 * seed (SOLANA key). Throws CryptoError ORGANIZATION_MISMATCH, USER_MISMATCH, TARGET_KEY_MISMATCH,
 * MALFORMED_BUNDLE, SIGNER_MISMATCH, BAD_SIGNATURE or DECRYPTION_FAILED.
 */
export function openImportBundle(params: {
  encryptedBundle: string;
  importBundle: string;
  targetPrivateKey: BytesLike;
  organizationId: string;
  userId: string;
  signerPublicKey: BytesLike;
}): Uint8Array {
  const { data } = verifySignedBundle(params.importBundle, params.signerPublicKey);
  if (typeof data.organizationId !== 'string' || data.organizationId !== params.organizationId) {
    throw fail('ORGANIZATION_MISMATCH', 'import bundle was issued for a different organization');
  }
  if (typeof data.userId !== 'string' || data.userId !== params.userId) {
    throw fail('USER_MISMATCH', 'import bundle was issued for a different user');
  }
  const targetPublic = hexField(data, 'targetPublic', 'import bundle data');
  const ownPublic = publicKeyFromPrivate(params.targetPrivateKey, false);
  if (!isValidPublicKey(targetPublic) || bytesToHex(decompressPublicKey(targetPublic)) !== bytesToHex(ownPublic)) {
    throw fail('TARGET_KEY_MISMATCH', 'import target private key does not match the import bundle');
  }
  const { encappedPublic, ciphertext } = parseHpkeBundle(params.encryptedBundle, 'encrypted import bundle');
  return open(params.targetPrivateKey, encappedPublic, ciphertext);
}

// ---------------------------------------------------------------------------------------------------
// OTP encryption target bundle (docs/reference/bundles.md)

/**
 * `otpEncryptionTargetBundle` of init_otp (V3) / auth-proxy otp_init_v2. The caller generates a target
 * key pair per OTP and keeps the private key with the OTP record. Clients verify it with
 * `encryptOtpCodeToBundle(code, bundle, publicKey, <signer public key>)`; without that override they
 * check Turnkey's TLS-fetcher key and refuse it (docs/reference/bundles.md).
 */
export function makeOtpEncryptionTargetBundle(params: { targetPublicKey: BytesLike; signerPrivateKey: SignerInput }): string {
  return makeSignedBundle({ targetPublic: decompressPublicKeyHex(params.targetPublicKey) }, params.signerPrivateKey);
}

/**
 * Decrypt `encryptedOtpBundle` (verify_otp V2 / otp_verify_v2) with the OTP's target private key.
 * Returns the code and the client public key to bind into the verification token (`public_key` claim,
 * docs/reference/auth-proxy.md), exactly as the client sent it (validated as a P-256 key, not re-encoded).
 */
export function openOtpBundle(params: { encryptedOtpBundle: string; targetPrivateKey: BytesLike }): {
  otpCode: string;
  publicKey: string;
} {
  const { encappedPublic, ciphertext } = parseHpkeBundle(params.encryptedOtpBundle, 'encrypted OTP bundle');
  const plaintext = open(params.targetPrivateKey, encappedPublic, ciphertext);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(plaintext);
  } catch {
    throw fail('MALFORMED_BUNDLE', 'encrypted OTP bundle plaintext is not UTF-8');
  }
  const obj = parseJsonObject(text, 'encrypted OTP bundle plaintext');
  if (typeof obj.otp_code !== 'string' || obj.otp_code.length === 0) {
    throw fail('MALFORMED_BUNDLE', 'encrypted OTP bundle has no "otp_code"');
  }
  if (typeof obj.public_key !== 'string' || !isValidPublicKey(obj.public_key)) {
    throw fail('MALFORMED_BUNDLE', 'encrypted OTP bundle "public_key" is not a P-256 public key');
  }
  return { otpCode: obj.otp_code, publicKey: obj.public_key };
}
