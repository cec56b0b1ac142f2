// OAuth provider operations (docs/reference/sessions.md "Login activities"; docs/reference/organizations.md
// delete_oauth_providers; swagger v1CreateOauthProvidersIntentV2, v1DeleteOauthProvidersIntent,
// v1GetOauthProvidersRequest/Response). CREDENTIAL/CREATE and DELETE for policies; users manage
// their own providers unless a policy says otherwise. A parent organization may add providers to a
// sub-organization's user only as @turnkey/sdk-server's createOauthProviders server action describes
// it: a Google id_token whose verified email is the user's (social linking; checkParentSocialLinking).
import { checkParentSocialLinking, createOauthProviders, deleteOauthProviders, listOauthProviders, type OauthProviderParams } from '../domain/identity/oauth-providers.js';
import { defineActivity, defineQuery } from './define.js';

export const createOauthProvidersOp = defineActivity<{ userId: string; oauthProviders: OauthProviderParams[] }, { providerIds: string[] }>({
  path: 'create_oauth_providers',
  type: 'ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS_V2',
  aliases: ['ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS'],
  result: 'createOauthProvidersResultV2',
  policy: { resource: 'CREDENTIAL', action: 'CREATE' },
  policyParams: (p) => ({ user_id: p.userId }),
  selfService: (caller, p) => caller.user.id === p.userId,
  // An OAuth identity logs in to sessions (oauth_login, the attested stamp_login).
  addsCredential: { method: 'AUTHENTICATION_TYPE_SESSION', userId: (_caller, p) => p.userId },
  parentOrganizationMaySubmit: (ctx, p) => checkParentSocialLinking(ctx, p),
  secretFields: ['oauthProviders[].oidcToken'],
  execute: (ctx, p) => createOauthProviders(ctx, p),
});

export const deleteOauthProvidersOp = defineActivity<{ userId: string; providerIds: string[] }, { providerIds: string[] }>({
  path: 'delete_oauth_providers',
  type: 'ACTIVITY_TYPE_DELETE_OAUTH_PROVIDERS',
  result: 'deleteOauthProvidersResult',
  policy: { resource: 'CREDENTIAL', action: 'DELETE' },
  policyParams: (p) => ({ user_id: p.userId, provider_ids: p.providerIds }),
  selfService: (caller, p) => caller.user.id === p.userId,
  execute: (ctx, p) => deleteOauthProviders(ctx, p),
});

export const getOauthProvidersOp = defineQuery<{ organizationId: string; userId?: string }, unknown>({
  path: 'get_oauth_providers',
  request: 'v1GetOauthProvidersRequest',
  execute: (ctx, b) => listOauthProviders(ctx, b.userId),
});
