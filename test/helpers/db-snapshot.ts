// Reads every row of every Sigil table but the append-only audit log (audit_log, audit_entries,
// audit_checkpoints: refusals are recorded there by design) and the rate-limit buckets (rate_limits:
// attempts, refused ones included, are counted there by design) straight from the database (SQLite
// file or PostgreSQL schema), so tests can prove that a refused request changed nothing at all.
import BetterSqlite3 from '../../src/store/sqlite-driver.js';
import pg from 'pg';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { SigilInstance } from './sigil.js';
import type { RawResponse } from './clients.js';

export type Snapshot = Record<string, unknown[]>;

export async function dbSnapshot(sigil: Pick<SigilInstance, 'dataDir' | 'databaseUrl'>): Promise<Snapshot> {
  const out: Snapshot = {};
  if (!sigil.databaseUrl) {
    const db = new BetterSqlite3(join(sigil.dataDir, 'sigil.sqlite'), { readonly: true, fileMustExist: true });
    try {
      const tables = db
        .prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'kysely_%' and name not in ('audit_log', 'audit_entries', 'audit_checkpoints', 'rate_limits') order by name")
        .all() as { name: string }[];
      for (const { name } of tables) out[name] = db.prepare(`select * from "${name}" order by 1`).all();
    } finally {
      db.close();
    }
    return out;
  }
  const u = new URL(sigil.databaseUrl);
  const schema = u.searchParams.get('schema')!;
  u.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: u.toString() });
  await client.connect();
  try {
    const tables = await client.query(
      "select table_name from information_schema.tables where table_schema = $1 and table_name not like 'kysely_%' and table_name not in ('audit_log', 'audit_entries', 'audit_checkpoints', 'rate_limits') order by table_name",
      [schema],
    );
    for (const { table_name } of tables.rows) {
      const rows = await client.query(`select * from "${schema}"."${table_name}" order by 1`);
      out[table_name] = rows.rows;
    }
  } finally {
    await client.end();
  }
  return out;
}

/**
 * Runs one statement straight on a test instance's database, bypassing Sigil (for tests that tamper
 * with rows as an attacker with database access would). `?` placeholders, in order.
 */
export async function execSql(sigil: Pick<SigilInstance, 'dataDir' | 'databaseUrl'>, text: string, params: unknown[] = []): Promise<any[]> {
  if (!sigil.databaseUrl) {
    const db = new BetterSqlite3(join(sigil.dataDir, 'sigil.sqlite'));
    try {
      const stmt = db.prepare(text);
      return stmt.reader ? stmt.all(...params) : (stmt.run(...params), []);
    } finally {
      db.close();
    }
  }
  const u = new URL(sigil.databaseUrl);
  const schema = u.searchParams.get('schema')!;
  u.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: u.toString(), options: `-c search_path=${schema}` });
  await client.connect();
  try {
    let n = 0;
    return (await client.query(text.replace(/\?/g, () => `$${++n}`), params)).rows;
  } finally {
    await client.end();
  }
}

/** Raw text of all stored values, for "no secret at rest" checks. */
export async function dbText(sigil: Pick<SigilInstance, 'dataDir' | 'databaseUrl'>): Promise<string> {
  return JSON.stringify(await dbSnapshot(sigil));
}

/**
 * A refusal exactly as the SDKs parse it (JSON `{code, message, details}` with the turnkeyErrorCode
 * first, docs/reference/api.md "Errors"), and every table as it was in `before`.
 */
export async function expectRefusedUnchanged(
  sigil: Pick<SigilInstance, 'dataDir' | 'databaseUrl'>,
  before: Snapshot,
  res: RawResponse,
  status: number,
  code: number,
  turnkeyErrorCode: string,
  message: RegExp,
): Promise<void> {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({
    code,
    message: expect.stringMatching(message),
    details: [{ '@type': 'type.googleapis.com/errors.v1.TurnkeyErrorDetail', turnkeyErrorCode }, ...(res.body.details?.slice(1) ?? [])],
  });
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  expect(await dbSnapshot(sigil)).toEqual(before);
}
