// The PostgreSQL DATABASE_URL as libpq spells it, including the multi-host form a failover set-up
// uses: `postgres://user@h1:5432,h2:5433/db?target_session_attrs=read-write` (docs/operator-guide.md
// "PostgreSQL with a standby (failover)"). node-postgres reads one host only and ignores target_session_attrs, so the URL is
// taken apart here: the host list and the session attribute Sigil acts on itself, and for each host a
// single-host URL node-postgres reads as it always has. `schema` is Sigil's own parameter (the
// schema a deployment lives in) and is taken out too.

/** One host of the list; `port` is absent when the URL names none (node-postgres then uses PGPORT or 5432). */
export interface PostgresHost {
  host: string;
  port?: number;
}

/**
 * What a connection must be to be used: `any` the first host that accepts one (libpq's default);
 * `read-write` one whose sessions can write (`SHOW transaction_read_only` is off); `primary` one that
 * is not in recovery. Sigil writes, so libpq's read-only, standby and prefer-standby are refused.
 */
export type TargetSessionAttrs = 'any' | 'read-write' | 'primary';
const TARGET_SESSION_ATTRS: readonly string[] = ['any', 'read-write', 'primary'];

export interface DatabaseUrl {
  hosts: PostgresHost[];
  targetSessionAttrs: TargetSessionAttrs;
  schema: string | undefined;
  /**
   * The URL node-postgres reads for one host of the list: that host alone, without Sigil's parameters
   * (no host: the URL names none, and node-postgres uses PGHOST or its default).
   */
  forHost(host: PostgresHost | undefined): string;
  /** The URL without its password and Sigil's parameters, for messages and logs. */
  location: string;
}

const URL_PARTS = /^(postgres(?:ql)?):\/\/(?:([^@/?#]*)@)?([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/i;

export function parseDatabaseUrl(url: string): DatabaseUrl {
  const parts = URL_PARTS.exec(url);
  if (!parts) throw new Error('DATABASE_URL must be a postgres:// or postgresql:// URL');
  const [, scheme, userinfo, hostList, path, query] = parts as unknown as [string, string, string | undefined, string, string, string | undefined];
  const params = new URLSearchParams(query ?? '');

  const schema = params.get('schema') ?? undefined;
  params.delete('schema');
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error(`invalid schema name in DATABASE_URL: "${schema}" (lowercase letters, digits, underscore)`);
  }
  const attrs = params.get('target_session_attrs') ?? 'any';
  params.delete('target_session_attrs');
  if (!TARGET_SESSION_ATTRS.includes(attrs)) {
    throw new Error(`target_session_attrs=${attrs} in DATABASE_URL is not supported: Sigil writes, so use read-write (or primary, or any)`);
  }

  const hostTexts = hostList.split(',');
  // An empty host list (`postgres:///db`) leaves the host to node-postgres (PGHOST or its default), as today.
  const hosts = hostTexts.length === 1 && hostTexts[0] === '' ? [] : hostTexts.map(parseHost);
  const rest = (search: URLSearchParams) => `${path}${search.size > 0 ? `?${search.toString()}` : ''}`;
  const user = userinfo === undefined ? '' : `${userinfo}@`;
  const userWithoutPassword = userinfo === undefined ? '' : `${userinfo.split(':')[0]}@`;
  return {
    hosts,
    targetSessionAttrs: attrs as TargetSessionAttrs,
    schema,
    forHost: (h) => `${scheme}://${user}${h ? formatHost(h) : ''}${rest(params)}`,
    location: `${scheme}://${userWithoutPassword}${hosts.map(formatHost).join(',')}${rest(params)}`,
  };
}

function parseHost(text: string): PostgresHost {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d*))?$/.exec(text);
  if (!m) throw new Error(`DATABASE_URL names a host it cannot read: "${text}" (host, host:port or [IPv6]:port, separated by commas)`);
  const host = decodeURIComponent(m[1]!.replace(/^\[|\]$/g, ''));
  const port = m[2] ? Number(m[2]) : undefined;
  if (port !== undefined && !(port >= 1 && port <= 65535)) throw new Error(`DATABASE_URL names a port out of range: "${text}"`);
  return port === undefined ? { host } : { host, port };
}

function formatHost(h: PostgresHost): string {
  const host = h.host.includes(':') ? `[${h.host}]` : encodeURIComponent(h.host);
  return h.port === undefined ? host : `${host}:${h.port}`;
}
