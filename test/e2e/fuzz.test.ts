// Schema-driven fuzzing of every submit and query endpoint (docs/limits.md "Limits"), against a real
// `sigil serve` on both stores. Bodies come from the API schemas (src/schemas/turnkey-definitions.json,
// through the registry of src/operations/registry.ts), stamped correctly with the official
// ApiKeyStamper, and each carries at least one definite defect: a field of the wrong type, a required
// field missing, a value outside its enum, NUL or an unpaired surrogate, nesting, array length, member
// count or total size past the limits, a body over the size limit, invalid JSON, a broken envelope,
// or a content type or coding other than JSON. Random cases are drawn with fast-check (seeded; the
// seed is printed) beside valid noise (extra fields, unicode). Every answer must be a 4xx JSON
// `{code, message, details}`, and the database must be as it was. Figures printed at the end: the
// requests tried, answers by status, the slowest request's event-loop CPU time and the longest a
// /healthz probe waited meanwhile (the worst stall); none is asserted (the machine is shared).
// SIGIL_FUZZ_RUNS (random cases per endpoint, default 10) and SIGIL_FUZZ_SEED widen or replay a run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { spawn } from 'node:child_process';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { Registry } from '../../src/operations/registry.js';
import { definitions } from '../../src/schemas/index.js';
import { AUTH_PROXY_ENDPOINTS } from '../../src/http/auth-proxy.js';
import { runSigil, startSigil, type SigilInstance } from '../helpers/sigil.js';
import { dbSnapshot, type Snapshot } from '../helpers/db-snapshot.js';
import { mainThreadCpuNs } from '../helpers/raw-http.js';

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  format?: string;
  $ref?: string;
}

const defs = definitions as Record<string, Schema>;
const deref = (s: Schema): Schema => (s.$ref ? deref(defs[s.$ref.replace('#/definitions/', '')] ?? {}) : s);

/** A value of the schema's shape with only the required members: the base every case breaks. */
function minimal(schema: Schema, depth = 0): unknown {
  const s = deref(schema);
  if (s.enum) return s.enum[s.enum.length > 1 ? 1 : 0];
  switch (s.type) {
    case 'object':
      if (depth > 6) return {};
      return Object.fromEntries((s.required ?? []).filter((k) => s.properties?.[k]).map((k) => [k, minimal(s.properties![k], depth + 1)]));
    case 'array':
      return [];
    case 'string':
      return 'x';
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return false;
    default:
      return {};
  }
}

/** A member the schema types, by its path; array items appear as index 0. */
interface Field {
  path: (string | number)[];
  schema: Schema;
  required: boolean;
}

function fieldsOf(schema: Schema, path: (string | number)[] = [], depth = 0, out: Field[] = []): Field[] {
  const s = deref(schema);
  if (depth > 3 || out.length > 60) return out;
  if (s.type === 'object' || s.properties) {
    for (const [k, sub] of Object.entries(s.properties ?? {})) {
      const d = deref(sub);
      if (!d.type && !d.enum) continue; // Untyped: anything goes, nothing to break.
      const p = [...path, k];
      out.push({ path: p, schema: d, required: (s.required ?? []).includes(k) });
      if (d.type === 'object') fieldsOf(d, p, depth + 1, out);
      if (d.type === 'array' && d.items && deref(d.items).type === 'object') fieldsOf(d.items, [...p, 0], depth + 1, out);
    }
  }
  return out;
}

/** Values that are certainly not of the field's type. */
function wrongValues(s: Schema): unknown[] {
  if (s.enum) return ['NOT_A_VALUE_OF_THIS_ENUM', 7, ['x']];
  switch (s.type) {
    case 'string':
      return [7, true, null, ['x'], { x: 'x' }];
    case 'integer':
      return ['7', 1.5, true, [], 2 ** 53 + 2, s.format === 'int32' ? 2 ** 40 : 1e300];
    case 'number':
      return ['7', true, [], {}];
    case 'boolean':
      return ['true', 0, [], {}];
    case 'array':
      return ['x', 7, { x: 1 }, true];
    default:
      return ['x', 7, [], true];
  }
}

/** Sets `value` at `path`, making the containers on the way (an array gets one minimal item). */
function setAt(root: Record<string, unknown>, path: (string | number)[], value: unknown): void {
  let cur: any = root;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i];
    if (cur[k] === null || typeof cur[k] !== 'object') cur[k] = typeof path[i + 1] === 'number' ? [] : {};
    cur = cur[k];
  }
  cur[path[path.length - 1]] = value;
}

function deleteAt(root: Record<string, unknown>, path: (string | number)[]): void {
  let cur: any = root;
  for (const k of path.slice(0, -1)) cur = cur?.[k];
  if (cur && typeof cur === 'object') delete cur[path[path.length - 1]];
}

/** Stand-ins replaced in the serialized text: values JSON.stringify would overflow the stack on. */
const DEEP = (levels: number) => `__fuzz_deep_${levels}__`;
const expandDeep = (text: string) => text.replace(/"__fuzz_deep_(\d+)__"/g, (_, n) => `${'['.repeat(Number(n))}0${']'.repeat(Number(n))}`);

/** Values refused wherever they stand, declared field or unknown member alike. */
const defectValue = fc.oneof(
  fc.string({ maxLength: 8 }).map((s) => `${s}\u0000${s}`),
  fc.constantFrom('\ud800', 'a\udfffb', '\udbff\udbffz', 'ok\ud83d'),
  fc.oneof(fc.integer({ min: 33, max: 20_000 }), fc.constant(1_000_000)).map(DEEP),
  fc.integer({ min: 1001, max: 60_000 }).map((n) => Array(n).fill(0)),
  fc.integer({ min: 1001, max: 3000 }).map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`m${i}`, i]))),
  fc.constant(Array.from({ length: 25 }, () => Array(1000).fill(0))),
  // The costliest string to scan, just under the body limit: 340,000 escapes (\u0001), then U+0000.
  fc.constant(`${'\u0001'.repeat(340_000)}\u0000`),
);

/** Valid noise beside the defect: unknown members of any JSON, unicode names and values. */
const noise = fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 });

interface Case {
  label: string;
  text: string;
  headers?: Record<string, string | undefined>;
  /** Sent without a stamp (the auth proxy takes none; a stamp cannot cover bytes that are not UTF-8). */
  unstamped?: boolean;
  /** `text` holds raw bytes, one per character, rather than characters to send as UTF-8. */
  bytes?: boolean;
}

interface Endpoint {
  url: string;
  label: string;
  /** A body of the right shape that each case breaks. */
  base: () => Record<string, unknown>;
  /** Where the operation's own members are: `parameters` of a submission, the body of a query. */
  root: string[];
  schema: Schema;
}

const INVALID_JSON = ['', '{', '{"type":', '[1,2]', 'null', '"text"', '42', '{"a":1,}', "{'a':1}", '\ufeff{}', '{"a":1}}', '{"a":"\\x"}', '{"a":"\u0001"}', 'NaN'];
const CONTENT = [
  { label: 'text/plain', headers: { 'content-type': 'text/plain' } },
  { label: 'form', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
  { label: 'multipart', headers: { 'content-type': 'multipart/form-data; boundary=x' } },
  { label: 'no content type', headers: { 'content-type': undefined } },
  { label: 'false gzip', headers: { 'content-encoding': 'gzip' } },
  { label: 'json+latin1', headers: { 'content-type': 'application/json; charset=latin1' } },
];

function casesFor(ep: Endpoint, orgId: string, runs: number, seed: number): Case[] {
  const cases: Case[] = [];
  const at = (body: Record<string, unknown>) => ep.root.reduce((o: any, k) => o[k], body) as Record<string, unknown>;
  const add = (label: string, body: unknown, extra: Partial<Case> = {}) => cases.push({ label: `${ep.label} ${label}`, text: expandDeep(JSON.stringify(body)), ...extra });
  const fields = fieldsOf(ep.schema).filter((f) => !(ep.root.length === 0 && f.path[0] === 'organizationId'));

  // Schema-driven: each top-level member of the wrong type, each required one missing.
  for (const f of fields.filter((f) => f.path.length === 1).slice(0, 10)) {
    const body = ep.base();
    setAt(at(body), f.path, wrongValues(f.schema)[0]);
    add(`wrong type ${f.path.join('.')}`, body);
    if (f.required) {
      const gone = ep.base();
      deleteAt(at(gone), f.path);
      add(`missing ${f.path.join('.')}`, gone);
    }
  }
  // The envelope.
  const env = ep.base();
  const envelope: [string, (b: Record<string, unknown>) => void][] = [
    ['organizationId malformed', (b) => (b.organizationId = 'acme')],
    ['organizationId unknown', (b) => (b.organizationId = '00000000-0000-4000-8000-000000000000')],
    ['organizationId missing', (b) => delete b.organizationId],
  ];
  if (ep.root.length > 0) {
    envelope.push(
      ['type wrong', (b) => (b.type = 'ACTIVITY_TYPE_NOT_THIS')],
      ['type number', (b) => (b.type = 7)],
      ['timestampMs text', (b) => (b.timestampMs = 'yesterday')],
      ['timestampMs old', (b) => (b.timestampMs = String(Date.now() - 2 * 3600_000))],
      ['timestampMs future', (b) => (b.timestampMs = String(Date.now() + 3600_000))],
      ['generateAppProofs text', (b) => (b.generateAppProofs = 'yes')],
      ['parameters missing', (b) => delete b.parameters],
      ['parameters array', (b) => (b.parameters = [])],
      ['parameters string', (b) => (b.parameters = 'x')],
    );
  }
  const [name, breakIt] = envelope[(seed + ep.label.length) % envelope.length];
  breakIt(env);
  add(`envelope: ${name}`, env);
  // Transport-level: invalid JSON, content types, a body over the limit, bytes that are not UTF-8.
  const i = (seed + ep.url.length) % INVALID_JSON.length;
  cases.push({ label: `${ep.label} invalid JSON ${JSON.stringify(INVALID_JSON[i])}`, text: INVALID_JSON[i] });
  const ct = CONTENT[(seed + ep.label.length) % CONTENT.length];
  cases.push({ label: `${ep.label} ${ct.label}`, text: JSON.stringify(ep.base()), headers: ct.headers });

  // Random: a defect in a declared field or an unknown member, beside valid noise.
  // An operation without typed members (some take none) gets its defects in an unknown member.
  const places: Field[] = fields.length > 0 ? fields : [{ path: ['extra'], schema: {}, required: false }];
  const wrongType = fc.record({ field: fc.constantFrom(...places), pick: fc.nat(), noise }).map(({ field, pick, noise: n }) => {
    const body = ep.base();
    Object.assign(at(body), n);
    const wrong = wrongValues(field.schema);
    setAt(at(body), field.path, wrong[pick % wrong.length]);
    return { label: `wrong type ${field.path.join('.')}`, body };
  });
  const random = fc.oneof(
    ...(fields.length > 0 ? [wrongType] : []),
    fc.record({ field: fc.constantFrom(...places), defect: defectValue, noise, unknown: fc.boolean() }).map(({ field, defect, noise: n, unknown }) => {
      const body = ep.base();
      Object.assign(at(body), n);
      setAt(at(body), unknown ? [...field.path.slice(0, -1), `fuzz_${field.path.length}`] : field.path, defect);
      return { label: `defect at ${field.path.join('.')}${unknown ? ' (unknown member)' : ''}`, body };
    }),
    fc.record({ defect: defectValue, key: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }) }).map(({ defect, key }) => {
      const body = ep.base();
      body[`x${key}`] = defect;
      return { label: 'defect in the envelope', body };
    }),
    fc.integer({ min: 2 * 1024 * 1024, max: 2 * 1024 * 1024 + 4096 }).map((n) => {
      const body = ep.base();
      body.padding = 'p'.repeat(n);
      return { label: 'body over the limit', body };
    }),
  );
  for (const { label, body } of fc.sample(random, { numRuns: runs, seed: seed + ep.url.length * 7919 })) add(label, body);
  // Not UTF-8 (unstamped: a stamp covers a string's UTF-8 bytes; refused as unauthenticated or invalid).
  cases.push({ label: `${ep.label} latin1 bytes`, text: Buffer.from(JSON.stringify({ organizationId: orgId, x: 'caf\u00e9' }), 'latin1').toString('latin1'), unstamped: true, bytes: true });
  return cases;
}

let sigil: SigilInstance;
let stamper: ApiKeyStamper;
let before: Snapshot;
const registry = new Registry();
const runs = Number(process.env.SIGIL_FUZZ_RUNS || 10);
const seed = Number(process.env.SIGIL_FUZZ_SEED || Date.now() % 1_000_000);

beforeAll(async () => {
  sigil = await startSigil({}, { process: true });
  stamper = new ApiKeyStamper({ apiPublicKey: sigil.root.apiPublicKey, apiPrivateKey: sigil.root.apiPrivateKey });
  before = await dbSnapshot(sigil);
});
afterAll(async () => {
  await sigil?.stop();
});

function endpoints(): Endpoint[] {
  const org = sigil.root.organizationId;
  const out: Endpoint[] = [];
  for (const [path, bindings] of registry.typeBindings) {
    for (const binding of bindings.values()) {
      const definition = Array.isArray(binding.parametersDefinition) ? binding.parametersDefinition[0] : binding.parametersDefinition;
      const schema = defs[definition] ?? {};
      out.push({
        url: `${sigil.url}/public/v1/submit/${path}`,
        label: `submit/${path} (${binding.type})`,
        schema,
        root: ['parameters'],
        base: () => ({ type: binding.type, timestampMs: String(Date.now()), organizationId: org, parameters: minimal(schema) }),
      });
    }
  }
  for (const [path, decl] of registry.queries) {
    const schema = (typeof decl.request === 'string' ? defs[decl.request] : decl.request) as Schema;
    out.push({ url: `${sigil.url}/public/v1/query/${path}`, label: `query/${path}`, schema, root: [], base: () => ({ ...(minimal(schema) as object), organizationId: org }) });
  }
  return out;
}

/** POSTs a case, stamped over its exact text (unless unstamped); the text is sent as UTF-8 unless it holds raw bytes. */
async function send(url: string, c: Case): Promise<{ status: number; contentType: string | null; body: unknown }> {
  const headers: Record<string, string> = {};
  const wanted = { 'content-type': 'application/json', ...(c.headers ?? {}) };
  for (const [k, v] of Object.entries(wanted)) if (v !== undefined) headers[k] = v;
  if (!c.unstamped) {
    const stamp = await stamper.stamp(c.text);
    headers[stamp.stampHeaderName] = stamp.stampHeaderValue;
  }
  const payload = Buffer.from(c.text, c.bytes ? 'latin1' : 'utf8');
  const res = await fetch(url, { method: 'POST', headers, body: new Blob([payload]) });
  const raw = await res.text();
  let body: unknown = raw;
  try {
    body = JSON.parse(raw);
  } catch {
    /* kept as text: the check below reports it */
  }
  return { status: res.status, contentType: res.headers.get('content-type'), body };
}

/**
 * GET /healthz over and over on a connection of its own, from a process of its own (this one is
 * busy stamping); the longest wait is the worst stall of the server's event loop it saw.
 */
const PROBE = `
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let worst = 0, running = true;
process.stdin.on('data', () => (running = false)).resume();
(async () => {
  while (running) {
    const t = process.hrtime.bigint();
    await new Promise((r) => http.get(process.argv[1] + '/healthz', { agent }, (res) => res.resume().on('end', r)).on('error', r));
    worst = Math.max(worst, Number(process.hrtime.bigint() - t) / 1e6);
    await new Promise((r) => setTimeout(r, 5));
  }
  process.stdout.write(String(worst));
  process.exit(0);
})();`;

function stallProbe(url: string) {
  const child = spawn(process.execPath, ['-e', PROBE, url], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const exited = new Promise((r) => child.once('exit', r));
  return {
    stop: async () => {
      child.stdin.write('stop');
      await exited;
      return Number(out);
    },
  };
}

/** A 4xx JSON `{code, message, details}`. */
function isRefusal(res: { status: number; contentType: string | null; body: unknown }): boolean {
  const b = res.body as { code?: unknown; message?: unknown; details?: unknown } | null;
  return (
    res.status >= 400 &&
    res.status < 500 &&
    /^application\/json/.test(res.contentType ?? '') &&
    typeof b === 'object' &&
    b !== null &&
    typeof b.code === 'number' &&
    typeof b.message === 'string' &&
    Array.isArray(b.details)
  );
}

describe('fuzzing every submit and query endpoint', () => {
  it('answers every malformed, correctly stamped body with a 4xx {code, message, details} and changes nothing', async () => {
    const all = endpoints();
    // Every path, and every type value a submit path accepts.
    expect(new Set(all.map((e) => e.url)).size).toBe(registry.activities.size + registry.queries.size);
    const byStatus: Record<number, number> = {};
    const failures: string[] = [];
    let tried = 0;
    /** The three costliest requests, by the server's event-loop CPU time. */
    let slowest: { ns: number; label: string }[] = [];
    const probe = stallProbe(sigil.url);
    const started = Date.now();
    const pid = sigil.process.pid!;
    try {
      for (const ep of all) {
        for (const c of casesFor(ep, sigil.root.organizationId, runs, seed)) {
          const cpu = mainThreadCpuNs(pid);
          const res = await send(ep.url, c);
          const spent = mainThreadCpuNs(pid) - cpu;
          slowest = [...slowest, { ns: spent, label: `${c.label} (${c.text.length} bytes)` }].sort((a, b) => b.ns - a.ns).slice(0, 3);
          tried++;
          byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
          if (!isRefusal(res)) failures.push(`${c.label}: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
        }
      }
    } finally {
      const stall = await probe.stop();
      console.log(
        [
          `fuzz (${sigil.databaseUrl ? 'PostgreSQL' : 'SQLite'}, seed ${seed}, ${runs} random cases per endpoint): ${tried} requests to ${all.length} endpoints in ${((Date.now() - started) / 1000).toFixed(1)} s`,
          `answers by status: ${JSON.stringify(byStatus)}`,
          `slowest requests (event-loop CPU): ${slowest.map((x) => `${(x.ns / 1e6).toFixed(1)} ms ${x.label.slice(0, 120)}`).join('; ')}`,
          `worst stall seen by a /healthz probe: ${stall.toFixed(1)} ms`,
        ].join('\n'),
      );
    }
    expect(failures.slice(0, 20)).toEqual([]);
    expect(await dbSnapshot(sigil)).toEqual(before);
  }, 300_000);

  it('answers every auth proxy endpoint, without a credential, the same way for bodies past the limits', async () => {
    const r = runSigil(['proxy-config', 'create', '--data-dir', sigil.dataDir, '--json'], sigil.env);
    expect(r.status, r.stderr).toBe(0);
    const configId = JSON.parse(r.stdout).configId as string;
    const start = await dbSnapshot(sigil);
    const failures: string[] = [];
    const byStatus: Record<number, number> = {};
    const proxyCase = fc.record({ defect: defectValue, key: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }), noise }).map(({ defect, key, noise: n }) => ({ ...n, [key]: defect }));
    for (const endpoint of AUTH_PROXY_ENDPOINTS) {
      const cases: Case[] = [
        ...fc.sample(proxyCase, { numRuns: runs, seed: seed + endpoint.length }).map((body) => ({ label: `defect`, text: expandDeep(JSON.stringify(body)) })),
        ...INVALID_JSON.filter((t) => t !== '').map((text) => ({ label: `invalid JSON ${JSON.stringify(text)}`, text })),
        ...CONTENT.map((ct) => ({ label: ct.label, text: '{"userName":"x"}', headers: ct.headers })),
        { label: 'body over the limit', text: JSON.stringify({ padding: 'p'.repeat(2 * 1024 * 1024) }) },
      ];
      for (const c of cases) {
        const res = await send(`${sigil.authProxyUrl}/v1/${endpoint}`, { ...c, unstamped: true, headers: { 'x-auth-proxy-config-id': configId, ...c.headers } });
        byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
        if (!isRefusal(res)) failures.push(`/v1/${endpoint} ${c.label}: HTTP ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      }
    }
    console.log(`auth proxy fuzz: ${AUTH_PROXY_ENDPOINTS.length} endpoints, answers by status ${JSON.stringify(byStatus)}`);
    expect(failures.slice(0, 20)).toEqual([]);
    expect(await dbSnapshot(sigil)).toEqual(start);
  }, 120_000);
});
