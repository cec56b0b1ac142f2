// Velocity controls and what counted toward them. SQL for the `velocity_controls`,
// `velocity_groups` and `velocity_counts` tables (migration 018; docs/velocity-controls.md).
//
// A reservation (src/domain/keys/velocity-limits.ts) runs in a transaction: `lockGroup` takes the
// group's row lock first (an upsert, so the row need not exist), then the bucket amounts are read
// and written. Two processes reserving against one control and group therefore take turns on
// PostgreSQL; on SQLite the write transaction already excludes every other writer.
//
// `velocity_counts.bucket` -1 is not a time: a rolling window's group keeps its running total
// there (the sum of its stored time buckets, src/domain/keys/velocity-limits.ts), so `prune` spares it.
import type { Kysely, Selectable } from 'kysely';
import type { Database, VelocityControlTable } from '../schema.js';
import { OrganizationScopedRepo } from './org-scoped.js';
import { isForeignKeyViolation } from '../db.js';

export type VelocityControlRow = Selectable<VelocityControlTable>;

export class VelocityControlsRepo extends OrganizationScopedRepo<'velocity_controls'> {
  constructor(db: Kysely<Database>) {
    super(db, 'velocity_controls');
  }

  async insert(row: VelocityControlRow): Promise<void> {
    await this.db.insertInto('velocity_controls').values(row).execute();
  }

  async delete(organizationId: string, id: string): Promise<void> {
    await this.db.deleteFrom('velocity_controls').where('organization_id', '=', organizationId).where('id', '=', id).execute();
  }

  /**
   * Takes the lock of one group of a control until the transaction ends, creating its row if need be.
   * False when the control no longer exists (deleted by a transaction that committed first).
   */
  async lockGroup(organizationId: string, controlId: string, groupKey: string): Promise<boolean> {
    const control = await this.db.selectFrom('velocity_controls').select('id').where('id', '=', controlId).executeTakeFirst();
    if (!control) return false;
    try {
      await this.db
        .insertInto('velocity_groups')
        .values({ control_id: controlId, group_key: groupKey, organization_id: organizationId })
        .onConflict((oc) => oc.columns(['control_id', 'group_key']).doUpdateSet({ organization_id: (eb) => eb.ref('excluded.organization_id') }))
        .execute();
    } catch (err) {
      // Deleted by a transaction that committed after the check above.
      if (isForeignKeyViolation(err)) return false;
      throw err;
    }
    return true;
  }

  /** The keys of every group of a control that was ever counted or read under its lock, in key order. */
  async groupKeys(controlId: string): Promise<string[]> {
    const rows = await this.db.selectFrom('velocity_groups').select('group_key').where('control_id', '=', controlId).orderBy('group_key').execute();
    return rows.map((r) => r.group_key);
  }

  /** The amounts of a group's buckets from `fromBucket` on. */
  async amounts(controlId: string, groupKey: string, fromBucket: number): Promise<{ bucket: number; amount: string }[]> {
    const rows = await this.db
      .selectFrom('velocity_counts')
      .select(['bucket', 'amount'])
      .where('control_id', '=', controlId)
      .where('group_key', '=', groupKey)
      .where('bucket', '>=', fromBucket)
      .execute();
    return rows.map((r) => ({ bucket: Number(r.bucket), amount: r.amount }));
  }

  /**
   * The rows of a group before `beforeBucket`, and bucket `alsoBucket` if given: with a rolling
   * window, the group's running total (bucket -1, src/domain/keys/velocity-limits.ts) and the buckets
   * that fell out of the window since they were last pruned, in one statement.
   */
  async before(controlId: string, groupKey: string, beforeBucket: number, alsoBucket?: number): Promise<{ bucket: number; amount: string }[]> {
    const rows = await this.db
      .selectFrom('velocity_counts')
      .select(['bucket', 'amount'])
      .where('control_id', '=', controlId)
      .where('group_key', '=', groupKey)
      .where((eb) => (alsoBucket === undefined ? eb('bucket', '<', beforeBucket) : eb.or([eb('bucket', '<', beforeBucket), eb('bucket', '=', alsoBucket)])))
      .execute();
    return rows.map((r) => ({ bucket: Number(r.bucket), amount: r.amount }));
  }

  /** Sets one bucket's amount (the caller holds the group's lock and computed it). */
  async setAmount(controlId: string, groupKey: string, bucket: number, amount: string): Promise<void> {
    await this.db
      .insertInto('velocity_counts')
      .values({ control_id: controlId, group_key: groupKey, bucket, amount })
      .onConflict((oc) => oc.columns(['control_id', 'group_key', 'bucket']).doUpdateSet({ amount: (eb) => eb.ref('excluded.amount') }))
      .execute();
  }

  /** Drops a group's time buckets before `beforeBucket` (not its running total, bucket -1): they can no longer fall inside the window. */
  async prune(controlId: string, groupKey: string, beforeBucket: number): Promise<void> {
    await this.db
      .deleteFrom('velocity_counts')
      .where('control_id', '=', controlId)
      .where('group_key', '=', groupKey)
      .where('bucket', '>=', 0)
      .where('bucket', '<', beforeBucket)
      .execute();
  }
}

