// The WebAuthn core of src/crypto/webauthn.ts and its configuration (docs/reference/api.md "Stamps"):
// the stamp challenge of a body, credential id spellings, the `*` origin, ES256/RS256 display keys,
// and SIGIL_WEBAUTHN_* parsing. The end-to-end behaviour is in test/e2e/passkeys.test.ts.
import { describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { canonicalCredentialId, challengeOfBody, verifyAssertion, verifyRegistration, WebauthnError } from '../../src/crypto/webauthn.js';
import { loadConfig } from '../../src/config/config.js';
import { SoftwareAuthenticator } from '../helpers/software-authenticator.js';

describe('webauthn core', () => {
  it('challenge = base64url of the 64 ASCII bytes of hex(sha256(body))', () => {
    const body = Buffer.from('{"organizationId":"x"}');
    const hex = createHash('sha256').update(body).digest('hex');
    expect(challengeOfBody(body)).toBe(Buffer.from(hex, 'ascii').toString('base64url'));
    expect(challengeOfBody(body)).toHaveLength(86);
  });

  it('accepts a credential id in base64url or padded standard base64, and nothing else', () => {
    const raw = Buffer.from([0xfb, 0xff, 0x01, 0x02, 0x03]);
    expect(canonicalCredentialId(raw.toString('base64url'))).toBe('-_8BAgM');
    expect(canonicalCredentialId(raw.toString('base64'))).toBe('-_8BAgM');
    expect(canonicalCredentialId('not base64!')).toBeUndefined();
    expect(canonicalCredentialId('')).toBeUndefined();
  });

  for (const alg of ['ES256', 'RS256'] as const) {
    it(`${alg}: registers, asserts, and honours the origin list and "*"`, async () => {
      const a = new SoftwareAuthenticator({ alg, origin: 'https://app.example' });
      const challenge = randomBytes(32);
      const reg = await verifyRegistration(a.register(challenge), challenge.toString('base64url'), { rpId: 'localhost', origins: ['*'] });
      expect(reg).toMatchObject({ credentialId: a.credentialId, publicKeyHex: a.publicKeyHex, algorithm: alg === 'ES256' ? -7 : -257, signCount: 0, attestationType: 'none' });
      const body = Buffer.from('{"a":1}');
      const sign = () => {
        const { authenticatorData, clientDataJSON, signature } = a.assert(Buffer.from(createHash('sha256').update(body).digest('hex'), 'ascii'));
        return { authenticatorData: authenticatorData.toString('base64url'), clientDataJson: clientDataJSON.toString('base64url'), credentialId: a.credentialId, signature: signature.toString('base64url') };
      };
      const credential = { credentialId: reg.credentialId, cosePublicKey: reg.cosePublicKey };
      expect(await verifyAssertion(sign(), challengeOfBody(body), credential, { rpId: 'localhost', origins: ['*'] })).toEqual({ signCount: 1 });
      expect(await verifyAssertion(sign(), challengeOfBody(body), credential, { rpId: 'localhost', origins: ['https://app.example'] })).toEqual({ signCount: 2 });
      await expect(verifyAssertion(sign(), challengeOfBody(body), credential, { rpId: 'localhost', origins: ['https://other.example'] })).rejects.toThrow(WebauthnError);
      await expect(verifyAssertion(sign(), challengeOfBody(Buffer.from('{}')), credential, { rpId: 'localhost', origins: ['*'] })).rejects.toThrow(/challenge/);
    });
  }

  it('refuses keys other than ES256 and RS256', async () => {
    // An EdDSA COSE key in an otherwise valid attestation.
    const a = new SoftwareAuthenticator();
    const challenge = randomBytes(32);
    const att = a.register(challenge);
    const obj = Buffer.from(att.attestationObject, 'base64url');
    // The COSE alg -7 (0x26) of the EC2 key, right after kty (01 02) and the alg label (03): make it -8 (0x27).
    const at = obj.indexOf(Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26]));
    expect(at).toBeGreaterThan(0);
    obj[at + 4] = 0x27;
    await expect(
      verifyRegistration({ ...att, attestationObject: obj.toString('base64url') }, challenge.toString('base64url'), { rpId: 'localhost', origins: ['*'] }),
    ).rejects.toThrow(/alg/);
  });
});

describe('webauthn configuration', () => {
  it('defaults, then SIGIL_WEBAUTHN_RP_ID and a comma-separated SIGIL_WEBAUTHN_ORIGINS', () => {
    const d = loadConfig({}, {});
    expect(d.webauthnRpId).toBe('localhost');
    expect(d.webauthnOrigins).toEqual(['http://localhost:3000', 'https://localhost']);
    const c = loadConfig({}, { SIGIL_WEBAUTHN_RP_ID: 'wallet.example', SIGIL_WEBAUTHN_ORIGINS: ' https://wallet.example/ , https://app.wallet.example ,' });
    expect(c.webauthnRpId).toBe('wallet.example');
    expect(c.webauthnOrigins).toEqual(['https://wallet.example', 'https://app.wallet.example']);
  });
});
