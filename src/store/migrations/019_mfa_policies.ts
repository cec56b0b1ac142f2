// Migration 019: MFA policies (swagger v1MfaPolicy, v1MfaStatus). Two tables:
//
// - `mfa_policies`: a user's MFA policies (condition in the policy language, the ordered steps of
//   required authentication methods as the JSON the client sent, checked by src/domain/identity/mfa-policies.ts).
//   `order_index` is unique per user, so "the first matching policy by order" is always one policy.
//   The request path reads them from the read cache, so the table bumps its organization's cache
//   generation like every cached table (migration 015): an organization without MFA policies pays
//   no query.
// - `activity_mfa`: per activity and user, the MFA policy that matched it when it was submitted,
//   its steps as they were then, and the methods presented so far (approve_activity stamps); what
//   get_mfa_status reports and what an approval in ACTIVITY_STATUS_AUTHENTICATORS_NEEDED completes.
//   No foreign key to `activities`: the row joins the grouped commit, whose own writes run before
//   the group's activity rows are inserted (src/store/group-commit.ts).
import type { Kysely } from 'kysely';
import { cacheGenerationTriggers } from './trigger-helpers.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mfa_policies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('condition', 'text', (c) => c.notNull())
    .addColumn('required_methods', 'text', (c) => c.notNull())
    .addColumn('order_index', 'bigint', (c) => c.notNull())
    .addColumn('notes', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('mfa_policies_user_order', ['user_id', 'order_index'])
    .execute();
  await db.schema.createIndex('mfa_policies_by_org').on('mfa_policies').columns(['organization_id', 'user_id']).execute();

  await db.schema
    .createTable('activity_mfa')
    .addColumn('activity_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('mfa_policy_id', 'text', (c) => c.notNull())
    .addColumn('required_methods', 'text', (c) => c.notNull())
    .addColumn('satisfied_methods', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('activity_mfa_pk', ['activity_id', 'user_id'])
    .execute();

  // Cache generations (migration 015's scheme), so the request path reads the list from memory.
  await cacheGenerationTriggers(db, 'mfa_policies');
}
