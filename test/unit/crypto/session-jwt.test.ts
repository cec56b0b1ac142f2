// Session JWTs whose claims hold arbitrary text (a session profile's scope): the payload's
// base64url never contains `-` or `_` (clients decode it with a plain atob,
// docs/reference/sessions.md "The session JWT"), JSON.parse gives back the exact strings, and
// @turnkey/crypto verifies the signature.
import { describe, expect, it } from 'vitest';
import { verifySessionJwtSignature } from '@turnkey/crypto';
import { P256Signer, generateP256KeyPair } from '../../../src/crypto/p256.js';
import { signSessionJwt, verifySessionJwt } from '../../../src/crypto/session-jwt.js';

describe('signSessionJwt with free-text claims', () => {
  const signer = new P256Signer(generateP256KeyPair().privateKey);
  const texts = [
    "eth.tx.value > 5 && activity.params.x >= 1",
    'what? ~tilde~ and DEL \u007f',
    'unicode: é ✓ 😀',
    '>>>???~~~',
    'quotes " and \\ backslashes',
  ];

  for (const scope of texts) {
    it(`keeps ${JSON.stringify(scope)} readable by atob and verifiable`, async () => {
      // Every offset mod 3, so each character lands where base64 index 62/63 could come from it.
      for (const pad of ['', 'a', 'ab']) {
        const token = signSessionJwt({ exp: 1, public_key: '02ab', session_profile_id: `id${pad}`, scope }, signer);
        const payload = token.split('.')[1];
        expect(payload).toMatch(/^[A-Za-z0-9]+$/);
        expect(JSON.parse(atob(payload)).scope).toBe(scope);
        expect(verifySessionJwt(token, signer.publicKey)?.scope).toBe(scope);
        await expect(verifySessionJwtSignature(token, Buffer.from(signer.publicKeyUncompressed).toString('hex'))).resolves.toBe(true);
      }
    });
  }
});
