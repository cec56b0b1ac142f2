// The operator CLI's client of a running Sigil (docs/operator-guide.md): loads a P-256 API key file
// and sends POST /public/v1/... requests stamped exactly as @turnkey/api-key-stamper stamps them
// (docs/reference/api.md "Stamps": X-Stamp = base64url(JSON {publicKey, scheme, signature}), DER hex ECDSA
// over SHA-256 of the exact body bytes). It talks to Sigil over HTTP like any other client; it never
// opens the data directory.
import { readFileSync, statSync } from 'node:fs';
import { compressPublicKeyHex, isValidPrivateKey, publicKeyFromPrivate, bytesToHex, signP256Der } from '../crypto/p256.js';

/** A mistake the operator can fix; bin/sigil.js prints the message and exits 1. */
export class CliError extends Error {}
const invalid = (message: string) => new CliError(message);

export interface ApiKeyFile {
  /** Compressed P-256 public key, lowercase hex (the form the API registers). */
  publicKey: string;
  /** 32-byte private scalar, hex. */
  privateKey: string;
  /** An organization id found in the file (`sigil init --json` output carries one). */
  organizationId?: string;
}

const HEX64 = /^[0-9a-fA-F]{64}$/;

/**
 * Reads a key file: `sigil keys generate` output {publicKey, privateKey}, or the `sigil init --json`
 * object {apiPublicKey, apiPrivateKey, organizationId}. The public key must belong to the private key,
 * so a mixed-up file is caught here rather than as a confusing 401.
 */
export function loadKeyFile(path: string, warn: (text: string) => void = () => {}): ApiKeyFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw invalid(
      code === 'ENOENT'
        ? `key file ${path} does not exist: create one with "sigil keys generate --out ${path}" or pass --key-file (or SIGIL_KEY_FILE)`
        : `cannot read key file ${path}: ${(err as Error).message}`,
    );
  }
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalid(`key file ${path} is not JSON: expected {"publicKey": "<66 hex>", "privateKey": "<64 hex>"}`);
  }
  const privateKey = String(json?.privateKey ?? json?.apiPrivateKey ?? '');
  const publicKey = String(json?.publicKey ?? json?.apiPublicKey ?? '');
  if (!HEX64.test(privateKey) || !isValidPrivateKey(privateKey)) {
    throw invalid(`key file ${path} has no valid "privateKey": expected 64 hex characters of a P-256 private key`);
  }
  const derived = bytesToHex(publicKeyFromPrivate(privateKey, true));
  let given: string;
  try {
    given = publicKey === '' ? derived : compressPublicKeyHex(publicKey);
  } catch {
    throw invalid(`key file ${path} has an invalid "publicKey": expected a compressed P-256 public key (66 hex characters)`);
  }
  if (given !== derived) throw invalid(`key file ${path}: "publicKey" does not belong to "privateKey"`);
  try {
    // A key file others can read is a leaked key; say so, but do not refuse (the operator decides).
    if ((statSync(path).mode & 0o077) !== 0) warn(`warning: key file ${path} is readable by other users; chmod 600 ${path}`);
  } catch {
    /* stat after a successful read cannot really fail; nothing to add */
  }
  const organizationId = typeof json.organizationId === 'string' && json.organizationId !== '' ? json.organizationId : undefined;
  return { publicKey: derived, privateKey: privateKey.toLowerCase(), ...(organizationId ? { organizationId } : {}) };
}

/** X-Stamp header value for `body` (the exact string sent). */
export function stampHeader(key: ApiKeyFile, body: string): string {
  const signature = signP256Der(key.privateKey, new TextEncoder().encode(body));
  return Buffer.from(JSON.stringify({ publicKey: key.publicKey, scheme: 'SIGNATURE_SCHEME_TK_API_P256', signature })).toString('base64url');
}

export interface ApiResponse {
  ok: boolean;
  status: number;
  /** Parsed JSON, or the text when the answer is not JSON. */
  body: any;
}

/** The base URL without a trailing slash, checked so a typo is named rather than failing in fetch. */
export function baseUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw invalid(`--url "${url}" is not a URL: expected e.g. http://127.0.0.1:8080 (or set SIGIL_URL)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw invalid(`--url "${url}" must be http:// or https://`);
  return url.replace(/\/+$/, '');
}

/** POSTs `body` byte for byte to `url + path` with its X-Stamp. Network failures name the URL. */
export async function stampedPost(url: string, path: string, body: string, key: ApiKeyFile): Promise<ApiResponse> {
  let res: Response;
  try {
    res = await fetch(`${baseUrl(url)}${path}`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-stamp': stampHeader(key, body), 'x-client-version': 'sigil-cli' },
      redirect: 'error',
    });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new CliError(`cannot reach Sigil at ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message} (check --url or SIGIL_URL)`);
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON: keep the text */
  }
  return { ok: res.ok, status: res.status, body: parsed };
}

/** Error for a non-2xx answer, in the SDK's wording (`Turnkey error <code>: <message>`). */
export function httpError(path: string, res: ApiResponse): CliError {
  const b = res.body;
  const what = b && typeof b === 'object' && 'message' in b ? `Turnkey error ${b.code}: ${b.message}` : `${res.status} ${String(b).slice(0, 200)}`;
  return new CliError(`${path} failed with HTTP ${res.status}: ${what}`);
}
