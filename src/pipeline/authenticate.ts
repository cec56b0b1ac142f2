// Authentication: the stamp's signature over the raw body, then the credential's owner, found in
// the target organization or its parent (docs/reference/api.md), with API key expiry; passkey
// stamps (X-Stamp-Webauthn) are verified by src/auth/webauthn.ts once the authenticator is found. Error
// messages are the ones @turnkey/core matches on (docs/reference/api.md "Errors").
import { parseStamp, verifyApiKeyStamp, verifyAttestedStamp, SCHEME_CURVE, type ApiKeyStamp, type Stamp, type WebauthnStamp } from '../auth/stamp.js';
import { authenticateWebauthnStamp } from '../auth/webauthn.js';
import type { WebauthnExpectations } from '../crypto/webauthn.js';
import { isExpired } from '../domain/identity/api-keys.js';
import type { Caller } from '../domain/context.js';
import { apiKeyCaller, passkeyCaller } from '../activity/submitter.js';
import { SigilError } from '../errors/errors.js';
import type { OrganizationRow, Repositories } from '../store/index.js';

export function readStamp(headers: Record<string, string | string[] | undefined>, rawBody: Buffer): Stamp {
  const stamp = parseStamp(headers);
  // The signature is checked before any lookup, so forged requests cost no database work.
  if (stamp.kind === 'api_key') verifyApiKeyStamp(stamp, rawBody);
  if (stamp.kind === 'attested') verifyAttestedStamp(stamp, rawBody);
  return stamp;
}

export async function resolveCaller(
  repos: Repositories,
  stamp: ApiKeyStamp | WebauthnStamp,
  org: OrganizationRow,
  now: number,
  /** What a passkey assertion is checked against: the raw body (its challenge) and the relying party. */
  passkeys: { rawBody: Uint8Array; webauthn: WebauthnExpectations },
): Promise<Caller> {
  if (stamp.kind === 'webauthn') {
    // The assertion can only be checked with the stored key, so the lookup comes first here.
    const orgIds = org.parent_organization_id ? [org.id, org.parent_organization_id] : [org.id];
    const { authenticator, user } = await authenticateWebauthnStamp(repos, stamp, orgIds, passkeys.rawBody, passkeys.webauthn);
    const { authenticatorData, clientDataJson, credentialId, signature } = stamp;
    return passkeyCaller(authenticator, user, JSON.stringify({ authenticatorData, clientDataJson, credentialId, signature }));
  }
  const orgIds = org.parent_organization_id ? [org.id, org.parent_organization_id] : [org.id];
  const rows = await repos.apiKeys.findWithOwner(orgIds, stamp.publicKey);
  // A key in the target organization wins over one in its parent.
  const found = rows.find((r) => r.key.organization_id === org.id) ?? rows[0];
  if (!found) {
    throw new SigilError('PUBLIC_KEY_NOT_FOUND', 'could not find public key in organization or its parent organization');
  }
  const { key, user } = found;
  if (SCHEME_CURVE[stamp.scheme] !== key.curve_type) {
    throw new SigilError('SIGNATURE_INVALID', `could not verify api key signature: scheme ${stamp.scheme} does not match the key's curve ${key.curve_type}`);
  }
  if (isExpired(key, now)) {
    throw new SigilError('API_KEY_EXPIRED', `expired api key: rpc error: code = Unauthenticated desc = expired api key publicKey: ${key.public_key}`);
  }
  return apiKeyCaller(key, user, stamp.scheme, stamp.signature);
}
