// Tags, once for both kinds (docs/reference/organizations.md "Tags"; swagger
// v1CreateUserTagIntent / v1CreatePrivateKeyTagIntent, v1UpdateUserTagIntent /
// v1UpdatePrivateKeyTagIntent, datav1Tag): a named set of users or of private keys in an
// organization, created with its members, renamed and re-assigned atomically ("all of the updates will
// succeed at once, or all of them will fail"), names unique per organization, counted against the
// organization's tag quota. What differs between the kinds is where the rows live and how members are
// looked up: a TagKind says that, and user-tags.ts / private-keys.ts each declare theirs.
import { SigilError, invalid, notFound } from '../../errors/errors.js';
import type { Repositories } from '../../store/index.js';
import { checkName } from '../identity/contacts.js';
import type { ActivityContext } from '../context.js';
import { reserve, type OrganizationQuotaName } from './quotas.js';
import { timestamp, type TimestampObject } from '../records.js';

export interface TagRow {
  id: string;
  organization_id: string;
  name: string;
  created_at: number;
  updated_at: number;
}

/** The tag table and the member assignments of one kind, as the store offers them. */
export interface TagStore {
  get(organizationId: string, tagId: string): Promise<TagRow | undefined>;
  findByName(organizationId: string, name: string): Promise<TagRow | undefined>;
  insert(row: TagRow): Promise<void>;
  rename(organizationId: string, tagId: string, name: string, now: number): Promise<void>;
  assign(organizationId: string, tagId: string, memberIds: string[]): Promise<void>;
  unassign(tagId: string, memberIds: string[]): Promise<void>;
}

export interface TagKind {
  /** 'user' or 'private key', for messages. */
  noun: string;
  tagType: 'TAG_TYPE_USER' | 'TAG_TYPE_PRIVATE_KEY';
  quota: OrganizationQuotaName;
  store(repos: Repositories): TagStore;
  /** The members' ids, each checked to exist in the organization (deduplicated). */
  requireMembers(repos: Repositories, organizationId: string, ids: string[], field: string): Promise<string[]>;
}

export interface TagRecord {
  tagId: string;
  tagName: string;
  tagType: TagKind['tagType'];
  createdAt: TimestampObject;
  updatedAt: TimestampObject;
}

export function tagRecordOf(kind: TagKind, row: TagRow): TagRecord {
  return { tagId: row.id, tagName: row.name, tagType: kind.tagType, createdAt: timestamp(row.created_at), updatedAt: timestamp(row.updated_at) };
}

async function requireUniqueName(kind: TagKind, repos: Repositories, organizationId: string, name: string, exceptId?: string) {
  const clash = await kind.store(repos).findByName(organizationId, name);
  if (clash && clash.id !== exceptId) {
    throw new SigilError('CONFLICT', `a ${kind.noun} tag named ${JSON.stringify(name)} already exists in this organization`);
  }
}

export async function requireTagOf(kind: TagKind, repos: Repositories, organizationId: string, tagId: string): Promise<TagRow> {
  const tag = await kind.store(repos).get(organizationId, tagId);
  if (!tag) throw notFound(`${kind.noun} tag not found: ${tagId}`);
  return tag;
}

/** create_user_tag / create_private_key_tag: the tag with its members; answers its id and the members. */
export async function createTag(
  ctx: ActivityContext,
  kind: TagKind,
  p: { name: string; memberIds: string[] },
  fields: { name: string; members: string },
): Promise<{ tagId: string; memberIds: string[] }> {
  const orgId = ctx.organization.id;
  checkName(p.name, fields.name);
  await requireUniqueName(kind, ctx.repos, orgId, p.name);
  await reserve(ctx.repos, ctx.organization, kind.quota, 1);
  const members = await kind.requireMembers(ctx.repos, orgId, p.memberIds, fields.members);
  const id = ctx.newId();
  const store = kind.store(ctx.repos);
  await store.insert({ id, organization_id: orgId, name: p.name, created_at: ctx.now, updated_at: ctx.now });
  await store.assign(orgId, id, members);
  return { tagId: id, memberIds: members };
}

/** update_user_tag / update_private_key_tag: rename and re-assign in the activity's one transaction. */
export async function updateTag(
  ctx: ActivityContext,
  kind: TagKind,
  p: { tagId: string; newName?: string; add: string[]; remove: string[] },
  fields: { newName: string; add: string; remove: string },
): Promise<{ tagId: string }> {
  const orgId = ctx.organization.id;
  const store = kind.store(ctx.repos);
  const tag = await requireTagOf(kind, ctx.repos, orgId, p.tagId);
  if (p.newName !== undefined && p.newName !== '' && p.newName !== tag.name) {
    checkName(p.newName, fields.newName);
    await requireUniqueName(kind, ctx.repos, orgId, p.newName, tag.id);
    await store.rename(orgId, tag.id, p.newName, ctx.now);
  }
  const overlap = p.add.filter((m) => p.remove.includes(m));
  if (overlap.length > 0) throw invalid(`a ${kind.noun} cannot be both added and removed: ${overlap.join(', ')}`);
  await store.assign(orgId, tag.id, await kind.requireMembers(ctx.repos, orgId, p.add, fields.add));
  await store.unassign(tag.id, await kind.requireMembers(ctx.repos, orgId, p.remove, fields.remove));
  return { tagId: tag.id };
}
