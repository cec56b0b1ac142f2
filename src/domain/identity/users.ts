// Users: creation with their credentials, updates, deletion, and the v1User record
// (docs/reference/organizations.md; swagger v1UserParamsV4, v1UpdateUserIntent, v1User).
import { SigilError, invalid, notFound } from '../../errors/errors.js';
import { isUniqueViolation, type ApiKeyRow, type AuthenticatorRow, type MfaPolicyRow, type OauthProviderRow, type Repositories, type UserRow } from '../../store/index.js';
import { apiKeyExists, apiKeyRecord, apiKeysToEvict, buildApiKeyRows, type ApiKeyParams, type ApiKeyRecord } from './api-keys.js';
import { authenticatorExists, authenticatorRecord, authenticatorRows, checkAuthenticatorCount, type AuthenticatorParams, type AuthenticatorRecord } from './authenticators.js';
import { checkEmail, checkName, checkPhoneNumber } from './contacts.js';
import {
  checkOauthProviderCount,
  oauthProviderExists,
  oauthProviderRecord,
  oauthProviderRows,
  oauthProvidersByUser,
  type OauthProviderParams,
  type OauthProviderRecord,
} from './oauth-providers.js';
import { requireAll, requireUser } from '../lookup.js';
import { timestamp, type TimestampObject } from '../records.js';
import type { ActivityContext } from '../context.js';
import { reserve } from '../governance/quotas.js';
import { mfaPolicyRecord } from './mfa-policies.js';

export interface UserParams {
  userName: string;
  userEmail?: string;
  userPhoneNumber?: string;
  apiKeys: ApiKeyParams[];
  authenticators?: AuthenticatorParams[];
  oauthProviders?: OauthProviderParams[];
  userTags?: string[];
}

export interface UserRecord {
  userId: string;
  userName: string;
  userEmail?: string;
  userPhoneNumber?: string;
  authenticators: AuthenticatorRecord[];
  apiKeys: ApiKeyRecord[];
  userTags: string[];
  oauthProviders: unknown[];
  createdAt: TimestampObject;
  updatedAt: TimestampObject;
  mfaPolicies: ReturnType<typeof mfaPolicyRecord>[];
}

export async function requireTags(repos: Repositories, organizationId: string, tagIds: string[], field: string): Promise<string[]> {
  return (await requireAll(tagIds, (ids) => repos.userTags.getMany(organizationId, ids), `${field}: user tag not found`)).ids;
}

/** A new user's rows: the user and the credentials it is created with. */
export interface NewUserRows {
  user: UserRow;
  apiKeys: ApiKeyRow[];
  authenticators: AuthenticatorRow[];
  oauthProviders: OauthProviderRow[];
}

/**
 * One new user with its API keys, passkeys and OAuth providers, each checked as far as it can be
 * without reading: a new user holds nothing, so its per-user limits are checked here too. What is
 * left is a clash with a credential the organization already has. `who` names it in the
 * one-credential message.
 */
export async function newUserRows(
  ctx: Pick<ActivityContext, 'now' | 'newId' | 'services'>,
  organizationId: string,
  u: Pick<UserParams, 'userName' | 'userEmail' | 'userPhoneNumber' | 'apiKeys'> & { authenticators?: AuthenticatorParams[]; oauthProviders?: OauthProviderParams[] },
  field: string,
  who: 'a user' | 'a root user',
  /** The parent organization writes these contacts (create_sub_organization): it vouches for them. */
  vouchedByParent = false,
): Promise<NewUserRows> {
  checkName(u.userName, `${field}.userName`);
  if (u.userEmail) checkEmail(u.userEmail, `${field}.userEmail`);
  if (u.userPhoneNumber) checkPhoneNumber(u.userPhoneNumber, `${field}.userPhoneNumber`);
  if (u.apiKeys.length === 0 && (u.authenticators?.length ?? 0) === 0 && (u.oauthProviders?.length ?? 0) === 0 && !u.userEmail && !u.userPhoneNumber) {
    throw invalid(`${field}: ${who} needs at least one credential: an API key, an authenticator, an OAuth provider, an email or a phone number`);
  }
  const userId = ctx.newId();
  const apiKeys = buildApiKeyRows(organizationId, userId, u.apiKeys, ctx.now, ctx.newId);
  apiKeysToEvict([], apiKeys, { now: ctx.now });
  checkAuthenticatorCount(0, u.authenticators?.length ?? 0);
  const authenticators = await authenticatorRows(ctx, organizationId, userId, u.authenticators ?? [], `${field}.authenticators`);
  checkOauthProviderCount(0, u.oauthProviders?.length ?? 0);
  const oauthProviders = oauthProviderRows(ctx, organizationId, userId, u.oauthProviders ?? [], `${field}.oauthProviders`);
  const user: UserRow = {
    id: userId,
    organization_id: organizationId,
    user_name: u.userName,
    user_email: u.userEmail || null,
    user_phone_number: u.userPhoneNumber || null,
    email_verified_at: null,
    phone_number_verified_at: null,
    email_vouched_at: vouchedByParent && u.userEmail ? ctx.now : null,
    phone_number_vouched_at: vouchedByParent && u.userPhoneNumber ? ctx.now : null,
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  return { user, apiKeys, authenticators, oauthProviders };
}

/** Writes a new user's rows, already checked (newUserRows, and for clashes the caller). */
export async function writeNewUser(repos: Repositories, rows: NewUserRows): Promise<void> {
  await repos.users.insert(rows.user);
  await repos.apiKeys.insert(rows.apiKeys);
  await repos.authenticators.insert(rows.authenticators);
  await repos.oauthProviders.insert(rows.oauthProviders);
}

/**
 * One user with its API keys, passkeys and OAuth providers, each checked, then written in an
 * existing organization (create_users, accepted invitations), whose credentials it must not repeat.
 */
export async function insertUserWithCredentials(
  ctx: Pick<ActivityContext, 'repos' | 'now' | 'newId' | 'services'>,
  organizationId: string,
  u: Pick<UserParams, 'userName' | 'userEmail' | 'userPhoneNumber' | 'apiKeys'> & { authenticators?: AuthenticatorParams[]; oauthProviders?: OauthProviderParams[] },
  field: string,
  who: 'a user' | 'a root user',
): Promise<string> {
  const rows = await newUserRows(ctx, organizationId, u, field, who);
  for (const k of rows.apiKeys) {
    if ((await ctx.repos.apiKeys.findByPublicKey([organizationId], k.public_key)).length > 0) throw apiKeyExists(k.public_key);
  }
  for (const a of rows.authenticators) {
    if ((await ctx.repos.authenticators.findByCredentialId([organizationId], a.credential_id)).length > 0) throw authenticatorExists(a.credential_id);
  }
  const clash = await ctx.repos.oauthProviders.findIdentities(organizationId, rows.oauthProviders);
  if (clash.length > 0) throw oauthProviderExists(clash[0]);
  try {
    await writeNewUser(ctx.repos, rows);
  } catch (err) {
    // A concurrent registration of the same OAuth identity won (the reads above saw none).
    if (isUniqueViolation(err) && rows.oauthProviders.length > 0) throw oauthProviderExists(rows.oauthProviders[0]);
    throw err;
  }
  return rows.user.id;
}

/**
 * Creates users with their API keys and tags; all or nothing (the caller's transaction). `list` is
 * the parameter the users came in (create_api_only_users calls them apiOnlyUsers), for messages.
 */
export async function createUsers(ctx: ActivityContext, users: UserParams[], list = 'users'): Promise<string[]> {
  if (users.length === 0) throw invalid(`${list} must list at least one user`);
  const orgId = ctx.organization.id;
  await reserve(ctx.repos, ctx.organization, 'users', users.length);
  const ids: string[] = [];
  for (const [i, u] of users.entries()) {
    const field = `${list}[${i}]`;
    const tags = await requireTags(ctx.repos, orgId, u.userTags ?? [], `${field}.userTags`);
    const userId = await insertUserWithCredentials(ctx, orgId, u, field, 'a user');
    await ctx.repos.users.setTags(orgId, userId, tags);
    ids.push(userId);
  }
  return ids;
}

export interface UserChanges {
  userName?: string;
  userEmail?: string;
  userPhoneNumber?: string;
  userTagIds?: string[];
}

/** Applies the given changes; an empty email or phone number removes it (docs/reference/organizations.md "Users and credentials"). */
export async function updateUser(
  ctx: ActivityContext,
  userId: string,
  changes: UserChanges,
  /** Contacts a verification token proved (update_user_email / update_user_phone_number). */
  verified?: { email?: boolean; phone?: boolean },
): Promise<void> {
  const orgId = ctx.organization.id;
  const current = await requireUser(ctx.repos, orgId, userId);
  const set: Parameters<Repositories['users']['update']>[2] = {};
  if (changes.userName !== undefined) set.user_name = checkName(changes.userName, 'userName');
  if (changes.userEmail !== undefined) {
    set.user_email = changes.userEmail === '' ? null : checkEmail(changes.userEmail);
    // A changed email is unverified unless a verification token proved the new one.
    if (verified?.email) set.email_verified_at = ctx.now;
    else if (set.user_email !== current.user_email) set.email_verified_at = null;
    // Whoever changes it, it is now the organization's own word, no longer the parent's.
    if (set.user_email !== current.user_email) set.email_vouched_at = null;
  }
  if (changes.userPhoneNumber !== undefined) {
    set.user_phone_number = changes.userPhoneNumber === '' ? null : checkPhoneNumber(changes.userPhoneNumber);
    if (verified?.phone) set.phone_number_verified_at = ctx.now;
    else if (set.user_phone_number !== current.user_phone_number) set.phone_number_verified_at = null;
    if (set.user_phone_number !== current.user_phone_number) set.phone_number_vouched_at = null;
  }
  if (changes.userTagIds !== undefined) {
    const tags = await requireTags(ctx.repos, orgId, changes.userTagIds, 'userTagIds');
    await ctx.repos.users.setTags(orgId, userId, tags);
  }
  await ctx.repos.users.update(orgId, userId, set, ctx.now);
}

export async function deleteUsers(ctx: ActivityContext, userIds: string[]): Promise<string[]> {
  if (userIds.length === 0) throw invalid('userIds must list at least one user');
  const orgId = ctx.organization.id;
  const { ids: unique } = await requireAll(userIds, (ids) => ctx.repos.users.getMany(orgId, ids), 'user not found');
  const quorum = new Set(await ctx.repos.organizations.rootQuorumUserIds(orgId));
  const inQuorum = unique.filter((u) => quorum.has(u));
  if (inQuorum.length > 0) {
    // docs/reference/organizations.md "Organizations": a root quorum member must be removed from the quorum first.
    throw new SigilError(
      'REQUEST_INVALID',
      `quorum users missing: ${inQuorum.join(', ')} ${inQuorum.length === 1 ? 'is a member' : 'are members'} of the root quorum; update the root quorum before deleting`,
    );
  }
  await ctx.repos.users.delete(orgId, unique);
  return unique;
}

/** Renders users as v1User records with their authenticators, API keys and tags, in the order given. */
export async function userRecords(repos: Repositories, organizationId: string, rows: UserRow[]): Promise<UserRecord[]> {
  const ids = rows.map((r) => r.id);
  const [keys, tags, authenticators] = await Promise.all([
    repos.apiKeys.listForUsers(organizationId, ids),
    repos.users.tagIds(ids),
    repos.authenticators.listForUsers(organizationId, ids),
  ]);
  const oauthProviders = await oauthProvidersByUser(repos, organizationId, ids);
  // The organization's MFA policies come from the read cache, by user and order.
  const mfaPolicies = await repos.mfaPolicies.list(organizationId);
  return rows.map((u) =>
    recordOf(u, {
      authenticators: authenticators.filter((a) => a.user_id === u.id),
      apiKeys: keys.filter((k) => k.user_id === u.id),
      tagIds: tags.get(u.id) ?? [],
      oauthProviders: oauthProviders.get(u.id) ?? [],
    }, mfaPolicies),
  );
}

/**
 * One user's record, from the rows `repos.users.recordRows` answers (through the read cache on the
 * request path, where a voter's record is rendered: src/activity/reader.ts); undefined: no such user.
 */
export async function userRecordOf(repos: Repositories, organizationId: string, userId: string): Promise<UserRecord | undefined> {
  const rows = await repos.users.recordRows(organizationId, userId);
  if (!rows) return undefined;
  const mfaPolicies = await repos.mfaPolicies.list(organizationId);
  return recordOf(rows.user, { ...rows, oauthProviders: rows.oauthProviders.map(oauthProviderRecord) }, mfaPolicies);
}

function recordOf(
  u: UserRow,
  owned: { authenticators: AuthenticatorRow[]; apiKeys: ApiKeyRow[]; tagIds: string[]; oauthProviders: OauthProviderRecord[] },
  mfaPolicies: MfaPolicyRow[],
): UserRecord {
  return {
    userId: u.id,
    userName: u.user_name,
    ...(u.user_email !== null ? { userEmail: u.user_email } : {}),
    ...(u.user_phone_number !== null ? { userPhoneNumber: u.user_phone_number } : {}),
    authenticators: owned.authenticators.map(authenticatorRecord),
    apiKeys: owned.apiKeys.map(apiKeyRecord),
    userTags: owned.tagIds,
    oauthProviders: owned.oauthProviders,
    createdAt: timestamp(u.created_at),
    updatedAt: timestamp(u.updated_at),
    mfaPolicies: mfaPolicies.filter((p) => p.user_id === u.id).map(mfaPolicyRecord),
  };
}

/** An API-only user (v1ApiOnlyUserParams): a name, an optional contact email, tags and API keys. */
export interface ApiOnlyUserParams {
  userName: string;
  userEmail?: string;
  userTags: string[];
  apiKeys: ApiKeyParams[];
}

/**
 * create_api_only_users: users whose only credentials are API keys, created as create_users creates
 * users (same checks, quota and transaction) with no passkeys, OAuth providers or phone number. Each
 * needs at least one API key, since it has no other way to authenticate; the email is a contact.
 */
export async function createApiOnlyUsers(ctx: ActivityContext, users: ApiOnlyUserParams[]): Promise<string[]> {
  users.forEach((u, i) => {
    if (u.apiKeys.length === 0) throw invalid(`apiOnlyUsers[${i}]: an API-only user needs at least one API key, its only way to authenticate`);
  });
  return createUsers(
    ctx,
    users.map((u) => ({ userName: u.userName, userEmail: u.userEmail, userTags: u.userTags, apiKeys: u.apiKeys })),
    'apiOnlyUsers',
  );
}
