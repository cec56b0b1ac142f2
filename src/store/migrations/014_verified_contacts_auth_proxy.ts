// Migration 014: verified contacts and auth proxy configurations.
//  - users.email_verified_at / phone_number_verified_at: when an OTP verification token proved the
//    user holds that contact (create_sub_organization with verificationToken, otp_login, an
//    attested login, update_user_email/phone with a token); list_verified_suborgs filters on it
//    (docs/reference/sessions.md "OTP": tokens "mark contact verified").
//  - otps.token_signup_used_at: a verification token is spent once for a login and once for a
//    signup (the @turnkey/core OTP flow verifies once, signs up with the token, then logs in with it).
//  - auth_proxy_configs: what the auth proxy acts on (docs/reference/auth-proxy.md): the parent
//    organization, the proxy's own user and P-256 API key (private key sealed by the barrier) and
//    its settings as JSON.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('email_verified_at', 'bigint').execute();
  await db.schema.alterTable('users').addColumn('phone_number_verified_at', 'bigint').execute();
  await db.schema.alterTable('otps').addColumn('token_signup_used_at', 'bigint').execute();
  await db.schema
    .createTable('auth_proxy_configs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('settings', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('auth_proxy_configs_org').on('auth_proxy_configs').column('organization_id').execute();
}
