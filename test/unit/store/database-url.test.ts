// The multi-host DATABASE_URL as libpq spells it (src/store/database-url.ts, docs/operator-guide.md
// "PostgreSQL with a standby"): the host list, target_session_attrs and Sigil's schema parameter are
// read, each host's URL is one node-postgres reads as that host alone, bad input is refused with a
// message naming what is wrong. With SIGIL_TEST_DATABASE_URL set, the host choice
// (src/store/postgres-target.ts) runs against the real server: a host that refuses and a host whose
// sessions are read-only are passed over.
import { createServer } from 'node:net';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { parseDatabaseUrl, type PostgresHost } from '../../../src/store/database-url.js';
import { HostTarget } from '../../../src/store/postgres-target.js';

/** What node-postgres itself makes of a URL (its own parser, not ours). */
function asPg(url: string) {
  const c = new pg.Client({ connectionString: url });
  return { host: c.host, port: c.port, user: c.user, database: c.database, password: (c as unknown as { password: string }).password };
}

describe('parseDatabaseUrl', () => {
  it('reads the host list, target_session_attrs and schema of a libpq multi-host URL', () => {
    const u = parseDatabaseUrl('postgres://sigil:s%40cret@db1.internal:5432,db2.internal:5433,[fd00::2]/sigil?target_session_attrs=read-write&schema=tenant_a&sslmode=disable');
    expect(u.hosts).toEqual([{ host: 'db1.internal', port: 5432 }, { host: 'db2.internal', port: 5433 }, { host: 'fd00::2' }]);
    expect(u.targetSessionAttrs).toBe('read-write');
    expect(u.schema).toBe('tenant_a');
    expect(u.location).toBe('postgres://sigil@db1.internal:5432,db2.internal:5433,[fd00::2]/sigil?sslmode=disable');
    expect(u.location).not.toContain('cret');
    // Each host's URL is what node-postgres reads as that one host, with the same user, password and database.
    expect(asPg(u.forHost(u.hosts[1]))).toEqual({ host: 'db2.internal', port: 5433, user: 'sigil', database: 'sigil', password: 's@cret' });
    expect(asPg(u.forHost(u.hosts[2]))).toMatchObject({ host: 'fd00::2', port: 5432 });
    expect(u.forHost(u.hosts[0])).not.toMatch(/target_session_attrs|schema=/);
  });

  it('keeps a one-host URL as node-postgres read it before', () => {
    const u = parseDatabaseUrl('postgresql://postgres@127.0.0.1:5432/test');
    expect(u.hosts).toEqual([{ host: '127.0.0.1', port: 5432 }]);
    expect(u.targetSessionAttrs).toBe('any');
    expect(u.schema).toBeUndefined();
    expect(u.forHost(u.hosts[0])).toBe('postgresql://postgres@127.0.0.1:5432/test');
    const none = parseDatabaseUrl('postgres:///sigil?schema=s1');
    expect(none.hosts).toEqual([]);
    expect(none.forHost(undefined)).toBe('postgres:///sigil');
    expect(parseDatabaseUrl('postgres://u@%2Fvar%2Frun%2Fpostgresql/db').hosts).toEqual([{ host: '/var/run/postgresql' }]);
  });

  it('refuses what it cannot honour, saying what is wrong', () => {
    expect(() => parseDatabaseUrl('mysql://h/db')).toThrow(/postgres:\/\/ or postgresql:\/\//);
    expect(() => parseDatabaseUrl('postgres://h1,h2/db?target_session_attrs=read-only')).toThrow(/target_session_attrs=read-only .*not supported/);
    expect(() => parseDatabaseUrl('postgres://h1:5432,h2:99999/db')).toThrow(/port out of range: "h2:99999"/);
    expect(() => parseDatabaseUrl('postgres://h1,,h2/db')).toThrow(/cannot read: ""/);
    expect(() => parseDatabaseUrl('postgres://h1/db?schema=Bad-Name')).toThrow(/invalid schema name/);
  });
});

const live = process.env.SIGIL_TEST_DATABASE_URL;

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

describe.skipIf(!live)('the host a new connection goes to (real PostgreSQL)', () => {
  it('passes over a host that refuses and one whose sessions are read-only, and finds the read-write one', async () => {
    const real = parseDatabaseUrl(live!);
    const server = real.hosts[0]!;
    const refusing: PostgresHost = { host: '127.0.0.1', port: await closedPort() };
    // The same server twice: once with sessions made read-only (as a standby's are), once as it is.
    const readOnly: PostgresHost = { ...server };
    const configFor = (h: PostgresHost) => ({
      connectionString: real.forHost(h),
      connectionTimeoutMillis: 5_000,
      ...(h === readOnly ? { options: '-c default_transaction_read_only=on' } : {}),
    });
    const target = new HostTarget([refusing, readOnly, server], 'read-write', configFor);
    expect(await target.choose()).toBe(server);

    const Client = target.clientClass();
    const client = new Client(configFor(refusing));
    await client.connect();
    try {
      const { rows } = await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only');
      expect(rows[0]!.transaction_read_only).toBe('off');
      expect(client.port).toBe(server.port ?? 5432);
    } finally {
      await client.end();
    }

    // No host fits: the connection fails with a connection error (class 08, answered 503 over HTTP).
    const none = new HostTarget([refusing, readOnly], 'read-write', configFor);
    const failing = new (none.clientClass())(configFor(refusing));
    await expect(failing.connect()).rejects.toMatchObject({ code: '08001', message: expect.stringMatching(/no PostgreSQL host .* is read-write/) });
  });
});
