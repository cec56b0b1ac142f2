// Webhook delivery signatures, as Turnkey's public "Verify signatures" documentation states them
// (docs.turnkey.com/features/webhooks/verify-signatures; @turnkey/crypto's
// verifyTurnkeyWebhookSignature reads them): Ed25519 over
//   v1.ed25519.<signing_key_id>.<timestamp_ms>.<event_id>.<raw_body>
// the signature hex-encoded in X-Turnkey-Signature, the public key published as 32 raw bytes (hex,
// and base64url in a JWKS). The private key is a 32-byte seed the caller derives (the deployment's
// barrier), so every process of a deployment signs with the same key. Pure: bytes in, bytes out.
import { createHash, createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';

export const WEBHOOK_SIGNATURE_VERSION = 'v1';
export const WEBHOOK_SIGNATURE_ALGORITHM = 'ed25519';

// PKCS#8 DER prefix of an Ed25519 private key (RFC 8410): the 32-byte seed follows.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface WebhookSignatureInput {
  keyId: string;
  timestampMs: string;
  eventId: string;
  body: Buffer;
}

/** The exact bytes signed: the contract fields, dot-separated, then the raw body. */
export function webhookSignedInput(i: WebhookSignatureInput): Buffer {
  return Buffer.concat([Buffer.from(`${WEBHOOK_SIGNATURE_VERSION}.${WEBHOOK_SIGNATURE_ALGORITHM}.${i.keyId}.${i.timestampMs}.${i.eventId}.`, 'utf8'), i.body]);
}

export class WebhookSigningKey {
  private readonly key: KeyObject;
  /** The raw 32-byte public key, hex (what @turnkey/crypto's verification keys take). */
  readonly publicKeyHex: string;
  /** The key's id (X-Turnkey-Signature-Key-Id): derived from the public key, so it changes only with it. */
  readonly keyId: string;

  constructor(seed: Uint8Array) {
    if (seed.length !== 32) throw new Error('a webhook signing key seed is 32 bytes');
    this.key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
    const jwk = createPublicKey(this.key).export({ format: 'jwk' }) as { x: string };
    const raw = Buffer.from(jwk.x, 'base64url');
    this.publicKeyHex = raw.toString('hex');
    this.keyId = `sigil-webhook-${createHash('sha256').update(raw).digest('hex').slice(0, 16)}`;
  }

  /** The hex signature of one delivery attempt. */
  sign(i: Omit<WebhookSignatureInput, 'keyId'>): string {
    return sign(null, webhookSignedInput({ ...i, keyId: this.keyId }), this.key).toString('hex');
  }

  /** The key as a JSON Web Key (RFC 8037 OKP), with the fields Turnkey's JWKS adds. */
  jwk(): Record<string, string> {
    return {
      kid: this.keyId,
      kty: 'OKP',
      crv: 'Ed25519',
      alg: 'EdDSA',
      use: 'sig',
      x: Buffer.from(this.publicKeyHex, 'hex').toString('base64url'),
      turnkey_signature_algorithm: WEBHOOK_SIGNATURE_ALGORITHM,
      turnkey_signature_version: WEBHOOK_SIGNATURE_VERSION,
    };
  }
}
