// Group commit: write units submitted while a commit is in progress are gathered into the next
// transaction, so many concurrent requests share one durable commit (one fsync on SQLite) instead
// of paying for one each (DESIGN.md stack: "commits of concurrent requests grouped so they share one
// fsync"). Each unit runs inside its own savepoint: a unit that fails (say, a duplicate fingerprint)
// is rolled back alone and reported to its caller, while the others in the batch still commit.
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.js';

interface Unit<R> {
  run: (trx: Kysely<Database>) => Promise<R>;
  resolve: (value: R) => void;
  reject: (err: unknown) => void;
}

const MAX_BATCH = 256;

export class GroupCommit {
  private queue: Unit<any>[] = [];
  private running = false;

  constructor(private readonly db: Kysely<Database>) {}

  submit<R>(run: (trx: Kysely<Database>) => Promise<R>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ run, resolve, reject });
      // Start on the next turn of the event loop, so requests that reach this point in the same
      // turn share the commit; a commit blocks the loop (fsync), so waiting longer gains nothing.
      if (!this.running) {
        this.running = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
        try {
          await this.db.transaction().execute(async (trx) => {
            for (const unit of batch) {
              await sql`savepoint sigil_unit`.execute(trx);
              try {
                const value = await unit.run(trx);
                await sql`release savepoint sigil_unit`.execute(trx);
                outcomes.push({ ok: true, value });
              } catch (error) {
                await sql`rollback to savepoint sigil_unit`.execute(trx);
                await sql`release savepoint sigil_unit`.execute(trx);
                outcomes.push({ ok: false, error });
              }
            }
          });
        } catch (error) {
          // The commit itself failed: nothing in the batch is durable.
          for (const unit of batch) unit.reject(error);
          continue;
        }
        batch.forEach((unit, i) => {
          const o = outcomes[i];
          if (o.ok) unit.resolve(o.value);
          else unit.reject(o.error);
        });
      }
    } finally {
      this.running = false;
    }
  }
}
