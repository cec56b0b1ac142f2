// Who an activity runs as (docs/reference/activities.md, docs/policies.md "Policies and approvals"): the caller a credential
// stands for, built in one place for a stamped request (src/pipeline/authenticate.ts) and for the
// submitter of a waiting activity, found again from the vote it submitted with.
import { WEBAUTHN_VOTE_SCHEME, type Caller } from '../domain/context.js';
import { SigilError } from '../errors/errors.js';
import type { ActivityRow, ApiKeyRow, AuthenticatorRow, Repositories, UserRow, VoteRow } from '../store/index.js';

/** The caller an API key stands for; `signature` is what its votes record. */
export function apiKeyCaller(key: ApiKeyRow, user: UserRow, scheme: string, signature: string): Caller {
  return { organizationId: key.organization_id, user, credential: { kind: 'api_key', apiKey: key, scheme, signature } };
}

/** The caller a passkey stands for; `signature` is the X-Stamp-Webauthn value its votes record. */
export function passkeyCaller(authenticator: AuthenticatorRow, user: UserRow, signature: string): Caller {
  return { organizationId: authenticator.organization_id, user, credential: { kind: 'webauthn', authenticator, scheme: WEBAUTHN_VOTE_SCHEME, signature } };
}

/** The submitter of a waiting activity, with the credential that submitted it (its first vote). */
export async function submitterOf(repos: Repositories, target: ActivityRow, votes: VoteRow[]): Promise<Caller> {
  const first = votes.find((v) => v.user_id === target.user_id);
  const gone = () => new SigilError('REQUEST_INVALID', `the credential that submitted activity ${target.id} no longer exists`);
  if (!first) throw gone();
  if (first.scheme === WEBAUTHN_VOTE_SCHEME) {
    const found = await repos.authenticators.findByPublicKeyWithOwner(target.organization_id, first.public_key);
    const match = found.find((f) => f.user.id === target.user_id);
    if (!match) throw gone();
    return passkeyCaller(match.authenticator, match.user, first.signature);
  }
  const found = await repos.apiKeys.findWithOwner([target.organization_id], first.public_key);
  const match = found.find((f) => f.user.id === target.user_id);
  if (!match) throw gone();
  return apiKeyCaller(match.key, match.user, first.scheme, first.signature);
}
