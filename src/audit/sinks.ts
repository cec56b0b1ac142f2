// Audit sinks (docs/operator-guide.md "Audit trail and metrics"): copies of the log's signed checkpoints outside the
// database, as Vault's audit devices are, so that someone able to write the database cannot cut a
// stream's end together with the checkpoints that cover it unnoticed: `sigil audit verify
// --checkpoints <sink file>` checks the streams against these copies too. The file sink appends one
// JSON line per checkpoint, in the export's `{"checkpoint": {…}}` form, flushed to disk each time; the
// syslog sink sends it as an RFC 5424 message (UDP, or TCP framed as RFC 6587 says), the HTTP sink POSTs it as JSON. Network sinks
// send in the background, in order, never while a database transaction waits on them.
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { createSocket } from 'node:dgram';
import { createConnection, type Socket } from 'node:net';
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
 * Sends each checkpoint to a syslog server (SIGIL_AUDIT_SINK_SYSLOG) as an RFC 5424 message: facility
 * log audit (13), severity informational (6), app-name sigil, msgid audit. `udp://host:port` sends one
 * datagram per message; `tcp://host:port` keeps one connection and frames each message by octet
 * counting (RFC 6587: its length in bytes, a space, the message), reconnecting after an error: in
 * order, without a datagram's size limit, and a server that is down is seen as refusing (fail closed)
 * where UDP would drop messages silently.
 */
export function syslogSink(url: string, onError: (err: unknown) => void): AuditSink {
  const u = new URL(url);
  if ((u.protocol !== 'udp:' && u.protocol !== 'tcp:') || !u.port) throw new Error(`SIGIL_AUDIT_SINK_SYSLOG must be udp://host:port or tcp://host:port, got ${url}`);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const transport = u.protocol === 'tcp:' ? tcpTransport(host, Number(u.port)) : udpTransport(host, Number(u.port));
  const me = hostname() || '-';
  const sink = queued((text) => transport.send(Buffer.from(`<${13 * 8 + 6}>1 ${new Date().toISOString()} ${me} sigil ${process.pid} audit - ${text}`)), onError);
  return {
    accepting: () => sink.accepting(),
    write: (c) => sink.write(c),
    async close() {
      await sink.close();
      transport.close();
    },
  };
}

interface SyslogTransport {
  send(message: Buffer): Promise<void>;
  close(): void;
}

function udpTransport(host: string, port: number): SyslogTransport {
  const socket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
  socket.unref();
  return {
    send: (message) => new Promise<void>((resolve, reject) => socket.send(message, port, host, (err) => (err ? reject(err) : resolve()))),
    close: () => socket.close(),
  };
}

/** One connection at a time, opened on the first message and again after it closed or failed. */
function tcpTransport(host: string, port: number): SyslogTransport {
  let current: Promise<Socket> | undefined;
  const connection = (): Promise<Socket> => {
    if (current) return current;
    const socket = createConnection({ host, port });
    const connected = new Promise<Socket>((resolve, reject) => {
      const fail = (err: Error) => {
        socket.destroy();
        reject(err);
      };
      socket.setTimeout(5_000, () => fail(new Error(`the syslog server ${host}:${port} did not answer in 5 s`)));
      socket.once('error', fail);
      socket.once('connect', () => {
        socket.setTimeout(0);
        socket.off('error', fail);
        socket.setNoDelay(true);
        socket.unref();
        resolve(socket);
      });
    });
    current = connected;
    // Closed or broken, by either side: the next message connects again.
    socket.on('error', () => socket.destroy());
    socket.once('close', () => {
      if (current === connected) current = undefined;
    });
    return connected;
  };
  return {
    async send(message) {
      const socket = await connection();
      await new Promise<void>((resolve, reject) =>
        socket.write(Buffer.concat([Buffer.from(`${message.length} `), message]), (err) => {
          if (!err) return resolve();
          socket.destroy();
          reject(err);
        }),
      );
    },
    close() {
      void current?.then(
        (s) => s.end(),
        () => undefined,
      );
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
