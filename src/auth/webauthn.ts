// Passkey stamps (X-Stamp-Webauthn, docs/reference/api.md "Stamps"): finds the authenticator by its
// credential id in the target organization or its parent (the target wins), verifies the assertion
// over the raw body (challenge = base64url of the UTF-8 of the lowercase hex SHA-256 of the body)
// with the stored COSE key, the configured relying party id and origins, and enforces the signature
// counter: once an authenticator counts, every assertion must carry a higher count than the last
// one accepted, and the stored count moves by compare-and-set so a replay racing the original fails.
// Error messages are the reference service's (docs/reference/api.md "Limits", Unauthenticated 401).
import { canonicalCredentialId, challengeOfBody, verifyAssertion, WebauthnError, type WebauthnExpectations } from '../crypto/webauthn.js';
import { SigilError } from '../errors/errors.js';
import type { AuthenticatorRow, Repositories, UserRow } from '../store/index.js';
import type { WebauthnStamp } from './stamp.js';

const notVerified = (reason: string) => new SigilError('SIGNATURE_INVALID', `could not verify WebAuthN signature: ${reason}`);

/**
 * Authenticates a passkey stamp. `organizationIds` lists the target organization first, then its
 * parent when it has one. On success the authenticator's stored counter has been advanced.
 */
export async function authenticateWebauthnStamp(
  repos: Repositories,
  stamp: WebauthnStamp,
  organizationIds: string[],
  rawBody: Uint8Array,
  expect: WebauthnExpectations,
): Promise<{ authenticator: AuthenticatorRow; user: UserRow }> {
  const credentialId = canonicalCredentialId(stamp.credentialId);
  if (!credentialId) throw new SigilError('SIGNATURE_INVALID', 'could not extract webauthn stamp: credentialId is not base64url');
  const rows = await repos.authenticators.findWithOwner(organizationIds, credentialId);
  const found = rows.find((r) => r.authenticator.organization_id === organizationIds[0]) ?? rows[0];
  if (!found) {
    throw new SigilError('CREDENTIAL_NOT_FOUND', 'credential ID could not be found in organization or its parent organization');
  }
  const { authenticator, user } = found;
  let signCount: number;
  try {
    ({ signCount } = await verifyAssertion(
      stamp,
      challengeOfBody(rawBody),
      { credentialId, cosePublicKey: new Uint8Array(Buffer.from(authenticator.public_key, 'base64url')) },
      expect,
    ));
  } catch (err) {
    if (err instanceof WebauthnError) throw notVerified(err.message);
    throw err;
  }
  const stored = authenticator.sign_count;
  const replay = () =>
    notVerified(`the authenticator's signature counter did not increase (last accepted ${stored}, received ${signCount}): a replayed assertion or a cloned authenticator`);
  // Authenticators that never count (always 0) are accepted as they are; WebAuthn §6.1.1.
  if ((signCount > 0 || stored > 0) && signCount <= stored) throw replay();
  if (signCount > stored && !(await repos.authenticators.advanceSignCount(authenticator.id, stored, signCount))) throw replay();
  return { authenticator: { ...authenticator, sign_count: signCount }, user };
}
