// Migration 011: OAuth 2.0 credentials (docs/reference/organizations.md "Smart contract interfaces and OAuth 2.0 credentials"; swagger
// v1Oauth2Credential): the client id and secret an organization registered with an OAuth2-only
// provider (X, Discord), which oauth2_authenticate uses to exchange authorization codes.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('oauth2_credentials')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    // OAUTH2_PROVIDER_X or OAUTH2_PROVIDER_DISCORD.
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    // Barrier ciphertext of the client secret, bound to (oauth2_credentials, id, client_secret).
    .addColumn('client_secret', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    // One credential per provider application in an organization: two with the same client id would
    // hold competing secrets for one application.
    .addUniqueConstraint('oauth2_credentials_org_client', ['organization_id', 'provider', 'client_id'])
    .execute();
}
