// Request stamps made in the browser, byte for byte as the official stampers make them
// (docs/reference/api.md "Stamps"): every stamp covers the exact body string that is then sent.
//  - X-Stamp: base64url(JSON {publicKey, scheme: SIGNATURE_SCHEME_TK_API_P256, signature: DER hex}).
//  - X-Stamp-Webauthn: plain JSON {authenticatorData, clientDataJson, credentialId, signature}
//    of an assertion whose challenge is the UTF-8 bytes of hex(sha256(body)).
//  - X-Stamp-Attested: base64url(JSON {publicKeyAttestation, scheme, publicKey, signature}).
// Also passkey registration (docs/reference/organizations.md "Users and credentials"): the v1Attestation
// create_authenticators takes.
import { base64UrlDecode, base64UrlEncode, base64UrlOfText, sha256Hex, utf8 } from './encoding.js';
import { signDerHex } from './p256.js';

export interface Stamp {
  header: string;
  value: string;
}

export async function apiKeyStamp(publicKey: string, privateKey: CryptoKey, body: string): Promise<Stamp> {
  const signature = await signDerHex(privateKey, body);
  return { header: 'X-Stamp', value: base64UrlOfText(JSON.stringify({ publicKey, scheme: 'SIGNATURE_SCHEME_TK_API_P256', signature })) };
}

export async function attestedStamp(verificationToken: string, publicKey: string, privateKey: CryptoKey, body: string): Promise<Stamp> {
  const signature = await signDerHex(privateKey, body);
  const value = JSON.stringify({ publicKeyAttestation: verificationToken, scheme: 'STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN', publicKey, signature });
  return { header: 'X-Stamp-Attested', value: base64UrlOfText(value) };
}

function passkeyError(err: unknown): Error {
  const name = (err as { name?: string })?.name;
  if (name === 'NotAllowedError') return new Error('The passkey prompt was cancelled or timed out.');
  if (name === 'SecurityError') return new Error('Passkeys need a secure origin (https, or http://localhost) whose host matches the relying party id.');
  if (name === 'InvalidStateError') return new Error('This authenticator already holds a passkey for this user.');
  return err instanceof Error ? err : new Error(String(err));
}

/** Asks a passkey to sign `body`; with no `credentialId` any passkey of this site may answer. */
export async function webauthnStamp(body: string, credentialId?: string): Promise<Stamp & { credentialId: string }> {
  const challenge = utf8(await sha256Hex(utf8(body)));
  let cred: PublicKeyCredential;
  try {
    cred = (await navigator.credentials.get({
      publicKey: {
        challenge: challenge as BufferSource,
        timeout: 300_000,
        userVerification: 'preferred',
        allowCredentials: credentialId ? [{ type: 'public-key', id: base64UrlDecode(credentialId) as BufferSource }] : [],
      },
    })) as PublicKeyCredential;
  } catch (err) {
    throw passkeyError(err);
  }
  if (!cred) throw new Error('No passkey answered.');
  const res = cred.response as AuthenticatorAssertionResponse;
  const value = JSON.stringify({
    authenticatorData: base64UrlEncode(new Uint8Array(res.authenticatorData)),
    clientDataJson: base64UrlEncode(new Uint8Array(res.clientDataJSON)),
    credentialId: cred.id,
    signature: base64UrlEncode(new Uint8Array(res.signature)),
  });
  return { header: 'X-Stamp-Webauthn', value, credentialId: cred.id };
}

const TRANSPORTS: Record<string, string> = {
  internal: 'AUTHENTICATOR_TRANSPORT_INTERNAL',
  usb: 'AUTHENTICATOR_TRANSPORT_USB',
  nfc: 'AUTHENTICATOR_TRANSPORT_NFC',
  ble: 'AUTHENTICATOR_TRANSPORT_BLE',
  hybrid: 'AUTHENTICATOR_TRANSPORT_HYBRID',
};

/** Creates a passkey for `user` and answers v1AuthenticatorParamsV2 for create_authenticators. */
export async function registerPasskey(user: { userId: string; userName: string }, authenticatorName: string) {
  const challenge = crypto.getRandomValues(new Uint8Array(32));
  let cred: PublicKeyCredential;
  try {
    cred = (await navigator.credentials.create({
      publicKey: {
        challenge,
        rp: { name: 'Sigil' },
        user: { id: utf8(user.userId) as BufferSource, name: user.userName, displayName: user.userName },
        // ES256 and RS256, the algorithms Sigil verifies.
        pubKeyCredParams: [
          { type: 'public-key', alg: -7 },
          { type: 'public-key', alg: -257 },
        ],
        authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
        attestation: 'none',
        timeout: 300_000,
      },
    })) as PublicKeyCredential;
  } catch (err) {
    throw passkeyError(err);
  }
  if (!cred) throw new Error('No passkey was created.');
  const res = cred.response as AuthenticatorAttestationResponse;
  const transports = (res.getTransports?.() ?? []).map((t) => TRANSPORTS[t]).filter(Boolean);
  return {
    authenticatorName,
    challenge: base64UrlEncode(challenge),
    attestation: {
      credentialId: base64UrlEncode(new Uint8Array(cred.rawId)),
      clientDataJson: base64UrlEncode(new Uint8Array(res.clientDataJSON)),
      attestationObject: base64UrlEncode(new Uint8Array(res.attestationObject)),
      transports: transports.length > 0 ? transports : ['AUTHENTICATOR_TRANSPORT_INTERNAL'],
    },
  };
}
