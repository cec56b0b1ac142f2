// Migration 006: authenticators (passkeys), the WebAuthn credentials of users (docs/reference/activities.md "The record"
// "Authenticator"; docs/reference/api.md "Stamps"). A credential id is unique within an organization; the
// same passkey may be registered in a parent and in one of its sub-organizations.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('authenticators')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    // base64url (no padding) of the raw credential id, as the authenticator data carries it.
    .addColumn('credential_id', 'text', (c) => c.notNull())
    // base64url of the COSE_Key from the attestation: what assertion verification consumes.
    .addColumn('public_key', 'text', (c) => c.notNull())
    // The key as the API shows it (credential.publicKey, votes, policies): hex.
    .addColumn('credential_public_key', 'text', (c) => c.notNull())
    // COSE algorithm identifier: -7 (ES256) or -257 (RS256).
    .addColumn('algorithm', 'integer', (c) => c.notNull())
    .addColumn('sign_count', 'bigint', (c) => c.notNull())
    // JSON array of AUTHENTICATOR_TRANSPORT_* values.
    .addColumn('transports', 'text', (c) => c.notNull())
    .addColumn('attestation_type', 'text', (c) => c.notNull())
    .addColumn('aaguid', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('authenticators_org_credential_id', ['organization_id', 'credential_id'])
    .execute();
  await db.schema.createIndex('authenticators_user').on('authenticators').column('user_id').execute();
  await db.schema.createIndex('authenticators_credential_id').on('authenticators').column('credential_id').execute();
  await db.schema.createIndex('authenticators_public_key').on('authenticators').columns(['organization_id', 'credential_public_key']).execute();
}
