// User tags: create, rename/re-assign, delete, and the datav1Tag record (swagger v1CreateUserTagIntent,
// v1UpdateUserTagIntent, v1DeleteUserTagsIntent, datav1Tag with tagType TAG_TYPE_USER). Creation and
// updates are the shared tag rules of src/domain/governance/tags.ts.
import { invalid } from '../../errors/errors.js';
import type { Repositories, UserTagRow } from '../../store/index.js';
import { requireAll } from '../lookup.js';
import type { ActivityContext } from '../context.js';
import { createTag, requireTagOf, tagRecordOf, updateTag, type TagKind } from './tags.js';

/** User tags as a TagKind (src/domain/governance/tags.ts). */
export const USER_TAGS: TagKind = {
  noun: 'user',
  tagType: 'TAG_TYPE_USER',
  quota: 'userTags',
  store: (repos) => ({
    get: (org, id) => repos.userTags.get(org, id),
    findByName: (org, name) => repos.userTags.findByName(org, name),
    insert: (row) => repos.userTags.insert(row),
    rename: (org, id, name, now) => repos.userTags.rename(org, id, name, now),
    assign: (org, id, userIds) => repos.userTags.addUsers(org, id, userIds),
    unassign: (id, userIds) => repos.userTags.removeUsers(id, userIds),
  }),
  requireMembers: async (repos, organizationId, userIds, field) =>
    (await requireAll(userIds, (ids) => repos.users.getMany(organizationId, ids), `${field}: user not found`)).ids,
};

export const requireTag = (repos: Repositories, organizationId: string, tagId: string) => requireTagOf(USER_TAGS, repos, organizationId, tagId);

export async function createUserTag(ctx: ActivityContext, name: string, userIds: string[]) {
  const { tagId, memberIds } = await createTag(ctx, USER_TAGS, { name, memberIds: userIds }, { name: 'userTagName', members: 'userIds' });
  return { userTagId: tagId, userIds: memberIds };
}

export async function updateUserTag(
  ctx: ActivityContext,
  p: { userTagId: string; newUserTagName?: string; addUserIds: string[]; removeUserIds: string[] },
) {
  const { tagId } = await updateTag(
    ctx,
    USER_TAGS,
    { tagId: p.userTagId, newName: p.newUserTagName, add: p.addUserIds, remove: p.removeUserIds },
    { newName: 'newUserTagName', add: 'addUserIds', remove: 'removeUserIds' },
  );
  return { userTagId: tagId };
}

export async function deleteUserTags(ctx: ActivityContext, tagIds: string[]) {
  if (tagIds.length === 0) throw invalid('userTagIds must list at least one tag');
  const orgId = ctx.organization.id;
  const unique = [...new Set(tagIds)];
  for (const id of unique) await requireTag(ctx.repos, orgId, id);
  // The result names the users that lost a tag, so callers can see the effect.
  const affected = new Set<string>();
  const users = await ctx.repos.users.list(orgId);
  const tags = await ctx.repos.users.tagIds(users.map((u) => u.id));
  for (const [userId, ids] of tags) if (ids.some((t) => unique.includes(t))) affected.add(userId);
  await ctx.repos.userTags.delete(orgId, unique);
  return { userTagIds: unique, userIds: [...affected] };
}

export const tagRecord = (row: UserTagRow) => tagRecordOf(USER_TAGS, row);
