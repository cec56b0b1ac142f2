// The SQLite write-ahead log stays bounded under steady load (src/store/wal-sync.ts
// Checkpointer). SQLite starts its log over only when a writer finds every frame already copied into
// the database file, which a checkpoint running beside a writer that commits every few milliseconds
// never achieves: before the restart hand-off the log of a signing server grew by ~25 MB a second for
// as long as the load lasted. Here clients commit back to back through the group commit, as requests
// do, and in transactions of their own, with a small frame limit so the test writes little; the log
// must stay a fraction of what was written, and every row must be there afterwards. Embedded store
// only (PostgreSQL has no such log).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/index.js';
import BetterSqlite3 from '../../src/store/sqlite-driver.js';
import { Checkpointer } from '../../src/store/wal-sync.js';
import { execSql } from '../helpers/db-snapshot.js';

const CLIENTS = 16;
const PER_CLIENT = 150;
// Each value fills most of a 4 KiB page, so every unit writes at least one page of the log.
const VALUE = 'v'.repeat(3000);

let store: Store;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'sigil-log-restart-'));
  store = await Store.open({ dataDir, checkpoints: { intervalMs: 10, restartFrames: 32 } });
});

afterAll(async () => {
  await store?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe.skipIf(Boolean(process.env.SIGIL_TEST_DATABASE_URL))('SQLite log under steady writes', () => {
  it('starts over instead of growing while commits never pause, and keeps every row', async () => {
    // Half the clients commit through the group commit, half in transactions of their own (as
    // create_wallet's quota reservation does beside its grouped commit): the log stays bounded with
    // both kinds of writer committing at once.
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        for (let i = 0; i < PER_CLIENT; i++) {
          const key = `log-restart ${c} ${i}`;
          if (c % 2 === 0) await store.commitRecords({ writes: (repos) => repos.meta.insert(key, VALUE) });
          else await store.transaction((repos) => repos.meta.insert(key, VALUE));
        }
      }),
    );
    const units = CLIENTS * PER_CLIENT;
    // At least a page per unit went through the log; had it never started over it would hold them
    // all. A PASSIVE checkpoint (which waits for nobody) reports how many frames it holds now.
    // It reports -1 while the store's own checkpointer holds the log: ask again.
    let log = -1;
    for (let i = 0; i < 100 && log < 0; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 20));
      [{ log }] = await execSql({ dataDir, databaseUrl: undefined }, 'PRAGMA wal_checkpoint(PASSIVE)');
    }
    expect(log).toBeGreaterThan(0);
    expect(log).toBeLessThan(units / 4);
    const rows = await execSql({ dataDir, databaseUrl: undefined }, `SELECT count(*) AS n FROM meta WHERE key LIKE 'log-restart %'`);
    expect(Number(rows[0].n)).toBe(units);
    const check = await execSql({ dataDir, databaseUrl: undefined }, 'PRAGMA integrity_check');
    expect(check[0].integrity_check).toBe('ok');
  }, 120_000);
});

describe('SQLite log restart in two steps', () => {
  it('copies the bulk of the log beside the writers before it holds them, and every hand-off follows a catch-up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sigil-log-catch-up-'));
    const file = join(dir, 'log.sqlite');
    const db = new BetterSqlite3(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const checkpointer = new Checkpointer(file, 5, 32);
    const WRITES = 1500;
    let heldBy = 0;
    let passedWhileCatchingUp = 0;
    try {
      // The worker thread opens the database before it reports anything.
      await new Promise((r) => setTimeout(r, 300));
      for (let i = 0; i < WRITES; i++) {
        const handOff = checkpointer.quiet();
        if (handOff) {
          heldBy++;
          await handOff;
        } else if (checkpointer.stats.catchUps > checkpointer.stats.handOffs) {
          // A restart is due and its catch-up is copying (a finished one would have held us): this
          // writer was not held.
          passedWhileCatchingUp++;
        }
        insert.run(VALUE);
        // Let the worker's reports and the catch-up's answer arrive, as an event loop serving requests
        // does between commits (the worker looks every 5 ms).
        await new Promise((r) => (i % 10 === 9 ? setTimeout(r, 1) : setImmediate(r)));
      }
      const { catchUps, handOffs } = checkpointer.stats;
      expect(handOffs).toBeGreaterThan(0);
      // Each hand-off came after a catch-up of its own; at most one catch-up has no hand-off yet.
      expect(catchUps).toBeGreaterThanOrEqual(handOffs);
      expect(catchUps).toBeLessThanOrEqual(handOffs + 1);
      expect(heldBy).toBeGreaterThan(0);
      expect(passedWhileCatchingUp).toBeGreaterThan(0);
      const [{ log }] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
      expect(log).toBeLessThan(WRITES / 4);
      expect((db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n).toBe(WRITES);
    } finally {
      await checkpointer.stop();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
