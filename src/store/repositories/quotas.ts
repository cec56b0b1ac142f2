// Counts of the resources an organization's quotas cover (kept by migration 017's and 021's triggers) (docs/reference/api.md "Limits";
// src/domain/governance/quotas.ts declares the limits). SQL only: which table a quota counts is decided here.
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** Organization-owned tables with a per-organization limit. */
export type QuotaTable = 'users' | 'policies' | 'wallets' | 'private_keys' | 'user_tags' | 'private_key_tags' | 'secrets';

export class QuotasRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Inside a transaction: the organization's count of `table` (migration 017 keeps it), its row
   * locked until commit, so concurrent creates in the organization count one after another. The
   * upsert creates the row at 0 the first time and locks it either way, in one statement.
   */
  async lockCount(table: QuotaTable, organizationId: string): Promise<number> {
    const row = await this.db
      .insertInto('quota_counts')
      .values({ organization_id: organizationId, name: table, count: 0 })
      .onConflict((oc) => oc.columns(['organization_id', 'name']).doUpdateSet((eb) => ({ count: eb.ref('quota_counts.count') })))
      .returning('count')
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }
}
