// Migration 027: fair tracking of sends (docs/broadcasting.md "Tracking").
//
// The tracker used to read the deployment's 500 oldest unfinished sends, so one organization with
// 500 sends that never settle (raw transactions with a nonce gap wait in the node's pool for ever)
// froze every other organization's tracking. It now goes through the organizations with sends in
// flight in turn, a bounded number of each one's sends per pass, least recently checked first:
// - `checked_at`: when the tracker last looked at the send (0: never), so within one organization
//   the sends it looked at go to the back of the line;
// - `origin`: `sigil` for a transaction Sigil built and signed, `raw` for one broadcast with
//   eth_send_raw_transaction, which expires to FAILED when it is not mined in time
//   (SIGIL_EVM_RAW_SEND_TTL_SECONDS). Rows written before this migration are taken as Sigil's own.
// The index serves both the list of organizations with sends in flight and each one's next sends.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('send_transactions').addColumn('checked_at', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('send_transactions').addColumn('origin', 'text', (c) => c.notNull().defaultTo('sigil')).execute();
  await db.schema.createIndex('send_transactions_tracking').on('send_transactions').columns(['status', 'organization_id', 'checked_at']).execute();
}
