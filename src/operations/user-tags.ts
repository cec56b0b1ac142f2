// User tag operations (swagger v1CreateUserTagIntent, v1UpdateUserTagIntent, v1DeleteUserTagsIntent,
// v1ListUserTagsRequest). Policies see them as resource USER (docs/reference/policies.md "Keywords"): tags decide
// consensus (`approvers.filter(user, user.tags.contains(...))`), so a rule over USER must govern them.
import { createUserTag, deleteUserTags, tagRecord, updateUserTag } from '../domain/governance/user-tags.js';
import { defineActivity, defineQuery } from './define.js';

export const createUserTagOp = defineActivity<{ userTagName: string; userIds: string[] }, { userTagId: string; userIds: string[] }>({
  path: 'create_user_tag',
  type: 'ACTIVITY_TYPE_CREATE_USER_TAG',
  result: 'createUserTagResult',
  policy: { resource: 'USER', action: 'CREATE' },
  execute: (ctx, p) => createUserTag(ctx, p.userTagName, p.userIds),
});

export const updateUserTagOp = defineActivity<
  { userTagId: string; newUserTagName?: string; addUserIds: string[]; removeUserIds: string[] },
  { userTagId: string }
>({
  path: 'update_user_tag',
  type: 'ACTIVITY_TYPE_UPDATE_USER_TAG',
  result: 'updateUserTagResult',
  policy: { resource: 'USER', action: 'UPDATE' },
  execute: (ctx, p) => updateUserTag(ctx, p),
});

export const deleteUserTagsOp = defineActivity<{ userTagIds: string[] }, { userTagIds: string[]; userIds: string[] }>({
  path: 'delete_user_tags',
  type: 'ACTIVITY_TYPE_DELETE_USER_TAGS',
  result: 'deleteUserTagsResult',
  policy: { resource: 'USER', action: 'DELETE' },
  execute: (ctx, p) => deleteUserTags(ctx, p.userTagIds),
});

export const listUserTagsOp = defineQuery<{ organizationId: string }, unknown>({
  path: 'list_user_tags',
  request: 'v1ListUserTagsRequest',
  execute: async (ctx) => ({ userTags: (await ctx.repos.userTags.list(ctx.organization.id)).map(tagRecord) }),
});
