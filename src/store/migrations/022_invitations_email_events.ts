// Migration 022: invitations and email events (docs/sessions-and-logins.md "Invitations", "Email events";
// swagger v1Invitation, v1EmailEvent). Two tables:
//
// - `invitations`: one row per invitation create_invitations made. The accept token the invitee was
//   emailed is kept only as its SHA-256 (`token_hash`, unique), so a copy of the database cannot
//   accept an invitation. `status` is the swagger's v1InvitationStatus; an accepted invitation names
//   the user it became. Revoked and accepted rows stay, so a late accept is refused with the reason.
// - `email_events`: what the delivery layer did with each email (src/delivery/delivery.ts): a Send
//   event when the SMTP conversation starts and a Delivery or Bounce event with the server's answer,
//   sharing one message id. Never the subject, body, code or link. `recipient` is the lower-cased
//   address list_email_events filters on.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('invitations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('receiver_user_name', 'text', (c) => c.notNull())
    .addColumn('receiver_email', 'text', (c) => c.notNull())
    .addColumn('receiver_user_tags', 'text', (c) => c.notNull())
    .addColumn('access_type', 'text', (c) => c.notNull())
    .addColumn('sender_user_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('accepted_user_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('invitations_by_created').on('invitations').columns(['organization_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('email_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('message_kind', 'text', (c) => c.notNull())
    .addColumn('from_address', 'text', (c) => c.notNull())
    .addColumn('to_address', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('details', 'text', (c) => c.notNull())
    .addColumn('timestamp', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('email_events_by_recipient').on('email_events').columns(['organization_id', 'recipient', 'created_at', 'id']).execute();
}
