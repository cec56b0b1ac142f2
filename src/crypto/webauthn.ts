// WebAuthn verification, bytes in and verdicts out (no storage, no clock): passkey registration
// (a v1Attestation with its `challenge`, docs/reference/api.md "Stamps") and assertions
// (the X-Stamp-Webauthn stamp, docs/reference/api.md "Stamps", whose challenge is base64url of the UTF-8 bytes of the
// lowercase hex SHA-256 of the raw request body). The cryptography is @simplewebauthn/server's;
// this module fixes the parameters Turnkey uses (ES256 and RS256 only, user verification not
// required) and turns failures into one error type whose message names the reason.
import { createPublicKey } from 'node:crypto';
import { verifyAuthenticationResponse, verifyRegistrationResponse } from '@simplewebauthn/server';
import { cose, decodeCredentialPublicKey } from '@simplewebauthn/server/helpers';
import { bytesToHex, compressPublicKeyHex, isValidPublicKey, sha256 } from './p256.js';

/** COSE algorithms Turnkey accepts: ES256 and RS256 (docs/reference/organizations.md "Users and credentials"). */
export const SUPPORTED_COSE_ALGORITHMS = [-7, -257] as const;

/** A WebAuthn ceremony that does not verify; the message says why, without secrets. */
export class WebauthnError extends Error {
  override readonly name = 'WebauthnError';
}

export interface WebauthnExpectations {
  /** The relying party id whose SHA-256 the authenticator data must carry. */
  rpId: string;
  /** Allowed `clientDataJSON.origin` values; `*` allows any origin. */
  origins: readonly string[];
}

const B64URL = /^[A-Za-z0-9_-]*$/;
const B64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Decodes base64url (or standard base64, padded or not); undefined when it is neither. */
export function decodeBase64Url(value: string): Uint8Array | undefined {
  if (typeof value !== 'string') return undefined;
  const trimmed = value.replace(/=+$/, '');
  if (!B64URL.test(trimmed) && !B64.test(value)) return undefined;
  if (trimmed.length % 4 === 1) return undefined;
  return new Uint8Array(Buffer.from(trimmed.replace(/\+/g, '-').replace(/\//g, '_'), 'base64url'));
}

export function encodeBase64Url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}

/** The one spelling a credential id is stored and looked up under: base64url without padding. */
export function canonicalCredentialId(value: string): string | undefined {
  const bytes = decodeBase64Url(value);
  return bytes && bytes.length > 0 ? encodeBase64Url(bytes) : undefined;
}

/** The challenge an X-Stamp-Webauthn assertion signs for `body`: base64url(utf8(hex(sha256(body)))). */
export function challengeOfBody(body: Uint8Array): string {
  return Buffer.from(bytesToHex(sha256(body)), 'utf8').toString('base64url');
}

interface ClientData {
  type: string;
  challenge: string;
  origin: string;
}

/** Reads clientDataJSON and checks type, challenge and origin, so refusals name their reason. */
function checkClientData(clientDataJson: string, type: string, challenge: Uint8Array, origins: readonly string[]): ClientData {
  const raw = decodeBase64Url(clientDataJson);
  let data: Partial<ClientData>;
  try {
    data = JSON.parse(Buffer.from(raw ?? []).toString('utf8'));
  } catch {
    throw new WebauthnError('clientDataJson is not base64url-encoded JSON');
  }
  if (data === null || typeof data !== 'object') throw new WebauthnError('clientDataJson is not a JSON object');
  if (data.type !== type) throw new WebauthnError(`clientDataJson.type is ${JSON.stringify(data.type)}, expected "${type}"`);
  const signed = typeof data.challenge === 'string' ? decodeBase64Url(data.challenge) : undefined;
  if (!signed || Buffer.compare(Buffer.from(signed), Buffer.from(challenge)) !== 0) {
    throw new WebauthnError('clientDataJson.challenge does not match the expected challenge');
  }
  if (typeof data.origin !== 'string' || (!origins.includes('*') && !origins.includes(data.origin))) {
    throw new WebauthnError(`origin ${JSON.stringify(data.origin)} is not an allowed WebAuthn origin`);
  }
  return data as ClientData;
}

/** The library's own checks repeat ours and add the signature, rpIdHash and flags checks. */
async function guarded<T>(rpId: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof WebauthnError) throw err;
    if ((err as Error).name === 'UnexpectedRPIDHash') {
      throw new WebauthnError(`the authenticator data is for another relying party (its RP ID hash is not that of "${rpId}")`);
    }
    throw new WebauthnError((err as Error).message ?? String(err));
  }
}

/** The key as the API shows it: compressed P-256 hex for ES256, SPKI DER hex for RS256. */
export function displayPublicKey(cosePublicKey: Uint8Array): { algorithm: number; hex: string } {
  const key = decodeCredentialPublicKey(new Uint8Array(cosePublicKey));
  const alg = key.get(cose.COSEKEYS.alg);
  if (alg === -7 && cose.isCOSEPublicKeyEC2(key)) {
    const x = key.get(cose.COSEKEYS.x);
    const y = key.get(cose.COSEKEYS.y);
    if (key.get(cose.COSEKEYS.crv) !== cose.COSECRV.P256 || !x || !y || x.length !== 32 || y.length !== 32) {
      throw new WebauthnError('the ES256 credential public key is not a P-256 point');
    }
    const uncompressed = new Uint8Array([4, ...x, ...y]);
    if (!isValidPublicKey(uncompressed)) throw new WebauthnError('the ES256 credential public key is not a P-256 point');
    return { algorithm: alg, hex: compressPublicKeyHex(uncompressed) };
  }
  if (alg === -257 && cose.isCOSEPublicKeyRSA(key)) {
    const n = key.get(cose.COSEKEYS.n);
    const e = key.get(cose.COSEKEYS.e);
    if (!n || !e) throw new WebauthnError('the RS256 credential public key lacks its modulus or exponent');
    const spki = createPublicKey({ key: { kty: 'RSA', n: encodeBase64Url(n), e: encodeBase64Url(e) }, format: 'jwk' }).export({ type: 'spki', format: 'der' });
    return { algorithm: alg, hex: Buffer.from(spki).toString('hex') };
  }
  throw new WebauthnError(`unsupported credential public key algorithm ${String(alg)}: only ES256 (-7) and RS256 (-257) are accepted`);
}

export interface AttestationInput {
  credentialId: string;
  clientDataJson: string;
  attestationObject: string;
  transports: string[];
}

export interface VerifiedRegistration {
  /** base64url (no padding) of the credential id in the authenticator data. */
  credentialId: string;
  /** The COSE_Key bytes assertions are verified with. */
  cosePublicKey: Uint8Array;
  /** The API-visible public key (see displayPublicKey). */
  publicKeyHex: string;
  algorithm: number;
  signCount: number;
  aaguid: string;
  /** The attestation statement format: none, packed, fido-u2f, tpm, apple, android-key, android-safetynet. */
  attestationType: string;
}

/**
 * Verifies a registration: clientDataJSON (webauthn.create, the given challenge, an allowed
 * origin), the authenticator data (rpIdHash, user presence, the attested credential), the
 * attestation statement of its format, and that `credentialId` names the attested credential.
 */
export async function verifyRegistration(att: AttestationInput, challenge: string, expect: WebauthnExpectations): Promise<VerifiedRegistration> {
  const challengeBytes = decodeBase64Url(challenge);
  if (!challengeBytes || challengeBytes.length === 0) throw new WebauthnError('challenge is not base64url');
  const credentialId = canonicalCredentialId(att.credentialId);
  if (!credentialId) throw new WebauthnError('credentialId is not base64url');
  const clientData = checkClientData(att.clientDataJson, 'webauthn.create', challengeBytes, expect.origins);
  const result = await guarded(expect.rpId, () =>
    verifyRegistrationResponse({
      response: {
        id: credentialId,
        rawId: credentialId,
        type: 'public-key',
        clientExtensionResults: {},
        response: { clientDataJSON: att.clientDataJson, attestationObject: att.attestationObject },
      },
      expectedChallenge: clientData.challenge,
      expectedOrigin: clientData.origin,
      expectedRPID: expect.rpId,
      requireUserVerification: false,
      supportedAlgorithmIDs: [...SUPPORTED_COSE_ALGORITHMS],
    }),
  );
  if (!result.verified) throw new WebauthnError('the attestation statement does not verify');
  const info = result.registrationInfo;
  if (info.credential.id !== credentialId) {
    throw new WebauthnError('credentialId does not match the credential id in the attestation');
  }
  const { algorithm, hex } = displayPublicKey(info.credential.publicKey);
  return {
    credentialId,
    cosePublicKey: info.credential.publicKey,
    publicKeyHex: hex,
    algorithm,
    signCount: info.credential.counter,
    aaguid: info.aaguid,
    attestationType: info.fmt,
  };
}

export interface AssertionInput {
  authenticatorData: string;
  clientDataJson: string;
  credentialId: string;
  signature: string;
}

/**
 * Verifies an assertion by the credential whose COSE key is given: clientDataJSON (webauthn.get,
 * the expected challenge, an allowed origin), rpIdHash, user presence, and the signature over
 * authenticatorData ‖ SHA-256(clientDataJSON). Returns the authenticator's signature counter;
 * whether it advanced is the caller's rule to apply against what it has stored.
 */
export async function verifyAssertion(
  a: AssertionInput,
  expectedChallenge: string,
  credential: { credentialId: string; cosePublicKey: Uint8Array },
  expect: WebauthnExpectations,
): Promise<{ signCount: number }> {
  const challengeBytes = decodeBase64Url(expectedChallenge)!;
  const clientData = checkClientData(a.clientDataJson, 'webauthn.get', challengeBytes, expect.origins);
  const result = await guarded(expect.rpId, () =>
    verifyAuthenticationResponse({
      response: {
        id: credential.credentialId,
        rawId: credential.credentialId,
        type: 'public-key',
        clientExtensionResults: {},
        response: { clientDataJSON: a.clientDataJson, authenticatorData: a.authenticatorData, signature: a.signature },
      },
      expectedChallenge: clientData.challenge,
      expectedOrigin: clientData.origin,
      expectedRPID: expect.rpId,
      // The counter rule is applied by the caller after the signature holds, against the stored value.
      credential: { id: credential.credentialId, publicKey: new Uint8Array(credential.cosePublicKey), counter: 0 },
      requireUserVerification: false,
    }),
  );
  if (!result.verified) throw new WebauthnError('the assertion signature does not verify');
  return { signCount: result.authenticationInfo.newCounter };
}
