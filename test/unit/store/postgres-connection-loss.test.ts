// A PostgreSQL connection lost while a request holds it (src/store/postgres-target.ts HeardClient; issue
// 34): node-postgres emits 'error' on the client, and while Kysely has it checked out from the pool
// nobody listens, so the process ended (seen under a failover with the primary killed mid-transaction).
// Here the backend of a transaction's connection is terminated between two of its statements, on the
// store's own pools, for a one-host URL and a multi-host one: the process lives, the transaction fails
// with the connection's error (which the HTTP layer answers 503), and the next one runs on a new
// connection. PostgreSQL only (SIGIL_TEST_DATABASE_URL).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../../src/store/db.js';
import { dropSchema } from '../../helpers/sigil.js';

const live = process.env.SIGIL_TEST_DATABASE_URL;
// Made only when the tests run: on the SQLite pass they are skipped, and so is afterAll, which left
// an empty directory behind on every such pass.
const dataDir = live ? mkdtempSync(join(tmpdir(), 'sigil-conn-loss-')) : '';
const schemas: string[] = [];

afterAll(async () => {
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  for (const url of schemas) await dropSchema(url);
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

async function terminate(pid: number): Promise<void> {
  const admin = new pg.Client({ connectionString: live });
  await admin.connect();
  try {
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
  } finally {
    await admin.end();
  }
}

describe.skipIf(!live)('a connection lost while a transaction holds it', () => {
  for (const shape of ['one host', 'several hosts, read-write'] as const) {
    it(`fails that transaction and leaves the process serving (${shape})`, async () => {
      const u = new URL(live!);
      u.searchParams.set('schema', `sigil_test_${randomBytes(6).toString('hex')}`);
      schemas.push(u.toString());
      // The multi-host form lists a host that refuses first, as a dead primary would be.
      const databaseUrl = shape === 'one host' ? u.toString() : u.toString().replace(`@${u.host}`, `@127.0.0.1:${await closedPort()},${u.host}`).concat('&target_session_attrs=read-write');
      const opened = await openDatabase({ dataDir, databaseUrl });
      try {
        const failed = opened.db.transaction().execute(async (trx) => {
          const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx);
          await terminate(rows[0]!.pid);
          // Between two statements the connection is idle: its loss arrives as an 'error' event only.
          await new Promise((r) => setTimeout(r, 300));
          await sql`SELECT 1`.execute(trx);
        });
        // One of the messages src/http/errors.ts answers with 503.
        await expect(failed).rejects.toThrow(/^(Connection terminated|Client has encountered a connection error)/);
        const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(opened.db);
        expect(rows).toEqual([{ one: 1 }]);
      } finally {
        await opened.raw.close();
        await opened.db.destroy();
        await opened.backgroundDb?.destroy();
      }
    });
  }
});
