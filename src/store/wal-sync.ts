// Durable commits on SQLite without blocking the event loop ("better-sqlite3 commits block
// the event loop"; docs/design.md: "no synchronous crypto or I/O longer than a few milliseconds runs on
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

/** What a PASSIVE checkpoint reported: frames in the log, and how many of them are in the database file. */
export interface CheckpointResult {
  log: number;
  checkpointed: number;
}

/**
 * Frames the log may hold before this process's writers hold back for a moment so that it can start
 * over (~16 MB of 4 KiB pages). Without it the log never starts over under steady load: SQLite reuses
 * the log from its beginning only when a writer finds every frame copied into the database file,
 * and a PASSIVE checkpoint running beside a writer that commits every few milliseconds never
 * catches the last frames up. Seen here: 244 → 355 MB in 4 s of signing, and every commit then
 * wrote to fresh blocks of a growing file, whose sync must also commit the file system's metadata.
 */
export const LOG_RESTART_FRAMES = 4096;

/** How often this process's log started over, and the catch-up checkpoints that came first. */
export interface CheckpointerStats {
  /** Checkpoints run beside the writers once a restart was due, to copy what the last periodic one left. */
  catchUps: number;
  /** Checkpoints run with every writer of this process held back, after which the log starts over. */
  handOffs: number;
}

/**
 * A worker thread that checkpoints the log into the database file every `intervalMs` (PASSIVE: it
 * never waits for readers or writers), so no commit on the event loop pays for one. When the log has
 * grown past `restartFrames`, the log is brought up to date in two steps. First a catch-up
 * checkpoint beside the writers copies what was written since the last periodic run (up to
 * `intervalMs` of writes). Then every writer waits for `quiet()`, which runs one more checkpoint with
 * nothing written meanwhile: it copies only what was committed during the catch-up, and the next
 * commit starts the log over. Under the bench's signing load (about one restart a second, each
 * delaying every request in flight) writers held for the whole copy waited 2.5–14.2 ms, median 5.9
 * (34 restarts); held for the rest only, 2.1–10.5 ms, median 4.8 (26). What remains hardly depends on
 * how much is copied: the checkpoint's two syncs and the hand-off to a worker thread on busy cores.
 * The log can outgrow its limit by what is written between two looks: looking every second, the
 * bench's SQLite rows left it at the 64 MB journal_size_limit; every 250 ms, at 23 MB.
 */
export class Checkpointer {
  private readonly worker: Worker;
  private due = false;
  private waiting: ((r: CheckpointResult | undefined) => void)[] = [];
  private stopped: Promise<void> | undefined;
  private handOff: Promise<unknown> | undefined;
  private catchingUp: Promise<unknown> | undefined;
  /** A catch-up finished since the last hand-off: the next quiet() holds the writers. */
  private caughtUp = false;
  readonly stats: CheckpointerStats = { catchUps: 0, handOffs: 0 };

  constructor(file: string, intervalMs = 250, private readonly restartFrames = LOG_RESTART_FRAMES) {
    this.worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const Database = require(workerData.driver);
       const db = new Database(workerData.file);
       db.pragma('busy_timeout = 1000');
       const passive = () => { try { return db.pragma('wal_checkpoint(PASSIVE)')[0]; } catch { return undefined; } };
       const timer = setInterval(() => parentPort.postMessage({ kind: 'status', result: passive() }), workerData.intervalMs);
       parentPort.on('message', (m) => {
         if (m === 'checkpoint') return parentPort.postMessage({ kind: 'checkpointed', result: passive() });
         clearInterval(timer); passive(); db.close(); parentPort.postMessage({ kind: 'closed' });
       });`,
      { eval: true, workerData: { driver: sqliteDriverPath, file, intervalMs } },
    );
    this.worker.unref();
    this.worker.on('message', (m: { kind: string; result?: CheckpointResult }) => {
      if (m.kind === 'status') this.due = (m.result?.log ?? 0) >= this.restartFrames;
      else if (m.kind === 'checkpointed') this.waiting.shift()?.(m.result);
    });
    // A worker that is gone answers nobody: whoever waits goes on without the checkpoint.
    this.worker.once('exit', () => {
      for (const w of this.waiting.splice(0)) w(undefined);
    });
  }

  /** The log has grown past the frames it may hold: a checkpoint with no commit beside it is due. */
  private restartDue(): boolean {
    return this.due && !this.stopped;
  }

  /**
   * What every writer of this process awaits before it begins a transaction: the hand-off now
   * running, or one started now if it is due and the catch-up before it has finished; undefined when
   * there is none (a due restart whose catch-up is still copying holds nobody). Both the group commit
   * and the one-off transactions (create_wallet's quota reservation, among others) wait, so none
   * commits while the checkpoint copies the rest of the log.
   */
  quiet(): Promise<unknown> | undefined {
    if (this.handOff || !this.restartDue()) return this.handOff;
    if (!this.caughtUp) {
      // Writers go on while the catch-up copies the bulk of the log; a later quiet() holds them.
      if (!this.catchingUp) {
        this.stats.catchUps++;
        this.catchingUp = this.checkpoint().finally(() => {
          this.catchingUp = undefined;
          this.caughtUp = true;
        });
      }
      return undefined;
    }
    this.caughtUp = false;
    // Not due again until a periodic look finds the log (started over or not) past its limit.
    this.due = false;
    this.stats.handOffs++;
    this.handOff = this.checkpoint().finally(() => {
      this.handOff = undefined;
    });
    return this.handOff;
  }

  /** Runs a PASSIVE checkpoint now; resolves with what it reported once it is done. */
  private checkpoint(): Promise<CheckpointResult | undefined> {
    if (this.stopped) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.worker.postMessage('checkpoint');
    });
  }

  stop(): Promise<void> {
    this.stopped ??= new Promise<void>((resolve) => {
      const done = () => void this.worker.terminate().then(() => resolve());
      this.worker.on('message', (m: { kind: string }) => {
        if (m.kind === 'closed') done();
      });
      this.worker.once('error', () => resolve());
      this.worker.once('exit', () => resolve());
      this.worker.postMessage('stop');
    });
    return this.stopped;
  }
}
