// MFA policies and the MFA state of activities. SQL for the `mfa_policies` and `activity_mfa`
// tables (migration 019). `activity_mfa` rows are written with the activity's record and
// updated by approvals under the activity's vote lock (src/activity/votes.ts).
import type { Kysely, Selectable } from 'kysely';
import type { ActivityMfaTable, Database, MfaPolicyTable } from '../schema.js';

export type MfaPolicyRow = Selectable<MfaPolicyTable>;
export type ActivityMfaRow = Selectable<ActivityMfaTable>;

export class MfaPoliciesRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: MfaPolicyRow): Promise<void> {
    await this.db.insertInto('mfa_policies').values(row).execute();
  }

  async get(organizationId: string, id: string): Promise<MfaPolicyRow | undefined> {
    return this.db.selectFrom('mfa_policies').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  /** Every MFA policy of the organization, by user and order (what the request path reads, cached). */
  async list(organizationId: string): Promise<MfaPolicyRow[]> {
    return this.db
      .selectFrom('mfa_policies')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('user_id')
      .orderBy('order_index')
      .execute();
  }

  async update(organizationId: string, id: string, changes: Partial<Pick<MfaPolicyRow, 'name' | 'condition' | 'required_methods' | 'order_index' | 'notes'>>, now: number): Promise<void> {
    await this.db
      .updateTable('mfa_policies')
      .set({ ...changes, updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .execute();
  }

  async delete(organizationId: string, id: string): Promise<void> {
    await this.db.deleteFrom('mfa_policies').where('organization_id', '=', organizationId).where('id', '=', id).execute();
  }

  async insertActivityMfa(row: ActivityMfaRow): Promise<void> {
    await this.db.insertInto('activity_mfa').values(row).execute();
  }

  /** The MFA state of an activity, one row per user an MFA policy matched for. */
  async activityMfa(organizationId: string, activityId: string): Promise<ActivityMfaRow[]> {
    return this.db
      .selectFrom('activity_mfa')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('activity_id', '=', activityId)
      .orderBy('created_at')
      .orderBy('user_id')
      .execute();
  }

  async setSatisfied(activityId: string, userId: string, satisfiedMethods: string, now: number): Promise<void> {
    await this.db
      .updateTable('activity_mfa')
      .set({ satisfied_methods: satisfiedMethods, updated_at: now })
      .where('activity_id', '=', activityId)
      .where('user_id', '=', userId)
      .execute();
  }
}
