// Audit sinks (docs/operator-guide.md "Audit trail and metrics"): copies of the log's signed checkpoints outside the
// database, as Vault's audit devices are, so that someone able to write the database cannot cut a
// stream's end together with the checkpoints that cover it unnoticed: `sigil audit verify
// --checkpoints <sink file>` checks the streams against these copies too. The file sink appends one
// JSON line per checkpoint, in the export's `{"checkpoint": {…}}` form, flushed to disk each time; the
// syslog sink sends it as an RFC 5424 message (UDP), the HTTP sink POSTs it as JSON. Network sinks
// send in the background, in order, never while a database transaction waits on them.
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { createSocket } from 'node:dgram';
import { hostname } from 'node:os';
import type { AuditCheckpointRow } from '../store/index.js';

export interface AuditSink {
  write(row: AuditCheckpointRow): void;
  /** Stops the sink once what it was given is delivered (or given up on). */
  close(): Promise<void> | void;
  /** False since a checkpoint failed to reach it, until one does (SIGIL_AUDIT_SINK_FAIL_CLOSED). */
  accepting(): boolean;
}

/** A checkpoint as every sink writes it: the export's `{"checkpoint": {…}}` form. */
function line(c: AuditCheckpointRow): string {
  return JSON.stringify({ checkpoint: { stream: c.stream, seq: c.seq, mac: c.mac, signature: c.signature, createdAt: c.created_at } });
}

/** Every configured sink gets every checkpoint. */
export function allSinks(sinks: AuditSink[]): AuditSink | undefined {
  if (sinks.length === 0) return undefined;
  if (sinks.length === 1) return sinks[0];
  return {
    write(c) {
      for (const s of sinks) s.write(c);
    },
    async close() {
      await Promise.all(sinks.map((s) => s.close()));
    },
    accepting: () => sinks.some((s) => s.accepting()),
  };
}

/**
 * Sends checkpoints one after the other through `send`, in the background; a failed send is reported
 * through `onError` and the next one is still tried. close() waits for the queue, at most `closeMs`.
 */
function queued(send: (text: string) => Promise<void>, onError: (err: unknown) => void, closeMs = 5_000): AuditSink {
  let tail: Promise<void> = Promise.resolve();
  let open = true;
  let ok = true;
  // While the sink refuses, the checkpoint it refused is offered again every second: with the fail-closed
  // option no new entries (so no new checkpoints) arrive to show that it accepts again.
  let retry: NodeJS.Timeout | undefined;
  const deliver = (text: string) => {
    tail = tail
      .then(() => send(text))
      .then(
        () => {
          ok = true;
        },
        (err) => {
          ok = false;
          onError(err);
          if (open && !retry) {
            retry = setTimeout(() => {
              retry = undefined;
              if (!ok) deliver(text);
            }, 1_000);
            retry.unref();
          }
        },
      );
  };
  return {
    accepting: () => ok,
    write(c) {
      if (!open) return;
      deliver(line(c));
    },
    async close() {
      open = false;
      clearTimeout(retry);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([tail, new Promise<void>((r) => (timer = setTimeout(r, closeMs)))]);
      clearTimeout(timer);
    },
  };
}

/** POSTs each checkpoint as JSON to `url` (SIGIL_AUDIT_SINK_HTTP); any 2xx answer accepts it. */
export function httpSink(url: string, onError: (err: unknown) => void): AuditSink {
  return queued(async (text) => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: text, signal: AbortSignal.timeout(5_000) });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`the audit HTTP sink ${url} answered ${res.status}`);
  }, onError);
}

/**
 * Sends each checkpoint to a syslog server (SIGIL_AUDIT_SINK_SYSLOG, `udp://host:port`) as an RFC 5424
 * message: facility log audit (13), severity informational (6), app-name sigil, msgid audit.
 */
export function syslogSink(url: string, onError: (err: unknown) => void): AuditSink {
  const u = new URL(url);
  if (u.protocol !== 'udp:' || !u.port) throw new Error(`SIGIL_AUDIT_SINK_SYSLOG must be udp://host:port, got ${url}`);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const socket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
  socket.unref();
  const me = hostname() || '-';
  const sink = queued(
    (text) =>
      new Promise<void>((resolve, reject) => {
        const msg = `<${13 * 8 + 6}>1 ${new Date().toISOString()} ${me} sigil ${process.pid} audit - ${text}`;
        socket.send(msg, Number(u.port), host, (err) => (err ? reject(err) : resolve()));
      }),
    onError,
  );
  return {
    accepting: () => sink.accepting(),
    write: (c) => sink.write(c),
    async close() {
      await sink.close();
      socket.close();
    },
  };
}

/** An append-only file (opened with O_APPEND; never truncated or rewritten by Sigil). */
export function fileSink(path: string): AuditSink {
  const fd = openSync(path, 'a', 0o600);
  let open = true;
  let ok = true;
  return {
    accepting: () => ok,
    write(c) {
      if (!open) return;
      try {
        writeSync(fd, `${line(c)}\n`);
        fsyncSync(fd);
        ok = true;
      } catch (err) {
        ok = false;
        throw err;
      }
    },
    close() {
      if (open) closeSync(fd);
      open = false;
    },
  };
}
