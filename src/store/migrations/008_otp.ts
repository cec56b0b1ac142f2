// Migration 008: one-time codes (docs/reference/sessions.md "OTP"; swagger v1InitOtpIntentV3,
// v1VerifyOtpIntentV2, v1OtpLoginIntentV2). A row is one code sent to one contact: the code itself
// only as a salted hash, the HPKE target key of its otpEncryptionTargetBundle sealed by the barrier,
// the attempt count (3 per code), and, once verified, the id of the verification token it produced
// so that the token is spent exactly once by a login.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('otps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    // 'OTP' (init_otp → verify_otp) or 'OTP_AUTH' (init_otp_auth → otp_auth): the flows never mix.
    .addColumn('flow', 'text', (c) => c.notNull())
    // OTP_TYPE_EMAIL or OTP_TYPE_SMS, and the address the code went to.
    .addColumn('otp_type', 'text', (c) => c.notNull())
    .addColumn('contact', 'text', (c) => c.notNull())
    // The init_otp `userIdentifier`, for the per-identifier rate limit ('' when absent).
    .addColumn('user_identifier', 'text', (c) => c.notNull())
    // hex HMAC-SHA256(salt, code) and its random 16-byte salt (hex).
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('code_salt', 'text', (c) => c.notNull())
    // Barrier-sealed P-256 private key the client encrypts its code to (encryptedOtpBundle).
    .addColumn('target_private_key', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    // Set when verify_otp succeeds; token_used_at when a login spends the token.
    .addColumn('verification_token_id', 'text', (c) => c.unique())
    .addColumn('token_expires_at', 'bigint')
    .addColumn('token_used_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  // Active-code and rate-limit counts look a contact's recent codes up.
  await db.schema.createIndex('otps_contact').on('otps').columns(['organization_id', 'contact', 'created_at']).execute();
}
