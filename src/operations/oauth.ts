// OAuth login operations (docs/reference/sessions.md "Login activities"; swagger v1OauthLoginIntent →
// oauthLoginResult, v1OauthIntent → oauthResult): oauth_login and the legacy oauth.
//
// Who may run them: the organization's root quorum, or users a policy allows (AUTH/CREATE, as
// otp_login). A parent organization serves its sub-organizations' end users by submitting to
// itself (the user with the token's identity is then found in its sub-organizations and the key is
// created there) or, as @turnkey/sdk-server's oauthLogin server action does, by submitting to the
// sub-organization with its own credential (docs/reference/organizations.md "Sub-organizations": parent-org users run auth activities
// that target sub-org users): decided by the parent's policies, recorded in the sub-organization.
//
// Both run as 'pure' activities: checking the token may fetch the issuer's signing keys over the
// network, and no database lock may be held meanwhile. Their writes (the new key, and the keys
// invalidateExisting or the per-user limit remove) come after every check, so a refusal writes
// nothing; the activity is recorded once they are done, as otp_auth's.
import { oauth, oauthLogin, type OauthLoginParams, type OauthParams } from '../domain/identity/oauth.js';
import { defineActivity } from './define.js';

export const oauthLoginOp = defineActivity<OauthLoginParams, { session: string }>({
  path: 'oauth_login',
  type: 'ACTIVITY_TYPE_OAUTH_LOGIN',
  result: 'oauthLoginResult',
  policy: { resource: 'AUTH', action: 'CREATE' },
  policyParams: (p) => ({ session_profile_id: p.sessionProfileId ?? '' }),
  parentOrganizationMaySubmit: true,
  // An id_token is a bearer credential while it lives: never stored or logged.
  secretFields: ['oidcToken'],
  execution: 'pure',
  execute: (ctx, p) => oauthLogin(ctx, p),
});

export const oauthOp = defineActivity<OauthParams, { userId: string; apiKeyId: string; credentialBundle: string }>({
  path: 'oauth',
  type: 'ACTIVITY_TYPE_OAUTH',
  result: 'oauthResult',
  policy: { resource: 'AUTH', action: 'CREATE' },
  parentOrganizationMaySubmit: true,
  secretFields: ['oidcToken'],
  execution: 'pure',
  execute: (ctx, p) => oauth(ctx, p),
});
