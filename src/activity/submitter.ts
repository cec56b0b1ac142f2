// Who an activity runs as (docs/reference/activities.md "Votes"): the caller a credential
// stands for, built by src/domain/context.ts's builders for a stamped request and here for the
// submitter of a waiting activity, found again from the vote it submitted with.
import { WEBAUTHN_VOTE_SCHEME, apiKeyCaller, passkeyCaller, type Caller } from '../domain/context.js';
import { SigilError } from '../errors/errors.js';
import type { ActivityRow, ApiKeyRow, AuthenticatorRow, Repositories, UserRow, VoteRow } from '../store/index.js';

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
