// Migration 020: session profiles (swagger v1SessionProfile, v1CreateSessionProfileIntent,
// externaldatav1Credential.sessionProfileId).
//
// - `session_profiles`: the profiles an organization created. Immutable (the API has no update or
//   delete), so the request path may cache a profile's compiled scope by id for the life of the
//   process (src/domain/identity/session-profiles.ts) and the table needs no cache-generation trigger.
//   Names are unique per organization, so an operator can tell profiles apart in a list.
// - `api_keys.session_profile_id`: the profile a login key (CREDENTIAL_TYPE_LOGIN) was created with;
//   null for every other key. No foreign key: a sub-organization's login key may name its parent's
//   profile, and the parent's deletion removes the sub-organization (and its keys) anyway.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('session_profiles')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('expiration_seconds', 'text')
    .addColumn('notes', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('session_profiles_name', ['organization_id', 'name'])
    .execute();
  await db.schema.createIndex('session_profiles_by_created').on('session_profiles').columns(['organization_id', 'created_at', 'id']).execute();
  await db.schema.alterTable('api_keys').addColumn('session_profile_id', 'text').execute();
}
