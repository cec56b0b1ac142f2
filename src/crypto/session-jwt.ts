// Session JWTs signed by the deployment's P-256 signer, in the exact form the Turnkey SDK reads and
// verifies (docs/reference/sessions.md "The session JWT", docs/reference/policies.md; docs/reference/sessions.md
// "Sessions"): header {"alg":"ES256","typ":"JWT"}, a pure-ASCII JSON payload, and a 64-byte r‖s
// signature. The signature follows Turnkey's session scheme, which @turnkey/crypto
// `verifySessionJwtSignature(jwt, signerPublicKey)` checks: ECDSA-P256 whose digest is
// sha256(sha256(header.payload)), i.e. ES256 over the 32 bytes sha256(header.payload).
// Payloads are built so that their base64url never contains `-` or `_`, because clients decode them
// with a plain `atob` (docs/reference/policies.md).
import { P256Signer, sha256, verifyP256Raw, type BytesLike } from './p256.js';

const HEADER = { alg: 'ES256', typ: 'JWT' };

export type SessionClaims = Record<string, string | number>;

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');

/**
 * A payload byte at position 2 (mod 3) equal to `>`, `?`, `~` or DEL is the only way ASCII JSON
 * produces base64 index 62/63 (`-`/`_` in base64url); anything outside printable ASCII is refused too.
 */
export function assertAtobSafe(json: string): void {
  if (!/^[\x20-\x7d]*$/.test(json) || /[>?]/.test(json)) {
    throw new Error('JWT payload must be printable ASCII without ">", "?" or "~"');
  }
}

/**
 * JSON whose string values may hold any character (a session profile's scope is policy-language
 * text such as `eth.tx.value > 5`): `>`, `?`, `~` and everything outside printable ASCII are
 * written as \uXXXX escapes, which JSON.parse reads back to the same string. Outside strings
 * JSON.stringify never produces those characters.
 */
function atobSafeJson(claims: SessionClaims): string {
  return JSON.stringify(claims).replace(/[^\x20-\x7d]|[>?]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Signs `claims` (serialized in their key order) into a compact JWT. */
export function signSessionJwt(claims: SessionClaims, signer: P256Signer): string {
  const payload = atobSafeJson(claims);
  assertAtobSafe(payload);
  const signingInput = `${b64url(JSON.stringify(HEADER))}.${b64url(payload)}`;
  const signature = signer.signRaw(sha256(Buffer.from(signingInput, 'ascii')));
  return `${signingInput}.${b64url(signature)}`;
}

/**
 * Verifies a JWT made by `signSessionJwt` with the signer's public key and returns its claims, or
 * undefined when it is malformed or the signature does not hold. Expiry is the caller's business.
 */
export function verifySessionJwt(token: string, signerPublicKey: BytesLike): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]+$/.test(p))) return undefined;
  const [header, payload, signature] = parts;
  let parsedHeader: unknown;
  let claims: unknown;
  try {
    parsedHeader = JSON.parse(Buffer.from(header, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if ((parsedHeader as { alg?: unknown } | null)?.alg !== 'ES256') return undefined;
  if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) return undefined;
  const sig = Buffer.from(signature, 'base64url');
  if (sig.length !== 64) return undefined;
  const ok = verifyP256Raw(signerPublicKey, sha256(Buffer.from(`${header}.${payload}`, 'ascii')), sig);
  return ok ? (claims as Record<string, unknown>) : undefined;
}
