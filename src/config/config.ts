// Typed configuration of a Sigil process, from command-line flags and the environment
// (SIGIL_* and DATABASE_URL). Flags win over the environment, the environment over defaults.
// Nothing else in src reads process.env: the CLI builds a Config and hands it down.
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';

export interface Config {
  /** Where the embedded database, the master key file and the dev outbox live. */
  dataDir: string;
  /** `postgres://…` selects PostgreSQL; absent means embedded SQLite in dataDir. */
  databaseUrl: string | undefined;
  /** Hex or base64 of 32 bytes; when absent the key file `<dataDir>/master.key` is used. */
  masterKey: string | undefined;
  /**
   * What wraps the deployment's data key (SIGIL_SEAL, docs/operator-guide.md "Custody"): `static` (the default: the
   * master key above), `pkcs11` (an AES key inside an HSM: SIGIL_PKCS11_MODULE, the token by
   * SIGIL_PKCS11_TOKEN_LABEL or SIGIL_PKCS11_SLOT, the PIN in SIGIL_PKCS11_PIN or SIGIL_PKCS11_PIN_FILE,
   * SIGIL_PKCS11_KEY_LABEL, "sigil-seal" by default) or `shamir` (a key split among operators; the
   * process starts sealed and opens when `sigil operator unseal` has given it enough shares).
   */
  seal: SealSettings;
  /** The HSM settings whenever SIGIL_PKCS11_MODULE is set, so a migration can open a pkcs11 seal it leaves. */
  pkcs11: Pkcs11Config | undefined;
  /**
   * The operator server (POST /v1/sys/unseal, GET /v1/sys/seal-status, POST /v1/sys/seal): on
   * SIGIL_OPERATOR_HOST (loopback by default) and SIGIL_OPERATOR_PORT / --operator-port (8083 by
   * default with the shamir seal, off otherwise unless set).
   */
  operatorHost: string;
  operatorPort: number | undefined;
  /**
   * An append-only file every signed audit checkpoint is also written to (SIGIL_AUDIT_SINK_FILE), outside
   * the database: `sigil audit verify --checkpoints FILE` detects a stream cut with its checkpoints.
   */
  auditSinkFile: string | undefined;
  /** An HTTP endpoint every checkpoint is POSTed to as JSON (SIGIL_AUDIT_SINK_HTTP). */
  auditSinkHttp: string | undefined;
  /** A syslog server every checkpoint is sent to as an RFC 5424 message (SIGIL_AUDIT_SINK_SYSLOG, udp://host:port or tcp://host:port). */
  auditSinkSyslog: string | undefined;
  /** A checkpoint once this many audit entries are written, besides every 5 s (SIGIL_AUDIT_CHECKPOINT_ENTRIES; 0: time only). */
  auditCheckpointEntries: number;
  /** Refuse requests with 503 while no audit sink accepts checkpoints (SIGIL_AUDIT_SINK_FAIL_CLOSED=1). */
  auditSinkFailClosed: boolean;
  /** How often a process reads the deployment's seal row, to follow an emergency seal (SIGIL_SEAL_WATCH_MS). */
  sealWatchMs: number;
  host: string;
  port: number;
  authProxyPort: number;
  /**
   * Port of Sigil's own frames (export, import, export-and-sign, auth; docs/embedded-wallets.md),
   * a server of its own so that a frame never shares an origin with the app embedding it
   * (--frames-port / SIGIL_FRAMES_PORT). Defaults to the port after the auth proxy's, and to a free
   * port (0) when the auth proxy's is 0, so ephemeral deployments never collide on a fixed one.
   */
  framesPort: number;
  /**
   * Where browsers reach the frames (SIGIL_FRAMES_URL, an http(s) origin, e.g. behind a proxy
   * `https://frames.example.com`); absent: http://<host>:<framesPort>. /.well-known/sigil.json lists
   * the frame URLs under it.
   */
  framesUrl: string | undefined;
  /** Request bodies above this many bytes are refused before parsing. */
  bodyLimitBytes: number;
  /**
   * Limits of a JSON body, checked before schema validation on both servers so that no body costs
   * more than a linear walk (src/pipeline/input-limits.ts): nesting depth (SIGIL_MAX_JSON_DEPTH) and
   * members of one array or object (SIGIL_MAX_JSON_ITEMS).
   */
  maxJsonDepth: number;
  maxJsonItems: number;
  /**
   * Transport limits of both servers (src/http/transport.ts), so a slow or idle client cannot hold a
   * connection for ever: time to receive a whole request (SIGIL_REQUEST_TIMEOUT_MS) and its headers
   * (SIGIL_HEADERS_TIMEOUT_MS), how long an idle kept-alive connection stays open
   * (SIGIL_KEEP_ALIVE_TIMEOUT_MS), and the open connections each server accepts (SIGIL_MAX_CONNECTIONS).
   */
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
  /**
   * Log lines waiting for a slow stderr reader, in bytes (SIGIL_LOG_BUFFER_BYTES); beyond it lines are
   * dropped and counted (sigil_log_lines_dropped_total), so logging never blocks (src/cli/log-sink.ts).
   */
  logBufferBytes: number;
  /** Liveness window of `timestampMs` (docs/reference/api.md "Transport"; docs/design.md pipeline). */
  maxRequestAgeMs: number;
  maxRequestFutureMs: number;
  logLevel: string;
  /** How long an import bundle from init_import_* stays usable. */
  importBundleTtlMs: number;
  /** How long an invitation's link can be accepted (SIGIL_INVITATION_TTL_SECONDS; 72 hours by default). */
  invitationTtlMs: number;
  /** WebAuthn relying party id passkeys are registered and asserted for (SIGIL_WEBAUTHN_RP_ID). */
  webauthnRpId: string;
  /** Allowed WebAuthn `clientDataJSON.origin` values (SIGIL_WEBAUTHN_ORIGINS, comma-separated; `*` = any). */
  webauthnOrigins: string[];
  /**
   * Where browsers reach the dashboard (SIGIL_DASHBOARD_URL): invitation emails link to its
   * accept page. Defaults to the first WebAuthn origin, since the invitee registers a passkey there.
   */
  dashboardUrl: string;
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
  /**
   * Domains whose addresses a request may name as `sendFromEmailAddress` / `replyToEmailAddress`
   * (SIGIL_EMAIL_ALLOWED_SENDER_DOMAINS, comma-separated, exact domains). The reference service
   * allows only pre-whitelisted domains; empty (the default) honours no custom sender at all.
   */
  emailAllowedSenderDomains: string[];
  /** SMS go out as a JSON POST {to, body} to this URL (SIGIL_SMS_WEBHOOK_URL); absent: the outbox. */
  smsWebhookUrl: string | undefined;
  /**
   * Request rate limits (docs/reference/api.md "Limits"), token buckets kept in the database so that every
   * process shares them: per organization (each sub-organization has its own, as the reference's
   * "10 RPS per sub-organization") from SIGIL_RATE_LIMIT_ORG_RPS / SIGIL_RATE_LIMIT_ORG_BURST, and
   * per credential from SIGIL_RATE_LIMIT_KEY_RPS / SIGIL_RATE_LIMIT_KEY_BURST. RPS may be fractional;
   * burst (the most requests passing at once) defaults to the RPS rounded up. Off unless set: a
   * self-hosted deployment picks its own numbers, and an unset limit costs no database write.
   */
  /**
   * `signup`: the auth proxy's /v1/signup per client address (SIGIL_AUTH_PROXY_SIGNUPS_PER_HOUR,
   * default 20 an hour; 0 turns it off): anyone may call it, and each signup creates an organization.
   */
  rateLimits: { organization?: RateLimit; apiKey?: RateLimit; signup?: RateLimit };
  /** Organization quota overrides by name (SIGIL_QUOTAS, e.g. `wallets=1000,users=500`); empty: the documented limits. */
  quotas: Record<string, number>;
  /** Serving processes `sigil serve` runs (--workers / SIGIL_WORKERS: a number or `auto` = one per core); 1 = no cluster. */
  workers: number;
  /**
   * The most a shutdown takes, from SIGTERM to exit, whatever hangs (SIGIL_SHUTDOWN_TIMEOUT_MS): in-flight
   * requests are cut a little earlier, leaving time to close the database and write the last log lines.
   */
  shutdownTimeoutMs: number;
  /**
   * Issuers whose OIDC id_tokens OAuth login trusts (SIGIL_OIDC_ISSUERS): comma-separated entries,
   * `issuer=jwksUrl` (signing keys fetched from that URL) or `issuer` alone (keys found through
   * `<issuer>/.well-known/openid-configuration` → `jwks_uri`). `issuer` is the exact `iss` value.
   * Setting it replaces the defaults (Google, both `iss` forms; Apple; Facebook); an empty value
   * trusts no outside issuer.
   */
  oidcIssuers: { issuer: string; jwksUri?: string }[];
  /** `iss` of the id_tokens this deployment issues itself, verified with its signer key (SIGIL_OIDC_SELF_ISSUER). */
  oidcSelfIssuer: string;
  /**
   * TESTS ONLY: a file holding a number of milliseconds added to the clock of velocity control
   * windows (never to request liveness, records or anything else), re-read at each measurement, so
   * a test moves a rolling window without sleeping. Honoured only with
   * SIGIL_ENABLE_TEST_CLOCK=yes-this-is-a-test beside SIGIL_TEST_VELOCITY_CLOCK_FILE; the variable
   * alone stops the process at start, so it cannot be set by mistake in production.
   */
  testVelocityClockFile?: string;
  /**
   * Token and user-info endpoints of the OAuth2-only providers oauth2_authenticate talks to
   * (SIGIL_OAUTH2_X_TOKEN_URL, SIGIL_OAUTH2_X_USERINFO_URL, SIGIL_OAUTH2_DISCORD_TOKEN_URL,
   * SIGIL_OAUTH2_DISCORD_USERINFO_URL); the providers' public endpoints by default.
   */
  oauth2Endpoints: Record<'OAUTH2_PROVIDER_X' | 'OAUTH2_PROVIDER_DISCORD', { tokenUrl: string; userinfoUrl: string }>;
  /**
   * The JSON-RPC endpoint eth_send_transaction and friends use, per CAIP-2 chain (docs/broadcasting.md
   * "Broadcasting"): SIGIL_EVM_RPC_URLS, a JSON object {"eip155:1": "https://…"}, and
   * SIGIL_EVM_RPC_<chain id> (SIGIL_EVM_RPC_11155111=https://…), which wins for its chain. A chain
   * absent here is refused by name.
   */
  evmRpcUrls: Record<string, string>;
  /**
   * The ERC-20 tokens list_supported_assets and get_wallet_address_balances know of, per CAIP-2
   * chain (SIGIL_EVM_ASSETS, docs/broadcasting.md "Broadcasting"); each listed chain must have an RPC URL.
   */
  evmAssets: Record<string, EvmAssetSetting[]>;
  /** How often the send-transaction tracker polls the nodes for receipts (SIGIL_EVM_POLL_INTERVAL_MS). */
  evmPollIntervalMs: number;
  /**
   * What a chain's node is trusted with (docs/broadcasting.md "What the
   * node is trusted with"). Hosts an RPC URL may name over plain http (SIGIL_EVM_RPC_HTTP_HOSTS, comma-separated
   * host names, IP addresses or `loopback`; `loopback` by default, so a local node needs no
   * certificate; every other RPC URL must be https). The largest JSON-RPC answer read
   * (SIGIL_EVM_RPC_MAX_RESPONSE_BYTES, 4 MiB). Fee caps, in wei, per CAIP-2 chain with a default for
   * every chain: the most `maxFeePerGas` a send may carry (SIGIL_EVM_MAX_FEE_PER_GAS, 1000 gwei, and
   * SIGIL_EVM_MAX_FEE_PER_GAS_<chain id>) and the most gas limit × maxFeePerGas, what the send can cost
   * in fees at most (SIGIL_EVM_MAX_TX_FEE, 0.1 of the native coin, and SIGIL_EVM_MAX_TX_FEE_<chain id>),
   * as decimal strings. How long a transaction broadcast with eth_send_raw_transaction may stay
   * unmined before it is FAILED as expired (SIGIL_EVM_RAW_SEND_TTL_SECONDS, 24 hours).
   */
  evmRpcHttpHosts: string[];
  evmRpcMaxResponseBytes: number;
  evmFeeCaps: { default: EvmFeeCap; chains: Record<string, Partial<EvmFeeCap>> };
  evmRawSendTtlSeconds: number;
  /**
   * Simulation before approval (docs/broadcasting.md "Simulation"): every EVM signing and sending
   * activity whose chain has an RPC above is simulated; one simulation, token names included, may
   * take SIGIL_EVM_SIMULATION_TIMEOUT_MS (3 s) before it counts as FAILED. SIGIL_EVM_SIMULATION_METHOD:
   * `auto` (eth_simulateV1, falling back to debug_traceCall where the node lacks it), `eth_simulateV1`,
   * `debug_traceCall`, or `off` (nothing is simulated).
   */
  evmSimulationTimeoutMs: number;
  evmSimulationMethod: 'auto' | 'eth_simulateV1' | 'debug_traceCall' | 'off';
  /**
   * The Solana JSON-RPC endpoint sol_send_transaction uses, per cluster (docs/broadcasting.md
   * "Solana"): SIGIL_SOLANA_RPC_MAINNET and SIGIL_SOLANA_RPC_DEVNET, keyed here by the cluster's
   * canonical CAIP-2 id. https unless the host is listed in SIGIL_EVM_RPC_HTTP_HOSTS (the same rule
   * as the EVM nodes: the node's blockhash decides what Sigil signs). A cluster absent here is
   * refused by name.
   */
  solanaRpcUrls: Record<string, string>;
  /**
   * The cluster a Solana `sign_transaction` is simulated on (docs/broadcasting.md "Simulation"): a
   * signature names no cluster, so with one cluster configured above it is that one, and with several
   * SIGIL_SOLANA_SIMULATION_CLUSTER names it (`solana:mainnet`, `solana:devnet`, a CAIP-2 id, or
   * MAINNET/DEVNET), as the canonical CAIP-2 id; it must be a cluster with an RPC above. Unset with
   * several: such signatures are NOT_SIMULATED. sol_send_transaction is simulated on its own cluster.
   */
  solanaSimulationCluster?: string;
  /**
   * Webhook delivery (docs/webhooks.md "Webhooks"). `allowedHosts` (SIGIL_WEBHOOK_ALLOWED_HOSTS, comma-separated
   * host names, addresses, CIDR blocks or `loopback`/`private`/`linklocal`): destinations allowed
   * although not public, and allowed over plain http; empty by default. Retries: the delay after the
   * first failed attempt (SIGIL_WEBHOOK_RETRY_BASE_MS, 10 s), doubled per attempt up to
   * SIGIL_WEBHOOK_RETRY_MAX_MS (1 h), for SIGIL_WEBHOOK_MAX_ATTEMPTS attempts (20: about 12 hours);
   * one attempt's deadline (SIGIL_WEBHOOK_TIMEOUT_MS, 10 s); attempts in flight per process
   * (SIGIL_WEBHOOK_CONCURRENCY, 8); how often the outbox is polled (SIGIL_WEBHOOK_POLL_MS, 1 s); failed
   * attempts in a row before an endpoint shows FAILING (SIGIL_WEBHOOK_FAILING_AFTER, 5).
   */
  webhooks: {
    allowedHosts: string[];
    retryBaseMs: number;
    retryMaxMs: number;
    maxAttempts: number;
    timeoutMs: number;
    concurrency: number;
    pollMs: number;
    failingAfter: number;
  };
}

export type Flags = Record<string, string | boolean | undefined>;

/** An HSM's PKCS#11 settings (docs/operator-guide.md "Custody"). */
export interface Pkcs11Config {
  module: string;
  tokenLabel?: string;
  slot?: string;
  pin?: string;
  pinFile?: string;
  keyLabel: string;
}

export type SealSettings = { type: 'static' } | { type: 'shamir' } | { type: 'pkcs11'; pkcs11: Pkcs11Config };

function sealSettings(env: NodeJS.ProcessEnv): SealSettings {
  const type = env.SIGIL_SEAL || 'static';
  if (type === 'static' || type === 'shamir') return { type };
  if (type !== 'pkcs11') throw new Error(`SIGIL_SEAL must be static, pkcs11 or shamir, got "${type}"`);
  const pkcs11 = pkcs11Settings(env);
  if (!pkcs11) throw new Error('SIGIL_SEAL=pkcs11 needs SIGIL_PKCS11_MODULE, the path of the HSM\'s PKCS#11 module');
  return { type, pkcs11 };
}

/** The HSM settings when SIGIL_PKCS11_MODULE is set: the pkcs11 seal's, or the seal a migration leaves. */
function pkcs11Settings(env: NodeJS.ProcessEnv): Pkcs11Config | undefined {
  const module = env.SIGIL_PKCS11_MODULE;
  if (!module) return undefined;
  const tokenLabel = env.SIGIL_PKCS11_TOKEN_LABEL || undefined;
  const slot = env.SIGIL_PKCS11_SLOT || undefined;
  if ((tokenLabel === undefined) === (slot === undefined)) throw new Error('the pkcs11 seal needs the token: set one of SIGIL_PKCS11_TOKEN_LABEL or SIGIL_PKCS11_SLOT');
  if (slot !== undefined && !/^\d+$/.test(slot)) throw new Error(`SIGIL_PKCS11_SLOT must be a slot id (a number), got "${slot}"`);
  const pin = env.SIGIL_PKCS11_PIN || undefined;
  const pinFile = env.SIGIL_PKCS11_PIN_FILE || undefined;
  if ((pin === undefined) === (pinFile === undefined)) throw new Error('the pkcs11 seal needs the token PIN: set one of SIGIL_PKCS11_PIN or SIGIL_PKCS11_PIN_FILE');
  return { module, tokenLabel, slot, pin, pinFile: pinFile && resolve(pinFile), keyLabel: env.SIGIL_PKCS11_KEY_LABEL || 'sigil-seal' };
}

/**
 * Organization quota overrides (SIGIL_QUOTAS: comma-separated NAME=N with NAME one of users,
 * policies, wallets, privateKeys, userTags, privateKeyTags, secrets); empty: the documented limits.
 */
function quotaOverrides(v: string | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of (v ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const m = /^([A-Za-z]+)=(\d+)$/.exec(item);
    if (!m || Number(m[2]) < 1) throw new Error(`SIGIL_QUOTAS: "${item}" is not NAME=N (e.g. wallets=1000)`);
    out[m[1]] = Number(m[2]);
  }
  return out;
}

/** A token bucket: `rps` tokens added per second, at most `burst` held. */
export interface RateLimit {
  rps: number;
  burst: number;
}

const DEFAULTS = {
  host: '127.0.0.1',
  port: 8080,
  authProxyPort: 8081,
  bodyLimitBytes: 2 * 1024 * 1024,
  maxJsonDepth: 32,
  maxJsonItems: 1000,
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  // Longer than the 60 s idle timeout of common load balancers, so the balancer closes first.
  keepAliveTimeoutMs: 72_000,
  maxConnections: 4096,
  logBufferBytes: 1024 * 1024,
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

function framesPort(flags: Flags, env: NodeJS.ProcessEnv): number {
  const proxy = int('--auth-proxy-port', str(flags['auth-proxy-port']) ?? env.SIGIL_AUTH_PROXY_PORT, DEFAULTS.authProxyPort);
  const port = int('--frames-port', str(flags['frames-port']) ?? (env.SIGIL_FRAMES_PORT || undefined), proxy === 0 ? 0 : proxy + 1);
  if (port > 65535) throw new Error(`--frames-port must be a TCP port, got "${port}"`);
  return port;
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
    seal: sealSettings(env),
    pkcs11: pkcs11Settings(env),
    operatorHost: env.SIGIL_OPERATOR_HOST || '127.0.0.1',
    operatorPort: operatorPort(str(flags['operator-port']) ?? (env.SIGIL_OPERATOR_PORT || undefined), env.SIGIL_SEAL === 'shamir'),
    auditSinkFile: env.SIGIL_AUDIT_SINK_FILE ? resolve(env.SIGIL_AUDIT_SINK_FILE) : undefined,
    auditSinkHttp: env.SIGIL_AUDIT_SINK_HTTP || undefined,
    auditSinkSyslog: env.SIGIL_AUDIT_SINK_SYSLOG || undefined,
    auditSinkFailClosed: env.SIGIL_AUDIT_SINK_FAIL_CLOSED === '1' || env.SIGIL_AUDIT_SINK_FAIL_CLOSED === 'true',
    auditCheckpointEntries: int('SIGIL_AUDIT_CHECKPOINT_ENTRIES', env.SIGIL_AUDIT_CHECKPOINT_ENTRIES, 0),
    sealWatchMs: bounded('SIGIL_SEAL_WATCH_MS', env.SIGIL_SEAL_WATCH_MS, 1_000, 50, 60_000),
    host: str(flags.host) ?? env.SIGIL_HOST ?? DEFAULTS.host,
    port: int('--port', str(flags.port) ?? env.SIGIL_PORT, DEFAULTS.port),
    authProxyPort: int('--auth-proxy-port', str(flags['auth-proxy-port']) ?? env.SIGIL_AUTH_PROXY_PORT, DEFAULTS.authProxyPort),
    framesPort: framesPort(flags, env),
    framesUrl: httpUrl('SIGIL_FRAMES_URL', env.SIGIL_FRAMES_URL)?.replace(/\/+$/, ''),
    bodyLimitBytes: int('SIGIL_BODY_LIMIT_BYTES', env.SIGIL_BODY_LIMIT_BYTES, DEFAULTS.bodyLimitBytes),
    ...transportLimits(env),
    maxRequestAgeMs: DEFAULTS.maxRequestAgeMs,
    maxRequestFutureMs: DEFAULTS.maxRequestFutureMs,
    logLevel: str(flags['log-level']) ?? env.SIGIL_LOG_LEVEL ?? DEFAULTS.logLevel,
    importBundleTtlMs: 1000 * int('SIGIL_IMPORT_BUNDLE_TTL_SECONDS', env.SIGIL_IMPORT_BUNDLE_TTL_SECONDS, 15 * 60),
    invitationTtlMs: 1000 * int('SIGIL_INVITATION_TTL_SECONDS', env.SIGIL_INVITATION_TTL_SECONDS, 72 * 3600),
    webauthnRpId: env.SIGIL_WEBAUTHN_RP_ID || DEFAULTS.webauthnRpId,
    // Browsers send origins without a trailing slash; a configured one would never match.
    trustedProxies: trustedProxies(env.SIGIL_TRUSTED_PROXIES),
    webauthnOrigins: list(env.SIGIL_WEBAUTHN_ORIGINS || undefined, DEFAULTS.webauthnOrigins).map((o) => o.replace(/\/+$/, '')),
    dashboardUrl: (
      httpUrl('SIGIL_DASHBOARD_URL', env.SIGIL_DASHBOARD_URL) ??
      list(env.SIGIL_WEBAUTHN_ORIGINS || undefined, DEFAULTS.webauthnOrigins).find((o) => o !== '*') ??
      'http://localhost:8080'
    ).replace(/\/+$/, ''),
    smtp: smtpConfig(env),
    emailFrom: env.SIGIL_EMAIL_FROM || 'Sigil <no-reply@localhost>',
    emailAllowedSenderDomains: senderDomains(env.SIGIL_EMAIL_ALLOWED_SENDER_DOMAINS),
    smsWebhookUrl: httpUrl('SIGIL_SMS_WEBHOOK_URL', env.SIGIL_SMS_WEBHOOK_URL),
    rateLimits: {
      organization: rateLimit('SIGIL_RATE_LIMIT_ORG', env.SIGIL_RATE_LIMIT_ORG_RPS, env.SIGIL_RATE_LIMIT_ORG_BURST),
      apiKey: rateLimit('SIGIL_RATE_LIMIT_KEY', env.SIGIL_RATE_LIMIT_KEY_RPS, env.SIGIL_RATE_LIMIT_KEY_BURST),
      signup: perHour('SIGIL_AUTH_PROXY_SIGNUPS_PER_HOUR', env.SIGIL_AUTH_PROXY_SIGNUPS_PER_HOUR, DEFAULT_SIGNUPS_PER_HOUR),
    },
    quotas: quotaOverrides(env.SIGIL_QUOTAS),
    workers: workers(str(flags.workers) ?? (env.SIGIL_WORKERS || undefined)),
    shutdownTimeoutMs: int('SIGIL_SHUTDOWN_TIMEOUT_MS', env.SIGIL_SHUTDOWN_TIMEOUT_MS || undefined, 10_000),
    ...oidcConfig(env),
    testVelocityClockFile: testClock(env),
    evmRpcUrls: evmRpcUrls(env),
    solanaRpcUrls: solanaRpcUrls(env),
    solanaSimulationCluster: solanaSimulationCluster(env),
    evmAssets: evmAssets(env, evmRpcUrls(env)),
    evmPollIntervalMs: bounded('SIGIL_EVM_POLL_INTERVAL_MS', env.SIGIL_EVM_POLL_INTERVAL_MS, 2_000, 50, 600_000),
    evmRpcHttpHosts: evmRpcHttpHosts(env),
    evmRpcMaxResponseBytes: bounded('SIGIL_EVM_RPC_MAX_RESPONSE_BYTES', env.SIGIL_EVM_RPC_MAX_RESPONSE_BYTES, 4 * 1024 * 1024, 1024, 256 * 1024 * 1024),
    evmFeeCaps: evmFeeCaps(env),
    evmRawSendTtlSeconds: bounded('SIGIL_EVM_RAW_SEND_TTL_SECONDS', env.SIGIL_EVM_RAW_SEND_TTL_SECONDS, 86_400, 1, 365 * 86_400),
    evmSimulationTimeoutMs: bounded('SIGIL_EVM_SIMULATION_TIMEOUT_MS', env.SIGIL_EVM_SIMULATION_TIMEOUT_MS, 3_000, 100, 120_000),
    evmSimulationMethod: simulationMethod(env.SIGIL_EVM_SIMULATION_METHOD),
    webhooks: webhookConfig(env),
    oauth2Endpoints: {
      OAUTH2_PROVIDER_X: {
        tokenUrl: httpUrl('SIGIL_OAUTH2_X_TOKEN_URL', env.SIGIL_OAUTH2_X_TOKEN_URL) ?? 'https://api.x.com/2/oauth2/token',
        userinfoUrl: httpUrl('SIGIL_OAUTH2_X_USERINFO_URL', env.SIGIL_OAUTH2_X_USERINFO_URL) ?? 'https://api.x.com/2/users/me',
      },
      OAUTH2_PROVIDER_DISCORD: {
        tokenUrl: httpUrl('SIGIL_OAUTH2_DISCORD_TOKEN_URL', env.SIGIL_OAUTH2_DISCORD_TOKEN_URL) ?? 'https://discord.com/api/oauth2/token',
        userinfoUrl: httpUrl('SIGIL_OAUTH2_DISCORD_USERINFO_URL', env.SIGIL_OAUTH2_DISCORD_USERINFO_URL) ?? 'https://discord.com/api/users/@me',
      },
    },
  };
}

/** Names the setting that configures a chain's RPC, for the error that refuses a chain without one. */
export function evmRpcSetting(caip2: string): string {
  const id = /^eip155:(\d+)$/.exec(caip2)?.[1] ?? '<chain id>';
  return `SIGIL_EVM_RPC_${id} (or the "${caip2}" member of SIGIL_EVM_RPC_URLS)`;
}

function evmRpcUrls(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  const httpHosts = evmRpcHttpHosts(env);
  if (env.SIGIL_EVM_RPC_URLS) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(env.SIGIL_EVM_RPC_URLS);
    } catch {
      throw new Error('SIGIL_EVM_RPC_URLS must be a JSON object of CAIP-2 chain ids to http(s) URLs, e.g. {"eip155:1":"https://…"}');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('SIGIL_EVM_RPC_URLS must be a JSON object of CAIP-2 chain ids to http(s) URLs');
    for (const [chain, url] of Object.entries(parsed)) {
      if (!/^eip155:\d+$/.test(chain)) throw new Error(`SIGIL_EVM_RPC_URLS: "${chain}" is not an EVM CAIP-2 chain id (eip155:<number>)`);
      out[chain] = rpcUrl(`SIGIL_EVM_RPC_URLS["${chain}"]`, String(url), httpHosts);
    }
  }
  for (const [name, value] of Object.entries(env)) {
    const m = /^SIGIL_EVM_RPC_(\d+)$/.exec(name);
    if (m && value) out[`eip155:${m[1]}`] = rpcUrl(name, value, httpHosts);
  }
  return out;
}

/**
 * The Solana clusters the API's caip2 accepts, by the name their setting carries; the aliases
 * (`solana:mainnet`, `solana:devnet`) and the longer genesis-hash forms name the same cluster.
 */
export const SOLANA_CLUSTERS: Record<string, { caip2: string; aliases: string[] }> = {
  MAINNET: { caip2: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp', aliases: ['solana:mainnet', 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d'] },
  DEVNET: { caip2: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', aliases: ['solana:devnet', 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG'] },
};

/** The canonical CAIP-2 id of a Solana cluster named any way the API accepts; undefined for others. */
export function solanaCluster(caip2: string): { name: string; caip2: string } | undefined {
  for (const [name, c] of Object.entries(SOLANA_CLUSTERS)) if (c.caip2 === caip2 || c.aliases.includes(caip2)) return { name, caip2: c.caip2 };
  return undefined;
}

/** Names the setting that configures a cluster's RPC, for the error that refuses a cluster without one. */
export function solanaRpcSetting(caip2: string): string {
  return `SIGIL_SOLANA_RPC_${solanaCluster(caip2)?.name ?? '<MAINNET|DEVNET>'}`;
}

function solanaRpcUrls(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  const httpHosts = evmRpcHttpHosts(env);
  for (const [name, value] of Object.entries(env)) {
    const m = /^SIGIL_SOLANA_RPC_([A-Z0-9_]+)$/.exec(name);
    if (!m || !value) continue;
    const cluster = SOLANA_CLUSTERS[m[1]];
    if (!cluster) throw new Error(`${name}: unknown Solana cluster "${m[1]}"; set SIGIL_SOLANA_RPC_MAINNET or SIGIL_SOLANA_RPC_DEVNET`);
    out[cluster.caip2] = rpcUrl(name, value, httpHosts);
  }
  return out;
}

/** SIGIL_SOLANA_SIMULATION_CLUSTER as a canonical CAIP-2 id: a known cluster that has an RPC, or unset. */
function solanaSimulationCluster(env: NodeJS.ProcessEnv): string | undefined {
  const v = env.SIGIL_SOLANA_SIMULATION_CLUSTER;
  if (!v) return undefined;
  const caip2 = solanaCluster(v)?.caip2 ?? SOLANA_CLUSTERS[v.toUpperCase()]?.caip2;
  if (!caip2) throw new Error(`SIGIL_SOLANA_SIMULATION_CLUSTER must name a Solana cluster (solana:mainnet, solana:devnet, their CAIP-2 ids, MAINNET or DEVNET), got "${v.slice(0, 80)}"`);
  if (!solanaRpcUrls(env)[caip2]) throw new Error(`SIGIL_SOLANA_SIMULATION_CLUSTER names ${v}, which has no RPC: set ${solanaRpcSetting(caip2)} too`);
  return caip2;
}

/** Fee caps of one chain, wei as decimal strings (Config.evmFeeCaps). */
export interface EvmFeeCap {
  maxFeePerGas: string;
  maxTxFee: string;
}

const WEI = /^(0|[1-9][0-9]{0,77})$/;

/** SIGIL_EVM_MAX_FEE_PER_GAS(_<chain id>) and SIGIL_EVM_MAX_TX_FEE(_<chain id>). */
function evmFeeCaps(env: NodeJS.ProcessEnv): Config['evmFeeCaps'] {
  const wei = (name: string, v: string | undefined, fallback?: string) => {
    if (v === undefined || v === '') return fallback;
    if (!WEI.test(v.trim())) throw new Error(`${name} must be a whole number of wei (decimal), got "${v}"`);
    return v.trim();
  };
  const caps: Config['evmFeeCaps'] = {
    default: {
      maxFeePerGas: wei('SIGIL_EVM_MAX_FEE_PER_GAS', env.SIGIL_EVM_MAX_FEE_PER_GAS, '1000000000000')!,
      maxTxFee: wei('SIGIL_EVM_MAX_TX_FEE', env.SIGIL_EVM_MAX_TX_FEE, '100000000000000000')!,
    },
    chains: {},
  };
  for (const [name, value] of Object.entries(env)) {
    const m = /^SIGIL_EVM_MAX_(FEE_PER_GAS|TX_FEE)_(\d+)$/.exec(name);
    if (!m || !value) continue;
    const chain = (caps.chains[`eip155:${m[2]}`] ??= {});
    chain[m[1] === 'FEE_PER_GAS' ? 'maxFeePerGas' : 'maxTxFee'] = wei(name, value);
  }
  return caps;
}

/** The setting that caps `which` on `caip2`, named in a refusal: the chain's own when set, else the default. */
export function evmFeeCapSetting(caps: Config['evmFeeCaps'], caip2: string, which: keyof EvmFeeCap): { wei: bigint; setting: string } {
  const id = /^eip155:(\d+)$/.exec(caip2)?.[1] ?? '<chain id>';
  const base = which === 'maxFeePerGas' ? 'SIGIL_EVM_MAX_FEE_PER_GAS' : 'SIGIL_EVM_MAX_TX_FEE';
  const own = caps.chains[caip2]?.[which];
  return own !== undefined ? { wei: BigInt(own), setting: `${base}_${id}` } : { wei: BigInt(caps.default[which]), setting: `${base} (or ${base}_${id} for this chain)` };
}

/**
 * SIGIL_EVM_RPC_HTTP_HOSTS: host names, IP addresses and `loopback` whose RPC URLs may use plain http.
 * Unset means `loopback`; an empty value means none (https everywhere).
 */
function evmRpcHttpHosts(env: NodeJS.ProcessEnv): string[] {
  const v = env.SIGIL_EVM_RPC_HTTP_HOSTS;
  const entries = (v === undefined ? 'loopback' : v).split(',').map((h) => h.trim().toLowerCase()).filter((h) => h !== '');
  for (const e of entries) {
    if (e !== 'loopback' && isIP(e.replace(/^\[|\]$/g, '')) === 0 && !/^[a-z0-9]([a-z0-9-]{0,62})(\.[a-z0-9]([a-z0-9-]{0,62}))*$/.test(e)) {
      throw new Error(`SIGIL_EVM_RPC_HTTP_HOSTS: "${e}" is not a host name, an IP address or loopback`);
    }
  }
  return entries;
}

/** Whether `host` (a URL's hostname) is one of the plain-http hosts listed. */
function httpHostListed(host: string, listed: string[]): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  for (const e of listed) {
    if (e === 'loopback') {
      if (h === 'localhost' || h === '::1' || (isIP(h) === 4 && h.startsWith('127.'))) return true;
    } else if (e.replace(/^\[|\]$/g, '') === h) {
      return true;
    }
  }
  return false;
}

/** An RPC URL: https, or http to a listed host (the node's answers decide what Sigil signs). */
function rpcUrl(name: string, v: string, httpHosts: string[]): string {
  const url = httpUrl(name, v)!;
  const u = new URL(url);
  if (u.protocol === 'http:' && !httpHostListed(u.hostname, httpHosts)) {
    throw new Error(`${name} must be an https URL (plain http only for hosts listed in SIGIL_EVM_RPC_HTTP_HOSTS, loopback by default), got "${u.origin}"`);
  }
  return url;
}

/** One ERC-20 token of SIGIL_EVM_ASSETS (v1AssetMetadata's fields, its address lower-case). */
export interface EvmAssetSetting {
  address: string;
  symbol: string;
  decimals: number;
  name: string;
  stable: boolean;
  logoUrl?: string;
}

const EVM_ASSETS_SHAPE = 'SIGIL_EVM_ASSETS must be a JSON object of CAIP-2 chain ids to lists of ERC-20 tokens, e.g. {"eip155:1":[{"address":"0x…","symbol":"USDC","decimals":6,"name":"USD Coin","stable":true}]}';

function evmAssets(env: NodeJS.ProcessEnv, rpcUrls: Record<string, string>): Record<string, EvmAssetSetting[]> {
  if (!env.SIGIL_EVM_ASSETS) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(env.SIGIL_EVM_ASSETS);
  } catch {
    throw new Error(EVM_ASSETS_SHAPE);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error(EVM_ASSETS_SHAPE);
  const out: Record<string, EvmAssetSetting[]> = {};
  for (const [chain, tokens] of Object.entries(parsed)) {
    const where = `SIGIL_EVM_ASSETS["${chain}"]`;
    if (!/^eip155:[1-9][0-9]{0,18}$/.test(chain)) throw new Error(`${where}: "${chain}" is not an EVM CAIP-2 chain id (eip155:<number>)`);
    if (!rpcUrls[chain]) throw new Error(`${where}: the chain has no JSON-RPC URL to read balances from; set ${evmRpcSetting(chain)}`);
    if (!Array.isArray(tokens)) throw new Error(`${where} must be a list of tokens`);
    const seen = new Set<string>();
    out[chain] = tokens.map((t: Record<string, unknown>, i) => {
      const at = `${where}[${i}]`;
      if (typeof t !== 'object' || t === null) throw new Error(`${at} must be an object {address, symbol, decimals, name, stable?}`);
      if (typeof t.address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(t.address)) throw new Error(`${at}.address must be a 0x-prefixed 20-byte hex address`);
      if (typeof t.symbol !== 'string' || t.symbol.trim() === '') throw new Error(`${at}.symbol must be a non-empty string`);
      if (typeof t.name !== 'string' || t.name.trim() === '') throw new Error(`${at}.name must be a non-empty string`);
      if (!Number.isInteger(t.decimals) || (t.decimals as number) < 0 || (t.decimals as number) > 77) throw new Error(`${at}.decimals must be an integer from 0 to 77`);
      if (t.stable !== undefined && typeof t.stable !== 'boolean') throw new Error(`${at}.stable must be true or false`);
      if (t.logoUrl !== undefined && typeof t.logoUrl !== 'string') throw new Error(`${at}.logoUrl must be a URL`);
      const address = t.address.toLowerCase();
      if (seen.has(address)) throw new Error(`${at}.address ${address} is listed twice`);
      seen.add(address);
      return {
        address,
        symbol: t.symbol,
        decimals: t.decimals as number,
        name: t.name,
        stable: t.stable === true,
        ...(t.logoUrl !== undefined ? { logoUrl: httpUrl(`${at}.logoUrl`, t.logoUrl)! } : {}),
      };
    });
  }
  return out;
}

function webhookConfig(env: NodeJS.ProcessEnv): Config['webhooks'] {
  const retryBaseMs = bounded('SIGIL_WEBHOOK_RETRY_BASE_MS', env.SIGIL_WEBHOOK_RETRY_BASE_MS, 10_000, 1, 86_400_000);
  return {
    allowedHosts: (env.SIGIL_WEBHOOK_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim()).filter((h) => h !== ''),
    retryBaseMs,
    retryMaxMs: bounded('SIGIL_WEBHOOK_RETRY_MAX_MS', env.SIGIL_WEBHOOK_RETRY_MAX_MS, Math.max(3_600_000, retryBaseMs), retryBaseMs, 7 * 86_400_000),
    maxAttempts: bounded('SIGIL_WEBHOOK_MAX_ATTEMPTS', env.SIGIL_WEBHOOK_MAX_ATTEMPTS, 20, 1, 1000),
    timeoutMs: bounded('SIGIL_WEBHOOK_TIMEOUT_MS', env.SIGIL_WEBHOOK_TIMEOUT_MS, 10_000, 100, 120_000),
    concurrency: bounded('SIGIL_WEBHOOK_CONCURRENCY', env.SIGIL_WEBHOOK_CONCURRENCY, 8, 1, 256),
    pollMs: bounded('SIGIL_WEBHOOK_POLL_MS', env.SIGIL_WEBHOOK_POLL_MS, 1_000, 10, 600_000),
    failingAfter: bounded('SIGIL_WEBHOOK_FAILING_AFTER', env.SIGIL_WEBHOOK_FAILING_AFTER, 5, 1, 1000),
  };
}

/** The tests' velocity clock file (Config.testVelocityClockFile): refused unless tests are explicitly enabled. */
export const TEST_CLOCK_CONSENT = 'yes-this-is-a-test';

function testClock(env: NodeJS.ProcessEnv): string | undefined {
  const file = env.SIGIL_TEST_VELOCITY_CLOCK_FILE || undefined;
  if (file === undefined) return undefined;
  if (env.SIGIL_ENABLE_TEST_CLOCK !== TEST_CLOCK_CONSENT) {
    throw new Error(`SIGIL_TEST_VELOCITY_CLOCK_FILE moves the clock of velocity control windows and exists for tests only; it needs SIGIL_ENABLE_TEST_CLOCK=${TEST_CLOCK_CONSENT}`);
  }
  return file;
}

/** A whole number from `min` to `max`, or the default when unset. */
function simulationMethod(v: string | undefined): Config['evmSimulationMethod'] {
  const methods = ['auto', 'eth_simulateV1', 'debug_traceCall', 'off'] as const;
  if (!v) return 'auto';
  const found = methods.find((m) => m === v);
  if (!found) throw new Error(`SIGIL_EVM_SIMULATION_METHOD must be one of ${methods.join(', ')}, got "${v}"`);
  return found;
}

function bounded(name: string, v: string | undefined, fallback: number, min: number, max: number): number {
  const n = int(name, v || undefined, fallback);
  if (n < min || n > max) throw new Error(`${name} must be from ${min} to ${max}, got "${v}"`);
  return n;
}

function transportLimits(
  env: NodeJS.ProcessEnv,
): Pick<Config, 'maxJsonDepth' | 'maxJsonItems' | 'requestTimeoutMs' | 'headersTimeoutMs' | 'keepAliveTimeoutMs' | 'maxConnections' | 'logBufferBytes'> {
  // Past a few thousand levels JSON.stringify and every recursive reader overflow the stack.
  const maxJsonDepth = bounded('SIGIL_MAX_JSON_DEPTH', env.SIGIL_MAX_JSON_DEPTH, DEFAULTS.maxJsonDepth, 8, 256);
  const maxJsonItems = bounded('SIGIL_MAX_JSON_ITEMS', env.SIGIL_MAX_JSON_ITEMS, DEFAULTS.maxJsonItems, 10, 100_000);
  const requestTimeoutMs = bounded('SIGIL_REQUEST_TIMEOUT_MS', env.SIGIL_REQUEST_TIMEOUT_MS, DEFAULTS.requestTimeoutMs, 100, 3_600_000);
  const headersTimeoutMs = bounded('SIGIL_HEADERS_TIMEOUT_MS', env.SIGIL_HEADERS_TIMEOUT_MS, Math.min(DEFAULTS.headersTimeoutMs, requestTimeoutMs), 100, 3_600_000);
  // node:http refuses a headers timeout longer than the request timeout.
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new Error(`SIGIL_HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed SIGIL_REQUEST_TIMEOUT_MS (${requestTimeoutMs})`);
  }
  return {
    maxJsonDepth,
    maxJsonItems,
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs: bounded('SIGIL_KEEP_ALIVE_TIMEOUT_MS', env.SIGIL_KEEP_ALIVE_TIMEOUT_MS, DEFAULTS.keepAliveTimeoutMs, 100, 3_600_000),
    maxConnections: bounded('SIGIL_MAX_CONNECTIONS', env.SIGIL_MAX_CONNECTIONS, DEFAULTS.maxConnections, 1, 1_000_000),
    logBufferBytes: bounded('SIGIL_LOG_BUFFER_BYTES', env.SIGIL_LOG_BUFFER_BYTES, DEFAULTS.logBufferBytes, 4096, 1024 * 1024 * 1024),
  };
}

function operatorPort(v: string | undefined, shamir: boolean): number | undefined {
  if (v === undefined) return shamir ? 8083 : undefined; // 8082 is the frames server's
  const n = int('--operator-port', v, 0);
  if (n > 65535) throw new Error(`--operator-port must be a TCP port, got "${v}"`);
  return n;
}

function workers(v: string | undefined): number {
  if (v === undefined) return 1;
  if (v === 'auto') return availableParallelism();
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new Error(`--workers must be a number of processes from 1 to 256 or "auto", got "${v}"`);
  return n;
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

function senderDomains(v: string | undefined): string[] {
  const items = (v ?? '').split(',').map((s) => s.trim().toLowerCase().replace(/^@/, '')).filter((s) => s !== '');
  for (const d of items) {
    if (!/^[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63})+$/.test(d)) throw new Error(`SIGIL_EMAIL_ALLOWED_SENDER_DOMAINS: "${d}" is not a domain name`);
  }
  return items;
}

const DEFAULT_OIDC_ISSUERS =
  'https://accounts.google.com,accounts.google.com=https://www.googleapis.com/oauth2/v3/certs,https://appleid.apple.com,https://www.facebook.com';

function oidcConfig(env: NodeJS.ProcessEnv): Pick<Config, 'oidcIssuers' | 'oidcSelfIssuer'> {
  const oidcSelfIssuer = env.SIGIL_OIDC_SELF_ISSUER || 'urn:sigil:oauth2';
  const name = 'SIGIL_OIDC_ISSUERS';
  const oidcIssuers: Config['oidcIssuers'] = [];
  for (const item of (env.SIGIL_OIDC_ISSUERS ?? DEFAULT_OIDC_ISSUERS).split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    // Issuers carry no query string (OpenID Connect Discovery §2), so the first `=` ends the issuer.
    const at = item.indexOf('=');
    const issuer = at < 0 ? item : item.slice(0, at).trim();
    const jwksUri = at < 0 ? undefined : httpUrl(name, item.slice(at + 1).trim());
    if (issuer === '') throw new Error(`${name}: "${item}" names no issuer`);
    if (at >= 0 && !jwksUri) throw new Error(`${name}: "${item}" names no JWKS URL after "="`);
    if (!jwksUri && !/^https?:\/\/[^/?#]/i.test(issuer)) throw new Error(`${name}: issuer "${issuer}" has no JWKS URL, so it must be an http(s) URL to discover its keys`);
    if (issuer === oidcSelfIssuer) throw new Error(`${name}: ${issuer} is this deployment's own issuer (SIGIL_OIDC_SELF_ISSUER)`);
    if (oidcIssuers.some((i) => i.issuer === issuer)) throw new Error(`${name}: issuer ${issuer} is listed twice`);
    oidcIssuers.push(jwksUri ? { issuer, jwksUri } : { issuer });
  }
  return { oidcIssuers, oidcSelfIssuer };
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

/** Signups through the auth proxy one client address may make in an hour, unless configured. */
export const DEFAULT_SIGNUPS_PER_HOUR = 20;

/** `n` an hour (0: no limit): a bucket of `n`, refilled evenly over the hour. */
function perHour(name: string, text: string | undefined, fallback: number): RateLimit | undefined {
  const n = int(name, text || undefined, fallback);
  if (n < 0) throw new Error(`${name} must be a whole number from 0 (no limit), got "${text}"`);
  return n === 0 ? undefined : { rps: n / 3600, burst: n };
}

/** `<prefix>_RPS` (0 or unset: no limit) and `<prefix>_BURST`. */
function rateLimit(prefix: string, rpsText: string | undefined, burstText: string | undefined): RateLimit | undefined {
  const rps = rpsText === undefined || rpsText === '' ? 0 : Number(rpsText);
  if (!Number.isFinite(rps) || rps < 0) throw new Error(`${prefix}_RPS must be a non-negative number of requests per second, got "${rpsText}"`);
  if (rps === 0) return undefined;
  const burst = int(`${prefix}_BURST`, burstText || undefined, Math.ceil(rps));
  if (burst < 1) throw new Error(`${prefix}_BURST must be at least 1, got "${burstText}"`);
  return { rps, burst };
}
