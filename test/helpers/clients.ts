// The official SDK clients pointed at a test Sigil, and a raw request helper that still stamps with
// the official @turnkey/api-key-stamper (for bodies the typed clients would never send).
import { Turnkey } from '@turnkey/sdk-server';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { generateP256KeyPair } from '@turnkey/crypto';
import type { SigilInstance } from './sigil.js';

export interface KeyPair {
  apiPublicKey: string;
  apiPrivateKey: string;
}

/** A fresh P-256 API key pair as @turnkey/crypto makes it (compressed public key hex, private key hex). */
export function newKey(): KeyPair {
  const k = generateP256KeyPair();
  return { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
}

/**
 * The @turnkey/sdk-server client. It polls an activity that is not final as the SDK does by default
 * (3 more reads) but 50 ms apart instead of a second: Sigil decides an activity within its request,
 * so an activity waiting for votes would only cost each such test 4 s of sleeping (~1 minute a pass).
 */
export function sdkServerClient(sigil: SigilInstance, key: KeyPair = sigil.root, organizationId = sigil.root.organizationId) {
  return new Turnkey({
    apiBaseUrl: sigil.url,
    apiPublicKey: key.apiPublicKey,
    apiPrivateKey: key.apiPrivateKey,
    defaultOrganizationId: organizationId,
    activityPoller: { intervalMs: 50, numRetries: 3 },
  }).apiClient();
}

/**
 * The @turnkey/sdk-server client that answers an activity waiting for votes after one poll (instead of
 * four seconds of polling), for tests that leave activities in ACTIVITY_STATUS_CONSENSUS_NEEDED.
 */
export function waitingSdkServerClient(sigil: Pick<SigilInstance, 'url' | 'root'>, key: KeyPair = sigil.root) {
  return new Turnkey({
    apiBaseUrl: sigil.url,
    apiPublicKey: key.apiPublicKey,
    apiPrivateKey: key.apiPrivateKey,
    defaultOrganizationId: sigil.root.organizationId,
    activityPoller: { intervalMs: 100, numRetries: 0 },
  }).apiClient();
}

export function httpClient(sigil: SigilInstance, key: KeyPair = sigil.root) {
  return new TurnkeyClient({ baseUrl: sigil.url }, new ApiKeyStamper({ apiPublicKey: key.apiPublicKey, apiPrivateKey: key.apiPrivateKey }));
}

export interface RawResponse {
  status: number;
  body: any;
  headers: Headers;
}

/** POSTs `body` (a string sent byte for byte, or an object JSON-encoded) with optional stamp headers. */
export async function rawPost(
  url: string,
  body: string | object,
  opts: { key?: KeyPair; headers?: Record<string, string>; stampBody?: string } = {},
): Promise<RawResponse> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(opts.headers ?? {}) };
  if (opts.key) {
    const stamper = new ApiKeyStamper({ apiPublicKey: opts.key.apiPublicKey, apiPrivateKey: opts.key.apiPrivateKey });
    const stamp = await stamper.stamp(opts.stampBody ?? text);
    headers[stamp.stampHeaderName] = stamp.stampHeaderValue;
  }
  const res = await fetch(url, { method: 'POST', body: text, headers, redirect: 'error' });
  const raw = await res.text();
  let parsed: unknown = raw;
  try {
    parsed = JSON.parse(raw);
  } catch {
    /* leave as text */
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

export function activityBody(organizationId: string, type: string, parameters: unknown, timestampMs = String(Date.now())) {
  return { type, timestampMs, organizationId, parameters };
}

/** X-Stamp-Attested as @turnkey/core's attested stamper builds it (docs/reference/api.md "Stamps"): DER P-256 over the body by `key`. */
export async function attestedStampHeader(
  key: KeyPair,
  body: string,
  attestation: string,
  scheme: 'STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN' | 'STAMP_ATTESTED_SCHEME_P256_OIDC' = 'STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN',
): Promise<Record<string, string>> {
  const { stampHeaderValue } = await new ApiKeyStamper({ apiPublicKey: key.apiPublicKey, apiPrivateKey: key.apiPrivateKey }).stamp(body);
  const { signature } = JSON.parse(Buffer.from(stampHeaderValue, 'base64url').toString('utf8'));
  const value = Buffer.from(JSON.stringify({ publicKeyAttestation: attestation, scheme, publicKey: key.apiPublicKey, signature })).toString('base64url');
  return { 'X-Stamp-Attested': value };
}

/** stamp_login exactly as @turnkey/core's loginWithOtp / loginWithOauth submit it: attested stamp only. */
export async function attestedStampLogin(
  url: string,
  key: KeyPair,
  attestation: string,
  organizationId: string,
  scheme?: 'STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN' | 'STAMP_ATTESTED_SCHEME_P256_OIDC',
): Promise<RawResponse> {
  const body = JSON.stringify({
    parameters: { publicKey: key.apiPublicKey, expirationSeconds: '900', invalidateExisting: false },
    organizationId,
    timestampMs: String(Date.now()),
    generateAppProofs: false,
    type: 'ACTIVITY_TYPE_STAMP_LOGIN',
  });
  return rawPost(`${url}/public/v1/submit/stamp_login`, body, { headers: await attestedStampHeader(key, body, attestation, scheme) });
}
