// Policies and their recorded evaluations. SQL for the `policies` and `policy_evaluations` tables
// (docs/reference/policies.md; swagger v1Policy, externalactivityv1PolicyEvaluation).
import type { Kysely, Selectable } from 'kysely';
import type { Database, PolicyEvaluationTable, PolicyTable } from '../schema.js';

export type PolicyRow = Selectable<PolicyTable>;
export type PolicyEvaluationRow = Selectable<PolicyEvaluationTable>;

/** The fields update_policy may change; `undefined` leaves a column as it is, `null` clears it. */
export type PolicyChanges = Partial<Pick<PolicyRow, 'name' | 'effect' | 'condition' | 'consensus' | 'time' | 'notes'>>;

export class PoliciesRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(rows: PolicyRow[]): Promise<void> {
    // Chunked so a large create_policies stays under SQLite's bound-parameter limit.
    for (let i = 0; i < rows.length; i += 50) {
      await this.db.insertInto('policies').values(rows.slice(i, i + 50)).execute();
    }
  }

  async get(organizationId: string, policyId: string): Promise<PolicyRow | undefined> {
    return this.db
      .selectFrom('policies')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', policyId)
      .executeTakeFirst();
  }

  async getMany(organizationId: string, policyIds: string[]): Promise<PolicyRow[]> {
    if (policyIds.length === 0) return [];
    return this.db
      .selectFrom('policies')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', 'in', policyIds)
      .execute();
  }

  /** Policies of the organization with any of these names. */
  async findByNames(organizationId: string, names: string[]): Promise<PolicyRow[]> {
    if (names.length === 0) return [];
    return this.db
      .selectFrom('policies')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('name', 'in', names)
      .execute();
  }

  /** Every policy of the organization, oldest first (the order list_policies shows). */
  async list(organizationId: string): Promise<PolicyRow[]> {
    return this.db
      .selectFrom('policies')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async update(organizationId: string, policyId: string, changes: PolicyChanges, now: number): Promise<void> {
    await this.db
      .updateTable('policies')
      .set({ ...changes, updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', policyId)
      .execute();
  }

  async delete(organizationId: string, policyIds: string[]): Promise<void> {
    if (policyIds.length === 0) return;
    await this.db.deleteFrom('policies').where('organization_id', '=', organizationId).where('id', 'in', policyIds).execute();
  }
}

export class PolicyEvaluationsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: PolicyEvaluationRow): Promise<void> {
    await this.db.insertInto('policy_evaluations').values(row).execute();
  }

  /** The evaluations recorded for one activity, in the order they were made. */
  async listForActivity(organizationId: string, activityId: string): Promise<PolicyEvaluationRow[]> {
    return this.db
      .selectFrom('policy_evaluations')
      .selectAll()
      .where('activity_id', '=', activityId)
      .where('organization_id', '=', organizationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
}
