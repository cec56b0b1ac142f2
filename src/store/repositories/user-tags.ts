// User tags. SQL for the `user_tags` table (assignments are in users.ts).
import type { Kysely, Selectable } from 'kysely';
import { OrganizationScopedRepo } from './org-scoped.js';
import type { Database, UserTagTable } from '../schema.js';

export type UserTagRow = Selectable<UserTagTable>;

export class UserTagsRepo extends OrganizationScopedRepo<'user_tags'> {
  constructor(db: Kysely<Database>) {
    super(db, 'user_tags');
  }

  async insert(row: UserTagRow): Promise<void> {
    await this.db.insertInto('user_tags').values(row).execute();
  }

  async findByName(organizationId: string, name: string): Promise<UserTagRow | undefined> {
    return this.db
      .selectFrom('user_tags')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('name', '=', name)
      .executeTakeFirst();
  }

  async rename(organizationId: string, tagId: string, name: string, now: number): Promise<void> {
    await this.db
      .updateTable('user_tags')
      .set({ name, updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', tagId)
      .execute();
  }

  async addUsers(organizationId: string, tagId: string, userIds: string[]): Promise<void> {
    if (userIds.length === 0) return;
    const existing = await this.db
      .selectFrom('user_tag_assignments')
      .select('user_id')
      .where('tag_id', '=', tagId)
      .where('user_id', 'in', userIds)
      .execute();
    const have = new Set(existing.map((r) => r.user_id));
    const fresh = [...new Set(userIds)].filter((u) => !have.has(u));
    if (fresh.length === 0) return;
    await this.db
      .insertInto('user_tag_assignments')
      .values(fresh.map((user_id) => ({ tag_id: tagId, user_id, organization_id: organizationId })))
      .execute();
  }

  async removeUsers(tagId: string, userIds: string[]): Promise<void> {
    if (userIds.length === 0) return;
    await this.db.deleteFrom('user_tag_assignments').where('tag_id', '=', tagId).where('user_id', 'in', userIds).execute();
  }

  async delete(organizationId: string, tagIds: string[]): Promise<void> {
    if (tagIds.length === 0) return;
    await this.db.deleteFrom('user_tag_assignments').where('tag_id', 'in', tagIds).execute();
    await this.db.deleteFrom('user_tags').where('organization_id', '=', organizationId).where('id', 'in', tagIds).execute();
  }

}
