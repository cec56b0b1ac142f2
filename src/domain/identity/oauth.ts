// OAuth login with an OIDC id_token (docs/reference/sessions.md "Login activities"; swagger
// v1OauthLoginIntent → v1OauthLoginResult, v1OauthIntent → v1OauthResult).
//
//  - The token is verified by `services.oidc` (src/auth/oidc.ts): a trusted issuer's signature,
//    expiry, one audience, and `nonce` (or `tknonce`) = hex sha256 of the public key the login
//    registers, so a token obtained for one key cannot log another key in.
//  - Its identity (iss, aud, sub) must be a registered OAuth provider: in the organization, else,
//    when a parent organization submits for its end users, in one of its sub-organizations (as
//    otp_login finds users by contact). A token of the right issuer and subject but another
//    audience is another identity and finds no one.
//  - oauth_login registers the client's key as an expiring login key (CREDENTIAL_TYPE_LOGIN, as
//    stamp_login and otp_login) and answers a session JWT; legacy oauth makes a key here
//    (CREDENTIAL_TYPE_OAUTH_KEY_P256, default name `Oauth - <timestamp>`) and answers it sealed to
//    targetPublicKey in a credential bundle (docs/reference/bundles.md).
// Organization features have no OAuth switch (swagger FeatureName), so OAuth is always enabled.
import { SigilError, invalid } from '../../errors/errors.js';
import type { UserRow } from '../../store/index.js';
import type { ActivityContext } from '../context.js';
import { issueKeyBundle, openLoginSession, sessionPublicKey } from './sessions.js';

export const OAUTH_CREDENTIAL = 'CREDENTIAL_TYPE_OAUTH_KEY_P256';

export interface OauthLoginParams {
  oidcToken: string;
  publicKey: string;
  expirationSeconds?: string;
  invalidateExisting?: boolean;
  sessionProfileId?: string;
}

export interface OauthParams {
  oidcToken: string;
  targetPublicKey: string;
  apiKeyName?: string;
  expirationSeconds?: string;
  invalidateExisting?: boolean;
}

interface Identity {
  issuer: string;
  audience: string;
  subject: string;
}

const identityText = (i: Identity) => `issuer ${JSON.stringify(i.issuer)}, audience ${JSON.stringify(i.audience)} and subject ${JSON.stringify(i.subject)}`;

/** The one user with this OAuth identity in the organization, else in one of its sub-organizations. */
async function userWithIdentity(ctx: ActivityContext, identity: Identity): Promise<UserRow> {
  const org = ctx.organization;
  let providers = await ctx.repos.oauthProviders.findIdentities(org.id, [identity]);
  if (providers.length === 0 && !org.parent_organization_id) {
    const subs = await ctx.repos.organizations.children(org.id, { type: 'OIDC_TOKEN', identity }, { limit: 2 });
    providers = (await Promise.all(subs.map((id) => ctx.repos.oauthProviders.findIdentities(id, [identity])))).flat();
  }
  if (providers.length === 0) {
    throw new SigilError(
      'INVALID_OIDC_TOKEN',
      `invalid OIDC token: no OAuth provider with ${identityText(identity)} in organization ${org.id}${org.parent_organization_id ? '' : ' or its sub-organizations'} (a token for another audience is another identity)`,
    );
  }
  if (providers.length > 1) throw invalid(`more than one user has the OAuth identity with ${identityText(identity)}: submit to the sub-organization of the user`);
  const [provider] = providers;
  const user = await ctx.repos.users.get(provider.organization_id, provider.user_id);
  if (!user) throw new SigilError('INTERNAL', 'an OAuth provider names a user that does not exist');
  return user;
}

/** oauth_login: the client's key becomes the user's expiring login key; the answer is a session JWT. */
export async function oauthLogin(ctx: ActivityContext, p: OauthLoginParams): Promise<{ session: string }> {
  // The nonce is over the key exactly as the client sent it (it hashed the string it holds).
  const token = await ctx.services.oidc.verify(p.oidcToken, { nonceForPublicKey: p.publicKey });
  const user = await userWithIdentity(ctx, token);
  return openLoginSession(ctx, user, { ...p, apiKeyName: `OAuth Login Session - ${new Date(ctx.now).toISOString()}` });
}

/** oauth (legacy): a new expiring API key of the user, its private key sealed to targetPublicKey. */
export async function oauth(ctx: ActivityContext, p: OauthParams): Promise<{ userId: string; apiKeyId: string; credentialBundle: string }> {
  const target = sessionPublicKey(p.targetPublicKey, 'targetPublicKey');
  const token = await ctx.services.oidc.verify(p.oidcToken, { nonceForPublicKey: p.targetPublicKey });
  const user = await userWithIdentity(ctx, token);
  const issued = await issueKeyBundle(ctx, user, target, {
    apiKeyName: p.apiKeyName || `Oauth - ${new Date(ctx.now).toISOString()}`,
    expirationSeconds: p.expirationSeconds,
    credentialType: OAUTH_CREDENTIAL,
    invalidateExisting: p.invalidateExisting,
  });
  return { userId: user.id, ...issued };
}
