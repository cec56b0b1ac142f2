// OTP verification tokens as everything but verify_otp reads them (docs/reference/sessions.md "OTP":
// claims, the ES256 form, client signatures over a token usage; docs/reference/bundles.md "Other
// signed tokens"): verify_otp (otp.ts) issues them; otp_login, stamp_login's attested stamps, contact
// updates, signups (verified-contacts.ts) and the auth proxy read them here, so those readers and
// otp.ts do not import each other.
import { samePublicKey, verifyP256Raw } from '../../crypto/p256.js';
import { verifyEs256Jwt } from '../../crypto/es256-jwt.js';
import { verifySessionJwt } from '../../crypto/session-jwt.js';
import { invalid } from '../../errors/errors.js';

export const OTP_TYPES = ['OTP_TYPE_EMAIL', 'OTP_TYPE_SMS'] as const;
export type OtpType = (typeof OTP_TYPES)[number];

export interface ClientSignature {
  publicKey: string;
  scheme: string;
  message: string;
  signature: string;
}

export interface VerificationClaims {
  exp: number;
  id: string;
  organization_id: string;
  verification_type: OtpType;
  contact: string;
  public_key?: string;
}

/** A verification token refused, and why (what the client is told). */
export const tokenRefused = (why: string) => invalid(`invalid verification token: ${why}`);

/** The claims of a token signed by `signerPublicKey`: standard ES256, or the legacy session-JWT form. */
async function signedClaims(token: string, signerPublicKey: Uint8Array): Promise<Record<string, unknown> | undefined> {
  if (typeof token !== 'string') return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(await verifyEs256Jwt(token, signerPublicKey)).toString('utf8'));
    return claims !== null && typeof claims === 'object' && !Array.isArray(claims) ? (claims as Record<string, unknown>) : undefined;
  } catch {
    // Not a standard ES256 JWT of this signer: a token of an earlier version, or a forgery.
    return verifySessionJwt(token, signerPublicKey);
  }
}

/** The claims of a verification token this deployment issued, after its signature and expiry. */
export async function readVerificationToken(token: string, signerPublicKey: Uint8Array, now: number): Promise<VerificationClaims> {
  const claims = await signedClaims(token, signerPublicKey);
  if (!claims) throw tokenRefused('it is malformed or its signature does not verify');
  const { exp, id, organization_id: org, verification_type: type, contact, public_key: pub } = claims;
  // An id_token this deployment issued (oauth2_authenticate) is signed by the same key; it names an
  // issuer and a numeric exp, and is never a verification token.
  if ('iss' in claims) throw tokenRefused('it is not an OTP verification token');
  if (typeof exp !== 'string' || !/^\d+$/.test(exp) || typeof id !== 'string' || typeof org !== 'string' || typeof contact !== 'string') {
    throw tokenRefused('it is not an OTP verification token');
  }
  if (!(OTP_TYPES as readonly unknown[]).includes(type)) throw tokenRefused('it is not an OTP verification token');
  if (pub !== undefined && typeof pub !== 'string') throw tokenRefused('its public_key is malformed');
  if (Number(exp) <= now) throw tokenRefused(`it expired at ${new Date(Number(exp)).toISOString()}; verify a new code`);
  return { exp: Number(exp), id, organization_id: org, verification_type: type as OtpType, contact, ...(pub !== undefined ? { public_key: pub } : {}) };
}

/**
 * A client signature over a token usage (docs/reference/sessions.md "Login activities"): scheme P-256,
 * by the verification token's own key ("the signature's public key must match the public key contained
 * within the OTP verification token"), raw r||s over the message, which must parse as JSON and pass
 * `usage`'s check of its shape. `expected` describes that shape in the error.
 */
export function checkClientSignature(
  sig: ClientSignature,
  claims: Pick<VerificationClaims, 'public_key'>,
  expected: string,
  usage: (message: Record<string, any>) => void,
): void {
  if (claims.public_key === undefined) throw invalid('invalid clientSignature: the verification token is bound to no public key');
  if (sig.scheme !== 'CLIENT_SIGNATURE_SCHEME_API_P256') {
    throw invalid(`invalid clientSignature: scheme must be CLIENT_SIGNATURE_SCHEME_API_P256, got ${JSON.stringify(sig.scheme)}`);
  }
  if (!samePublicKey(sig.publicKey, claims.public_key)) {
    throw invalid('invalid clientSignature: its public key must match the public key contained within the OTP verification token');
  }
  let message: unknown;
  try {
    message = JSON.parse(sig.message);
  } catch {
    message = undefined;
  }
  if (message === null || typeof message !== 'object') throw invalid(`invalid clientSignature: message must be the JSON token usage ${expected}`);
  usage(message as Record<string, any>);
  const signature = sig.signature.toLowerCase().replace(/^0x/, '');
  let ok = false;
  try {
    ok = /^[0-9a-f]{128}$/.test(signature) && verifyP256Raw(claims.public_key, Buffer.from(sig.message, 'utf8'), signature);
  } catch {
    ok = false;
  }
  if (!ok) throw invalid('invalid clientSignature: the signature (raw r||s hex, P-256 SHA-256) does not verify with the token public key');
}
