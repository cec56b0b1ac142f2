// Session profiles (swagger v1SessionProfile). SQL for the `session_profiles` table
// (migration 020). Reads take a list of organizations because a sub-organization reads and uses
// its parent's profiles as well as its own.
import type { Kysely, Selectable } from 'kysely';
import type { Database, SessionProfileTable } from '../schema.js';

export type SessionProfileRow = Selectable<SessionProfileTable>;

export class SessionProfilesRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: SessionProfileRow): Promise<void> {
    await this.db.insertInto('session_profiles').values(row).execute();
  }

  /** The profile with this id if it belongs to one of the organizations. */
  async get(organizationIds: string[], id: string): Promise<SessionProfileRow | undefined> {
    return this.db.selectFrom('session_profiles').selectAll().where('organization_id', 'in', organizationIds).where('id', '=', id).executeTakeFirst();
  }

  /** The profiles of the organizations, oldest first. */
  async list(organizationIds: string[]): Promise<SessionProfileRow[]> {
    return this.db
      .selectFrom('session_profiles')
      .selectAll()
      .where('organization_id', 'in', organizationIds)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async findByName(organizationId: string, name: string): Promise<SessionProfileRow | undefined> {
    return this.db.selectFrom('session_profiles').selectAll().where('organization_id', '=', organizationId).where('name', '=', name).executeTakeFirst();
  }
}
