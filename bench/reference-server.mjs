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
// Run as a child process: `node bench/reference-server.mjs <dataDir> <apiPublicKey>`; prints
// `listening <url>` once it listens.
import { createServer } from 'node:http';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import BetterSqlite3 from '../dist/store/sqlite-driver.js';
import { verifyP256Der } from '../dist/crypto/p256.js';
import { getSigningKey } from '../dist/crypto/sign.js';

const [dataDir, apiPublicKey] = process.argv.slice(2);
const db = new BetterSqlite3(join(dataDir, 'reference.sqlite'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('CREATE TABLE IF NOT EXISTS activities (id TEXT PRIMARY KEY, organization_id TEXT NOT NULL, fingerprint TEXT NOT NULL, created_at INTEGER NOT NULL, result TEXT NOT NULL)');
const insert = db.prepare('INSERT INTO activities (id, organization_id, fingerprint, created_at, result) VALUES (?, ?, ?, ?, ?)');
const key = getSigningKey('CURVE_SECP256K1', new Uint8Array(randomBytes(32)));

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
    if (stamp.publicKey !== apiPublicKey || !verifyP256Der(stamp.publicKey, raw, stamp.signature)) return fail(res, 401, 'stamp does not verify');
    const signature = key.signPayload(Buffer.from(body.parameters.payload, 'hex'), 'HASH_FUNCTION_NO_OP');
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
