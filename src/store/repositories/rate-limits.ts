// Rate-limit token buckets (migration 013). SQL for the `rate_limits` table. Taking a token is one
// statement for all of a request's buckets: an INSERT ... ON CONFLICT DO UPDATE ... RETURNING that
// refills each bucket for the time since its last request, takes a token when at least one is there,
// and reports the level. PostgreSQL and SQLite both run it atomically per row, so any number of
// processes on one database share the buckets and never both take the last token.
//
// On SQLite the statement commits without an fsync (synchronous=NORMAL for just that statement):
// with synchronous=FULL a commit of its own costs ~0.7 ms of blocked event loop on this machine,
// more than the rest of a signing request. Losing the last refills in a power cut is harmless, WAL
// mode stays consistent, and the next durable commit (any activity) syncs these pages too.
import { SqliteAdapter, sql, type Kysely, type Selectable } from 'kysely';
import type { Database, RateLimitTable } from '../schema.js';

export type RateLimitRow = Selectable<RateLimitTable>;

export interface BucketRequest {
  bucket: string;
  /** Tokens per second. */
  rate: number;
  /** Capacity: the most requests that may pass in a burst. */
  burst: number;
}

export interface BucketState {
  bucket: string;
  /** Tokens left after this request. */
  tokens: number;
  allowed: boolean;
}

// The existing row is `rate_limits`, the proposed one `excluded` (same spelling on both dialects).
// A clock behind the last writer's (another process) refills nothing rather than going backwards.
const ELAPSED_MS = sql`(case when excluded.updated_at > rate_limits.updated_at then excluded.updated_at - rate_limits.updated_at else 0 end)`;
const LEVEL = sql`(rate_limits.tokens + ${ELAPSED_MS} * excluded.rate / 1000.0)`;
const REFILLED = sql`(case when ${LEVEL} > excluded.burst then excluded.burst else ${LEVEL} end)`;

export class RateLimitsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** Takes one token from each bucket that has one; creates missing buckets full (less this request). */
  async take(buckets: BucketRequest[], now: number): Promise<BucketState[]> {
    if (buckets.length === 0) return [];
    const rows = this.db.getExecutor().adapter instanceof SqliteAdapter && !this.db.isTransaction
      ? await this.db.connection().execute(async (conn) => {
          // The connection is held for the three statements, so no other commit runs unsynced.
          await sql`pragma synchronous = NORMAL`.execute(conn);
          try {
            return await this.upsert(conn, buckets, now);
          } finally {
            // The setting src/store/db.ts opens every SQLite database with.
            await sql`pragma synchronous = FULL`.execute(conn);
          }
        })
      : await this.upsert(this.db, buckets, now);
    return rows.map((r) => ({ bucket: r.bucket, tokens: Number(r.tokens), allowed: Number(r.allowed) === 1 }));
  }

  private upsert(db: Kysely<Database>, buckets: BucketRequest[], now: number) {
    return db
      .insertInto('rate_limits')
      .values(buckets.map((b) => ({ bucket: b.bucket, tokens: b.burst - 1, allowed: 1, rate: b.rate, burst: b.burst, updated_at: now })))
      .onConflict((oc) =>
        oc.column('bucket').doUpdateSet({
          tokens: sql<number>`case when ${REFILLED} >= 1 then ${REFILLED} - 1 else ${REFILLED} end`,
          allowed: sql<number>`case when ${REFILLED} >= 1 then 1 else 0 end`,
          rate: sql<number>`excluded.rate`,
          burst: sql<number>`excluded.burst`,
          updated_at: sql<number>`case when excluded.updated_at > rate_limits.updated_at then excluded.updated_at else rate_limits.updated_at end`,
        }),
      )
      .returning(['bucket', 'tokens', 'allowed'])
      .execute();
  }

  /** Removes buckets untouched since `before`: by then they are full again, the same as absent. */
  async prune(before: number): Promise<number> {
    const res = await this.db.deleteFrom('rate_limits').where('updated_at', '<', before).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
