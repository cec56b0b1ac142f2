// Who is asking: the one call the pipeline makes to authenticate a request (docs/design.md "Layers": what
// the pipeline needs to authenticate sits behind one function, so the request path does not climb back
// into the domain; "One pipeline for every request": resolve the organization and the acting user).
// The stamp's signature over the raw body was checked before (src/pipeline/authenticate.ts, before any
// lookup); here, against the target organization (docs/reference/api.md, docs/reference/sessions.md, docs/reference/organizations.md "IP allowlists"):
//  - an X-Stamp key or passkey is looked up in the target or its parent, with API key expiry; a login
//    activity whose credential is in neither runs in the one sub-organization of the target that
//    holds it (clients log in with the parent's organizationId and learn their sub-organization from
//    the session);
//  - an X-Stamp-Attested key is vouched for by an OTP verification token or an OIDC id_token, and may
//    only log in (attested-stamps.ts);
//  - a read-only session (X-Session) stands in for a stamp on queries only (sessions.ts);
//  - then the caller's IP allowlist, unless the auth proxy sent the request on its configuration's
//    behalf.
import type { AttestedStamp, ApiKeyStamp, Stamp, WebauthnStamp } from '../../auth/stamp.js';
import { SCHEME_CURVE } from '../../auth/stamp.js';
import { authenticateWebauthnStamp } from '../../auth/webauthn.js';
import { SigilError } from '../../errors/errors.js';
import type { OrganizationRow, Repositories } from '../../store/index.js';
import { apiKeyCaller, credentialPublicKey, passkeyCaller, type Caller, type Services } from '../context.js';
import { enforceIpAllowlist } from '../governance/ip-allowlists.js';
import { requireOrganization } from '../governance/organizations.js';
import { isExpired } from './api-keys.js';
import { attestedCaller } from './attested-stamps.js';
import { readOnlySessionCaller } from './sessions.js';

export interface AuthenticationRequest {
  /** The organizationId the body names: the target. */
  organizationId: string;
  /** A stamp whose signature over `rawBody` verified, or, without one, a read-only session token. */
  credential: { stamp: Stamp } | { sessionToken: string };
  rawBody: Uint8Array;
  /** How the operation is called in refusals: `/public/v1/submit/stamp_login`. */
  operation: string;
  /** The operation is a login that takes an attested stamp (stamp_login). */
  acceptsAttestedStamp: boolean;
  /** The operation is a login whose credential may be in a sub-organization of the target. */
  credentialMayBeInSubOrganization: boolean;
  /** The client's IP address as the HTTP layer determined it. */
  clientAddress?: string;
  /**
   * Sent by the auth proxy on its configuration's behalf: exempt from IP allowlists
   * (docs/reference/auth-proxy.md "Rules the proxy adds").
   */
  viaAuthProxy?: boolean;
  now: number;
}

/** What is learnt of the caller, filled in as soon as it is known so a refusal after it names them. */
export interface CallerIdentity {
  userId?: string;
  publicKey?: string;
}

/**
 * The organization the request runs in and its caller. `reads` answers the lookups (the request's
 * cached reads); `writes` is what an attested login spends its token through.
 */
export async function authenticate(
  repos: { reads: Repositories; writes: Repositories },
  services: Services,
  req: AuthenticationRequest,
  identity?: CallerIdentity,
): Promise<{ organization: OrganizationRow; caller: Caller }> {
  const { reads } = repos;
  const target = await requireOrganization(reads, req.organizationId);
  const { credential, now } = req;
  const found =
    'sessionToken' in credential
      ? { organization: target, caller: await readOnlySessionCaller(reads, credential.sessionToken, services.signer.publicKeyUncompressed, target, now) }
      : credential.stamp.kind === 'attested'
        ? await attestedLogin(repos.writes, services, req, credential.stamp, target)
        : await stampCaller(reads, req, credential.stamp, target, (org) => resolveCaller(reads, credential.stamp as ApiKeyStamp | WebauthnStamp, org, now, req.rawBody, services));
  if (identity) {
    identity.userId = found.caller.user.id;
    identity.publicKey = credentialPublicKey(found.caller.credential);
  }
  if (!req.viaAuthProxy) await enforceIpAllowlist(reads, found.caller, req.clientAddress);
  return found;
}

/** An X-Stamp-Attested request: only login activities take one (attested-stamps.ts). */
function attestedLogin(repos: Repositories, services: Services, req: AuthenticationRequest, stamp: AttestedStamp, target: OrganizationRow) {
  if (!req.acceptsAttestedStamp) {
    throw new SigilError(
      'REQUEST_NOT_AUTHORIZED',
      `an attested stamp (X-Stamp-Attested) can only log in (stamp_login): stamp ${req.operation} with X-Stamp or X-Stamp-Webauthn`,
    );
  }
  return attestedCaller(repos, services, stamp, target, req.now);
}

/**
 * Resolves the caller of a stamped request in `org` with `resolve`, falling back to the target's
 * sub-organizations for operations that allow it.
 */
async function stampCaller(
  repos: Repositories,
  req: AuthenticationRequest,
  stamp: ApiKeyStamp | WebauthnStamp,
  org: OrganizationRow,
  resolve: (org: OrganizationRow) => Promise<Caller>,
): Promise<{ organization: OrganizationRow; caller: Caller }> {
  try {
    return { organization: org, caller: await resolve(org) };
  } catch (err) {
    const notHere = err instanceof SigilError && (err.turnkeyErrorCode === 'PUBLIC_KEY_NOT_FOUND' || err.turnkeyErrorCode === 'CREDENTIAL_NOT_FOUND');
    if (!notHere || !req.credentialMayBeInSubOrganization || org.parent_organization_id) throw err;
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

/**
 * The owner of a stamp's credential in `org` or its parent. Passkey stamps (X-Stamp-Webauthn) are
 * verified here, by src/auth/webauthn.ts, as the assertion can only be checked with the stored key.
 * Error messages are the ones @turnkey/core matches on (docs/reference/api.md "Errors").
 */
async function resolveCaller(
  repos: Repositories,
  stamp: ApiKeyStamp | WebauthnStamp,
  org: OrganizationRow,
  now: number,
  rawBody: Uint8Array,
  services: Services,
): Promise<Caller> {
  const orgIds = org.parent_organization_id ? [org.id, org.parent_organization_id] : [org.id];
  if (stamp.kind === 'webauthn') {
    const { authenticator, user } = await authenticateWebauthnStamp(repos, stamp, orgIds, rawBody, services.settings.webauthn);
    const { authenticatorData, clientDataJson, credentialId, signature } = stamp;
    return passkeyCaller(authenticator, user, JSON.stringify({ authenticatorData, clientDataJson, credentialId, signature }));
  }
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
