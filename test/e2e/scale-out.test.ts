// Two `sigil serve` processes on one database give the answers one would (docs/operator-guide.md
// "Running on PostgreSQL / in production"): the official SDK alternates between them; an identical
// submission sent to both is one activity; a consensus vote cast on one completes the activity the other
// shows; an OTP code's attempts and its one use hold across them. The state that makes this so lives in
// the database (unique constraints and conditional updates), never in a process. Runs on the embedded
// SQLite store (two processes on one WAL database) and on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptOtpCodeToBundle, generateP256KeyPair } from '@turnkey/crypto';
import { serveAnother, startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { codeIn, smtpEnv, startInbox, type Inbox } from '../helpers/mail.js';

let inbox: Inbox;
let first: SigilInstance;
/** The same deployment served by a second process. */
let second: SigilInstance;

beforeAll(async () => {
  inbox = await startInbox();
  first = await startSigil(smtpEnv(inbox), { process: true });
  second = await serveAnother(first);
}, 60_000);

afterAll(async () => {
  await second?.stop();
  await first?.stop();
  await inbox?.close();
});

const both = () => [first, second];

function newKey(): KeyPair {
  const k = generateP256KeyPair();
  return { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
}

describe('two processes, one database', () => {
  it('are two processes serving the same deployment', async () => {
    expect(second.url).not.toBe(first.url);
    expect(second.process.pid).not.toBe(first.process.pid);
    const [a, b] = await Promise.all(both().map((s) => sdkServerClient(s).getWhoami({ organizationId: s.root.organizationId })));
    expect(a).toEqual(b);
  });

  it('the official SDK alternating between them sees one organization', async () => {
    for (const [i, s] of [first, second, first, second].entries()) {
      await sdkServerClient(s).createWallet({ walletName: `alternating ${i}`, accounts: [] });
    }
    for (const s of both()) {
      const { wallets } = await sdkServerClient(s).getWallets({ organizationId: s.root.organizationId });
      expect(wallets.filter((w) => w.walletName.startsWith('alternating ')).map((w) => w.walletName).sort()).toEqual(['alternating 0', 'alternating 1', 'alternating 2', 'alternating 3']);
    }
  });

  it('an identical submission sent to both at once is one activity', async () => {
    const body = JSON.stringify(activityBody(first.root.organizationId, 'ACTIVITY_TYPE_CREATE_WALLET', { walletName: 'deduped', accounts: [] }));
    const answers = await Promise.all([first, second, first, second].map((s) => rawPost(`${s.url}/public/v1/submit/create_wallet`, body, { key: s.root })));
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(new Set(answers.map((a) => a.body.activity.id)).size).toBe(1);
    expect(new Set(answers.map((a) => a.body.activity.result.createWalletResult.walletId)).size).toBe(1);
    const { wallets } = await sdkServerClient(second).getWallets({ organizationId: second.root.organizationId });
    expect(wallets.filter((w) => w.walletName === 'deduped')).toHaveLength(1);
  });

  it('a vote cast on one process completes the activity the other shows', async () => {
    const api1 = sdkServerClient(first);
    const alice = newKey();
    const bob = newKey();
    const { userIds } = await api1.createUsers({
      users: [
        { userName: 'alice', apiKeys: [{ apiKeyName: 'a', publicKey: alice.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] },
        { userName: 'bob', apiKeys: [{ apiKeyName: 'b', publicKey: bob.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] },
      ],
    });
    await api1.createPolicy({
      policyName: 'two of alice and bob create wallets',
      effect: 'EFFECT_ALLOW',
      condition: "activity.type == 'ACTIVITY_TYPE_CREATE_WALLET'",
      consensus: `approvers.filter(u, u.id == '${userIds[0]}' || u.id == '${userIds[1]}').count() >= 2`,
      notes: '',
    });
    const submitted = await rawPost(
      `${first.url}/public/v1/submit/create_wallet`,
      activityBody(first.root.organizationId, 'ACTIVITY_TYPE_CREATE_WALLET', { walletName: 'needs two', accounts: [] }),
      { key: alice },
    );
    expect(submitted.body.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    const { id, fingerprint } = submitted.body.activity;

    const approved = await sdkServerClient(second, bob).approveActivity({ fingerprint });
    expect(approved.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const seen = await sdkServerClient(first).getActivity({ activityId: id });
    expect(seen.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(seen.activity.votes.map((v) => v.userId).sort()).toEqual([...userIds].sort());
    // A second approval by bob on the first process is refused: he has voted.
    await expect(sdkServerClient(first, bob).approveActivity({ fingerprint })).rejects.toThrow();
  });

  it('an OTP code gets three attempts in all and is used once, whichever process is asked', async () => {
    const email = 'scale@example.com';
    const before = inbox.count(email);
    const { otpId, otpEncryptionTargetBundle } = await sdkServerClient(first).initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: email, appName: 'Scale' } as never);
    const code = codeIn(await inbox.next(email, before));
    const client = newKey();
    const bundleFor = (c: string) => encryptOtpCodeToBundle(c, otpEncryptionTargetBundle, client.apiPublicKey, first.root.signerPublicKey);
    const wrong = code === '000000000' ? '111111111' : '000000000';

    await expect(sdkServerClient(first).verifyOtp({ otpId, encryptedOtpBundle: await bundleFor(wrong) })).rejects.toThrow(/Invalid OTP code/);
    await expect(sdkServerClient(second).verifyOtp({ otpId, encryptedOtpBundle: await bundleFor(wrong) })).rejects.toThrow(/Invalid OTP code/);
    // The right code on the third and last attempt, on either process, works once; then never again.
    const results = await Promise.allSettled(both().map(async (s) => sdkServerClient(s).verifyOtp({ otpId, encryptedOtpBundle: await bundleFor(code) })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const s of both()) {
      await expect(sdkServerClient(s).verifyOtp({ otpId, encryptedOtpBundle: await bundleFor(code) })).rejects.toThrow(/already been used|locked/);
    }
  });
});
