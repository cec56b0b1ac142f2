// SQL for the `audit_log` table (migration 009; issue 8 part 5). The store knows nothing of the
// hashing: `append` hands the chosen seq and the previous entry's hash to a builder supplied by
// src/audit and stores what it returns. Appends run inside the caller's transaction.
import { sql, type Kysely, type Selectable } from 'kysely';
import { isUniqueViolation } from '../db.js';
import type { AuditLogTable, Database } from '../schema.js';

export type AuditLogRow = Selectable<AuditLogTable>;

/** Builds the row for the given seq, chained to the previous entry's hash (undefined for the first). */
export type AuditRowBuilder = (seq: number, prevHash: string | undefined) => AuditLogRow;

const MAX_ATTEMPTS = 100;

export class AuditLogRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async last(): Promise<{ seq: number; hash: string } | undefined> {
    const row = await this.db.selectFrom('audit_log').select(['seq', 'hash']).orderBy('seq', 'desc').limit(1).executeTakeFirst();
    return row ? { seq: Number(row.seq), hash: row.hash } : undefined;
  }

  /**
   * Appends one entry as the last seq + 1. Must run inside a transaction (Store.transaction or
   * groupCommit): each attempt sits in a savepoint, so losing the race for a seq to a concurrent
   * appender (a unique violation on PostgreSQL once the winner commits) undoes only that attempt,
   * and the retry reads the winner's entry as its predecessor.
   */
  async append(build: AuditRowBuilder): Promise<AuditLogRow> {
    for (let attempt = 1; ; attempt++) {
      await sql`savepoint sigil_audit`.execute(this.db);
      try {
        const last = await this.last();
        const row = build((last?.seq ?? 0) + 1, last?.hash);
        await this.db.insertInto('audit_log').values(row).execute();
        await sql`release savepoint sigil_audit`.execute(this.db);
        return row;
      } catch (err) {
        await sql`rollback to savepoint sigil_audit`.execute(this.db);
        await sql`release savepoint sigil_audit`.execute(this.db);
        if (!isUniqueViolation(err) || attempt >= MAX_ATTEMPTS) throw err;
      }
    }
  }

  /** Entries after `afterSeq` in seq order, at most `limit` of them (for export in pages). */
  async list(afterSeq: number, limit: number): Promise<AuditLogRow[]> {
    const rows = await this.db.selectFrom('audit_log').selectAll().where('seq', '>', afterSeq).orderBy('seq', 'asc').limit(limit).execute();
    return rows.map((r) => ({ ...r, seq: Number(r.seq), created_at: Number(r.created_at) }));
  }
}
