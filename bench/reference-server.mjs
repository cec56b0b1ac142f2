// The reference server of bench/scale.mjs (docs/operator-guide.md "A million end users": the hot path
// near the host's limit): the least a sign_raw_payload can cost on this stack, measured in the same run
// as Sigil so that Sigil's hot rows are reported as a ratio to it (absolute figures move 2.5x between
// hosts). It does what one signing request must: parse the body, verify the P-256 stamp over the raw
// body bytes against a known API key, sign the payload with secp256k1 (Sigil's own crypto module, the
// native binding), record the request and its result in SQLite with commits of concurrent requests
// grouped into one durable transaction (WAL, synchronous=FULL, as Sigil's default store), and answer a
// small JSON document of the shape the official clients read. Nothing else: no policies, no idempotency,
// no audit, no logging. `POST /noop` answers `{}` and does nothing else: the least any request costs
// on this host, the floor the scale bench measures lookup latency against.
//
// Given a file of end users, it is also the reference for the cold path (docs/design.md "The cold path
// (one sub-organization per end user)"): each end user has an organization of its own, whose data key
// is wrapped under the deployment's and whose secp256k1 key is sealed under that data key, as Sigil
// stores them. A request stamped by an end user's API key does the least such a request must: one
// prepared index read by that key (organization, wrapped data key, sealed signing key), the key's
// import for the stamp verify (never seen before by this process), two AES-256-GCM opens, and the
// signing key built from its bytes; the rest is the hot request's. Its cold/hot ratio, measured in the
// same run, is what the stack itself charges for a request nothing is cached for.
//
// Run as a child process: `node bench/reference-server.mjs <dataDir> <apiPublicKey> [<endUsers.json>]`
// (end users: `[{ apiPublicKey, organizationId }]`); prints `listening <url>` once it listens.
import { createServer } from 'node:http';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from '../dist/store/sqlite-driver.js';
import { verifyP256Der } from '../dist/crypto/p256.js';
import { getSigningKey } from '../dist/crypto/sign.js';
import { unwrapDataKey, wrapDataKey } from '../dist/barrier/barrier.js';

const [dataDir, apiPublicKey, endUsersFile] = process.argv.slice(2);
const db = new BetterSqlite3(join(dataDir, 'reference.sqlite'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('CREATE TABLE IF NOT EXISTS activities (id TEXT PRIMARY KEY, organization_id TEXT NOT NULL, fingerprint TEXT NOT NULL, created_at INTEGER NOT NULL, result TEXT NOT NULL)');
const insert = db.prepare('INSERT INTO activities (id, organization_id, fingerprint, created_at, result) VALUES (?, ?, ?, ?, ?)');
const key = getSigningKey('CURVE_SECP256K1', new Uint8Array(randomBytes(32)));

// The end users (cold path): the deployment's data key stays in memory; each row holds what Sigil's
// cold read brings back for a signature, sealed as Sigil seals it (AES-256-GCM, bound to its place).
const deploymentKey = randomBytes(32);
const orgKeyAad = (organizationId) => Buffer.from(`reference:organization-key:${organizationId}`);
const signingKeyAad = (organizationId) => Buffer.from(`reference:signing-key:${organizationId}`);
db.exec('CREATE TABLE IF NOT EXISTS end_users (api_public_key TEXT PRIMARY KEY, organization_id TEXT NOT NULL, wrapped_key TEXT NOT NULL, sealed_signing_key TEXT NOT NULL)');
if (endUsersFile) {
  const add = db.prepare('INSERT INTO end_users (api_public_key, organization_id, wrapped_key, sealed_signing_key) VALUES (?, ?, ?, ?)');
  db.transaction((users) => {
    for (const u of users) {
      const orgKey = randomBytes(32);
      add.run(u.apiPublicKey, u.organizationId, wrapDataKey(deploymentKey, orgKey, orgKeyAad(u.organizationId)), wrapDataKey(orgKey, randomBytes(32), signingKeyAad(u.organizationId)));
    }
  })(JSON.parse(readFileSync(endUsersFile, 'utf8')));
}
const endUser = db.prepare('SELECT organization_id, wrapped_key, sealed_signing_key FROM end_users WHERE api_public_key = ?');

/** The hot key, or the row of the end user whose API key stamped for `organizationId` (undefined: none). */
function signerOf(publicKey, organizationId) {
  if (publicKey === apiPublicKey) return { key };
  const row = typeof publicKey === 'string' ? endUser.get(publicKey) : undefined;
  return row && row.organization_id === organizationId ? { row } : undefined;
}

/** The signing key of a signer from signerOf, opened only once the stamp verified. */
function signingKeyOf({ key: hot, row }) {
  if (hot) return hot;
  const orgKey = unwrapDataKey(deploymentKey, row.wrapped_key, orgKeyAad(row.organization_id));
  return getSigningKey('CURVE_SECP256K1', new Uint8Array(unwrapDataKey(orgKey, row.sealed_signing_key, signingKeyAad(row.organization_id))));
}

/** Requests whose rows wait for the next grouped commit, with the answers they then send. */
let pending = [];
const commitGroup = db.transaction((rows) => {
  for (const r of rows) insert.run(r.id, r.organizationId, r.fingerprint, r.createdAt, r.result);
});
function flush() {
  const group = pending;
  pending = [];
  commitGroup(group);
  for (const r of group) r.answer();
}

function fail(res, status, message) {
  const body = JSON.stringify({ code: status === 401 ? 16 : 3, message, details: [] });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
}

const server = createServer((req, res) => {
  // `/noop`: an empty answer, read and written as every other (the host's floor for one request).
  if (req.url === '/noop') {
    req.resume();
    return req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 }).end('{}'));
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const raw = Buffer.concat(chunks);
    let stamp;
    let body;
    try {
      stamp = JSON.parse(Buffer.from(String(req.headers['x-stamp'] ?? ''), 'base64url').toString());
      body = JSON.parse(raw.toString());
    } catch {
      return fail(res, 400, 'malformed request');
    }
    const signer = signerOf(stamp.publicKey, body.organizationId);
    if (!signer || !verifyP256Der(stamp.publicKey, raw, stamp.signature)) return fail(res, 401, 'stamp does not verify');
    const signature = signingKeyOf(signer).signPayload(Buffer.from(body.parameters.payload, 'hex'), 'HASH_FUNCTION_NO_OP');
    const result = { signRawPayloadResult: { r: signature.r, s: signature.s, v: signature.v } };
    const id = randomUUID();
    const fingerprint = `sha256:${createHash('sha256').update(raw).digest('hex')}`;
    const answer = JSON.stringify({ activity: { id, organizationId: body.organizationId, status: 'ACTIVITY_STATUS_COMPLETED', type: body.type, fingerprint, result } });
    if (pending.length === 0) setImmediate(flush);
    pending.push({
      id,
      organizationId: body.organizationId,
      fingerprint,
      createdAt: Date.now(),
      result: JSON.stringify(result),
      answer: () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }).end(answer),
    });
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(`listening http://127.0.0.1:${server.address().port} `));
process.on('SIGTERM', () => server.close(() => (db.close(), process.exit(0))));
