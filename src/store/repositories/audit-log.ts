// SQL for the audit log: the per-process streams (`audit_entries`, `audit_checkpoints`, migration 016)
// and the first single chain (`audit_log`, migration 009), read for export and verification. The
// store knows nothing of hashing or keys: inside a transaction `append` only collects what happened,
// and the transaction seals and inserts the entries when it commits (src/store/audit-lane.ts).
import type { Kysely, Selectable } from 'kysely';
import type { AuditLogTable, Database } from '../schema.js';
import type { AuditCheckpointRow, AuditEntryRow, PendingAuditEntry } from '../audit-lane.js';

export type AuditLogRow = Selectable<AuditLogTable>;

const numeric = <T extends { seq: number; created_at: number }>(r: T): T => ({ ...r, seq: Number(r.seq), created_at: Number(r.created_at) });

export class AuditLogRepo {
  constructor(
    private readonly db: Kysely<Database>,
    /** The entries the enclosing transaction will seal at commit; absent outside a transaction. */
    private readonly pending?: PendingAuditEntry[],
  ) {}

  /** Records an entry in the enclosing transaction (Store.transaction or a grouped write). */
  append(entry: PendingAuditEntry): void {
    if (!this.pending) throw new Error('audit entries are appended inside a transaction');
    this.pending.push(entry);
  }

  async insertEntries(rows: AuditEntryRow[]): Promise<void> {
    if (rows.length > 0) await this.db.insertInto('audit_entries').values(rows).execute();
  }

  async insertCheckpoints(rows: AuditCheckpointRow[]): Promise<void> {
    if (rows.length > 0) await this.db.insertInto('audit_checkpoints').values(rows).execute();
  }

  /** Stream entries after `after` in (stream, seq) order, at most `limit` (export and verify read in pages). */
  async listEntries(after: { stream: string; seq: number } | undefined, limit: number): Promise<AuditEntryRow[]> {
    let q = this.db.selectFrom('audit_entries').selectAll();
    if (after) q = q.where((eb) => eb.or([eb('stream', '>', after.stream), eb.and([eb('stream', '=', after.stream), eb('seq', '>', after.seq)])]));
    const rows = await q.orderBy('stream').orderBy('seq').limit(limit).execute();
    return rows.map(numeric);
  }

  async listCheckpoints(): Promise<AuditCheckpointRow[]> {
    const rows = await this.db.selectFrom('audit_checkpoints').selectAll().orderBy('stream').orderBy('seq').execute();
    return rows.map(numeric);
  }

  /** Entries of the first single chain after `afterSeq` in seq order, at most `limit`. */
  async listLegacy(afterSeq: number, limit: number): Promise<AuditLogRow[]> {
    const rows = await this.db.selectFrom('audit_log').selectAll().where('seq', '>', afterSeq).orderBy('seq', 'asc').limit(limit).execute();
    return rows.map(numeric);
  }
}
