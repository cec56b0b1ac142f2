// OIDC id_token verification for OAuth login and OIDC-attested stamps (docs/reference/sessions.md
// "Login activities"; docs/reference/api.md "Stamps" X-Stamp-Attested).
//
//  - The issuer (`iss`) must be trusted: one of the configured issuers (SIGIL_OIDC_ISSUERS), whose
//    keys come from a JWKS URL given with it or found through `<iss>/.well-known/openid-configuration`
//    → `jwks_uri`; or this deployment itself (SIGIL_OIDC_SELF_ISSUER, tokens of oauth2_authenticate),
//    whose tokens verify with the deployment signer's public key and no network. An unknown issuer
//    is refused before anything is fetched, so tokens cannot make Sigil call arbitrary URLs.
//  - Keys are cached per issuer for KEYS_TTL_MS. A token whose `kid` is not in the cache triggers one
//    refetch (key rotation), at most once per REFETCH_COOLDOWN_MS per issuer, so tokens with made-up
//    kids cannot turn into a stream of requests to the provider. When a refresh fails the keys last
//    fetched stay in use.
//  - Claims: `sub` and exactly one `aud` (an identity is (iss, aud, sub)), `exp` not passed and `nbf`
//    reached, both with CLOCK_SKEW_S of tolerance; with a public key to bind, `nonce` or `tknonce`
//    must be the lowercase hex SHA-256 of the UTF-8 public-key hex string.
// Every refusal is INVALID_OIDC_TOKEN with a message saying what failed.
import { createHash } from 'node:crypto';
import { compactVerify, createLocalJWKSet, decodeJwt, decodeProtectedHeader, errors, type JSONWebKeySet } from 'jose';
import { verifyEs256Jwt } from '../crypto/es256-jwt.js';
import { SigilError } from '../errors/errors.js';

/** A trusted issuer: its `iss` value and, optionally, the URL of its JWKS (else discovery). */
export interface OidcIssuerSetting {
  issuer: string;
  jwksUri?: string;
}

export interface VerifiedOidcToken {
  issuer: string;
  audience: string;
  subject: string;
  claims: Record<string, unknown>;
}

export const CLOCK_SKEW_S = 60;
export const KEYS_TTL_MS = 10 * 60 * 1000;
export const REFETCH_COOLDOWN_MS = 30 * 1000;
const FETCH_TIMEOUT_MS = 5000;
const MAX_DOCUMENT_BYTES = 512 * 1024;
/** Asymmetric JWS algorithms only: `none` and HMAC (whose key would be public) never verify. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

const refused = (why: string) => new SigilError('INVALID_OIDC_TOKEN', `invalid OIDC token: ${why}`);

/** The nonce that binds an id_token to a public key: hex(sha256(utf8(publicKeyHex))) (docs/reference/sessions.md). */
export function oidcNonce(publicKey: string): string {
  return createHash('sha256').update(publicKey, 'utf8').digest('hex');
}

/** The provider could not be reached: not the token's fault, so not INVALID_OIDC_TOKEN. */
const unavailable = (issuer: string, why: string) =>
  new SigilError('INTERNAL', `cannot verify the OIDC token now: the signing keys of issuer ${issuer} could not be fetched (${why}); try again later`, {
    http: 502,
    grpc: 14,
  });

async function fetchJson(url: string, issuer: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  } catch (err) {
    throw unavailable(issuer, err instanceof Error && err.name === 'TimeoutError' ? `${url} timed out` : `${url} is unreachable`);
  }
  if (!res.ok) throw unavailable(issuer, `${url} answered HTTP ${res.status}`);
  const text = await res.text();
  if (text.length > MAX_DOCUMENT_BYTES) throw unavailable(issuer, `${url} answered more than ${MAX_DOCUMENT_BYTES} bytes`);
  try {
    return JSON.parse(text);
  } catch {
    throw unavailable(issuer, `${url} did not answer JSON`);
  }
}

const httpUrl = (v: unknown): v is string => typeof v === 'string' && /^https?:\/\//i.test(v);

type GetKey = ReturnType<typeof createLocalJWKSet>;

/** One trusted issuer's signing keys, fetched lazily and cached. */
class IssuerKeys {
  #keys: GetKey | undefined;
  #fetchedAt = 0;
  /** No new attempt before this time after a failed refresh (stale keys stay in use meanwhile). */
  #retryAt = 0;
  #lastUnknownKidRefetch = -Infinity;
  #loading: Promise<void> | undefined;

  constructor(readonly setting: OidcIssuerSetting) {}

  async getKey(now: number): Promise<GetKey> {
    if (!this.#keys || (now - this.#fetchedAt >= KEYS_TTL_MS && now >= this.#retryAt)) {
      try {
        await this.#load(now);
      } catch (err) {
        if (!this.#keys) throw err;
        this.#retryAt = now + REFETCH_COOLDOWN_MS;
      }
    }
    return this.#keys!;
  }

  /** A refetch for a kid the cache does not hold; undefined when one happened too recently. */
  async refetchForUnknownKey(now: number): Promise<GetKey | undefined> {
    if (now - this.#lastUnknownKidRefetch < REFETCH_COOLDOWN_MS) return undefined;
    this.#lastUnknownKidRefetch = now;
    await this.#load(now);
    return this.#keys;
  }

  /** Concurrent callers share one fetch. */
  #load(now: number): Promise<void> {
    this.#loading ??= this.#fetch(now).finally(() => (this.#loading = undefined));
    return this.#loading;
  }

  async #fetch(now: number): Promise<void> {
    const { issuer } = this.setting;
    let jwksUri = this.setting.jwksUri;
    if (!jwksUri) {
      const discovery = await fetchJson(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`, issuer);
      const doc = (discovery ?? {}) as { issuer?: unknown; jwks_uri?: unknown };
      // OpenID Connect Discovery §4.3: the document must name the issuer it was fetched for.
      if (doc.issuer !== issuer) throw unavailable(issuer, `its discovery document names issuer ${JSON.stringify(doc.issuer)}`);
      if (!httpUrl(doc.jwks_uri)) throw unavailable(issuer, 'its discovery document has no http(s) jwks_uri');
      jwksUri = doc.jwks_uri;
    }
    const jwks = (await fetchJson(jwksUri, issuer)) as JSONWebKeySet;
    if (!jwks || typeof jwks !== 'object' || !Array.isArray(jwks.keys)) throw unavailable(issuer, `${jwksUri} is not a JWKS ({"keys": [...]})`);
    // Encryption keys never sign; leaving them out keeps key selection unambiguous.
    const keys = jwks.keys.filter((k) => k && typeof k === 'object' && (k.use === undefined || k.use === 'sig'));
    this.#keys = createLocalJWKSet({ keys });
    this.#fetchedAt = now;
  }
}

export interface OidcVerifierOptions {
  issuers: OidcIssuerSetting[];
  /** `iss` of the tokens this deployment issues (oauth2_authenticate). */
  selfIssuer: string;
  /** The deployment signer's public key (65-byte uncompressed P-256), which signs those tokens. */
  signerPublicKey: Uint8Array;
  now?: () => number;
}

/** Verifies OIDC id_tokens; implements `OidcVerifier` of src/domain/context.ts. */
export class OidcTokenVerifier {
  readonly #issuers = new Map<string, IssuerKeys>();
  readonly #selfIssuer: string;
  readonly #signerPublicKey: Uint8Array;
  readonly #now: () => number;

  constructor(opts: OidcVerifierOptions) {
    for (const setting of opts.issuers) this.#issuers.set(setting.issuer, new IssuerKeys(setting));
    this.#selfIssuer = opts.selfIssuer;
    this.#signerPublicKey = opts.signerPublicKey;
    this.#now = opts.now ?? Date.now;
  }

  async verify(idToken: string, opts: { nonceForPublicKey?: string }): Promise<VerifiedOidcToken> {
    const token = typeof idToken === 'string' ? idToken.trim() : '';
    if (token.split('.').length !== 3) throw refused('it is not a JWT (header.claims.signature, base64url)');
    let unverified: Record<string, unknown>;
    try {
      decodeProtectedHeader(token);
      unverified = decodeJwt(token);
    } catch {
      throw refused('it is not a JWT (header.claims.signature, base64url)');
    }
    const iss = unverified.iss;
    if (typeof iss !== 'string' || iss === '') throw refused('it has no iss claim');
    const payload = iss === this.#selfIssuer ? await this.#verifySelfIssued(token) : await this.#verifyRemote(token, iss);
    return checkClaims(payload, opts, this.#now());
  }

  async #verifyRemote(token: string, iss: string): Promise<Record<string, unknown>> {
    const source = this.#issuers.get(iss);
    if (!source) throw refused(`unknown issuer ${JSON.stringify(iss)}: this deployment does not trust tokens it issues`);
    const now = this.#now();
    try {
      return await verifyWith(token, await source.getKey(now));
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey)) throw mapJoseError(err, iss);
    }
    // Not among the cached keys: the issuer may have rotated them.
    const kid = decodeProtectedHeader(token).kid;
    const fresh = await source.refetchForUnknownKey(now);
    const noKey = refused(`bad signature: issuer ${iss} has no signing key${kid === undefined ? ' for it' : ` with kid ${JSON.stringify(kid)}`}`);
    if (!fresh) throw noKey;
    try {
      return await verifyWith(token, fresh);
    } catch (err) {
      throw err instanceof errors.JWKSNoMatchingKey ? noKey : mapJoseError(err, iss);
    }
  }

  /**
   * The deployment's own tokens (oauth2_authenticate) are standard ES256 by its signer
   * (src/crypto/es256-jwt.ts). Session JWTs, signed by the same key in Turnkey's double-hash form,
   * never verify here, so a session can never pass for an id_token.
   */
  async #verifySelfIssued(token: string): Promise<Record<string, unknown>> {
    try {
      return parsePayload(await verifyEs256Jwt(token, this.#signerPublicKey));
    } catch (err) {
      throw mapJoseError(err, this.#selfIssuer);
    }
  }
}

async function verifyWith(token: string, getKey: GetKey): Promise<Record<string, unknown>> {
  try {
    const { payload } = await compactVerify(token, getKey, { algorithms: ALGORITHMS });
    return parsePayload(payload);
  } catch (err) {
    if (!(err instanceof errors.JWKSMultipleMatchingKeys)) throw err;
    // A token without `kid` that several keys could have signed: try each of them.
    for await (const key of err) {
      try {
        const { payload } = await compactVerify(token, key, { algorithms: ALGORITHMS });
        return parsePayload(payload);
      } catch (e) {
        if (!(e instanceof errors.JWSSignatureVerificationFailed)) throw e;
      }
    }
    throw new errors.JWSSignatureVerificationFailed();
  }
}

function parsePayload(bytes: Uint8Array): Record<string, unknown> {
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw refused('its claims are not JSON');
  }
  if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) throw refused('its claims are not a JSON object');
  return claims as Record<string, unknown>;
}

function mapJoseError(err: unknown, iss: string): unknown {
  if (err instanceof SigilError) return err;
  if (err instanceof errors.JWSSignatureVerificationFailed) return refused(`bad signature: it does not verify with the signing keys of issuer ${iss}`);
  if (err instanceof errors.JOSEAlgNotAllowed) return refused(`its signature algorithm is not accepted (accepted: ${ALGORITHMS.join(', ')})`);
  if (err instanceof errors.JWKSNoMatchingKey) return refused(`bad signature: issuer ${iss} has no signing key for it`);
  if (err instanceof errors.JOSEError) return refused(`bad signature: ${err.message}`);
  return err;
}

function checkClaims(claims: Record<string, unknown>, opts: { nonceForPublicKey?: string }, now: number): VerifiedOidcToken {
  const { iss, sub, exp, nbf } = claims;
  let { aud } = claims;
  if (typeof iss !== 'string' || iss === '') throw refused('it has no iss claim');
  if (typeof sub !== 'string' || sub === '') throw refused('it has no sub claim');
  if (Array.isArray(aud)) {
    if (aud.length !== 1) throw refused(`it names ${aud.length} audiences; an OAuth identity has exactly one aud`);
    aud = aud[0];
  }
  if (typeof aud !== 'string' || aud === '') throw refused('it has no aud claim (the client id it was issued to)');
  if (typeof exp !== 'number' || !Number.isFinite(exp)) throw refused('it has no numeric exp claim');
  if (exp * 1000 + CLOCK_SKEW_S * 1000 <= now) throw refused(`expired at ${new Date(exp * 1000).toISOString()}`);
  if (nbf !== undefined) {
    if (typeof nbf !== 'number' || !Number.isFinite(nbf)) throw refused('its nbf claim is not a number');
    if (nbf * 1000 - CLOCK_SKEW_S * 1000 > now) throw refused(`not valid before ${new Date(nbf * 1000).toISOString()}`);
  }
  if (opts.nonceForPublicKey !== undefined) {
    const expected = oidcNonce(opts.nonceForPublicKey);
    const given = [claims.nonce, claims.tknonce].filter((v): v is string => typeof v === 'string' && v !== '');
    if (given.length === 0) throw refused(`it has no nonce (or tknonce) claim; it must be sha256 of the public key, ${expected}`);
    if (!given.some((n) => n.toLowerCase() === expected)) {
      throw refused(`wrong nonce: it must be the lowercase hex sha256 of the public key ${opts.nonceForPublicKey}, ${expected}`);
    }
  }
  return { issuer: iss, audience: aud, subject: sub, claims };
}
