// Authenticator (passkey) operations (docs/reference/organizations.md "Users and credentials", docs/reference/keys.md get_authenticators;
// swagger v1CreateAuthenticatorsIntentV2, v1DeleteAuthenticatorsIntent, v1GetAuthenticatorRequest,
// v1GetAuthenticatorsRequest). Users may register and remove their own passkeys (selfService).
import {
  authenticatorParamsFromV1,
  authenticatorRecord,
  deleteAuthenticators,
  getAuthenticator,
  registerAuthenticators,
  type AuthenticatorParams,
} from '../domain/identity/authenticators.js';
import { requireUser } from '../domain/lookup.js';
import { invalid } from '../errors/errors.js';
import { defineActivity, defineQuery } from './define.js';

export const createAuthenticatorsOp = defineActivity<{ authenticators: AuthenticatorParams[]; userId: string }, { authenticatorIds: string[] }>({
  path: 'create_authenticators',
  type: 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2',
  // V1 gives each passkey as the browser's PublicKeyCredential (v1AuthenticatorParams).
  aliases: [{ type: 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS', adapt: (p) => ({ userId: p.userId, authenticators: p.authenticators.map(authenticatorParamsFromV1) }) }],
  result: 'createAuthenticatorsResult',
  policy: { resource: 'CREDENTIAL', action: 'CREATE' },
  policyParams: (p) => ({ user_id: p.userId }),
  selfService: (caller, p) => caller.user.id === p.userId,
  addsCredential: { method: 'AUTHENTICATION_TYPE_PASSKEY', userId: (_caller, p) => p.userId },
  execute: async (ctx, p) => {
    const orgId = ctx.organization.id;
    if (p.authenticators.length === 0) throw invalid('authenticators must list at least one authenticator');
    await requireUser(ctx.repos, orgId, p.userId);
    return { authenticatorIds: await registerAuthenticators(ctx, orgId, p.userId, p.authenticators) };
  },
});

export const deleteAuthenticatorsOp = defineActivity<{ userId: string; authenticatorIds: string[] }, { authenticatorIds: string[] }>({
  path: 'delete_authenticators',
  type: 'ACTIVITY_TYPE_DELETE_AUTHENTICATORS',
  result: 'deleteAuthenticatorsResult',
  policy: { resource: 'CREDENTIAL', action: 'DELETE' },
  policyParams: (p) => ({ user_id: p.userId, authenticator_ids: p.authenticatorIds }),
  selfService: (caller, p) => caller.user.id === p.userId,
  execute: async (ctx, p) => {
    const orgId = ctx.organization.id;
    await requireUser(ctx.repos, orgId, p.userId);
    return { authenticatorIds: await deleteAuthenticators(ctx.repos, orgId, p.userId, p.authenticatorIds) };
  },
});

export const getAuthenticatorOp = defineQuery<{ organizationId: string; authenticatorId: string }, unknown>({
  path: 'get_authenticator',
  request: 'v1GetAuthenticatorRequest',
  execute: async (ctx, b) => ({ authenticator: authenticatorRecord(await getAuthenticator(ctx.repos, ctx.organization.id, b.authenticatorId)) }),
});

export const getAuthenticatorsOp = defineQuery<{ organizationId: string; userId: string }, unknown>({
  path: 'get_authenticators',
  request: 'v1GetAuthenticatorsRequest',
  execute: async (ctx, b) => {
    const orgId = ctx.organization.id;
    await requireUser(ctx.repos, orgId, b.userId);
    return { authenticators: (await ctx.repos.authenticators.listForUsers(orgId, [b.userId])).map(authenticatorRecord) };
  },
});
