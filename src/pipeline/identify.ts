// Who is calling, beyond the plain stamp lookup of authenticate.ts (docs/reference/sessions.md "Sessions";
// docs/reference/api.md "Transport" X-Session, docs/reference/policies.md):
//  - a request without a stamp may carry a read-only session in `X-Session`: it authenticates
//    queries, never submissions;
//  - a login activity whose credential is not in the target organization or its parent is run in
//    the one sub-organization of the target that holds the credential (clients log in with the
//    parent's organizationId and learn their sub-organization from the session).
import type { ApiKeyStamp, WebauthnStamp } from '../auth/stamp.js';
import type { Caller } from '../domain/context.js';
import { requireOrganization } from '../domain/governance/organizations.js';
import { SigilError } from '../errors/errors.js';
import type { Declaration } from '../operations/define.js';
import type { OrganizationRow, Repositories } from '../store/index.js';

type Headers = Record<string, string | string[] | undefined>;

const present = (v: string | string[] | undefined) => typeof v === 'string' && v !== '';

/**
 * The X-Session token when the request carries no stamp (a stamp, when present, is what
 * authenticates). Submissions with only a session are refused.
 */
export function readOnlySessionToken(headers: Headers, kind: 'submit' | 'query'): string | undefined {
  if (present(headers['x-stamp']) || present(headers['x-stamp-webauthn']) || present(headers['x-stamp-attested'])) return undefined;
  const token = headers['x-session'];
  if (!present(token)) return undefined;
  if (kind === 'submit') {
    throw new SigilError(
      'REQUEST_NOT_AUTHORIZED',
      'a read-only session (X-Session) cannot submit activities: stamp the request with a credential (X-Stamp or X-Stamp-Webauthn)',
    );
  }
  return token as string;
}

/**
 * Resolves the caller of a stamped request in `org` with `resolve` (authenticate.ts), falling back
 * to the target's sub-organizations for declarations that allow it.
 */
export async function stampCaller(
  repos: Repositories,
  decl: Declaration,
  stamp: ApiKeyStamp | WebauthnStamp,
  org: OrganizationRow,
  resolve: (org: OrganizationRow) => Promise<Caller>,
): Promise<{ organization: OrganizationRow; caller: Caller }> {
  try {
    return { organization: org, caller: await resolve(org) };
  } catch (err) {
    const notHere = err instanceof SigilError && (err.turnkeyErrorCode === 'PUBLIC_KEY_NOT_FOUND' || err.turnkeyErrorCode === 'CREDENTIAL_NOT_FOUND');
    if (!notHere || decl.kind !== 'activity' || !decl.credentialMayBeInSubOrganization || org.parent_organization_id) throw err;
    const filter = stamp.kind === 'api_key' ? { type: 'PUBLIC_KEY', value: stamp.publicKey } : { type: 'CREDENTIAL_ID', value: stamp.credentialId };
    const ids = await repos.organizations.children(org.id, filter, { limit: 2 });
    if (ids.length === 0) throw err;
    if (ids.length > 1) {
      throw new SigilError(
        'REQUEST_INVALID',
        'the credential is registered in more than one sub-organization of this organization: send the sub-organization id as organizationId',
      );
    }
    const sub = await requireOrganization(repos, ids[0]);
    return { organization: sub, caller: await resolve(sub) };
  }
}
