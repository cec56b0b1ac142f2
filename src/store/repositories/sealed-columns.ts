// Every column that holds an organization's secret sealed by the barrier (docs/secrets.md "At rest"):
// the list the in-place re-sealing walks, so that each such secret ends under its organization's key
// in the current additional-data format. SQL for reading them in bounded pages and replacing one
// value only if it is still the one read (two processes re-sealing the same row: one write wins, the
// other changes nothing).
import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** Table and column of each sealed secret of an organization; every table has `id` and `organization_id`. */
export const ORGANIZATION_SEALED_COLUMNS = [
  { table: 'wallets', column: 'mnemonic' },
  { table: 'wallet_accounts', column: 'private_key' },
  { table: 'private_keys', column: 'private_key' },
  { table: 'secrets', column: 'value' },
  { table: 'import_bundles', column: 'target_private_key' },
  { table: 'otps', column: 'target_private_key' },
  { table: 'oauth2_credentials', column: 'client_secret' },
  { table: 'auth_proxy_configs', column: 'private_key' },
  { table: 'activities', column: 'pending_parameters' },
] as const;

export type SealedColumn = (typeof ORGANIZATION_SEALED_COLUMNS)[number];

export interface SealedValueRow {
  id: string;
  organization_id: string;
  sealed: string | null;
}

export class SealedColumnsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * The next `limit` rows after `afterId`, by primary key: each read is bounded whatever the table's
   * size and however few of its values are still to re-seal (a filter in SQL would scan the whole
   * table in one statement when none is), and the walk visits each row once.
   */
  async page(at: SealedColumn, afterId: string, limit: number): Promise<SealedValueRow[]> {
    const { rows } = await sql<SealedValueRow>`
      SELECT id, organization_id, ${sql.ref(at.column)} AS sealed FROM ${sql.table(at.table)}
      WHERE id > ${afterId} ORDER BY id LIMIT ${limit}`.execute(this.db);
    return rows;
  }

  /** Replaces one sealed value, only if it still reads `from`; answers whether it did. */
  async replace(at: SealedColumn, id: string, from: string, to: string): Promise<boolean> {
    const r = await sql`UPDATE ${sql.table(at.table)} SET ${sql.ref(at.column)} = ${to} WHERE id = ${id} AND ${sql.ref(at.column)} = ${from}`.execute(this.db);
    return Number(r.numAffectedRows ?? 0) > 0;
  }
}
