// Migration 026: contacts a parent organization vouches for (docs/compatibility.md "Email and SMS
// logins through the parent").
//
// A login through the parent (otp_login, the attested stamp_login, otp_auth, email_auth) finds the
// user by the contact it proves, across the parent's sub-organizations. Anyone who owns a
// sub-organization can write any email into it, so across organizations only a contact that is
// verified, or that the parent itself set, may match:
//  - users.email_vouched_at / phone_number_vouched_at: when the parent organization set the contact
//    (the root users of its create_sub_organization); null once the sub-organization changes it.
//
// Existing rows: a root user of a sub-organization created with it and never changed since carries
// the contact its parent wrote at create_sub_organization, so it is vouched for; any other user of a
// sub-organization was written by the sub-organization and is not.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('email_vouched_at', 'bigint').execute();
  await db.schema.alterTable('users').addColumn('phone_number_vouched_at', 'bigint').execute();
  const fromParent = sql`users.updated_at = users.created_at AND EXISTS (
    SELECT 1 FROM organizations o WHERE o.id = users.organization_id AND o.parent_organization_id IS NOT NULL AND o.created_at = users.created_at)`;
  await sql`UPDATE users SET email_vouched_at = created_at WHERE user_email IS NOT NULL AND ${fromParent}`.execute(db);
  await sql`UPDATE users SET phone_number_vouched_at = created_at WHERE user_phone_number IS NOT NULL AND ${fromParent}`.execute(db);
}
