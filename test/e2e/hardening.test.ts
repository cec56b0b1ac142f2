// Regression tests of "one request must never stall the service" (docs/limits.md "Limits"), each fault
// on its own, against real `sigil serve` processes on both stores: a small body that made validation
// quadratic (with and without a credential), slow clients that held connections for ever, deep nesting
// that answered 500, NUL and other values the stores disagreed on, content types other than JSON, and an
// oversized body the client could not read the answer to. Refusals are JSON {code, message, details},
// small, and change nothing. CPU figures are printed, never asserted (the machine is shared).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runSigil, startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient, type RawResponse } from '../helpers/clients.js';
import { dbSnapshot, expectRefusedUnchanged, type Snapshot } from '../helpers/db-snapshot.js';
import { connect, mainThreadCpuNs, parseAnswer, postHead, sleep } from '../helpers/raw-http.js';

let sigil: SigilInstance;
/** Short timeouts, so the transport limits show within a test. */
let strict: SigilInstance;
/** A small connection cap. */
let capped: SigilInstance;
let before: Snapshot;

beforeAll(async () => {
  const started = await Promise.allSettled([
    startSigil({}, { process: true }),
    startSigil({ SIGIL_REQUEST_TIMEOUT_MS: '1500', SIGIL_HEADERS_TIMEOUT_MS: '1000', SIGIL_KEEP_ALIVE_TIMEOUT_MS: '500' }, { process: true }),
    startSigil({ SIGIL_MAX_CONNECTIONS: '20' }, { process: true }),
  ]);
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) {
    // No process outlives a failed start.
    await Promise.all(started.map((r) => (r.status === 'fulfilled' ? r.value.stop() : undefined)));
    throw failed.reason;
  }
  [sigil, strict, capped] = started.map((r) => (r as PromiseFulfilledResult<SigilInstance>).value);
}, 60_000);
afterAll(async () => {
  await Promise.all([sigil?.stop(), strict?.stop(), capped?.stop()]);
});
beforeEach(async () => {
  before = await dbSnapshot(sigil);
});

const submitUrl = (op: string) => `${sigil.url}/public/v1/submit/${op}`;
const walletBody = (parameters: Record<string, unknown>) => activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_WALLET', { walletName: 'w', accounts: [], ...parameters });
const expectRefused = (res: RawResponse, status: number, code: number, turnkeyErrorCode: string, message: RegExp) =>
  expectRefusedUnchanged(sigil, before, res, status, code, turnkeyErrorCode, message);

/** `{"x":{"x":…}}` nested `levels` deep, built as text (JSON.stringify would overflow the stack). */
const deepJson = (levels: number) => `${'{"x":'.repeat(levels)}1${'}'.repeat(levels)}`;

/** The answer and the server's event-loop CPU time it cost (printed). */
async function measured(label: string, send: () => Promise<RawResponse>): Promise<RawResponse> {
  const cpu = mainThreadCpuNs(sigil.process.pid!);
  const res = await send();
  console.log(`${label}: HTTP ${res.status}, ${JSON.stringify(res.body).length} bytes of error body, ${((mainThreadCpuNs(sigil.process.pid!) - cpu) / 1e6).toFixed(1)} ms of server CPU`);
  return res;
}

describe('fault 1: one small request costs little and answers little', () => {
  it('create_wallet with 40,000 zeros as accounts is refused before validation, naming the field, in a small body', async () => {
    const res = await measured('40,000 zeros', () => rawPost(submitUrl('create_wallet'), walletBody({ accounts: Array(40_000).fill(0) }), { key: sigil.root }));
    await expectRefused(res, 400, 3, 'REQUEST_INVALID', /^bad request body: parameters\.accounts: has more than 1000 items$/);
    expect(JSON.stringify(res.body).length).toBeLessThan(1024);
  });

  it('schema validation stops at the first violations: 1,000 wrong accounts give at most 5 violations and a body of a few KB', async () => {
    const res = await measured('1,000 wrong accounts', () => rawPost(submitUrl('create_wallet'), walletBody({ accounts: Array(1000).fill(0) }), { key: sigil.root }));
    await expectRefused(res, 400, 3, 'REQUEST_INVALID', /^bad request body: parameters\.accounts\[0\]: must be object$/);
    expect(res.body.details[1].fieldViolations.length).toBeLessThanOrEqual(5);
    expect(JSON.stringify(res.body).length).toBeLessThan(4096);
  });

  it('without a credential through the auth proxy: signup with 40,000 zeros as wallet accounts', async () => {
    const r = runSigil(['proxy-config', 'create', '--data-dir', sigil.dataDir, '--json'], sigil.env);
    expect(r.status, r.stderr).toBe(0);
    const { configId } = JSON.parse(r.stdout);
    before = await dbSnapshot(sigil);
    const body = { userName: 'x', wallet: { walletName: 'w', accounts: Array(40_000).fill(0) } };
    const res = await measured('signup, 40,000 zeros', () => rawPost(`${sigil.authProxyUrl}/v1/signup`, body, { headers: { 'X-Auth-Proxy-Config-ID': configId } }));
    await expectRefused(res, 400, 3, 'REQUEST_INVALID', /^bad request body: wallet\.accounts: has more than 1000 items$/);
    // Under the limits the proxy's own translation is validated as before, and answers as small. The
    // signup names a wallet key, a login method the configuration enables: one that names none is
    // refused before its body is read any further (docs/auth-proxy.md).
    const walletKey = { apiKeyName: 'wallet', publicKey: '02' + '11'.repeat(32), curveType: 'API_KEY_CURVE_SECP256K1' };
    const small = await rawPost(`${sigil.authProxyUrl}/v1/signup`, { userName: 'x', apiKeys: [walletKey], wallet: { walletName: 'w', accounts: Array(1000).fill(0) } }, { headers: { 'X-Auth-Proxy-Config-ID': configId } });
    await expectRefused(small, 400, 3, 'REQUEST_INVALID', /wallet\.accounts\[0\]: must be object/);
    expect(JSON.stringify(small.body).length).toBeLessThan(4096);
  });

  it('error messages quoting the input are cut: a 1 MB activity type answers about 1 KB', async () => {
    const res = await rawPost(submitUrl('create_wallet'), { ...walletBody({}), type: 'X'.repeat(1_000_000) }, { key: sigil.root });
    await expectRefused(res, 400, 3, 'REQUEST_INVALID', /^bad request body: invalid activity type "XXXX.*… \(\d+ more characters\)$/);
    expect(JSON.stringify(res.body).length).toBeLessThan(2048);
  });

  it('too many values in all, or members in one object, are refused before parsing', async () => {
    // 30 arrays of 1,000 zeros: each within the item limit, 30,000 values in all.
    const many = await rawPost(submitUrl('create_wallet'), walletBody({ extra: Array.from({ length: 30 }, () => Array(1000).fill(0)) }), { key: sigil.root });
    await expectRefused(many, 400, 3, 'REQUEST_INVALID', /the body holds more than 20000 values$/);
    const wide = await rawPost(submitUrl('create_wallet'), walletBody({ extra: Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`k${i}`, 0])) }), { key: sigil.root });
    await expectRefused(wide, 400, 3, 'REQUEST_INVALID', /^bad request body: parameters\.extra: has more than 1000 members$/);
  });
});

describe('fault 4: deep JSON is a 400, never a 500', () => {
  it('a body nested a million levels deep costs a scan, even refused for its stamp (then audited without parsing)', async () => {
    const text = `{"organizationId":"${sigil.root.organizationId}","x":${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}}`;
    const unstamped = await measured('1,000,000 levels, no stamp', () => rawPost(`${sigil.url}/public/v1/query/whoami`, text));
    await expectRefused(unstamped, 401, 16, 'SIGNATURE_MISSING', /without a stamp/);
    const stamped = await measured('1,000,000 levels, stamped', () => rawPost(`${sigil.url}/public/v1/query/whoami`, text, { key: sigil.root }));
    await expectRefused(stamped, 400, 3, 'REQUEST_INVALID', /^bad request body: x(\[0\])+: nested deeper than 32 levels$/);
  });

  it('an unknown field nested 20,000 levels deep in a submission, and in an approval', async () => {
    const body = JSON.stringify(walletBody({ extra: '@' })).replace('"@"', deepJson(20_000));
    const res = await rawPost(submitUrl('create_wallet'), body, { key: sigil.root });
    await expectRefused(res, 400, 3, 'REQUEST_INVALID', /^bad request body: parameters\.extra(\.x)+: nested deeper than 32 levels$/);
    const vote = JSON.stringify(activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_APPROVE_ACTIVITY', { fingerprint: 'sha256:00', extra: '@' })).replace('"@"', deepJson(20_000));
    const voted = await rawPost(submitUrl('approve_activity'), vote, { key: sigil.root });
    await expectRefused(voted, 400, 3, 'REQUEST_INVALID', /nested deeper than 32 levels$/);
  });
});

describe('fault 5: one answer on both stores for values PostgreSQL cannot hold', () => {
  it('NUL in a string parameter or a member name is refused naming the field', async () => {
    const res = await rawPost(submitUrl('create_wallet'), walletBody({ walletName: 'a\u0000b' }), { key: sigil.root });
    await expectRefused(res, 400, 3, 'REQUEST_INVALID', /^bad request body: parameters\.walletName: must not contain the NUL character \(U\+0000\)$/);
    expect(res.body.details[1].fieldViolations).toEqual([{ field: 'parameters.walletName', description: 'must not contain the NUL character (U+0000)' }]);
    const key = await rawPost(submitUrl('create_wallet'), walletBody({ 'odd\u0000name': 1 }), { key: sigil.root });
    await expectRefused(key, 400, 3, 'REQUEST_INVALID', /^bad request body: parameters \(a member name\): must not contain the NUL character/);
  });

  it('an unpaired surrogate, bytes that are not UTF-8 and integers no column holds are refused too', async () => {
    const lone = await rawPost(submitUrl('create_wallet'), walletBody({ walletName: 'a\ud800b' }), { key: sigil.root });
    await expectRefused(lone, 400, 3, 'REQUEST_INVALID', /^bad request body: parameters\.walletName: must be valid Unicode: it has an unpaired surrogate$/);
    // Unstamped (a stamp covers a string's UTF-8 bytes), so through the auth proxy, which reads the body first.
    const latin1 = Buffer.from(JSON.stringify({ userName: 'caf\u00e9' }), 'latin1');
    const notUtf8 = await fetch(`${sigil.authProxyUrl}/v1/signup`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-auth-proxy-config-id': 'any' }, body: latin1 });
    await expectRefused({ status: notUtf8.status, body: await notUtf8.json(), headers: notUtf8.headers }, 400, 3, 'REQUEST_INVALID', /not valid UTF-8/);
    const threshold = activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_UPDATE_ROOT_QUORUM', { threshold: 1e12, userIds: [sigil.root.userId] });
    await expectRefused(await rawPost(submitUrl('update_root_quorum'), threshold, { key: sigil.root }), 400, 3, 'REQUEST_INVALID', /parameters\.threshold: must match format "int32"/);
  });
});

describe('fault 7: JSON only, and typed envelope fields', () => {
  it('a body sent as another content type, with none, or with a content coding answers 415', async () => {
    const text = JSON.stringify(walletBody({}));
    for (const headers of [{ 'content-type': 'text/plain' }, { 'content-type': 'application/x-www-form-urlencoded' }, { 'content-type': '' }, { 'content-encoding': 'gzip' }]) {
      const res = await rawPost(submitUrl('create_wallet'), text, { key: sigil.root, headers });
      await expectRefused(res, 415, 3, 'UNSUPPORTED_MEDIA_TYPE', /^unsupported content (type|encoding)/);
    }
    const none = await fetch(submitUrl('create_wallet'), { method: 'POST', body: new Blob([text]) });
    await expectRefused({ status: none.status, body: await none.json(), headers: none.headers }, 415, 3, 'UNSUPPORTED_MEDIA_TYPE', /^unsupported content type \(none\)/);
    const proxy = await rawPost(`${sigil.authProxyUrl}/v1/account`, '{}', { headers: { 'content-type': 'text/plain' } });
    await expectRefused(proxy, 415, 3, 'UNSUPPORTED_MEDIA_TYPE', /^unsupported content type "text\/plain"/);
    // JSON with its charset is JSON.
    const ok = await rawPost(`${sigil.url}/public/v1/query/whoami`, { organizationId: sigil.root.organizationId }, { key: sigil.root, headers: { 'content-type': 'application/json; charset=UTF-8' } });
    expect(ok.status).toBe(200);
  });

  it('generateAppProofs must be a boolean', async () => {
    const res = await rawPost(submitUrl('create_wallet'), { ...walletBody({}), generateAppProofs: 'yes' }, { key: sigil.root });
    await expectRefused(res, 400, 3, 'REQUEST_INVALID', /^bad request body: generateAppProofs must be a boolean$/);
  });
});

describe('oversized bodies', () => {
  it('a client still sending a body over the limit reads the 413 instead of a reset', async () => {
    const c = await connect(sigil.url);
    const size = 3 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    c.socket.write(postHead('/public/v1/submit/create_wallet', size));
    c.socket.write(chunk);
    // The server answers at once (the declared length is over the limit); the client goes on sending.
    while (!c.received().includes('\r\n\r\n')) await sleep(10);
    let writeError: string | undefined;
    for (let sent = chunk.length; sent < size && !c.socket.destroyed; sent += chunk.length) {
      await new Promise<void>((r) => c.socket.write(chunk, (err) => ((writeError ??= (err as NodeJS.ErrnoException | undefined)?.code), r())));
      await sleep(1);
    }
    expect(writeError).toBeUndefined();
    expect(c.socket.destroyed).toBe(false);
    const answer = parseAnswer(c.received());
    expect(answer.status).toBe(413);
    expect(answer.body).toMatchObject({ code: 3, message: 'request body too large: the limit is 2097152 bytes' });
    c.socket.destroy();
    expect(await dbSnapshot(sigil)).toEqual(before);
  });
});

describe('fault 2: slow and idle clients are timed out; connections are capped', () => {
  it('a body sent a byte at a time is cut at the request timeout with a JSON 408, while others are answered', async () => {
    const c = await connect(strict.url);
    c.socket.write(postHead('/public/v1/submit/create_wallet', 100_000));
    const drip = setInterval(() => c.socket.writable && c.socket.write(' '), 200);
    try {
      // Another client is answered while this one holds its connection.
      expect((await sdkServerClient(strict).getWhoami({})).userId).toBe(strict.root.userId);
      await c.closed;
    } finally {
      clearInterval(drip);
    }
    const answer = parseAnswer(c.received());
    expect(answer.status).toBe(408);
    expect(answer.body).toEqual({
      code: 4,
      message: expect.stringMatching(/^request timeout/),
      details: [{ '@type': 'type.googleapis.com/errors.v1.TurnkeyErrorDetail', turnkeyErrorCode: 'REQUEST_TIMEOUT' }],
    });
  });

  it('headers sent slowly are cut at the headers timeout, and an idle kept-alive connection at the keep-alive timeout', async () => {
    const slow = await connect(strict.url);
    slow.socket.write('POST /public/v1/query/whoami HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => slow.socket.writable && slow.socket.write('X-Slow: 1\r\n'), 200);
    await slow.closed.finally(() => clearInterval(drip));
    expect(parseAnswer(slow.received()).status).toBe(408);

    const idle = await connect(strict.url);
    idle.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await idle.closed;
    expect(parseAnswer(idle.received())).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('past SIGIL_MAX_CONNECTIONS a new connection is closed at once; the others are served', async () => {
    const held = await Promise.all(Array.from({ length: 20 }, () => connect(capped.url)));
    // Each held connection has been accepted: it was answered once and is kept alive.
    await Promise.all(
      held.map(async (c) => {
        c.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
        while (!c.received().includes('"ok"')) await sleep(10);
      }),
    );
    const extra = await connect(capped.url);
    extra.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await extra.closed;
    expect(extra.received()).toBe('');
    for (const c of held) c.socket.destroy();
    await Promise.all(held.map((c) => c.closed));
    await sleep(100);
    expect((await sdkServerClient(capped).getWhoami({})).userId).toBe(capped.root.userId);
  });

  it('with the default limits the service answers while 1,000 slow clients hold connections', async () => {
    const slow: Awaited<ReturnType<typeof connect>>[] = [];
    // In batches, within the listen backlog; each sends its headers and then nothing of its body.
    for (let i = 0; i < 10; i++) slow.push(...(await Promise.all(Array.from({ length: 100 }, () => connect(sigil.url)))));
    for (const c of slow) c.socket.write(postHead('/public/v1/submit/create_wallet', 100_000));
    try {
      const api = sdkServerClient(sigil);
      expect((await api.getWhoami({})).userId).toBe(sigil.root.userId);
      const { walletId } = await api.createWallet({ walletName: 'while slow clients wait', accounts: [] });
      expect(walletId).toBeTruthy();
    } finally {
      for (const c of slow) c.socket.destroy();
    }
  }, 60_000);
});

describe('configuration', () => {
  it('sigil config shows the limits with their defaults and settings; a bad combination is refused', () => {
    const shown = JSON.parse(runSigil(['config', '--data-dir', sigil.dataDir], sigil.env).stdout);
    expect(shown).toMatchObject({
      bodyLimitBytes: 2097152,
      maxJsonDepth: 32,
      maxJsonItems: 1000,
      requestTimeoutMs: 30000,
      headersTimeoutMs: 10000,
      keepAliveTimeoutMs: 72000,
      maxConnections: 4096,
      logBufferBytes: 1048576,
      shutdownTimeoutMs: 10000,
    });
    const set = runSigil(['config', '--data-dir', sigil.dataDir], { ...sigil.env, SIGIL_MAX_JSON_ITEMS: '5000', SIGIL_MAX_CONNECTIONS: '100', SIGIL_REQUEST_TIMEOUT_MS: '5000', SIGIL_HEADERS_TIMEOUT_MS: '2000' });
    expect(JSON.parse(set.stdout)).toMatchObject({ maxJsonItems: 5000, maxConnections: 100, requestTimeoutMs: 5000, headersTimeoutMs: 2000 });
    const bad = runSigil(['config', '--data-dir', sigil.dataDir], { ...sigil.env, SIGIL_REQUEST_TIMEOUT_MS: '1000', SIGIL_HEADERS_TIMEOUT_MS: '2000' });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/SIGIL_HEADERS_TIMEOUT_MS \(2000\) must not exceed SIGIL_REQUEST_TIMEOUT_MS \(1000\)/);
    const deep = runSigil(['config', '--data-dir', sigil.dataDir], { ...sigil.env, SIGIL_MAX_JSON_DEPTH: '100000' });
    expect(deep.stderr).toMatch(/SIGIL_MAX_JSON_DEPTH must be from 8 to 256/);
  });
});
