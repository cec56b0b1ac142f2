// User tags: create, rename/re-assign, delete, and the datav1Tag record (swagger v1CreateUserTagIntent,
// v1UpdateUserTagIntent, v1DeleteUserTagsIntent, datav1Tag with tagType TAG_TYPE_USER).
import { SigilError, invalid, notFound } from '../errors/errors.js';
import type { Repositories, UserTagRow } from '../store/index.js';
import { checkName } from './contacts.js';
import { requireAll } from './lookup.js';
import type { ActivityContext } from './context.js';
import { reserve } from './quotas.js';
import { timestamp, type TimestampObject } from './records.js';

export interface TagRecord {
  tagId: string;
  tagName: string;
  tagType: 'TAG_TYPE_USER';
  createdAt: TimestampObject;
  updatedAt: TimestampObject;
}

async function requireUsers(repos: Repositories, organizationId: string, userIds: string[], field: string): Promise<string[]> {
  return (await requireAll(userIds, (ids) => repos.users.getMany(organizationId, ids), `${field}: user not found`)).ids;
}

async function requireUniqueName(repos: Repositories, organizationId: string, name: string, exceptId?: string) {
  const clash = await repos.userTags.findByName(organizationId, name);
  if (clash && clash.id !== exceptId) {
    throw new SigilError('CONFLICT', `a user tag named ${JSON.stringify(name)} already exists in this organization`);
  }
}

export async function requireTag(repos: Repositories, organizationId: string, tagId: string): Promise<UserTagRow> {
  const tag = await repos.userTags.get(organizationId, tagId);
  if (!tag) throw notFound(`user tag not found: ${tagId}`);
  return tag;
}

export async function createUserTag(ctx: ActivityContext, name: string, userIds: string[]) {
  const orgId = ctx.organization.id;
  checkName(name, 'userTagName');
  await requireUniqueName(ctx.repos, orgId, name);
  await reserve(ctx.repos, ctx.organization, 'userTags', 1);
  const users = await requireUsers(ctx.repos, orgId, userIds, 'userIds');
  const id = ctx.newId();
  await ctx.repos.userTags.insert({ id, organization_id: orgId, name, created_at: ctx.now, updated_at: ctx.now });
  await ctx.repos.userTags.addUsers(orgId, id, users);
  return { userTagId: id, userIds: users };
}

export async function updateUserTag(
  ctx: ActivityContext,
  p: { userTagId: string; newUserTagName?: string; addUserIds: string[]; removeUserIds: string[] },
) {
  const orgId = ctx.organization.id;
  const tag = await requireTag(ctx.repos, orgId, p.userTagId);
  if (p.newUserTagName !== undefined && p.newUserTagName !== '' && p.newUserTagName !== tag.name) {
    checkName(p.newUserTagName, 'newUserTagName');
    await requireUniqueName(ctx.repos, orgId, p.newUserTagName, tag.id);
    await ctx.repos.userTags.rename(orgId, tag.id, p.newUserTagName, ctx.now);
  }
  const overlap = p.addUserIds.filter((u) => p.removeUserIds.includes(u));
  if (overlap.length > 0) throw invalid(`a user cannot be both added and removed: ${overlap.join(', ')}`);
  await ctx.repos.userTags.addUsers(orgId, tag.id, await requireUsers(ctx.repos, orgId, p.addUserIds, 'addUserIds'));
  await ctx.repos.userTags.removeUsers(tag.id, await requireUsers(ctx.repos, orgId, p.removeUserIds, 'removeUserIds'));
  return { userTagId: tag.id };
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

export function tagRecord(row: UserTagRow): TagRecord {
  return {
    tagId: row.id,
    tagName: row.name,
    tagType: 'TAG_TYPE_USER',
    createdAt: timestamp(row.created_at),
    updatedAt: timestamp(row.updated_at),
  };
}
