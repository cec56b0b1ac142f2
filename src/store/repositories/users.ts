// Users and their tag assignments. SQL for the `users` and `user_tag_assignments` tables.
import type { Kysely, Selectable } from 'kysely';
import { OrganizationScopedRepo } from './org-scoped.js';
import type { Database, UserTable } from '../schema.js';

export type UserRow = Selectable<UserTable>;

export class UsersRepo extends OrganizationScopedRepo<'users'> {
  constructor(db: Kysely<Database>) {
    super(db, 'users');
  }

  async insert(row: UserRow): Promise<void> {
    await this.db.insertInto('users').values(row).execute();
  }

  /** Users whose email (or phone number) is exactly `value`, in any of `organizationIds`. */
  async findByContact(organizationIds: string[], kind: 'email' | 'phone', value: string): Promise<UserRow[]> {
    if (organizationIds.length === 0) return [];
    return this.db
      .selectFrom('users')
      .selectAll()
      .where('organization_id', 'in', organizationIds)
      .where(kind === 'email' ? 'user_email' : 'user_phone_number', '=', value)
      .orderBy('created_at')
      .orderBy('id')
      .limit(10)
      .execute();
  }

  async update(
    organizationId: string,
    userId: string,
    changes: Partial<Pick<UserRow, 'user_name' | 'user_email' | 'user_phone_number'>>,
    now: number,
  ): Promise<void> {
    await this.db
      .updateTable('users')
      .set({ ...changes, updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', userId)
      .execute();
  }

  async delete(organizationId: string, userIds: string[]): Promise<void> {
    if (userIds.length === 0) return;
    await this.db.deleteFrom('user_tag_assignments').where('user_id', 'in', userIds).execute();
    await this.db.deleteFrom('root_quorum_members').where('organization_id', '=', organizationId).where('user_id', 'in', userIds).execute();
    await this.db.deleteFrom('api_keys').where('organization_id', '=', organizationId).where('user_id', 'in', userIds).execute();
    await this.db.deleteFrom('authenticators').where('organization_id', '=', organizationId).where('user_id', 'in', userIds).execute();
    await this.db.deleteFrom('oauth_providers').where('organization_id', '=', organizationId).where('user_id', 'in', userIds).execute();
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
