// Migration 004: policies (docs/reference/policies.md; swagger v1Policy), smart contract interfaces
// (docs/reference/organizations.md; swagger externaldatav1SmartContractInterface) and the per-vote policy evaluations the policy
// engine records (swagger externalactivityv1PolicyEvaluation). Expressions are stored as the caller
// wrote them; they are compiled when written (to refuse bad ones) and again, cached, when evaluated.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('policies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('effect', 'text', (c) => c.notNull())
    // null = the policy has no such constraint (an absent field, not an empty expression).
    .addColumn('condition', 'text')
    .addColumn('consensus', 'text')
    .addColumn('time', 'text')
    .addColumn('notes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    // "policy label must be unique" (docs/reference/policies.md); the constraint also settles concurrent creations.
    .addUniqueConstraint('policies_org_name', ['organization_id', 'name'])
    .execute();
  await db.schema.createIndex('policies_org_created').on('policies').columns(['organization_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('smart_contract_interfaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    // EVM addresses are stored EIP-55 checksummed, so one equality lookup matches any casing of `to`;
    // Solana addresses are case-sensitive and stored as given.
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('notes', 'text', (c) => c.notNull())
    .addColumn('interface', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('smart_contract_interfaces_org_address')
    .on('smart_contract_interfaces')
    .columns(['organization_id', 'address'])
    .execute();
  await db.schema
    .createIndex('smart_contract_interfaces_org_created')
    .on('smart_contract_interfaces')
    .columns(['organization_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('policy_evaluations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    // No foreign key to activities: an evaluation may be recorded for a request that was refused
    // and therefore never became an activity row.
    .addColumn('activity_id', 'text', (c) => c.notNull())
    .addColumn('vote_id', 'text')
    // JSON array of {policyId, outcome}.
    .addColumn('evaluations', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('policy_evaluations_activity_created')
    .on('policy_evaluations')
    .columns(['activity_id', 'created_at'])
    .execute();
}
