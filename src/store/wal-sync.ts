// Durable commits on SQLite without blocking the event loop (issue 14: "better-sqlite3 commits block
// the event loop"; DESIGN.md: "no synchronous crypto or I/O longer than a few milliseconds runs on
// the event loop").
//
// With `synchronous = FULL` every COMMIT waits for an fsync of the write-ahead log on the JavaScript
// thread. Instead the writing connection commits with `synchronous = NORMAL` (the log is written
// but not yet synced) and the store then syncs the log itself, on libuv's thread pool, before it
// tells anyone the commit happened. What a client is told is committed is therefore on disk exactly
// as with FULL; meanwhile the event loop serves other requests, and commits that land while a sync
// runs share the next one. Checkpoints (copying the log into the database file, with its own
// fsyncs) run on a worker thread, not on a commit.
import { open, type FileHandle } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { sqliteDriverPath } from './sqlite-driver.js';

export class WalSync {
  private handle: Promise<FileHandle> | undefined;
  private running: Promise<void> | undefined;
  private next: Promise<void> | undefined;

  constructor(private readonly walFile: string) {}

  /** Resolves once everything committed before the call is on disk. */
  sync(): Promise<void> {
    if (!this.running) return this.start();
    // A sync already running may have begun before this commit: the one after it covers it.
    this.next ??= this.running.then(
      () => this.start(),
      () => this.start(),
    );
    return this.next;
  }

  /**
   * Resolves once everything committed so far is on disk. Every commit asks for a sync at once, so
   * the last sync asked for (queued or running) covers them all.
   */
  settled(): Promise<void> {
    const last = this.next ?? this.running;
    return last ? last.catch(() => undefined) : Promise.resolve();
  }

  /** The sync now running, if any. */
  inFlight(): Promise<void> | undefined {
    return this.running;
  }

  private start(): Promise<void> {
    this.next = undefined;
    const run = (async () => {
      this.handle ??= open(this.walFile, 'r+');
      await (await this.handle).datasync();
    })();
    this.running = run;
    void run.finally(() => {
      if (this.running === run) this.running = undefined;
    }).catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    await this.settled();
    await this.settled();
    if (this.handle) await (await this.handle).close();
  }
}

/**
 * A worker thread that checkpoints the log into the database file every `intervalMs` (PASSIVE: it
 * never waits for readers or writers), so no commit on the event loop pays for one.
 */
export function startCheckpointer(file: string, intervalMs = 1000): { stop(): Promise<void> } {
  const driver = sqliteDriverPath;
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const Database = require(workerData.driver);
     const db = new Database(workerData.file);
     db.pragma('busy_timeout = 1000');
     const timer = setInterval(() => { try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} }, workerData.intervalMs);
     parentPort.on('message', () => { clearInterval(timer); try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} db.close(); parentPort.postMessage('closed'); });`,
    { eval: true, workerData: { driver, file, intervalMs } },
  );
  worker.unref();
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        worker.once('message', () => void worker.terminate().then(() => resolve()));
        worker.once('error', () => resolve());
        worker.once('exit', () => resolve());
        worker.postMessage('stop');
      }),
  };
}
