// This process's audit stream (docs/design.md "The hot path"; the scheme is src/audit/chain.ts). Every transaction of the
// process that records audit entries seals them after the stream's head and commits under one
// in-process lock, so the stream's entries are contiguous and chained in commit order, with the head
// kept in memory: appending reads nothing, and no process ever waits for another's head.
//
// The lock covers only the end of a transaction (insert the sealed entries, commit). When a commit
// fails in a way that leaves its outcome unknown, the stream is abandoned and a new one begins, so a
// stream never has a gap or a doubt. Heads are signed into `audit_checkpoints` every few seconds
// while the process writes and when it stops.
import { randomUUID } from 'node:crypto';
import type { AuditCheckpointTable, AuditEntryTable } from './schema.js';

export type AuditEntryRow = AuditEntryTable;
export type AuditCheckpointRow = AuditCheckpointTable;

/** What an entry says before it is sealed (src/audit/record.ts builds these). */
export interface PendingAuditEntry {
  kind: string;
  organizationId: string | null;
  activityId: string | null;
  time: number;
  [field: string]: unknown;
}

export interface AuditHead {
  stream: string;
  seq: number;
  mac: string;
}

/** Supplied by src/audit once the deployment's keys are open: sealing and signing are not the store's. */
export interface AuditSealer {
  /** The mac a stream's first entry chains to. */
  readonly genesis: string;
  seal(head: AuditHead, entries: PendingAuditEntry[]): { rows: AuditEntryRow[]; head: AuditHead };
  /** A checkpoint row for a committed head. */
  checkpoint(head: AuditHead, now: number): AuditCheckpointRow;
  /** Told of every checkpoint written (the serving process logs them: a copy outside the database). */
  onCheckpoint?(row: AuditCheckpointRow): void;
}

export class AuditLane {
  private sealer: AuditSealer | undefined;
  private head: AuditHead | undefined;
  private tail: Promise<void> = Promise.resolve();
  /** Heads of streams written since their last checkpoint. */
  private readonly unsigned = new Map<string, AuditHead>();
  /** Entries committed since checkpoints were last taken, and how many call for one (0: time only). */
  private sinceCheckpoint = 0;
  private everyEntries = 0;
  private onDue: (() => void) | undefined;

  /**
   * `everyEntries` (SIGIL_AUDIT_CHECKPOINT_ENTRIES): once that many entries are committed since the
   * last checkpoints, `onDue` is called (outside the lane's lock) so that a process killed early
   * still leaves its checkpoints (docs/operator-guide.md "Audit trail and metrics").
   */
  attach(sealer: AuditSealer, opts: { everyEntries?: number; onDue?: () => void } = {}): void {
    this.sealer = sealer;
    this.everyEntries = opts.everyEntries ?? 0;
    this.onDue = opts.onDue;
    this.head = { stream: randomUUID(), seq: 0, mac: sealer.genesis };
  }

  /**
   * Seals `entries` after the head and runs `write(rows)`, which must insert them and commit; the
   * head moves only once that succeeded. Runs one at a time per process. Without entries, `write`
   * runs at once, outside the lock.
   */
  async commit<T>(entries: PendingAuditEntry[], write: (rows: AuditEntryRow[]) => Promise<T>): Promise<T> {
    if (entries.length === 0) return write([]);
    const sealer = this.sealer;
    if (!sealer || !this.head) throw new Error('audit entries cannot be recorded before the deployment is opened (AuditLane.attach)');
    let release!: () => void;
    const turn = this.tail;
    this.tail = new Promise<void>((r) => (release = r));
    await turn;
    try {
      const { rows, head } = sealer.seal(this.head, entries);
      try {
        const result = await write(rows);
        this.head = head;
        this.unsigned.set(head.stream, head);
        this.sinceCheckpoint += entries.length;
        if (this.everyEntries > 0 && this.sinceCheckpoint >= this.everyEntries && this.onDue) setImmediate(this.onDue);
        return result;
      } catch (err) {
        // The commit may or may not have happened: a new stream keeps every stream without doubt.
        if (this.head.seq > 0) this.unsigned.set(this.head.stream, this.head);
        this.head = { stream: randomUUID(), seq: 0, mac: sealer.genesis };
        throw err;
      }
    } finally {
      release();
    }
  }

  /** Checkpoint rows for every head committed since the last ones were taken. */
  takeCheckpoints(now: number): AuditCheckpointRow[] {
    if (!this.sealer) return [];
    const rows = [...this.unsigned.values()].map((h) => this.sealer!.checkpoint(h, now));
    this.unsigned.clear();
    this.sinceCheckpoint = 0;
    return rows;
  }

  /** Puts back heads whose checkpoints could not be written. */
  restoreCheckpoints(rows: AuditCheckpointRow[]): void {
    for (const r of rows) if (!this.unsigned.has(r.stream)) this.unsigned.set(r.stream, { stream: r.stream, seq: r.seq, mac: r.mac });
  }

  notify(rows: AuditCheckpointRow[]): void {
    for (const r of rows) this.sealer?.onCheckpoint?.(r);
  }
}
