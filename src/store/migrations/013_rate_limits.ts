// Migration 013: request rate limits (docs/reference/api.md "Limits"; docs/operator-guide.md). One
// token bucket per row, shared by every Sigil process on the database: `bucket` names what is
// limited ('org:<organizationId>' or 'key:<organizationId>:<public key>'), `tokens` is the level
// after the last request, `updated_at` when it was computed. The bucket's rate and capacity are
// stored beside it because the single upsert that takes a token (src/store/repositories/rate-limits.ts)
// reads them from the proposed row (`excluded.rate`, `excluded.burst`). No index on updated_at: every
// request rewrites it, and pruning once a minute can scan a table of one row per active caller.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rate_limits')
    .addColumn('bucket', 'text', (c) => c.primaryKey())
    .addColumn('tokens', 'double precision', (c) => c.notNull())
    // 1 when the last request took a token, 0 when it was refused.
    .addColumn('allowed', 'integer', (c) => c.notNull())
    // Tokens added per second, and the most the bucket holds.
    .addColumn('rate', 'double precision', (c) => c.notNull())
    .addColumn('burst', 'double precision', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}
