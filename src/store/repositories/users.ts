// Users and their tag assignments. SQL for the `users` and `user_tag_assignments` tables.
import type { Kysely, Selectable } from 'kysely';
import { OrganizationScopedRepo } from './org-scoped.js';
import type { ApiKeyTable, AuthenticatorTable, Database, OauthProviderTable, UserTable } from '../schema.js';

export type UserRow = Selectable<UserTable>;

/** What a user's record (v1User) is rendered from: the row and what it owns, each in listing order. */
export interface UserRecordRows {
  user: UserRow;
  apiKeys: Selectable<ApiKeyTable>[];
  authenticators: Selectable<AuthenticatorTable>[];
  tagIds: string[];
  oauthProviders: Selectable<OauthProviderTable>[];
}

/**
 * The user columns a credential lookup joins in (stamp verification finds key and owner in one
 * query), each prefixed `u_` so they cannot collide with the credential's own columns.
 */
export const OWNER_COLUMNS = [
  'users.id as u_id',
  'users.organization_id as u_organization_id',
  'users.user_name as u_user_name',
  'users.user_email as u_user_email',
  'users.user_phone_number as u_user_phone_number',
  'users.email_verified_at as u_email_verified_at',
  'users.phone_number_verified_at as u_phone_number_verified_at',
  'users.email_vouched_at as u_email_vouched_at',
  'users.phone_number_vouched_at as u_phone_number_vouched_at',
  'users.created_at as u_created_at',
  'users.updated_at as u_updated_at',
] as const;

export type OwnerColumns = { [K in keyof UserRow as `u_${K & string}`]: UserRow[K] };

/** Splits a row selected with OWNER_COLUMNS into the credential's columns and its owner. */
export function splitOwner<T extends OwnerColumns>(row: T): { rest: Omit<T, keyof OwnerColumns>; user: UserRow } {
  const rest: Record<string, unknown> = {};
  const user: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) {
    if (k.startsWith('u_')) user[k.slice(2)] = v;
    else rest[k] = v;
  }
  return { rest: rest as Omit<T, keyof OwnerColumns>, user: user as UserRow };
}

export class UsersRepo extends OrganizationScopedRepo<'users'> {
  constructor(db: Kysely<Database>) {
    super(db, 'users');
  }

  async insert(row: UserRow): Promise<void> {
    await this.db.insertInto('users').values(row).execute();
  }

  /**
   * The rows a user's record is rendered from (undefined: no such user). The request path reads a
   * voter's through the read cache, and an organization not cached gets them with its cold read
   * (src/store/cold-reads.ts).
   */
  async recordRows(organizationId: string, userId: string): Promise<UserRecordRows | undefined> {
    const [user] = await this.getMany(organizationId, [userId]);
    if (!user) return undefined;
    const [apiKeys, authenticators, tags, oauthProviders] = await Promise.all([
      this.db.selectFrom('api_keys').selectAll().where('organization_id', '=', organizationId).where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute(),
      this.db.selectFrom('authenticators').selectAll().where('organization_id', '=', organizationId).where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute(),
      this.tagIds([userId]),
      this.db.selectFrom('oauth_providers').selectAll().where('organization_id', '=', organizationId).where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute(),
    ]);
    return { user, apiKeys, authenticators, tagIds: tags.get(userId) ?? [], oauthProviders };
  }

  /**
   * Users whose email (or phone number) is exactly `value`, in any of `organizationIds`; with
   * `trusted`, only those whose contact is verified or vouched for by the parent (migration 026).
   */
  async findByContact(organizationIds: string[], kind: 'email' | 'phone', value: string, opts: { trusted?: boolean } = {}): Promise<UserRow[]> {
    if (organizationIds.length === 0) return [];
    let q = this.db
      .selectFrom('users')
      .selectAll()
      .where('organization_id', 'in', organizationIds)
      .where(kind === 'email' ? 'user_email' : 'user_phone_number', '=', value);
    if (opts.trusted) {
      q = q.where((eb) =>
        kind === 'email'
          ? eb.or([eb('email_verified_at', 'is not', null), eb('email_vouched_at', 'is not', null)])
          : eb.or([eb('phone_number_verified_at', 'is not', null), eb('phone_number_vouched_at', 'is not', null)]),
      );
    }
    return q
      .orderBy('created_at')
      .orderBy('id')
      .limit(10)
      .execute();
  }

  /** Whether a user of the organization has `email`, compared without case (an invitation must not duplicate one). */
  async hasEmailIgnoringCase(organizationId: string, email: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('users')
      .select('id')
      .where('organization_id', '=', organizationId)
      .where((eb) => eb(eb.fn('lower', ['user_email']), '=', email.toLowerCase()))
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  async update(
    organizationId: string,
    userId: string,
    changes: Partial<Pick<UserRow, 'user_name' | 'user_email' | 'user_phone_number' | 'email_verified_at' | 'phone_number_verified_at' | 'email_vouched_at' | 'phone_number_vouched_at'>>,
    now: number,
  ): Promise<void> {
    await this.db
      .updateTable('users')
      .set({ ...changes, updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', userId)
      .execute();
  }

  /** Records that a user holds its email or phone number (an OTP verification token proved it). */
  async markContactVerified(organizationId: string, userId: string, kind: 'email' | 'phone', now: number): Promise<void> {
    await this.db
      .updateTable('users')
      .set(kind === 'email' ? { email_verified_at: now } : { phone_number_verified_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', userId)
      // The first proof is the one recorded; later logins change nothing.
      .where(kind === 'email' ? 'email_verified_at' : 'phone_number_verified_at', 'is', null)
      .execute();
  }

  async delete(organizationId: string, userIds: string[]): Promise<void> {
    if (userIds.length === 0) return;
    await this.db.deleteFrom('user_tag_assignments').where('user_id', 'in', userIds).execute();
    await this.db.deleteFrom('root_quorum_members').where('organization_id', '=', organizationId).where('user_id', 'in', userIds).execute();
    await this.db.deleteFrom('api_keys').where('organization_id', '=', organizationId).where('user_id', 'in', userIds).execute();
    await this.db.deleteFrom('authenticators').where('organization_id', '=', organizationId).where('user_id', 'in', userIds).execute();
    await this.db.deleteFrom('oauth_providers').where('organization_id', '=', organizationId).where('user_id', 'in', userIds).execute();
    await this.db.deleteFrom('mfa_policies').where('organization_id', '=', organizationId).where('user_id', 'in', userIds).execute();
    await this.db.deleteFrom('users').where('organization_id', '=', organizationId).where('id', 'in', userIds).execute();
  }

  /** Tag ids per user, for the `userTags` field of the user record. */
  async tagIds(userIds: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>(userIds.map((id) => [id, []]));
    if (userIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('user_tag_assignments')
      .innerJoin('user_tags', 'user_tags.id', 'user_tag_assignments.tag_id')
      .select(['user_tag_assignments.user_id', 'user_tag_assignments.tag_id'])
      .where('user_tag_assignments.user_id', 'in', userIds)
      .orderBy('user_tags.created_at')
      .orderBy('user_tags.id')
      .execute();
    for (const r of rows) out.get(r.user_id)?.push(r.tag_id);
    return out;
  }

  /** Replaces a user's tags with exactly `tagIds`. */
  async setTags(organizationId: string, userId: string, tagIds: string[]): Promise<void> {
    await this.db.deleteFrom('user_tag_assignments').where('user_id', '=', userId).execute();
    if (tagIds.length === 0) return;
    await this.db
      .insertInto('user_tag_assignments')
      .values(tagIds.map((tag_id) => ({ tag_id, user_id: userId, organization_id: organizationId })))
      .execute();
  }
}
