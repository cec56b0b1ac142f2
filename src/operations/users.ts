// User operations (docs/reference/organizations.md): create_users, create_api_only_users (swagger
// v1CreateApiOnlyUsersIntent → v1CreateApiOnlyUsersResult; USER/CREATE as docs/reference/policies.md "Keywords" lists it),
// update_user and its single-field variants, delete_users, get_user, list_users.
import { verifyContactUpdate } from '../domain/identity/verified-contacts.js';
import { createApiOnlyUsers, createUsers, deleteUsers, updateUser, userRecords, type ApiOnlyUserParams, type UserParams } from '../domain/identity/users.js';
import { requireUser } from '../domain/lookup.js';
import { authenticatorParamsFromV1 } from '../domain/identity/authenticators.js';
import { defineActivity, defineQuery } from './define.js';

const USER_RESOURCE = 'USER';

/**
 * Users of the older create_users versions: V1 and V2 API keys have no curveType (P-256 then), V1
 * passkeys come as the browser's PublicKeyCredential (v1AuthenticatorParams) and V1 users carry an
 * accessType that no longer means anything; neither version has OAuth providers.
 */
const olderUsers = (version: 1 | 2) => (p: { users: any[] }): { users: UserParams[] } => ({
  users: p.users.map(({ accessType: _unused, ...u }) => ({
    ...u,
    apiKeys: (u.apiKeys ?? []).map((k: UserParams['apiKeys'][number]) => ({ ...k, curveType: k.curveType ?? 'API_KEY_CURVE_P256' })),
    authenticators: version === 1 ? (u.authenticators ?? []).map(authenticatorParamsFromV1) : (u.authenticators ?? []),
    oauthProviders: [],
  })),
});

export const createUsersOp = defineActivity<{ users: UserParams[] }, { userIds: string[] }>({
  path: 'create_users',
  type: 'ACTIVITY_TYPE_CREATE_USERS_V4',
  aliases: [
    'ACTIVITY_TYPE_CREATE_USERS_V3',
    { type: 'ACTIVITY_TYPE_CREATE_USERS_V2', adapt: olderUsers(2) },
    { type: 'ACTIVITY_TYPE_CREATE_USERS', adapt: olderUsers(1) },
  ],
  result: 'createUsersResult',
  policy: { resource: USER_RESOURCE, action: 'CREATE' },
  secretFields: ['users[].oauthProviders[].oidcToken'],
  execute: async (ctx, p) => ({ userIds: await createUsers(ctx, p.users) }),
});

export const createApiOnlyUsersOp = defineActivity<{ apiOnlyUsers: ApiOnlyUserParams[] }, { userIds: string[] }>({
  path: 'create_api_only_users',
  type: 'ACTIVITY_TYPE_CREATE_API_ONLY_USERS',
  result: 'createApiOnlyUsersResult',
  policy: { resource: USER_RESOURCE, action: 'CREATE' },
  execute: async (ctx, p) => ({ userIds: await createApiOnlyUsers(ctx, p.apiOnlyUsers) }),
});

export const updateUserOp = defineActivity<
  { userId: string; userName?: string; userEmail?: string; userTagIds?: string[]; userPhoneNumber?: string },
  { userId: string }
>({
  path: 'update_user',
  type: 'ACTIVITY_TYPE_UPDATE_USER',
  result: 'updateUserResult',
  policy: { resource: USER_RESOURCE, action: 'UPDATE' },
  execute: async (ctx, p) => {
    await updateUser(ctx, p.userId, p);
    return { userId: p.userId };
  },
});

export const updateUserNameOp = defineActivity<{ userId: string; userName: string }, { userId: string }>({
  path: 'update_user_name',
  type: 'ACTIVITY_TYPE_UPDATE_USER_NAME',
  result: 'updateUserNameResult',
  policy: { resource: USER_RESOURCE, action: 'UPDATE' },
  execute: async (ctx, p) => {
    await updateUser(ctx, p.userId, { userName: p.userName });
    return { userId: p.userId };
  },
});

// With a verificationToken naming the new contact, the contact is recorded as verified (the token's
// login use is spent); without one a changed contact is unverified (src/domain/identity/verified-contacts.ts).
export const updateUserEmailOp = defineActivity<{ userId: string; userEmail: string; verificationToken?: string }, { userId: string }>({
  path: 'update_user_email',
  type: 'ACTIVITY_TYPE_UPDATE_USER_EMAIL',
  result: 'updateUserEmailResult',
  policy: { resource: USER_RESOURCE, action: 'UPDATE' },
  secretFields: ['verificationToken'],
  execute: async (ctx, p) => {
    const email = await verifyContactUpdate(ctx, 'email', p.userEmail, p.verificationToken);
    await updateUser(ctx, p.userId, { userEmail: p.userEmail }, { email });
    return { userId: p.userId };
  },
});

export const updateUserPhoneNumberOp = defineActivity<
  { userId: string; userPhoneNumber: string; verificationToken?: string },
  { userId: string }
>({
  path: 'update_user_phone_number',
  type: 'ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER',
  result: 'updateUserPhoneNumberResult',
  policy: { resource: USER_RESOURCE, action: 'UPDATE' },
  secretFields: ['verificationToken'],
  execute: async (ctx, p) => {
    const phone = await verifyContactUpdate(ctx, 'phone', p.userPhoneNumber, p.verificationToken);
    await updateUser(ctx, p.userId, { userPhoneNumber: p.userPhoneNumber }, { phone });
    return { userId: p.userId };
  },
});

export const deleteUsersOp = defineActivity<{ userIds: string[] }, { userIds: string[] }>({
  path: 'delete_users',
  type: 'ACTIVITY_TYPE_DELETE_USERS',
  result: 'deleteUsersResult',
  policy: { resource: USER_RESOURCE, action: 'DELETE' },
  policyParams: (p) => ({ user_ids: p.userIds }),
  execute: async (ctx, p) => ({ userIds: await deleteUsers(ctx, p.userIds) }),
});

export const getUserOp = defineQuery<{ organizationId: string; userId: string }, unknown>({
  path: 'get_user',
  request: 'v1GetUserRequest',
  execute: async (ctx, b) => {
    const row = await requireUser(ctx.repos, ctx.organization.id, b.userId);
    const [user] = await userRecords(ctx.repos, ctx.organization.id, [row]);
    return { user };
  },
});

export const listUsersOp = defineQuery<{ organizationId: string }, unknown>({
  path: 'list_users',
  request: 'v1GetUsersRequest',
  execute: async (ctx) => ({
    users: await userRecords(ctx.repos, ctx.organization.id, await ctx.repos.users.list(ctx.organization.id)),
  }),
});
