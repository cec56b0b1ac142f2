// Standard ES256 JWTs (RFC 7515/7518: ECDSA P-256 over SHA-256 of `header.payload`, raw r‖s
// signature) signed by the deployment signer; what any JOSE library (jose, an OIDC client) verifies
// with the signer's public key. Used for the OTP verification tokens verify_otp issues
// (docs/reference/bundles.md: @turnkey/crypto's verifyOtpVerificationToken checks a standard ES256
// JWT with header {"alg":"ES256","typ":"JWT"}) and the OIDC tokens oauth2_authenticate issues
// (docs/reference/organizations.md "Smart contract interfaces and OAuth 2.0 credentials"). Session JWTs use Turnkey's own double-hash
// scheme instead (session-jwt.ts). Verification goes through jose, the JOSE library the rest of
// Sigil uses, so what is accepted here is what any standard verifier accepts.
import { compactVerify, importJWK, type CryptoKey, type JWK } from 'jose';
import { assertAtobSafe } from './session-jwt.js';
import { decompressPublicKey, type P256Signer } from './p256.js';

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');

/**
 * Signs `claims` (serialized in their key order) into a compact JWS with header {alg, typ[, kid]}.
 * `atobSafe` refuses payloads whose base64url would hold `-` or `_`, for tokens clients decode with
 * a plain `atob` (docs/reference/sessions.md "The session JWT": @turnkey/core decodes verification tokens so).
 */
export function signEs256Jwt(claims: Record<string, unknown>, signer: P256Signer, opts: { kid?: string; atobSafe?: boolean } = {}): string {
  const header = { alg: 'ES256', typ: 'JWT', ...(opts.kid ? { kid: opts.kid } : {}) };
  const payload = JSON.stringify(claims);
  if (opts.atobSafe) assertAtobSafe(payload);
  const signingInput = `${b64url(JSON.stringify(header))}.${b64url(payload)}`;
  return `${signingInput}.${b64url(signer.signRaw(Buffer.from(signingInput, 'ascii')))}`;
}

/** A P-256 public key (33 bytes compressed or 65 uncompressed) as the JWK jose imports. */
export function p256PublicJwk(publicKey: Uint8Array): JWK {
  const uncompressed = publicKey.length === 33 ? decompressPublicKey(publicKey) : publicKey;
  if (uncompressed.length !== 65 || uncompressed[0] !== 4) throw new Error('the public key must be a P-256 point, 33 bytes compressed or 65 uncompressed');
  return { kty: 'EC', crv: 'P-256', x: b64url(uncompressed.subarray(1, 33)), y: b64url(uncompressed.subarray(33, 65)) };
}

// Importing a key costs more than verifying with it; a deployment has one signer key.
const imported = new Map<string, Promise<CryptoKey | Uint8Array>>();

/**
 * Verifies a compact ES256 JWS with `publicKey` (P-256, compressed or not) and answers its payload
 * bytes. Throws jose's errors (errors.JOSEError subclasses) when it does not verify; the claims are
 * the caller's to check, since Turnkey's tokens carry `exp` in a form RFC 7519 does not (an ms string).
 */
export async function verifyEs256Jwt(token: string, publicKey: Uint8Array): Promise<Uint8Array> {
  const id = b64url(publicKey);
  let key = imported.get(id);
  if (!key) {
    key = importJWK(p256PublicJwk(publicKey), 'ES256');
    imported.set(id, key);
  }
  const { payload } = await compactVerify(token, await key, { algorithms: ['ES256'] });
  return payload;
}
