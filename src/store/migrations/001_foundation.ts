// Migration 001: organizations, users, API keys, user tags, activities and votes (the foundation
// issue). Written with Kysely's schema builder so the same steps run on SQLite and PostgreSQL.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('meta')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('organizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('parent_organization_id', 'text', (c) => c.references('organizations.id'))
    .addColumn('root_quorum_threshold', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('organizations_parent').on('organizations').column('parent_organization_id').execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('user_name', 'text', (c) => c.notNull())
    .addColumn('user_email', 'text')
    .addColumn('user_phone_number', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('users_org_created').on('users').columns(['organization_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('root_quorum_members')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addPrimaryKeyConstraint('root_quorum_members_pk', ['organization_id', 'user_id'])
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('api_key_name', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('curve_type', 'text', (c) => c.notNull())
    .addColumn('credential_type', 'text', (c) => c.notNull())
    .addColumn('expiration_seconds', 'text')
    .addColumn('expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('api_keys_org_public_key', ['organization_id', 'public_key'])
    .execute();
  await db.schema.createIndex('api_keys_user').on('api_keys').column('user_id').execute();
  await db.schema.createIndex('api_keys_public_key').on('api_keys').column('public_key').execute();

  await db.schema
    .createTable('user_tags')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('user_tags_org_name', ['organization_id', 'name'])
    .execute();

  await db.schema
    .createTable('user_tag_assignments')
    .addColumn('tag_id', 'text', (c) => c.notNull().references('user_tags.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('user_tag_assignments_pk', ['tag_id', 'user_id'])
    .execute();
  await db.schema.createIndex('user_tag_assignments_user').on('user_tag_assignments').column('user_id').execute();

  await db.schema
    .createTable('activities')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('intent', 'text', (c) => c.notNull())
    .addColumn('result', 'text')
    .addColumn('failure', 'text')
    // Barrier ciphertext of the submitted parameters while the activity waits for consensus, so it
    // can run once approved; cleared when it finishes.
    .addColumn('pending_parameters', 'text')
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('timestamp_ms', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    // Idempotency is a database constraint, so it holds across processes sharing one database.
    .addUniqueConstraint('activities_org_fingerprint', ['organization_id', 'fingerprint'])
    .execute();
  await db.schema
    .createIndex('activities_org_created')
    .on('activities')
    .columns(['organization_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('votes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('activity_id', 'text', (c) => c.notNull().references('activities.id'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('selection', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .addColumn('scheme', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('votes_activity_user', ['activity_id', 'user_id'])
    .execute();
}
