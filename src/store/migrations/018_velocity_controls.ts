// Migration 018: velocity controls (docs/velocity-controls.md; @turnkey/http 6.6.0 v1VelocityControl). Three tables:
//
// - `velocity_controls`: the controls of an organization, as created (data source and aggregation
//   kept as the JSON the client sent, checked by src/domain/keys/velocity-controls.ts). The request
//   path reads them from the read cache, so the table bumps its organization's cache generation
//   like every cached table (migration 015): an organization without controls pays no query.
// - `velocity_counts`: what counted, per control, per group (the organization, a user, a wallet)
//   and per time bucket (a rolling window keeps ~100; bucket -1 holds a group's running total, so a
//   check reads the total and the buckets that just fell out, src/domain/keys/velocity-limits.ts), an
//   infinite window one row. Amounts are decimal strings of the aggregate scaled by 10^18 (the
//   threshold's 18 fractional digits), since neither store has an integer that holds 38 digits + 18.
// - `velocity_groups`: one row per control and group, the row a reservation locks so that two
//   processes reserving against one limit take turns (src/store/repositories/velocity-controls.ts).
import { sql, type Kysely } from 'kysely';
import { isSqlite } from './trigger-helpers.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('velocity_controls')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('identifier', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('data_source', 'text', (c) => c.notNull())
    .addColumn('aggregation', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('velocity_controls_identifier', ['organization_id', 'identifier'])
    .execute();
  await db.schema.createIndex('velocity_controls_by_created').on('velocity_controls').columns(['organization_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('velocity_groups')
    .addColumn('control_id', 'text', (c) => c.notNull().references('velocity_controls.id').onDelete('cascade'))
    .addColumn('group_key', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('velocity_groups_pk', ['control_id', 'group_key'])
    .execute();

  await db.schema
    .createTable('velocity_counts')
    .addColumn('control_id', 'text', (c) => c.notNull())
    .addColumn('group_key', 'text', (c) => c.notNull())
    .addColumn('bucket', 'bigint', (c) => c.notNull())
    .addColumn('amount', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('velocity_counts_pk', ['control_id', 'group_key', 'bucket'])
    .addForeignKeyConstraint('velocity_counts_group', ['control_id', 'group_key'], 'velocity_groups', ['control_id', 'group_key'], (fk) => fk.onDelete('cascade'))
    .execute();

  // Cache generations (migration 015's scheme): the function exists on PostgreSQL already.
  for (const event of ['INSERT', 'UPDATE', 'DELETE'] as const) {
    const name = `sigil_gen_velocity_controls_${event.toLowerCase()}`;
    if (isSqlite(db)) {
      const bump = (row: 'NEW' | 'OLD') =>
        `INSERT INTO cache_generations (organization_id, generation) VALUES (${row}.organization_id, 1) ON CONFLICT (organization_id) DO UPDATE SET generation = cache_generations.generation + 1`;
      const body = event === 'INSERT' ? bump('NEW') : event === 'DELETE' ? bump('OLD') : `${bump('OLD')}; ${bump('NEW')}`;
      await sql.raw(`CREATE TRIGGER ${name} AFTER ${event} ON velocity_controls BEGIN ${body}; END`).execute(db);
    } else {
      await sql.raw(`CREATE TRIGGER ${name} AFTER ${event} ON velocity_controls FOR EACH ROW EXECUTE FUNCTION sigil_bump_cache_generation('organization_id')`).execute(db);
    }
  }
}
