// Audit sinks (docs/operator-guide.md "Audit trail and metrics"): copies of the log's signed checkpoints outside the
// database, as Vault's audit devices are, so that someone able to write the database cannot cut a
// stream's end together with the checkpoints that cover it unnoticed: `sigil audit verify
// --checkpoints <sink file>` checks the streams against these copies too. The file sink appends one
// JSON line per checkpoint, in the export's `{"checkpoint": {…}}` form, flushed to disk each time.
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import type { AuditCheckpointRow } from '../store/index.js';

export interface AuditSink {
  write(row: AuditCheckpointRow): void;
  close(): void;
}

/** An append-only file (opened with O_APPEND; never truncated or rewritten by Sigil). */
export function fileSink(path: string): AuditSink {
  const fd = openSync(path, 'a', 0o600);
  let open = true;
  return {
    write(c) {
      if (!open) return;
      writeSync(fd, `${JSON.stringify({ checkpoint: { stream: c.stream, seq: c.seq, mac: c.mac, signature: c.signature, createdAt: c.created_at } })}\n`);
      fsyncSync(fd);
    },
    close() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}
