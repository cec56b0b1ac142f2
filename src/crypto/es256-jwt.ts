// Standard ES256 JWTs (RFC 7515/7518: ECDSA P-256 over SHA-256 of `header.payload`, raw r‖s
// signature) signed by the deployment signer; what any JOSE library (jose, an OIDC client) verifies
// with the signer's public key. Used for the OIDC tokens oauth2_authenticate issues
// (turnkey-semantics.md §6 "OAuth2-only providers"). Session JWTs use Turnkey's own double-hash
// scheme instead (session-jwt.ts).
import type { P256Signer } from './p256.js';

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');

/** Signs `claims` (serialized in their key order) into a compact JWS with header {alg, typ[, kid]}. */
export function signEs256Jwt(claims: Record<string, unknown>, signer: P256Signer, opts: { kid?: string } = {}): string {
  const header = { alg: 'ES256', typ: 'JWT', ...(opts.kid ? { kid: opts.kid } : {}) };
  const signingInput = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  return `${signingInput}.${b64url(signer.signRaw(Buffer.from(signingInput, 'ascii')))}`;
}
