// A software WebAuthn authenticator for tests: a real ES256 (P-256) or RS256 key pair that produces
// `none` attestations for registration (CBOR attestationObject {fmt, attStmt, authData}, authData =
// rpIdHash ‖ flags ‖ signCount ‖ aaguid ‖ credIdLen ‖ credId ‖ COSE key; WebAuthn Level 2 §6.1, §6.5)
// and assertions for navigator.credentials.get, so the official @turnkey/webauthn-stamper can stamp
// requests with it unchanged (installNavigator). The CBOR encoder here is written independently of
// the server's decoder on purpose. Shapes: docs/reference/api.md "Stamps".
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

// --- a minimal CBOR encoder (RFC 8949): unsigned/negative integers, byte and text strings, arrays, maps.
function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) {
    const b = Buffer.alloc(3);
    b[0] = (major << 5) | 25;
    b.writeUInt16BE(n, 1);
    return b;
  }
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

export type Cbor = number | string | Uint8Array | Cbor[] | Map<Cbor, Cbor>;

export function cborEncode(v: Cbor): Buffer {
  if (typeof v === 'number') return v >= 0 ? head(0, v) : head(1, -1 - v);
  if (typeof v === 'string') {
    const bytes = Buffer.from(v, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (v instanceof Uint8Array) return Buffer.concat([head(2, v.length), v]);
  if (Array.isArray(v)) return Buffer.concat([head(4, v.length), ...v.map(cborEncode)]);
  const parts: Buffer[] = [head(5, v.size)];
  for (const [k, val] of v) parts.push(cborEncode(k), cborEncode(val));
  return Buffer.concat(parts);
}

const b64url = (b: Uint8Array) => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest();
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n, 0);
  return b;
};

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export interface SoftwareAuthenticatorOptions {
  rpId?: string;
  origin?: string;
  alg?: 'ES256' | 'RS256';
  /** 16-byte AAGUID in its dashed form; zeros by default. */
  aaguid?: string;
  /** Added to the signature counter per assertion; 0 models authenticators that never count. */
  counterStep?: number;
}

export class SoftwareAuthenticator {
  readonly rawId = new Uint8Array(randomBytes(32));
  readonly alg: 'ES256' | 'RS256';
  rpId: string;
  origin: string;
  signCount = 0;
  counterStep: number;
  readonly aaguid: string;
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;

  constructor(opts: SoftwareAuthenticatorOptions = {}) {
    this.rpId = opts.rpId ?? 'localhost';
    this.origin = opts.origin ?? 'http://localhost:3000';
    this.alg = opts.alg ?? 'ES256';
    this.aaguid = opts.aaguid ?? '00000000-0000-0000-0000-000000000000';
    this.counterStep = opts.counterStep ?? 1;
    const pair = this.alg === 'ES256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
  }

  get credentialId(): string {
    return b64url(this.rawId);
  }

  /** The public key as the API shows it: compressed P-256 hex, or SPKI DER hex for RSA. */
  get publicKeyHex(): string {
    if (this.alg === 'RS256') return this.publicKey.export({ type: 'spki', format: 'der' }).toString('hex');
    const jwk = this.publicKey.export({ format: 'jwk' });
    const x = Buffer.from(jwk.x!, 'base64url');
    const y = Buffer.from(jwk.y!, 'base64url');
    return Buffer.concat([Buffer.from([y[31] & 1 ? 3 : 2]), x]).toString('hex');
  }

  /** The COSE_Key (RFC 9053) of the credential. */
  coseKey(): Buffer {
    const jwk = this.publicKey.export({ format: 'jwk' });
    if (this.alg === 'RS256') {
      return cborEncode(new Map<Cbor, Cbor>([[1, 3], [3, -257], [-1, Buffer.from(jwk.n!, 'base64url')], [-2, Buffer.from(jwk.e!, 'base64url')]]));
    }
    return cborEncode(new Map<Cbor, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')]]));
  }

  private clientData(type: string, challenge: Uint8Array, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge: b64url(challenge), origin, crossOrigin: false }), 'utf8');
  }

  /** navigator.credentials.create with a `none` attestation, as a v1Attestation. */
  register(challenge: Uint8Array, opts: { origin?: string; rpId?: string } = {}) {
    const aaguid = Buffer.from(this.aaguid.replace(/-/g, ''), 'hex');
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(this.rawId.length, 0);
    const authData = Buffer.concat([
      sha256(opts.rpId ?? this.rpId),
      Buffer.from([FLAG_UP | FLAG_UV | FLAG_AT]),
      u32(this.signCount),
      aaguid,
      idLen,
      this.rawId,
      this.coseKey(),
    ]);
    const attestationObject = cborEncode(new Map<Cbor, Cbor>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]));
    return {
      credentialId: this.credentialId,
      clientDataJson: b64url(this.clientData('webauthn.create', challenge, opts.origin ?? this.origin)),
      attestationObject: b64url(attestationObject),
      transports: ['AUTHENTICATOR_TRANSPORT_INTERNAL' as const],
    };
  }

  /** navigator.credentials.get: authenticatorData, clientDataJSON and the signature over both. */
  assert(challenge: Uint8Array): { authenticatorData: Buffer; clientDataJSON: Buffer; signature: Buffer } {
    this.signCount += this.counterStep;
    const authenticatorData = Buffer.concat([sha256(this.rpId), Buffer.from([FLAG_UP | FLAG_UV]), u32(this.signCount)]);
    const clientDataJSON = this.clientData('webauthn.get', challenge, this.origin);
    const signed = Buffer.concat([authenticatorData, sha256(clientDataJSON)]);
    // ES256: ASN.1 DER (node's default for EC keys); RS256: RSASSA-PKCS1-v1_5.
    const signature = sign('sha256', signed, this.privateKey);
    return { authenticatorData, clientDataJSON, signature };
  }
}

const buf = (b: Uint8Array) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

/**
 * Installs `navigator.credentials.get` backed by these authenticators, as a browser would expose
 * it: the first authenticator allowed by `allowCredentials` (any, when the list is empty) answers.
 */
export function installNavigator(authenticators: () => SoftwareAuthenticator[]): void {
  const get = async (options: { publicKey: { challenge: Uint8Array; rpId?: string; allowCredentials?: { id: BufferSource }[] } }) => {
    const allowed = (options.publicKey.allowCredentials ?? []).map((c) => b64url(new Uint8Array(c.id as ArrayBuffer)));
    const device = authenticators().find((a) => allowed.length === 0 || allowed.includes(a.credentialId));
    if (!device) throw Object.assign(new Error('no credential available'), { name: 'NotAllowedError' });
    const { authenticatorData, clientDataJSON, signature } = device.assert(new Uint8Array(options.publicKey.challenge));
    return {
      type: 'public-key',
      id: device.credentialId,
      rawId: buf(device.rawId),
      response: { clientDataJSON: buf(clientDataJSON), authenticatorData: buf(authenticatorData), signature: buf(signature), userHandle: null },
      getClientExtensionResults: () => ({}),
    };
  };
  Object.defineProperty(globalThis, 'navigator', { value: { credentials: { get } }, configurable: true, writable: true });
}
