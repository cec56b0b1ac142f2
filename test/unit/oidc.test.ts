// The OIDC id_token verifier (src/auth/oidc.ts) against a real issuer on loopback, with its clock
// under the test's control: key caching and its TTL, the refetch cooldown for unknown kids, stale
// keys kept while the provider is down, discovery that names another issuer, tokens of this
// deployment's own signer (standard ES256 only), and the claim checks (alg, aud, sub, nbf, nonce).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { KEYS_TTL_MS, OidcTokenVerifier, REFETCH_COOLDOWN_MS, oidcNonce } from '../../src/auth/oidc.js';
import { P256Signer, generateP256KeyPair } from '../../src/crypto/p256.js';
import { signSessionJwt } from '../../src/crypto/session-jwt.js';

let server: Server;
let base: string;
let keys: { kid: string; privateKey: CryptoKey; jwk: JWK }[] = [];
let down = false;
let discoveryIssuer: string | undefined;
const hits: Record<string, number> = {};

async function newKey(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid } };
}

beforeAll(async () => {
  keys = [await newKey('a')];
  server = createServer((req, res) => {
    hits[req.url!] = (hits[req.url!] ?? 0) + 1;
    if (down) return void res.writeHead(503).end();
    res.setHeader('content-type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') return void res.end(JSON.stringify({ issuer: discoveryIssuer ?? base, jwks_uri: `${base}/keys` }));
    if (req.url === '/keys') return void res.end(JSON.stringify({ keys: keys.map((k) => k.jwk) }));
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const T0 = 1_800_000_000_000;
const selfSigner = new P256Signer(generateP256KeyPair().privateKey);

function verifier(clock: { now: number }) {
  return new OidcTokenVerifier({ issuers: [{ issuer: base }], selfIssuer: 'urn:sigil:oauth2', signerPublicKey: selfSigner.publicKeyUncompressed, now: () => clock.now });
}

async function token(claims: Record<string, unknown>, key = keys[0], header: Record<string, unknown> = {}) {
  return new SignJWT({ iss: base, aud: 'app', sub: 'user-1', exp: T0 / 1000 + 600, ...claims })
    .setProtectedHeader({ alg: 'ES256', kid: key.kid, ...header })
    .sign(key.privateKey);
}

describe('OIDC verifier', () => {
  it('caches keys for their TTL, refetches for an unknown kid at most once per cooldown, keeps stale keys while the provider is down', async () => {
    const clock = { now: T0 };
    const v = verifier(clock);
    const start = hits['/keys'] ?? 0;
    const got = await v.verify(await token({ aud: ['app'] }), {});
    expect(got).toMatchObject({ issuer: base, audience: 'app', subject: 'user-1' });
    await v.verify(await token({}), {});
    expect(hits['/keys']).toBe(start + 1);

    // Rotation: the new kid triggers one refetch.
    keys.push(await newKey('b'));
    await v.verify(await token({}, keys[1]), {});
    expect(hits['/keys']).toBe(start + 2);
    // An unknown kid within the cooldown is refused without a fetch; after it, one fetch.
    const stranger = await newKey('zzz');
    await expect(v.verify(await token({}, stranger), {})).rejects.toThrow('invalid OIDC token: bad signature: issuer ' + base + ' has no signing key with kid "zzz"');
    expect(hits['/keys']).toBe(start + 2);
    clock.now += REFETCH_COOLDOWN_MS;
    await expect(v.verify(await token({}, stranger), {})).rejects.toThrow(/has no signing key with kid "zzz"/);
    expect(hits['/keys']).toBe(start + 3);

    // TTL passed while the provider is down: the keys held stay in use.
    clock.now += KEYS_TTL_MS;
    down = true;
    await v.verify(await token({ exp: clock.now / 1000 + 60 }), {});
    down = false;
    // A fresh verifier with the provider down cannot verify at all: 502, not the token's fault.
    down = true;
    await expect(verifier({ now: T0 }).verify(await token({}), {})).rejects.toMatchObject({ httpStatus: 502, turnkeyErrorCode: 'INTERNAL' });
    down = false;
  });

  it('refuses a discovery document that names another issuer', async () => {
    discoveryIssuer = 'https://elsewhere.test';
    try {
      await expect(verifier({ now: T0 }).verify(await token({}), {})).rejects.toThrow(/its discovery document names issuer "https:\/\/elsewhere.test"/);
    } finally {
      discoveryIssuer = undefined;
    }
  });

  it('checks claims: one audience, sub, exp and nbf with a minute of skew, nonce or tknonce', async () => {
    const clock = { now: T0 };
    const v = verifier(clock);
    const refused = async (claims: Record<string, unknown>, message: RegExp, opts: { nonceForPublicKey?: string } = {}) => {
      const err = await v.verify(await token(claims), opts).catch((e: unknown) => e);
      expect(err).toMatchObject({ turnkeyErrorCode: 'INVALID_OIDC_TOKEN', httpStatus: 400 });
      expect((err as Error).message).toMatch(message);
    };
    await refused({ aud: ['app', 'other'] }, /names 2 audiences/);
    await refused({ aud: undefined }, /has no aud claim/);
    await refused({ sub: '' }, /has no sub claim/);
    await refused({ exp: undefined }, /has no numeric exp claim/);
    await refused({ exp: T0 / 1000 - 61 }, /^invalid OIDC token: expired at /);
    await v.verify(await token({ exp: T0 / 1000 - 30 }), {}); // within the skew
    await refused({ nbf: T0 / 1000 + 120 }, /not valid before/);
    const pub = '0394e549c71fa99dd5cf752fba623090be314949b74e4cdf7ca72031dd638e281a';
    // The nonce of docs/reference/sessions.md "Login activities" (oauth_login): SHA-256 of the hex
    // public key.
    expect(oidcNonce(pub)).toBe('1663bba492a323085b13895634a3618792c4ec6896f3c34ef3c26396df22ef82');
    await v.verify(await token({ nonce: oidcNonce(pub) }), { nonceForPublicKey: pub });
    await v.verify(await token({ nonce: 'x', tknonce: oidcNonce(pub) }), { nonceForPublicKey: pub });
    await refused({ nonce: oidcNonce(pub + '00') }, /wrong nonce/, { nonceForPublicKey: pub });
    await refused({}, /has no nonce \(or tknonce\) claim/, { nonceForPublicKey: pub });
  });

  it('refuses alg none, HMAC, and tokens that are not JWTs', async () => {
    const v = verifier({ now: T0 });
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const claims = { iss: base, aud: 'app', sub: 'u', exp: T0 / 1000 + 600 };
    await expect(v.verify(`${b64({ alg: 'none' })}.${b64(claims)}.`, {})).rejects.toThrow(/invalid OIDC token: its signature algorithm is not accepted/);
    const hmac = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: 'a' }).sign(new TextEncoder().encode('a shared secret of 32 bytes long!'));
    await expect(v.verify(hmac, {})).rejects.toThrow(/invalid OIDC token: its signature algorithm is not accepted/);
    await expect(v.verify('a.b', {})).rejects.toThrow(/it is not a JWT/);
    await expect(v.verify(`${b64({ alg: 'ES256' })}.${b64({ aud: 'x' })}.AA`, {})).rejects.toThrow(/it has no iss claim/);
  });

  it('verifies this deployment’s own tokens with its signer (standard ES256), never its session JWTs', async () => {
    const v = verifier({ now: T0 });
    const claims = { iss: 'urn:sigil:oauth2', aud: 'discord-client', sub: 'discord:42', exp: T0 / 1000 + 600, nonce: oidcNonce('02ab') };
    const es256 = (signer: P256Signer) => {
      const input = `${Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
      return `${input}.${Buffer.from(signer.signRaw(Buffer.from(input))).toString('base64url')}`;
    };
    expect(await v.verify(es256(selfSigner), { nonceForPublicKey: '02ab' })).toMatchObject({ issuer: 'urn:sigil:oauth2', audience: 'discord-client', subject: 'discord:42' });
    await expect(v.verify(es256(new P256Signer(generateP256KeyPair().privateKey)), {})).rejects.toThrow(/invalid OIDC token: bad signature/);
    // The same claims in Turnkey's session form (double hash) by the same key: not an id_token.
    await expect(v.verify(signSessionJwt(claims, selfSigner), {})).rejects.toThrow(/invalid OIDC token: bad signature/);
  });
});
