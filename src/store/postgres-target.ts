// Which PostgreSQL host a new connection goes to when DATABASE_URL lists several (docs/operator-guide.md
// "PostgreSQL with a standby (failover)"; the URL is read by database-url.ts). libpq tries the hosts and keeps
// the first whose session fits target_session_attrs; node-postgres connects to one host only, so the
// pools and the hot path's connections are given a Client that does it: it connects to the host last
// found to fit, checks the session on that very connection (a primary may have been demoted since),
// and when that host refuses or no longer fits, the next connection asks every host at once and takes
// the first that fits. So when the primary dies and a standby is promoted, new connections go to the
// new primary without a restart; connections made meanwhile fail with a connection error, which the
// HTTP layer answers with 503 (retry).
import pg from 'pg';
import type { PostgresHost, TargetSessionAttrs } from './database-url.js';

type ClientConfig = pg.ClientConfig & { connectionString: string };

/** An error the HTTP layer reads as "the database is unavailable for now" (SQLSTATE class 08 or 25006). */
function unavailable(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

const describe = (h: PostgresHost) => (h.port === undefined ? h.host : `${h.host}:${h.port}`);

/** True when a connected session fits the target (`any` needs no question). */
async function fits(client: pg.Client, target: TargetSessionAttrs): Promise<boolean> {
  if (target === 'read-write') return (await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only')).rows[0]?.transaction_read_only === 'off';
  if (target === 'primary') return (await client.query<{ recovery: boolean }>('SELECT pg_is_in_recovery() AS recovery')).rows[0]?.recovery === false;
  return true;
}

/**
 * A node-postgres Client whose lost connection cannot end the process. node-postgres emits 'error' on
 * a client whose connection dies; pg-pool listens only while the client is idle in the pool, and
 * neither it nor Kysely listens while a client is checked out or still connecting, so a primary killed
 * under load (seen in test/e2e/postgres-failover.test.ts) ended `sigil serve` with an unheard error.
 * The error still reaches every query the connection had (node-postgres fails them with it) and, once
 * released, the pool discards the connection; so it is only heard here.
 */
export class HeardClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.on('error', () => {});
  }
}

/** The host that last fitted, shared by every connection of a process, and the search for a new one. */
export class HostTarget {
  private current: PostgresHost | undefined;
  private search: Promise<PostgresHost> | undefined;

  constructor(
    readonly hosts: PostgresHost[],
    readonly target: TargetSessionAttrs,
    private readonly configFor: (h: PostgresHost) => ClientConfig,
  ) {}

  /** The host to connect to: the one that last fitted, or the first to fit of all asked at once. */
  choose(): Promise<PostgresHost> {
    if (this.current) return Promise.resolve(this.current);
    // One search at a time, whatever the number of connections waiting for it.
    this.search ??= this.find().finally(() => (this.search = undefined));
    return this.search;
  }

  /** A host that refused or no longer fits is not tried first again. */
  forget(h: PostgresHost): void {
    if (this.current === h) this.current = undefined;
  }

  private find(): Promise<PostgresHost> {
    // Every host is asked at once, so a host that does not answer costs one connection timeout, not
    // one per host before it in the list.
    const reasons: string[] = [];
    return new Promise<PostgresHost>((resolve, reject) => {
      let pending = this.hosts.length;
      let found = false;
      for (const h of this.hosts) {
        const probe = new pg.Client(this.configFor(h));
        probe.on('error', () => {});
        probe
          .connect()
          .then(() => fits(probe, this.target))
          .then(
            (ok) => {
              if (!ok) reasons.push(`${describe(h)} is not ${this.target}`);
              else if (!found) {
                found = true;
                this.current = h;
                resolve(h);
              }
            },
            (err: Error) => reasons.push(`${describe(h)}: ${err.message}`),
          )
          .finally(() => {
            void probe.end().catch(() => undefined);
            if (--pending === 0 && !found) {
              reject(unavailable(`no PostgreSQL host of DATABASE_URL is ${this.target} (${reasons.join('; ')})`, '08001'));
            }
          });
      }
    });
  }

  /**
   * The Client class the pools and the hot path's connections use: a node-postgres Client whose
   * connect() first chooses the host, then checks the session it opened.
   */
  clientClass(): typeof pg.Client {
    const hostTarget = this;
    return class TargetedClient extends HeardClient {
      override connect(): Promise<pg.Client>;
      override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
      override connect(callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): Promise<pg.Client> | void {
        // As node-postgres: a promise of the connected client, or the callback pg-pool passes.
        const connected = this.connectToTarget().then(() => this as pg.Client);
        if (!callback) return connected;
        const done = callback as (err: Error | null, c?: pg.Client) => void;
        connected.then((c) => done(null, c), (err: Error) => done(err));
      }

      private async connectToTarget(): Promise<void> {
        const h = await hostTarget.choose();
        // node-postgres reads the host and port from these when it opens the socket (and from the
        // connection parameters for a .pgpass lookup); the rest of the configuration is the same for
        // every host of the list.
        const self = this as unknown as { host: string; port: number | undefined; connectionParameters: { host: string; port: number | undefined } };
        // A host written without a port gets node-postgres's default, as it would alone in the URL.
        const port = h.port ?? (Number(process.env.PGPORT) || pg.defaults.port);
        self.host = self.connectionParameters.host = h.host;
        self.port = self.connectionParameters.port = port;
        try {
          await super.connect();
        } catch (err) {
          hostTarget.forget(h);
          throw err;
        }
        let ok: boolean;
        try {
          ok = await fits(this, hostTarget.target);
        } catch (err) {
          hostTarget.forget(h);
          await this.end().catch(() => undefined);
          throw err;
        }
        if (!ok) {
          hostTarget.forget(h);
          await this.end().catch(() => undefined);
          throw unavailable(`PostgreSQL at ${describe(h)} is no longer ${hostTarget.target}`, '25006');
        }
      }
    };
  }
}
