// Broadcast transactions and nonce allocation. SQL for the `send_transactions` and `evm_nonces`
// tables (migration 024; docs/broadcasting.md "Broadcasting").
//
// Nonces: `lockNonce` takes the (chain, address) row's lock until the transaction ends (an upsert,
// so the row need not exist; PostgreSQL holds the row lock, SQLite's write transaction already
// excludes every other writer), so two processes allocating for one address take turns and never
// hand out one nonce twice. A status change is a conditional update from the status the caller
// read, so of two processes tracking one transaction only one records each change.
import type { Kysely, Selectable } from 'kysely';
import type { Database, SendTransactionTable } from '../schema.js';

export type SendTransactionRow = Selectable<SendTransactionTable>;

/** bigint columns come back as strings from PostgreSQL, numbers from SQLite. */
function normalize(row: SendTransactionRow): SendTransactionRow {
  return {
    ...row,
    nonce: row.nonce === null ? null : Number(row.nonce),
    created_at: Number(row.created_at),
    updated_at: Number(row.updated_at),
    checked_at: Number(row.checked_at),
  };
}

export class SendTransactionsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: SendTransactionRow): Promise<void> {
    await this.db.insertInto('send_transactions').values(row).execute();
  }

  async get(organizationId: string, id: string): Promise<SendTransactionRow | undefined> {
    const row = await this.db.selectFrom('send_transactions').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return row && normalize(row);
  }

  /**
   * The organizations with a transaction in one of `statuses` on one of `chains` (CAIP-2 ids), in id
   * order after `after` (from the first when undefined), at most `limit`: a tracker goes through them
   * in turn (migration 027), each reading only the chains it has a node for.
   */
  async organizationsWithStatus(statuses: string[], chains: string[], after: string | undefined, limit: number): Promise<string[]> {
    if (chains.length === 0) return [];
    let q = this.db.selectFrom('send_transactions').select('organization_id').distinct().where('status', 'in', statuses).where('caip2', 'in', chains);
    if (after !== undefined) q = q.where('organization_id', '>', after);
    const rows = await q.orderBy('organization_id').limit(limit).execute();
    return rows.map((r) => r.organization_id);
  }

  /** One organization's transactions in one of `statuses` on one of `chains`, least recently checked first, at most `limit`. */
  async listForTracking(organizationId: string, statuses: string[], chains: string[], limit: number): Promise<SendTransactionRow[]> {
    if (chains.length === 0) return [];
    const rows = await this.db
      .selectFrom('send_transactions')
      .selectAll()
      .where('status', 'in', statuses)
      .where('organization_id', '=', organizationId)
      .where('caip2', 'in', chains)
      .orderBy('checked_at')
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(normalize);
  }

  /** Records that the tracker looked at these transactions at `at`. */
  async markChecked(ids: string[], at: number): Promise<void> {
    if (ids.length === 0) return;
    await this.db.updateTable('send_transactions').set({ checked_at: at }).where('id', 'in', ids).execute();
  }

  /**
   * Moves a transaction from `from` to `to` (with its error and, once known, its nonce); false when
   * it was no longer in `from` (another process recorded the change first).
   */
  async setStatus(id: string, from: string, to: string, fields: { error?: string | null; nonce?: number; at: number }): Promise<boolean> {
    const result = await this.db
      .updateTable('send_transactions')
      .set({ status: to, updated_at: fields.at, ...(fields.error !== undefined ? { error: fields.error } : {}), ...(fields.nonce !== undefined ? { nonce: fields.nonce } : {}) })
      .where('id', '=', id)
      .where('status', '=', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Takes the (chain, address) nonce row's lock until the transaction ends; the next nonce stored, or undefined when none was. */
  async lockNonce(caip2: string, address: string): Promise<number | undefined> {
    await this.db
      .insertInto('evm_nonces')
      .values({ caip2, address, next_nonce: -1 })
      .onConflict((oc) => oc.columns(['caip2', 'address']).doUpdateSet({ next_nonce: (eb) => eb.ref('evm_nonces.next_nonce') }))
      .execute();
    const row = await this.db.selectFrom('evm_nonces').select('next_nonce').where('caip2', '=', caip2).where('address', '=', address).executeTakeFirstOrThrow();
    const next = Number(row.next_nonce);
    return next < 0 ? undefined : next;
  }

  /** Under the row's lock: the next nonce to hand out. */
  async setNextNonce(caip2: string, address: string, next: number): Promise<void> {
    await this.db.updateTable('evm_nonces').set({ next_nonce: next }).where('caip2', '=', caip2).where('address', '=', address).execute();
  }

  /** The next nonce stored for an address, without locking (get_nonces). */
  async nextNonce(caip2: string, address: string): Promise<number | undefined> {
    const row = await this.db.selectFrom('evm_nonces').select('next_nonce').where('caip2', '=', caip2).where('address', '=', address).executeTakeFirst();
    const next = row ? Number(row.next_nonce) : -1;
    return next < 0 ? undefined : next;
  }
}
