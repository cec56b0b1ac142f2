// Migration 036: an activity keeps the simulation of the transaction it signs or sends, as it was
// at submission (docs/policies.md "Simulation before approval"): JSON of its asset changes, null
// when no simulation ran (no RPC for the chain, or nothing to simulate).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('activities').addColumn('simulation', 'text').execute();
}
