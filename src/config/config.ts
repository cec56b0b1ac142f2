// Typed configuration of a Sigil process, from command-line flags and the environment
// (SIGIL_* and DATABASE_URL). Flags win over the environment, the environment over defaults.
// Nothing else in src reads process.env: the CLI builds a Config and hands it down.
import { isIP } from 'node:net';
import { resolve } from 'node:path';

export interface Config {
  /** Where the embedded database, the master key file and the dev outbox live. */
  dataDir: string;
  /** `postgres://…` selects PostgreSQL; absent means embedded SQLite in dataDir. */
  databaseUrl: string | undefined;
  /** Hex or base64 of 32 bytes; when absent the key file `<dataDir>/master.key` is used. */
  masterKey: string | undefined;
  host: string;
  port: number;
  authProxyPort: number;
  /** Request bodies above this many bytes are refused before parsing. */
  bodyLimitBytes: number;
  /** Liveness window of `timestampMs` (turnkey-contract.md §2.2; DESIGN.md pipeline). */
  maxRequestAgeMs: number;
  maxRequestFutureMs: number;
  logLevel: string;
  /** How long an import bundle from init_import_* stays usable. */
  importBundleTtlMs: number;
  /** WebAuthn relying party id passkeys are registered and asserted for (SIGIL_WEBAUTHN_RP_ID). */
  webauthnRpId: string;
  /** Allowed WebAuthn `clientDataJSON.origin` values (SIGIL_WEBAUTHN_ORIGINS, comma-separated; `*` = any). */
  webauthnOrigins: string[];
  /**
   * Proxies whose X-Forwarded-For is believed when finding a request's client address, for IP
   * allowlists (SIGIL_TRUSTED_PROXIES: addresses, CIDRs or `loopback`/`linklocal`/`uniquelocal`,
   * comma-separated). Empty (the default): the connecting address is the client.
   */
  trustedProxies: string[];
  /**
   * Outgoing email over SMTP (SIGIL_SMTP_HOST, SIGIL_SMTP_PORT, SIGIL_SMTP_SECURE, SIGIL_SMTP_USER,
   * SIGIL_SMTP_PASSWORD); absent: email goes to the development outbox `<dataDir>/outbox.jsonl`.
   */
  smtp: { host: string; port: number; secure: boolean; user?: string; password?: string } | undefined;
  /** From-address of Sigil's email (SIGIL_EMAIL_FROM). */
  emailFrom: string;
  /** SMS go out as a JSON POST {to, body} to this URL (SIGIL_SMS_WEBHOOK_URL); absent: the outbox. */
  smsWebhookUrl: string | undefined;
}

export type Flags = Record<string, string | boolean | undefined>;

const DEFAULTS = {
  host: '127.0.0.1',
  port: 8080,
  authProxyPort: 8081,
  bodyLimitBytes: 2 * 1024 * 1024,
  maxRequestAgeMs: 60 * 60 * 1000,
  maxRequestFutureMs: 5 * 60 * 1000,
  logLevel: 'info',
  webauthnRpId: 'localhost',
  webauthnOrigins: 'http://localhost:3000,https://localhost',
};

function list(v: string | undefined, fallback: string): string[] {
  const items = (v ?? fallback).split(',').map((s) => s.trim()).filter((s) => s !== '');
  return items.length > 0 ? items : fallback.split(',');
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function trustedProxies(v: string | undefined): string[] {
  const items = (v ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const item of items) {
    const [address, prefix, extra] = item.split('/');
    const family = isIP(address);
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
    if (!PROXY_NAMES.includes(item) && (family === 0 || !prefixOk || extra !== undefined)) {
      throw new Error(`SIGIL_TRUSTED_PROXIES: "${item}" is not an IP address, a CIDR block or one of ${PROXY_NAMES.join(', ')}`);
    }
  }
  return items;
}

function str(v: string | boolean | undefined): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function int(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${v}"`);
  return n;
}

export function loadConfig(flags: Flags, env: NodeJS.ProcessEnv): Config {
  const dataDir = str(flags['data-dir']) ?? env.SIGIL_DATA_DIR ?? './.sigil-data';
  return {
    dataDir: resolve(dataDir),
    databaseUrl: str(flags['database-url']) ?? (env.DATABASE_URL || undefined),
    masterKey: env.SIGIL_MASTER_KEY || undefined,
    host: str(flags.host) ?? env.SIGIL_HOST ?? DEFAULTS.host,
    port: int('--port', str(flags.port) ?? env.SIGIL_PORT, DEFAULTS.port),
    authProxyPort: int('--auth-proxy-port', str(flags['auth-proxy-port']) ?? env.SIGIL_AUTH_PROXY_PORT, DEFAULTS.authProxyPort),
    bodyLimitBytes: int('SIGIL_BODY_LIMIT_BYTES', env.SIGIL_BODY_LIMIT_BYTES, DEFAULTS.bodyLimitBytes),
    maxRequestAgeMs: DEFAULTS.maxRequestAgeMs,
    maxRequestFutureMs: DEFAULTS.maxRequestFutureMs,
    logLevel: str(flags['log-level']) ?? env.SIGIL_LOG_LEVEL ?? DEFAULTS.logLevel,
    importBundleTtlMs: 1000 * int('SIGIL_IMPORT_BUNDLE_TTL_SECONDS', env.SIGIL_IMPORT_BUNDLE_TTL_SECONDS, 15 * 60),
    webauthnRpId: env.SIGIL_WEBAUTHN_RP_ID || DEFAULTS.webauthnRpId,
    // Browsers send origins without a trailing slash; a configured one would never match.
    trustedProxies: trustedProxies(env.SIGIL_TRUSTED_PROXIES),
    webauthnOrigins: list(env.SIGIL_WEBAUTHN_ORIGINS || undefined, DEFAULTS.webauthnOrigins).map((o) => o.replace(/\/+$/, '')),
    smtp: smtpConfig(env),
    emailFrom: env.SIGIL_EMAIL_FROM || 'Sigil <no-reply@localhost>',
    smsWebhookUrl: httpUrl('SIGIL_SMS_WEBHOOK_URL', env.SIGIL_SMS_WEBHOOK_URL),
  };
}

function smtpConfig(env: NodeJS.ProcessEnv): Config['smtp'] {
  const host = env.SIGIL_SMTP_HOST;
  if (!host) return undefined;
  const secureText = (env.SIGIL_SMTP_SECURE ?? '').toLowerCase();
  if (!['', 'true', 'false', '1', '0'].includes(secureText)) throw new Error(`SIGIL_SMTP_SECURE must be true or false, got "${env.SIGIL_SMTP_SECURE}"`);
  const secure = secureText === 'true' || secureText === '1';
  const port = int('SIGIL_SMTP_PORT', env.SIGIL_SMTP_PORT || undefined, secure ? 465 : 587);
  if (port < 1 || port > 65535) throw new Error(`SIGIL_SMTP_PORT must be a TCP port, got "${env.SIGIL_SMTP_PORT}"`);
  return { host, port, secure, user: env.SIGIL_SMTP_USER || undefined, password: env.SIGIL_SMTP_PASSWORD || undefined };
}

function httpUrl(name: string, v: string | undefined): string | undefined {
  if (!v) return undefined;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new Error(`${name} must be an http(s) URL, got "${v}"`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`${name} must be an http(s) URL, got "${v}"`);
  return u.toString();
}
