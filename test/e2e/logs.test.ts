// Structured logs (docs/operator-guide.md "Audit trail and metrics"): `sigil serve` writes one JSON
// object per line to stderr; every request is logged once with its request id (X-Request-Id when the
// client sends one), the operation, the HTTP status and the time taken; refusals carry their error code;
// and nothing secret reaches the log: not stamps, private keys, one-time codes, verification tokens or
// session JWTs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptOtpCodeToBundle, generateP256KeyPair } from '@turnkey/crypto';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient } from '../helpers/clients.js';
import { codeIn, smtpEnv, startInbox, type Inbox } from '../helpers/mail.js';

let inbox: Inbox;
let sigil: SigilInstance;

beforeAll(async () => {
  inbox = await startInbox();
  sigil = await startSigil({ ...smtpEnv(inbox), SIGIL_LOG_LEVEL: 'info' }, { process: true });
}, 60_000);

afterAll(async () => {
  await sigil?.stop();
  await inbox?.close();
});

const lines = () =>
  sigil
    .stderr()
    .split('\n')
    .filter((l) => l.trim() !== '');

async function settle() {
  await new Promise((r) => setTimeout(r, 200)); // pino writes asynchronously
}

describe('logs', () => {
  it('are JSON lines; a request is logged with its request id, operation, status and duration', async () => {
    const body = { organizationId: sigil.root.organizationId };
    const res = await rawPost(`${sigil.url}/public/v1/query/whoami`, body, { key: sigil.root, headers: { 'X-Request-Id': 'req-logs-1' } });
    expect(res.status).toBe(200);
    const refused = await rawPost(`${sigil.url}/public/v1/query/whoami`, body, { headers: { 'X-Request-Id': 'req-logs-2', 'X-Stamp': 'not-a-stamp' } });
    expect(refused.status).toBe(401);
    await settle();
    const parsed = lines().map((l) => JSON.parse(l));
    const ok = parsed.find((l) => l.reqId === 'req-logs-1' && l.msg === 'request');
    expect(ok).toMatchObject({ service: 'sigil', operation: 'whoami', kind: 'query', httpStatus: 200 });
    expect(typeof ok.ms).toBe('number');
    const bad = parsed.find((l) => l.reqId === 'req-logs-2' && l.msg === 'request');
    expect(bad).toMatchObject({ operation: 'whoami', httpStatus: 401, error: 'SIGNATURE_INVALID' });
  });

  it('carry no secrets', async () => {
    const api = sdkServerClient(sigil);
    const email = 'logs@example.com';
    await api.createUsers({ users: [{ userName: 'logs', userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }] });
    const before = inbox.count(email);
    const { otpId, otpEncryptionTargetBundle } = await api.initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: email, appName: 'Logs' } as never);
    const code = codeIn(await inbox.next(email, before));
    const client = generateP256KeyPair();
    const encryptedOtpBundle = await encryptOtpCodeToBundle(code, otpEncryptionTargetBundle, client.publicKey, sigil.root.signerPublicKey);
    const { verificationToken } = await api.verifyOtp({ otpId, encryptedOtpBundle });
    const session = generateP256KeyPair();
    const login = await api.stampLogin({ publicKey: session.publicKey });
    const stamped = await rawPost(`${sigil.url}/public/v1/submit/create_wallet`, activityBody(sigil.root.organizationId, 'ACTIVITY_TYPE_CREATE_WALLET', { walletName: 'logs', accounts: [] }), { key: sigil.root });
    expect(stamped.status).toBe(200);
    await settle();
    const text = sigil.stderr();
    for (const secret of [sigil.root.apiPrivateKey, code, encryptedOtpBundle, verificationToken, login.session, client.privateKey]) {
      expect(text).not.toContain(secret);
    }
    // Nor the signature of any stamp (the X-Stamp header's value).
    expect(text).not.toMatch(/"signature"\s*:\s*"30[0-9a-f]{60,}"/);
    expect(text).not.toMatch(/x-stamp/i);
  });
});
