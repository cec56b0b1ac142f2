// Operator CLI commands that speak the public API of a running Sigil like any client (docs/operator-guide.md
// "Operator CLI"): `keys generate` makes a P-256 API key file, `request` sends one stamped request
// (as the reference service's `turnkey request` does), `whoami`, and `activities list|show|approve|reject`
// for consensus votes from a terminal (docs/reference/organizations.md: a vote is approve_activity /
// reject_activity by fingerprint); `show` prints what a signature signs as the server decoded it (the
// record's `decodedView`, docs/policies.md "Approving what you see"), so the approver sees it before voting.
// Stamping follows docs/reference/api.md "Stamps" (src/cli/api-client.ts).
// Unlike init/serve these never open the data directory: they need only a URL and a key.
import { writeFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { bytesToHex, generateP256KeyPair } from '../crypto/p256.js';
import { CliError, httpError, loadKeyFile, stampedPost, type ApiKeyFile } from './api-client.js';

interface Help {
  usage: string;
  summary: string;
  details: string;
}

const COMMON = `Connection: --url URL (or SIGIL_URL; default http://127.0.0.1:8080), --key-file FILE (or
SIGIL_KEY_FILE; a "sigil keys generate" file, or "sigil init --json" output), --organization-id ID (or
SIGIL_ORGANIZATION_ID; else the organizationId in the key file).`;

export const OPERATOR_TOOL_HELP: Record<'keys' | 'request' | 'whoami' | 'activities', Help> = {
  keys: {
    usage: 'sigil keys generate --out FILE',
    summary: 'create a P-256 API key pair in a new file (mode 600)',
    details: `Writes {"publicKey": <compressed hex>, "privateKey": <hex>} to FILE with mode 600 and prints the
public key. Refuses to overwrite an existing FILE. Register the public key for a user with
create_api_keys (curveType API_KEY_CURVE_P256), then use FILE with --key-file.`,
  },
  request: {
    usage: 'sigil request --path /public/v1/{query|submit}/OP --body JSON [--key-file FILE] [--url URL] [--organization-id ID]',
    summary: 'send one stamped request to the public API and print the answer',
    details: `Signs the body with the key file's P-256 key (an X-Stamp header, as @turnkey/api-key-stamper
does) and POSTs it. A body without "organizationId" gets the configured one; a submit body without
"timestampMs" gets the current time. Prints the JSON answer; exits 1 when the answer is an HTTP error.
Example: sigil request --path /public/v1/query/whoami --body '{}'
${COMMON}`,
  },
  whoami: {
    usage: 'sigil whoami [--key-file FILE] [--url URL] [--organization-id ID]',
    summary: 'show the organization and user the key belongs to',
    details: `Queries /public/v1/query/whoami with the key and prints {organizationId, organizationName, userId,
username}.
${COMMON}`,
  },
  activities: {
    usage:
      'sigil activities list [--status S ...] [--type T ...] [--limit N] [--json]\n' +
      '       sigil activities show --activity-id ID [--json]\n' +
      '       sigil activities approve|reject (--fingerprint F | --activity-id ID) [--json]',
    summary: 'list activities, or approve or reject one waiting for consensus',
    details: `list prints id, status, type, creation time and fingerprint, newest first. --status takes
ACTIVITY_STATUS_CONSENSUS_NEEDED or its short form CONSENSUS_NEEDED (also --pending); --type an
ACTIVITY_TYPE_... value; both may repeat.
show prints one activity and, when it signs something, what it signs as the server decoded it from
the stored intent (the record's decodedView): a one-line summary, DANGER/CHECK flags (proxy
upgrades, delegatecalls, EIP-7702 delegations, undecodable calls), every decoded field, the digest
and the consensus (policies, votes, what is still needed). --json prints the record with it.
approve / reject cast the key's vote on an activity in ACTIVITY_STATUS_CONSENSUS_NEEDED, named by its
fingerprint or by its id (the fingerprint is then fetched), and print the activity's status after it.
${COMMON}`,
  },
};

export function isOperatorTool(command: string | undefined): command is keyof typeof OPERATOR_TOOL_HELP {
  return command !== undefined && Object.hasOwn(OPERATOR_TOOL_HELP, command);
}

function helpText(name: keyof typeof OPERATOR_TOOL_HELP): string {
  const c = OPERATOR_TOOL_HELP[name];
  return `usage: ${c.usage}\n\n${c.summary}.\n\n${c.details}\n`;
}

const DEFAULT_URL = 'http://127.0.0.1:8080';

const CONNECTION_OPTIONS = {
  url: { type: 'string' },
  'key-file': { type: 'string' },
  'organization-id': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

type Values = Record<string, string | boolean | string[] | undefined>;

function parse(name: keyof typeof OPERATOR_TOOL_HELP, args: string[], options: ParseArgsConfig['options']): { values: Values; positionals: string[] } {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true }) as { values: Values; positionals: string[] };
  } catch (err) {
    throw new CliError(`${(err as Error).message}\n\n${helpText(name)}`);
  }
}

/** The connection a command uses: flags first, then SIGIL_* environment, then the key file. */
class Connection {
  readonly url: string;
  readonly key: ApiKeyFile;
  readonly #organizationId: string | undefined;

  constructor(values: Values, io: Io) {
    this.url = (values.url as string | undefined) ?? io.env.SIGIL_URL ?? DEFAULT_URL;
    const keyFile = (values['key-file'] as string | undefined) ?? io.env.SIGIL_KEY_FILE;
    if (!keyFile) throw new CliError('no API key: pass --key-file FILE or set SIGIL_KEY_FILE (create one with "sigil keys generate --out FILE")');
    this.key = loadKeyFile(keyFile, (t) => io.err(`${t}\n`));
    this.#organizationId = (values['organization-id'] as string | undefined) ?? (io.env.SIGIL_ORGANIZATION_ID || undefined) ?? this.key.organizationId;
  }

  get organizationIdOrUndefined(): string | undefined {
    return this.#organizationId;
  }

  get organizationId(): string {
    if (!this.#organizationId) throw new CliError('no organization id: pass --organization-id ID or set SIGIL_ORGANIZATION_ID');
    return this.#organizationId;
  }

  /** A query; an HTTP error becomes a CliError naming the path and the server's message. */
  async query(operation: string, body: Record<string, unknown>): Promise<any> {
    const path = `/public/v1/query/${operation}`;
    const res = await stampedPost(this.url, path, JSON.stringify({ organizationId: this.organizationId, ...body }), this.key);
    if (!res.ok) throw httpError(path, res);
    return res.body;
  }

  /** An activity in the body shape of @turnkey/sdk-server (docs/reference/api.md "Transport"). */
  async submit(operation: string, type: string, parameters: Record<string, unknown>): Promise<any> {
    const path = `/public/v1/submit/${operation}`;
    const body = JSON.stringify({ parameters, organizationId: this.organizationId, timestampMs: String(Date.now()), type });
    const res = await stampedPost(this.url, path, body, this.key);
    if (!res.ok) throw httpError(path, res);
    return res.body;
  }
}

const pretty = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;

async function keysCommand(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parse('keys', args, { out: { type: 'string' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) return io.out(helpText('keys'));
  if (positionals[0] !== 'generate' || positionals.length > 1) {
    throw new CliError(`unknown keys command "${positionals.join(' ')}": expected "keys generate --out FILE"\n\n${helpText('keys')}`);
  }
  const out = values.out as string | undefined;
  if (!out) throw new CliError(`sigil keys generate needs --out FILE (the new key file)\n\n${helpText('keys')}`);
  const pair = generateP256KeyPair();
  const content = `${JSON.stringify({ publicKey: bytesToHex(pair.publicKey), privateKey: bytesToHex(pair.privateKey) }, null, 2)}\n`;
  pair.privateKey.fill(0);
  try {
    // 'wx': never replace a key someone may still depend on; mode 600 from the first byte written.
    writeFileSync(out, content, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new CliError(`${out} already exists: refusing to overwrite a key file; choose another --out path`);
    throw new CliError(`cannot write ${out}: ${(err as Error).message}`);
  }
  io.err(`wrote ${out} (mode 600)\n`);
  io.out(`${bytesToHex(pair.publicKey)}\n`);
}

const PATH_RE = /^\/public\/v1\/(query|submit)\/[a-z0-9_]+$/;

async function requestCommand(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parse('request', args, { ...CONNECTION_OPTIONS, path: { type: 'string' }, body: { type: 'string' } });
  if (values.help) return io.out(helpText('request'));
  if (positionals.length > 0) throw new CliError(`unexpected argument "${positionals[0]}"\n\n${helpText('request')}`);
  const path = values.path as string | undefined;
  if (!path) throw new CliError(`sigil request needs --path, e.g. --path /public/v1/query/whoami\n\n${helpText('request')}`);
  const m = PATH_RE.exec(path);
  if (!m) throw new CliError(`--path "${path}" is not a public API path: expected /public/v1/query/<operation> or /public/v1/submit/<operation>`);
  const rawBody = (values.body as string | undefined) ?? '{}';
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch (err) {
    throw new CliError(`--body is not valid JSON (${(err as Error).message}): pass one JSON object, e.g. --body '{"organizationId":"..."}'`);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new CliError('--body must be a JSON object, e.g. --body \'{}\'');
  const conn = new Connection(values, io);
  const obj = body as Record<string, unknown>;
  let text = rawBody;
  // The body is sent exactly as given unless a field has to be filled in.
  const fill: Record<string, unknown> = {};
  if (obj.organizationId === undefined && conn.organizationIdOrUndefined) fill.organizationId = conn.organizationIdOrUndefined;
  if (m[1] === 'submit' && obj.timestampMs === undefined) fill.timestampMs = String(Date.now());
  if (Object.keys(fill).length > 0) text = JSON.stringify({ ...obj, ...fill });
  const res = await stampedPost(conn.url, path, text, conn.key);
  io.out(typeof res.body === 'string' ? `${res.body}\n` : pretty(res.body));
  if (!res.ok) {
    io.err(`sigil: ${httpError(path, res).message}\n`);
    process.exitCode = 1;
  }
}

async function whoamiCommand(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parse('whoami', args, CONNECTION_OPTIONS);
  if (values.help) return io.out(helpText('whoami'));
  if (positionals.length > 0) throw new CliError(`unexpected argument "${positionals[0]}"\n\n${helpText('whoami')}`);
  const conn = new Connection(values, io);
  io.out(pretty(await conn.query('whoami', {})));
}

const full = (prefix: string, v: string) => (v.startsWith(prefix) ? v : `${prefix}${v.toUpperCase()}`);

function timeOf(ts: { seconds?: string } | undefined): string {
  const s = Number(ts?.seconds);
  return Number.isFinite(s) && s > 0 ? new Date(s * 1000).toISOString() : '';
}

async function activitiesCommand(args: string[], io: Io): Promise<void> {
  const { values, positionals } = parse('activities', args, {
    ...CONNECTION_OPTIONS,
    status: { type: 'string', multiple: true },
    type: { type: 'string', multiple: true },
    pending: { type: 'boolean' },
    limit: { type: 'string' },
    fingerprint: { type: 'string' },
    'activity-id': { type: 'string' },
  });
  if (values.help) return io.out(helpText('activities'));
  const [sub, ...extra] = positionals;
  if (extra.length > 0) throw new CliError(`unexpected argument "${extra[0]}"\n\n${helpText('activities')}`);
  if (sub === 'list') {
    const conn = new Connection(values, io);
    const statuses = ((values.status as string[] | undefined) ?? []).map((s) => full('ACTIVITY_STATUS_', s));
    if (values.pending) statuses.push('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    const types = ((values.type as string[] | undefined) ?? []).map((t) => full('ACTIVITY_TYPE_', t));
    const limit = values.limit as string | undefined;
    if (limit !== undefined && !/^\d+$/.test(limit)) throw new CliError(`--limit must be a whole number, got "${limit}"`);
    const { activities } = await conn.query('list_activities', {
      ...(statuses.length ? { filterByStatus: statuses } : {}),
      ...(types.length ? { filterByType: types } : {}),
      ...(limit ? { paginationOptions: { limit } } : {}),
    });
    if (values.json) return io.out(pretty(activities));
    if (activities.length === 0) return io.out('no activities match\n');
    for (const a of activities) io.out(`${a.id}  ${a.status}  ${a.type}  ${timeOf(a.createdAt)}  ${a.fingerprint}\n`);
    return;
  }
  if (sub === 'show') return show(values, io);
  if (sub === 'approve' || sub === 'reject') return vote(sub, values, io);
  throw new CliError(`unknown activities command "${sub ?? ''}": expected list, show, approve or reject\n\n${helpText('activities')}`);
}

/** The decoded view as text: the same content, in the same order, as the dashboard's panel (dashboard/src/pages/decoded.ts). */
export function decodedViewText(view: any, voters: Map<string, string>): string {
  if (!view) return 'signs nothing: no decoded view\n';
  let out = '';
  if (view.error) out += `CANNOT DECODE what this activity signs: ${view.error}\n`;
  else {
    out += `Signs: ${view.summary}\n`;
    for (const f of view.flags ?? []) out += `${f.severity === 'danger' ? 'DANGER' : 'CHECK'} [${f.code}]: ${f.message}\n`;
    for (const s of view.sections ?? []) {
      out += `\n${s.title}\n`;
      for (const r of s.rows) out += `  ${r.label}: ${r.value}${r.note ? `  (${r.note})` : ''}\n`;
    }
    out += '\n';
    for (const d of view.digests ?? []) out += `Digest${(view.digests ?? []).length > 1 ? ` ${d.payloadIndex}` : ''} (${d.algorithm} of ${d.over}): ${d.value}\n`;
  }
  const c = view.consensus;
  if (c) {
    out += `\nConsensus\n  still needs: ${c.needs}\n  root quorum: ${c.rootQuorum?.approvals ?? 0} of ${c.rootQuorum?.threshold ?? 0} approvals\n`;
    out += `  votes so far: ${(c.votes ?? []).map((v: any) => `${voters.get(v.userId) ?? v.userId} ${String(v.selection).replace('VOTE_SELECTION_', '').toLowerCase()}`).join(', ') || 'none'}\n`;
    out += `  policies: ${(c.policies ?? []).map((p: any) => `${p.policyName || p.policyId}: ${String(p.outcome).replace('OUTCOME_', '').toLowerCase().replace(/_/g, ' ')}`).join('; ') || 'none applied (decided by the root quorum)'}\n`;
  }
  return out;
}

async function show(values: Values, io: Io): Promise<void> {
  const activityId = values['activity-id'] as string | undefined;
  if (!activityId) throw new CliError(`sigil activities show needs --activity-id ID\n\n${helpText('activities')}`);
  const conn = new Connection(values, io);
  const { activity } = await conn.query('get_activity', { activityId });
  if (values.json) return io.out(pretty(activity));
  const voters = new Map<string, string>((activity.votes ?? []).map((v: any) => [v.userId, v.user?.userName || v.userId]));
  io.out(`activity ${activity.id}  ${activity.type}  ${activity.status}  ${timeOf(activity.createdAt)}\nfingerprint ${activity.fingerprint}\n\n`);
  io.out(decodedViewText(activity.decodedView, voters));
}

async function vote(selection: 'approve' | 'reject', values: Values, io: Io): Promise<void> {
  const fingerprintFlag = values.fingerprint as string | undefined;
  const activityId = values['activity-id'] as string | undefined;
  if (!fingerprintFlag === !activityId) {
    throw new CliError(`sigil activities ${selection} needs exactly one of --fingerprint F or --activity-id ID\n\n${helpText('activities')}`);
  }
  const conn = new Connection(values, io);
  let target: any;
  if (activityId) {
    target = (await conn.query('get_activity', { activityId })).activity;
  } else {
    // Find the waiting activity, so the outcome of the vote can be reported; voting does not need it.
    const { activities } = await conn.query('list_activities', { filterByStatus: ['ACTIVITY_STATUS_CONSENSUS_NEEDED'] });
    target = activities.find((a: { fingerprint: string }) => a.fingerprint === fingerprintFlag);
  }
  if (target && target.status !== 'ACTIVITY_STATUS_CONSENSUS_NEEDED') {
    throw new CliError(`activity ${target.id} is ${target.status}: only activities in ACTIVITY_STATUS_CONSENSUS_NEEDED take votes`);
  }
  const fingerprint = (target?.fingerprint as string | undefined) ?? fingerprintFlag!;
  const type = selection === 'approve' ? 'ACTIVITY_TYPE_APPROVE_ACTIVITY' : 'ACTIVITY_TYPE_REJECT_ACTIVITY';
  const res = await conn.submit(`${selection}_activity`, type, { fingerprint });
  const after = target ? (await conn.query('get_activity', { activityId: target.id })).activity : undefined;
  if (values.json) return io.out(pretty({ vote: res.activity, activity: after }));
  io.out(`${selection === 'approve' ? 'approved' : 'rejected'} ${fingerprint} (vote activity ${res.activity?.id})\n`);
  if (after) io.out(`activity ${after.id} (${after.type}) is now ${after.status}\n`);
}

/** Runs `sigil <command> ...args` for the commands above; `print` writes to stdout. */
export async function operatorToolCommand(command: keyof typeof OPERATOR_TOOL_HELP, args: string[], print: (text: string) => void): Promise<void> {
  const io: Io = { out: print, err: (t) => void process.stderr.write(t), env: process.env };
  switch (command) {
    case 'keys':
      return keysCommand(args, io);
    case 'request':
      return requestCommand(args, io);
    case 'whoami':
      return whoamiCommand(args, io);
    case 'activities':
      return activitiesCommand(args, io);
  }
}
