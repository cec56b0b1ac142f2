// Help text of the `sigil` command: `sigil help` lists every command, `sigil help CMD` and
// `sigil CMD --help` explain one. Kept beside main.ts's dispatch so each command has one entry here.

import { PROXY_CONFIG_HELP } from './proxy-config-help.js';
import { OPERATOR_TOOL_HELP } from './operator-tools.js';

export interface CommandHelp {
  usage: string;
  summary: string;
  details: string;
}

export const COMMANDS: Record<string, CommandHelp> = {
  init: {
    usage: 'sigil init --data-dir DIR [--json] [--shares N --threshold M [--operator-keys PUB1,PUB2,…]]',
    summary: 'create a deployment and print its root credentials once',
    details: `Creates the data directory, the master key file DIR/master.key (mode 600; unless SIGIL_MASTER_KEY
is set), the deployment signer key, the root organization, its root user and a P-256 API key, and
prints the credentials once (--json: one JSON object). Refuses, changing nothing, if DIR (or
DATABASE_URL) already holds a deployment. SIGIL_SEAL chooses what wraps the data key (docs/operator-guide.md
"Custody"): static (the master key), pkcs11 (creates the AES key on the HSM token) or shamir (prints
--shares N shares, any --threshold M of which unseal; with --operator-keys, each share is encrypted to
the P-256 public key of the same position, from "sigil keys generate").`,
  },
  serve: {
    usage: 'sigil serve --data-dir DIR [--port N] [--auth-proxy-port N] [--frames-port N] [--host H] [--workers N|auto]',
    summary: 'run the public API, the auth proxy and the embedded-wallet frames',
    details: `Serves the public API (default port 8080), the auth proxy (8081) and the export, import,
export-and-sign and auth frames (the auth proxy's port + 1, or a free port when that is 0; their URLs
are listed in /.well-known/sigil.json) and prints "listening <publicApiUrl> <authProxyUrl>" when
ready. Port 0 picks a free port.
--workers N runs N processes on the same ports (node cluster; "auto" = one per core, default 1); a
worker that dies is restarted, on the ports first announced. On SIGTERM or SIGINT Sigil stops
accepting connections, lets in-flight requests finish, closes the database and exits 0; whatever
hangs, it has exited within SIGIL_SHUTDOWN_TIMEOUT_MS (default 10000). Transport limits:
SIGIL_REQUEST_TIMEOUT_MS, SIGIL_HEADERS_TIMEOUT_MS, SIGIL_KEEP_ALIVE_TIMEOUT_MS,
SIGIL_MAX_CONNECTIONS; body limits: SIGIL_BODY_LIMIT_BYTES, SIGIL_MAX_JSON_DEPTH,
SIGIL_MAX_JSON_ITEMS; SIGIL_LOG_BUFFER_BYTES bounds log lines waiting for stderr (docs/limits.md "Limits").`,
  },
  start: {
    usage: 'sigil start [same flags as serve]',
    summary: 'init on first run, then serve (what npm start runs)',
    details: 'Runs "sigil init" when the data directory holds no deployment yet, then "sigil serve".',
  },
  config: {
    usage: 'sigil config [--data-dir DIR] [serve flags]',
    summary: 'print the effective configuration as JSON, secrets redacted',
    details: `Prints what flags, environment and defaults add up to, as "sigil serve" would use it. The master
key, passwords, tokens and the password in DATABASE_URL are shown as REDACTED; masterKeySource says
where the master key comes from.`,
  },
  'rotate-master-key': {
    usage: 'sigil rotate-master-key --data-dir DIR [--keep-old]',
    summary: 'wrap the data key with a new master key, without downtime',
    details: `Running Sigil processes keep serving (they hold the unwrapped data key); processes started
afterwards need the new key, and the old one no longer opens the deployment.
Key file: DIR/master.key is replaced atomically by a new key (mode 600). The old key is removed, or
kept as DIR/master.key.old-<time> with --keep-old (backups taken before the rotation need it). An
interrupted rotation is finished or undone by running the command again.
SIGIL_MASTER_KEY: the new key is printed once (or taken from SIGIL_NEW_MASTER_KEY); set
SIGIL_MASTER_KEY to it everywhere before restarting any process.`,
  },
  backup: {
    usage: 'sigil backup --data-dir DIR --out FILE [--force]',
    summary: 'copy the embedded SQLite store to FILE, consistently, while serving',
    details: `Writes a consistent snapshot of DIR/sigil.sqlite to FILE (mode 600) even while Sigil serves, and
checks its integrity. --force overwrites an existing FILE. The master key is not in the backup: keep
it separately. With DATABASE_URL (PostgreSQL) use pg_dump instead; the command says how.`,
  },
  restore: {
    usage: 'sigil restore --data-dir DIR --from FILE [--force]',
    summary: 'put a backup in place as the embedded store of DIR',
    details: `Checks FILE (integrity, migrations, and that the master key of DIR or SIGIL_MASTER_KEY opens it)
before replacing anything. Refuses while a process has DIR's database open. Refuses a DIR that
already holds a database unless --force, which keeps the replaced one as sigil.sqlite.before-restore-<time>.
For a new DIR, copy the master.key of the deployment the backup came from into it first.`,
  },
  operator: {
    usage:
      'sigil operator unseal [--url URL] [--reset] [--key-file FILE]\n       sigil operator seal\n       sigil operator seal-status [--url URL] [--json]\n       sigil operator migrate-seal [--shares N --threshold M] [--keep-old]\n       sigil operator rekey [--shares N --threshold M]',
    summary: 'unseal a process, seal the whole deployment in an emergency, or show the seal status',
    details: `The seals are chosen by SIGIL_SEAL (docs/operator-guide.md "Custody"). With the shamir seal a process starts
sealed: "sigil operator unseal" reads one share from standard input and gives it to the process's
operator server (--url, default http://SIGIL_OPERATOR_HOST:SIGIL_OPERATOR_PORT, loopback:8083);
once the threshold of shares is given the process unseals. --reset forgets the shares given so far.
A share encrypted to an operator key (--operator-keys) is decrypted on the spot with --key-file.
"sigil operator seal" seals every process of the deployment within SIGIL_SEAL_WATCH_MS (1000 ms):
each answers 503 "sealed" and overwrites its data key. With a static or pkcs11 seal, "sigil operator
unseal" lifts that seal after checking the configured seal opens the deployment, and the processes
unseal by themselves.
"migrate-seal" opens the data key with the deployment's current seal (its master key, its HSM through
SIGIL_PKCS11_*, or its shares on standard input, one a line) and wraps it with the seal SIGIL_SEAL now
names, in one update: nothing else is re-encrypted and running processes serve on; the old seal stops
opening the deployment. "rekey" issues new shamir shares (--shares, --threshold) the same way.`,
  },
  audit: {
    usage: 'sigil audit export --data-dir DIR [--out FILE]\n       sigil audit verify --data-dir DIR [--file FILE]',
    summary: 'export the audit log, or verify it (live, or an export) with the deployment keys',
    details: `export writes the audit log as JSON lines (stdout unless --out): each process's stream of
MACed, chained entries, the signed checkpoints of the streams' heads, and the entries of the
first single chain.
verify checks the streams with the deployment's audit key (derived from its data key, so the master
key or key file must be available) and the checkpoints with its signer key; without --file it reads
the live database and also checks every activity and vote against the entries describing them.
It exits 1 listing every problem: a changed, removed or added entry, a stream cut before its last
checkpoint, an activity or vote row that was changed, deleted or recorded without the log.`,
  },
  'verify-proofs': {
    usage: 'sigil verify-proofs --activity FILE --boot-proof FILE --signer HEX',
    summary: "check an activity's app proofs offline",
    details: "Verifies an activity's app proofs against a boot proof and the deployment signer public key.",
  },
  'proxy-config': PROXY_CONFIG_HELP,
  keys: OPERATOR_TOOL_HELP.keys,
  request: OPERATOR_TOOL_HELP.request,
  whoami: OPERATOR_TOOL_HELP.whoami,
  activities: OPERATOR_TOOL_HELP.activities,
  version: { usage: 'sigil version', summary: 'print the version', details: '' },
  help: { usage: 'sigil help [COMMAND]', summary: 'this text, or one command in detail', details: '' },
};

const ENVIRONMENT = `environment: SIGIL_DATA_DIR, SIGIL_PORT, SIGIL_AUTH_PROXY_PORT, SIGIL_HOST, SIGIL_WORKERS,
             SIGIL_MASTER_KEY (replaces DIR/master.key), SIGIL_SHUTDOWN_TIMEOUT_MS, SIGIL_LOG_LEVEL,
             DATABASE_URL (postgres://…; embedded SQLite in the data directory when unset);
             "sigil config" shows them all`;

export function usage(version: string): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return `sigil ${version}: self-hosted wallet, key and user management (Turnkey API)

usage: sigil COMMAND [flags]        sigil help COMMAND  or  sigil COMMAND --help  for details

commands:
${lines.join('\n')}

${ENVIRONMENT}
`;
}

export function commandHelp(name: string): string | undefined {
  const c = COMMANDS[name];
  if (!c) return undefined;
  return `usage: ${c.usage}\n\n${c.summary}.${c.details ? `\n\n${c.details}` : ''}\n`;
}
