// Who an X-Stamp-Attested request comes from (docs/reference/api.md "Stamps"; docs/reference/policies.md
// docs/reference/keys.md "Signing"). The stamp's key signed the body (checked before this); here
// its attestation names the user:
//  - STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN: an OTP verification token this deployment
//    issued for the target organization (or its parent), bound to the stamp's key (`public_key`),
//    whose contact belongs to exactly one user in the target or, when the target is a parent, in one
//    of its sub-organizations. The token's login use is spent and the contact becomes verified.
//  - STAMP_ATTESTED_SCHEME_P256_OIDC: an OIDC id_token from a trusted issuer whose nonce is the hex
//    sha256 of the stamp's key; its (iss, aud, sub) is an OAuth provider of exactly one user there.
// The organization answered is the user's, so a login submitted with the parent's id runs in the
// user's sub-organization, as @turnkey/core expects.
import type { AttestedStamp } from '../../auth/stamp.js';
import { samePublicKey } from '../../crypto/p256.js';
import { SigilError } from '../../errors/errors.js';
import type { OrganizationRow, Repositories, UserRow } from '../../store/index.js';
import type { Caller, Services } from '../context.js';
import { requireOrganization } from '../governance/organizations.js';
import { userWithContact } from './otp.js';
import { acceptVerificationToken, markVerifiedByLogin } from './verified-contacts.js';

const unauthenticated = (why: string) => new SigilError('UNAUTHENTICATED', `could not verify attested stamp: ${why}`);

async function userWithOauthIdentity(repos: Repositories, org: OrganizationRow, identity: { issuer: string; audience: string; subject: string }): Promise<UserRow> {
  let orgIds = [org.id];
  let providers = await repos.oauthProviders.findIdentities(org.id, [identity]);
  if (providers.length === 0 && !org.parent_organization_id) {
    orgIds = await repos.organizations.children(org.id, { type: 'OIDC_TOKEN', identity }, { limit: 2 });
    if (orgIds.length > 1) {
      throw new SigilError('REQUEST_INVALID', 'more than one sub-organization has an OAuth provider for this identity: send the sub-organization id as organizationId');
    }
    providers = orgIds.length === 1 ? await repos.oauthProviders.findIdentities(orgIds[0], [identity]) : [];
  }
  if (providers.length === 0) {
    throw unauthenticated(`no user in organization ${org.id} or its sub-organizations has an OAuth provider with issuer ${identity.issuer}, audience ${identity.audience} and subject ${identity.subject}`);
  }
  const user = await repos.users.get(providers[0].organization_id, providers[0].user_id);
  if (!user) throw unauthenticated('the OAuth provider has no user');
  return user;
}

/** The caller an attested stamp stands for, and the organization the request then runs in. */
export async function attestedCaller(
  repos: Repositories,
  services: Services,
  stamp: AttestedStamp,
  target: OrganizationRow,
  now: number,
): Promise<{ organization: OrganizationRow; caller: Caller }> {
  let user: UserRow;
  if (stamp.scheme === 'STAMP_ATTESTED_SCHEME_P256_VERIFICATION_TOKEN') {
    const ctx = { repos, services, now, organization: target };
    const claims = await acceptVerificationToken(ctx, stamp.publicKeyAttestation, [target.id, target.parent_organization_id]);
    if (claims.public_key === undefined || !samePublicKey(claims.public_key, stamp.publicKey)) {
      throw unauthenticated("the stamp's public key is not the public key the verification token was issued for");
    }
    // The token's issuer is the party of this login (the target, or its parent).
    user = await userWithContact(ctx, claims, claims.organization_id);
    if (!(await repos.otps.spendToken(claims.id, now, 'login'))) {
      throw new SigilError('REQUEST_INVALID', 'invalid verification token: it has already been used to log in; verify a new code');
    }
    await markVerifiedByLogin(ctx, user, claims);
  } else {
    const identity = await services.oidc.verify(stamp.publicKeyAttestation, { nonceForPublicKey: stamp.publicKey });
    user = await userWithOauthIdentity(repos, target, identity);
  }
  const organization = user.organization_id === target.id ? target : await requireOrganization(repos, user.organization_id);
  return {
    organization,
    caller: {
      organizationId: user.organization_id,
      user,
      credential: { kind: 'attested', publicKey: stamp.publicKey, scheme: stamp.scheme, signature: stamp.signature },
    },
  };
}
