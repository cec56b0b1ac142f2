// Organizations and their root quorum. SQL for the `organizations` and `root_quorum_members` tables.
import type { Kysely, Selectable } from 'kysely';
import type { Database, OrganizationTable } from '../schema.js';

export type OrganizationRow = Selectable<OrganizationTable>;

export class OrganizationsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: OrganizationRow): Promise<void> {
    await this.db.insertInto('organizations').values(row).execute();
  }

  async get(id: string): Promise<OrganizationRow | undefined> {
    return this.db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async rename(id: string, name: string, now: number): Promise<void> {
    await this.db.updateTable('organizations').set({ name, updated_at: now }).where('id', '=', id).execute();
  }

  async setRootQuorum(id: string, threshold: number, userIds: string[], now: number): Promise<void> {
    await this.db.updateTable('organizations').set({ root_quorum_threshold: threshold, updated_at: now }).where('id', '=', id).execute();
    await this.db.deleteFrom('root_quorum_members').where('organization_id', '=', id).execute();
    if (userIds.length > 0) {
      await this.db
        .insertInto('root_quorum_members')
        .values(userIds.map((user_id) => ({ organization_id: id, user_id })))
        .execute();
    }
  }

  async rootQuorumUserIds(id: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('root_quorum_members')
      .select('user_id')
      .where('organization_id', '=', id)
      .orderBy('user_id')
      .execute();
    return rows.map((r) => r.user_id);
  }

  async isRootQuorumMember(id: string, userId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('root_quorum_members')
      .select('user_id')
      .where('organization_id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row !== undefined;
  }
}
