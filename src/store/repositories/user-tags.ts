// User tags. SQL for the `user_tags` table (assignments are in users.ts).
import type { Kysely, Selectable } from 'kysely';
import type { Database, UserTagTable } from '../schema.js';

export type UserTagRow = Selectable<UserTagTable>;

export class UserTagsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: UserTagRow): Promise<void> {
    await this.db.insertInto('user_tags').values(row).execute();
  }

  async get(organizationId: string, tagId: string): Promise<UserTagRow | undefined> {
    return this.db
      .selectFrom('user_tags')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', tagId)
      .executeTakeFirst();
  }

  async getMany(organizationId: string, tagIds: string[]): Promise<UserTagRow[]> {
    if (tagIds.length === 0) return [];
    return this.db
      .selectFrom('user_tags')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', 'in', tagIds)
      .execute();
  }

  async findByName(organizationId: string, name: string): Promise<UserTagRow | undefined> {
    return this.db
      .selectFrom('user_tags')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('name', '=', name)
      .executeTakeFirst();
  }

  async list(organizationId: string): Promise<UserTagRow[]> {
    return this.db
      .selectFrom('user_tags')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
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

  async count(organizationId: string): Promise<number> {
    const row = await this.db
      .selectFrom('user_tags')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', organizationId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
