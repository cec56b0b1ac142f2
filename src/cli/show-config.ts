// `sigil config` (docs/operator-guide.md): the effective configuration, as loadConfig builds it from flags,
// environment and defaults, printed as JSON without secrets. Redaction goes by field name, so a field
// added later is covered without touching this file: any field whose name says secret, password,
// token, credential or key is replaced, unless the name says it holds a URL, an id, a name or where
// something comes from; in every string that is a URL, the password and secret-looking query
// parameters are replaced too (a DATABASE_URL's password, a webhook's token).
import { masterKeyPath } from '../barrier/master-key.js';
import type { Config } from '../config/config.js';

export const REDACTED = 'REDACTED';
const SECRET_NAME = /secret|password|passwd|token|credential|key|signature|^pin$/i;
const NOT_SECRET_NAME = /(url|urls|id|ids|name|names|source|ms|seconds|label)$/i;

function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name) && !NOT_SECRET_NAME.test(name);
}

function redactUrl(text: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return text;
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return redactHostListUrl(text);
  }
  let changed = false;
  if (u.password) {
    u.password = REDACTED;
    changed = true;
  }
  for (const name of [...u.searchParams.keys()]) {
    if (isSecretName(name)) {
      u.searchParams.set(name, REDACTED);
      changed = true;
    }
  }
  return changed ? u.toString() : text;
}

/**
 * A URL the WHATWG parser refuses, such as libpq's multi-host DATABASE_URL
 * (`postgres://u:p@h1:5432,h2:5433/db`, docs/operator-guide.md "PostgreSQL with a standby (failover)"): the password ends the
 * user info and the query is read on its own, so both are redacted as in any other URL.
 */
function redactHostListUrl(text: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)(?:([^@/?#]*)@)?([^?#]*)(?:\?([^#]*))?(#.*)?$/i.exec(text);
  if (!m) return REDACTED;
  const [, scheme, userinfo, rest, query, fragment] = m;
  const user = userinfo === undefined ? '' : userinfo.includes(':') ? `${userinfo.slice(0, userinfo.indexOf(':'))}:${REDACTED}@` : `${userinfo}@`;
  let search = query === undefined ? '' : `?${query}`;
  if (query !== undefined) {
    const params = new URLSearchParams(query);
    const secret = [...params.keys()].filter(isSecretName);
    for (const name of secret) params.set(name, REDACTED);
    if (secret.length > 0) search = `?${params.toString()}`;
  }
  return `${scheme}${user}${rest}${search}${fragment ?? ''}`;
}

/** A copy of `value` with secrets replaced; `undefined` becomes null so unset fields show. */
export function redact(value: unknown, name = ''): unknown {
  if (value === undefined || value === null) return null;
  if (isSecretName(name) && value !== '') return REDACTED;
  if (typeof value === 'string') return redactUrl(value);
  if (Array.isArray(value)) return value.map((v) => redact(v));
  if (typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, redact(v, k)]));
  }
  return value;
}

export function showConfig(config: Config): string {
  const shown = {
    ...(redact(config) as Record<string, unknown>),
    masterKeySource: config.masterKey ? 'SIGIL_MASTER_KEY' : masterKeyPath(config.dataDir),
    store: config.databaseUrl ? 'postgres' : 'sqlite',
  };
  return JSON.stringify(shown, null, 2) + '\n';
}
