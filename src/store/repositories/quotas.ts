// Counts of the resources an organization's quotas cover (turnkey-semantics.md §8 "Resource limits";
// src/domain/quotas.ts declares the limits). SQL only: which table a quota counts is decided here.
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** Organization-owned tables with a per-organization limit. */
export type QuotaTable = 'users' | 'policies' | 'wallets' | 'private_keys' | 'user_tags' | 'private_key_tags';

export class QuotasRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** Rows of `table` in the organization. */
  async count(table: QuotaTable, organizationId: string): Promise<number> {
    const row = await this.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', organizationId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
