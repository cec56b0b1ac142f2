// Migration 024: broadcasting (swagger v1GetSendTransactionStatusResponse, docs/broadcasting.md
// "Broadcasting"). Two tables:
//
// - `send_transactions`: one row per transaction Sigil broadcast (eth_send_transaction,
//   eth_send_raw_transaction), the `sendTransactionStatusId` clients poll. It keeps the signed
//   transaction (public once broadcast, and what a restart re-broadcasts when the node lost it),
//   its hash, nonce, the status (INITIALIZED → BROADCASTING → INCLUDED | FAILED) and the error
//   (v1TxError JSON) so a restarted process resumes tracking where the last one stopped, and the
//   fingerprint of the activity that sent it (unique: an activity broadcasts at most once).
// - `evm_nonces`: the next nonce Sigil hands out per chain and address. An allocation locks this
//   row (src/store/repositories/send-transactions.ts), so sends from one address in several
//   processes on one PostgreSQL take consecutive nonces in turn.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('send_transactions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('caip2', 'text', (c) => c.notNull())
    .addColumn('from_address', 'text', (c) => c.notNull())
    .addColumn('nonce', 'bigint')
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('signed_transaction', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('activity_fingerprint', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // One broadcast per activity fingerprint: two identical submissions racing each other (both past
  // the idempotency check before either is recorded) send once.
  await db.schema.createIndex('send_transactions_by_fingerprint').unique().on('send_transactions').columns(['organization_id', 'activity_fingerprint']).execute();
  // The tracker reads the unfinished ones; the allocator counts an address's unfinished ones.
  await db.schema.createIndex('send_transactions_by_status').on('send_transactions').columns(['status', 'created_at']).execute();
  await db.schema.createIndex('send_transactions_by_sender').on('send_transactions').columns(['caip2', 'from_address', 'status']).execute();

  await db.schema
    .createTable('evm_nonces')
    .addColumn('caip2', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('next_nonce', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('evm_nonces_pk', ['caip2', 'address'])
    .execute();
}
