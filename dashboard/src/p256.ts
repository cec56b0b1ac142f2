// P-256 keys in the browser through WebCrypto (docs/reference/api.md "Stamps"): importing an API key the
// user pastes as hex, making session keys, and ECDSA-P256-SHA256 signatures as lowercase DER hex.
// Private keys become CryptoKeys with extractable = false, so page scripts can sign with them but
// never read them back; the public half of a generated pair stays exportable (WebCrypto's rule).
import { bytesToHex, hexToBytes, base64UrlEncode } from './encoding.js';

// Curve constants (SEC 2 / FIPS 186-4), for point decompression only: WebCrypto's JWK import needs
// both coordinates while API keys travel as compressed points.
const P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const B = 0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604bn;

function modPow(base: bigint, exp: bigint, mod: bigint): bigint {
  let result = 1n;
  let b = base % mod;
  let e = exp;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % mod;
    b = (b * b) % mod;
    e >>= 1n;
  }
  return result;
}

const toBig = (bytes: Uint8Array) => BigInt('0x' + (bytesToHex(bytes) || '0'));
const to32 = (n: bigint) => hexToBytes(n.toString(16).padStart(64, '0'));

/** The (x, y) of a compressed or uncompressed P-256 public key in hex. */
export function publicKeyCoordinates(publicKeyHex: string): { x: Uint8Array; y: Uint8Array } {
  const bytes = hexToBytes(publicKeyHex);
  if (bytes.length === 65 && bytes[0] === 4) return { x: bytes.slice(1, 33), y: bytes.slice(33) };
  if (bytes.length !== 33 || (bytes[0] !== 2 && bytes[0] !== 3)) {
    throw new Error('the public key must be 66 hex characters starting with 02 or 03 (compressed P-256)');
  }
  const x = toBig(bytes.slice(1));
  if (x >= P) throw new Error('the public key is not a point of P-256');
  const rhs = (((x * x * x - 3n * x + B) % P) + P) % P;
  // P ≡ 3 (mod 4), so a square root is rhs^((P+1)/4).
  let y = modPow(rhs, (P + 1n) / 4n, P);
  if ((y * y) % P !== rhs) throw new Error('the public key is not a point of P-256');
  if ((y & 1n) !== BigInt(bytes[0] & 1)) y = P - y;
  return { x: bytes.slice(1), y: to32(y) };
}

/** Compressed hex (the API's form) of a raw 65-byte uncompressed point. */
export function compressRaw(raw: Uint8Array): string {
  const prefix = (raw[64] & 1) === 1 ? '03' : '02';
  return prefix + bytesToHex(raw.slice(1, 33));
}

export interface KeyPair {
  /** Compressed P-256 public key, lowercase hex. */
  publicKey: string;
  /** Non-extractable signing key. */
  privateKey: CryptoKey;
}

/**
 * Imports a pasted API key pair as a non-extractable signing key, after proving that the two halves
 * belong together (a mismatch would otherwise show up only as a confusing 401 from the server).
 */
export async function importApiKey(publicKeyHex: string, privateKeyHex: string): Promise<KeyPair> {
  const d = hexToBytes(privateKeyHex);
  if (d.length !== 32) throw new Error('the private key must be 64 hex characters');
  const { x, y } = publicKeyCoordinates(publicKeyHex);
  const jwk = { kty: 'EC', crv: 'P-256', d: base64UrlEncode(d), x: base64UrlEncode(x), y: base64UrlEncode(y), ext: false };
  d.fill(0);
  let privateKey: CryptoKey;
  try {
    privateKey = await crypto.subtle.importKey('jwk', jwk, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
  } catch {
    throw new Error('the private key does not belong to the public key');
  }
  const publicKey = await crypto.subtle.importKey('jwk', { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y }, { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify']);
  const probe = new TextEncoder().encode('sigil key check');
  const sig = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, privateKey, probe);
  if (!(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, publicKey, sig, probe))) {
    throw new Error('the private key does not belong to the public key');
  }
  return { publicKey: ((toBig(y) & 1n) === 1n ? '03' : '02') + bytesToHex(x), privateKey };
}

/** A fresh session key generated in the browser; its private half can never be exported. */
export async function generateSessionKey(): Promise<KeyPair> {
  const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
  const raw = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
  return { publicKey: compressRaw(raw), privateKey: pair.privateKey };
}

/** Minimal DER INTEGER of a big-endian unsigned value. */
function derInteger(bytes: Uint8Array): Uint8Array {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  let v = bytes.slice(i);
  if (v[0] & 0x80) v = Uint8Array.of(0, ...v);
  return Uint8Array.of(0x02, v.length, ...v);
}

/** WebCrypto's IEEE-P1363 r‖s as ASN.1 DER (what @turnkey/api-key-stamper's webcrypto path sends). */
export function rawToDer(raw: Uint8Array): Uint8Array {
  const r = derInteger(raw.slice(0, 32));
  const s = derInteger(raw.slice(32, 64));
  return Uint8Array.of(0x30, r.length + s.length, ...r, ...s);
}

/** ECDSA-P256-SHA256 over the UTF-8 bytes of `message`, DER, lowercase hex. */
export async function signDerHex(key: CryptoKey, message: string): Promise<string> {
  const raw = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, key, new TextEncoder().encode(message)));
  return bytesToHex(rawToDer(raw));
}
