// Migration 007: IP allowlists (docs/reference/organizations.md; swagger v1IpAllowlist, v1SetIpAllowlistIntent)
// and OAuth providers (docs/reference/sessions.md "Login activities"; swagger v1OauthProvider). Session keys need no table of
// their own: they are expiring API keys whose credential_type says which flow made them
// (CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256, CREDENTIAL_TYPE_LOGIN).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // One row per allowlist: the organization-level one has public_key '' (the API's null), an API
  // key's own list has that key's public key. Rules are a JSON array of {cidr, label, createdAt},
  // read in the same single-row lookup every request makes.
  await db.schema
    .createTable('ip_allowlists')
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('public_key', 'text', (c) => c.notNull())
    // 0/1 for the organization-level list; null for an API key's list (its presence enables it).
    .addColumn('enabled', 'integer')
    // ALLOW or DENY: what happens when the client address cannot be evaluated.
    .addColumn('on_evaluation_error', 'text', (c) => c.notNull())
    .addColumn('rules', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('ip_allowlists_pk', ['organization_id', 'public_key'])
    .execute();

  await db.schema
    .createTable('oauth_providers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('provider_name', 'text', (c) => c.notNull())
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('audience', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    // "same audience, subject, and issuer" is one identity: at most once per organization.
    .addUniqueConstraint('oauth_providers_org_identity', ['organization_id', 'issuer', 'audience', 'subject'])
    .execute();
  await db.schema.createIndex('oauth_providers_user').on('oauth_providers').columns(['user_id', 'created_at']).execute();
  // OIDC logins look an identity up across a parent and its sub-organizations.
  await db.schema.createIndex('oauth_providers_identity').on('oauth_providers').columns(['issuer', 'subject', 'audience']).execute();
}
