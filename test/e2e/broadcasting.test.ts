// Broadcasting (docs/broadcasting.md "Broadcasting"): eth_send_transaction, eth_send_raw_transaction,
// get_send_transaction_status and get_nonces through the official clients (@turnkey/sdk-server's
// ethSendTransaction / pollTransactionStatus / getNonces and @turnkey/http's TurnkeyClient), against
// a real anvil node; every outcome is read back from the chain with viem's public client.
// Two Sigil processes share the deployment (serveAnother), so the 50 concurrent sends from one
// address are allocated nonces by both, on SQLite and on PostgreSQL. Status changes reach a
// webhook receiver on loopback as SEND_TRANSACTION_STATUS_UPDATES events, each signature checked
// with @turnkey/crypto's verifyTurnkeyWebhookSignature.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createTestClient, http, parseEther, serializeTransaction, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { serveAnother, startSigil, terminate, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, httpClient, newKey, rawPost, sdkServerClient } from '../helpers/clients.js';
import { dbSnapshot, execSql, expectRefusedUnchanged } from '../helpers/db-snapshot.js';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { approve, twoApprovers } from '../helpers/approvals.js';
import { receiveSendEvents, type SendEvents } from '../helpers/send-events.js';

const CAIP2 = 'eip155:11155111';
/** anvil's first default account (its well-known development key), funding the raw-transaction test. */
const ANVIL_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

let anvil: Anvil;
let sigil: SigilInstance;
let second: SigilInstance;
let orgId: string;
let from: Hex;
let publicClient: ReturnType<typeof createPublicClient>;
/** The webhook receiver of SEND_TRANSACTION_STATUS_UPDATES (signatures checked). */
let receiver: SendEvents;
/** Sends whose events the webhook test checks. */
const tracked: { included?: string; reverted?: string } = {};

/**
 * A contract whose every call reverts with Error("nope"): runtime = CODECOPY the ABI-encoded error
 * appended to the code into memory, REVERT with it (12 opcode bytes + 100 data bytes).
 */
const REVERTER = ('0x6064600c60003960646000fd' +
  '08c379a0' +
  (32).toString(16).padStart(64, '0') +
  (4).toString(16).padStart(64, '0') +
  Buffer.from('nope').toString('hex').padEnd(64, '0')) as Hex;
const REVERTER_ADDRESS = '0x00000000000000000000000000000000000bad01' as Hex;

beforeAll(async () => {
  anvil = await startAnvil();
  sigil = await startSigil({
    [`SIGIL_EVM_RPC_${anvil.chainId}`]: anvil.url,
    SIGIL_EVM_POLL_INTERVAL_MS: '100',
    SIGIL_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    SIGIL_WEBHOOK_POLL_MS: '50',
  }, { process: true });
  second = await serveAnother(sigil);
  orgId = sigil.root.organizationId;
  receiver = await receiveSendEvents(sigil);
  publicClient = createPublicClient({ transport: http(anvil.url) });
  const w = await sdkServerClient(sigil).createWallet({
    walletName: 'broadcasting',
    accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }],
  });
  from = w.addresses[0] as Hex;
  const test = createTestClient({ mode: 'anvil', transport: http(anvil.url) });
  await test.setBalance({ address: from, value: parseEther('1000') });
  await test.setCode({ address: REVERTER_ADDRESS, bytecode: REVERTER });
}, 120_000);

afterAll(async () => {
  await second?.stop();
  await sigil?.stop();
  await anvil?.stop();
  await receiver?.close();
});

const recipient = (n: number) => `0x${n.toString(16).padStart(40, '0')}` as Hex;

/** Polls with the SDK's own poller until INCLUDED (rejects on FAILED), then reads the status. */
async function included(s: SigilInstance, sendTransactionStatusId: string) {
  await sdkServerClient(s).pollTransactionStatus({ sendTransactionStatusId, pollingIntervalMs: 100, timeoutMs: 120_000 });
  return httpClient(s).getSendTransactionStatus({ organizationId: orgId, sendTransactionStatusId });
}

/** The status once it is no longer in flight. */
async function settled(s: SigilInstance, sendTransactionStatusId: string) {
  for (;;) {
    const status = await httpClient(s).getSendTransactionStatus({ organizationId: orgId, sendTransactionStatusId });
    if (status.txStatus === 'INCLUDED' || status.txStatus === 'FAILED') return status;
    await new Promise((r) => setTimeout(r, 100));
  }
}


/**
 * Waits (bounded) until the tracker has settled the earlier tests' sends and the dispatcher has
 * delivered their webhook events: both write in the background, so a snapshot taken while they still
 * work would see changes no refused request made.
 */
async function backgroundSettled(): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const [sends] = await execSql(sigil, "select count(*) as n from send_transactions where status in ('INITIALIZED', 'BROADCASTING')");
    const [events] = await execSql(sigil, "select count(*) as n from webhook_deliveries where state = 'pending'");
    if (Number(sends.n) === 0 && Number(events.n) === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('eth_send_transaction', () => {
  it('fills nonce, gas and fees, signs with the account key, broadcasts, and tracks to INCLUDED', async () => {
    const nonceBefore = await publicClient.getTransactionCount({ address: from });
    const { sendTransactionStatusId } = await sdkServerClient(sigil).ethSendTransaction({
      from,
      caip2: CAIP2,
      calls: [{ to: recipient(0xbeef), value: '12345' }],
    } as never);
    const status = await included(sigil, sendTransactionStatusId);
    tracked.included = sendTransactionStatusId;
    expect(status.txStatus).toBe('INCLUDED');
    const hash = status.eth!.txHash as Hex;
    const receipt = await publicClient.getTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    expect(receipt.from.toLowerCase()).toBe(from.toLowerCase());
    expect(receipt.to!.toLowerCase()).toBe(recipient(0xbeef));
    const tx = await publicClient.getTransaction({ hash });
    expect(tx.value).toBe(12345n);
    expect(tx.nonce).toBe(nonceBefore);
    expect(tx.type).toBe('eip1559');
    expect(tx.gas).toBeGreaterThanOrEqual(21000n);
    expect(tx.maxFeePerGas).toBeGreaterThan(0n);
    expect(await publicClient.getBalance({ address: recipient(0xbeef) })).toBe(12345n);
    // The other process answers the same status.
    expect(await httpClient(second).getSendTransactionStatus({ organizationId: orgId, sendTransactionStatusId })).toEqual(status);
  });

  it('the older ACTIVITY_TYPE_ETH_SEND_TRANSACTION (flat to/value/data) sends and answers ethSendTransactionResult', async () => {
    const res = await rawPost(
      `${sigil.url}/public/v1/submit/eth_send_transaction`,
      activityBody(orgId, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION', { from, caip2: CAIP2, to: recipient(0xbeef2), value: '7' }),
      { key: sigil.root },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.activity.result.ethSendTransactionResult.sendTransactionStatusId;
    const status = await included(sigil, id);
    expect(await publicClient.getBalance({ address: recipient(0xbeef2) })).toBe(7n);
    expect((await publicClient.getTransaction({ hash: status.eth!.txHash as Hex })).from.toLowerCase()).toBe(from.toLowerCase());
  });

  it('a policy that denies the sign_transaction denies the eth_send_transaction too; what it allows, it allows both', async () => {
    const api = sdkServerClient(sigil);
    const bobKey = newKey();
    const { userIds } = await api.createUsers({
      users: [{ userName: 'bcast bob', apiKeys: [{ apiKeyName: 'k', publicKey: bobKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    const blocked = recipient(0xb10c);
    const allow = await api.createPolicy({ policyName: 'bob signs', effect: 'EFFECT_ALLOW', condition: "activity.action == 'SIGN'", consensus: `approvers.any(user, user.id == '${userIds[0]}')`, notes: '' });
    const deny = await api.createPolicy({ policyName: 'never to the blocked address', effect: 'EFFECT_DENY', condition: `eth.tx.to == '${blocked}'`, notes: '' });
    try {
      const bob = httpClient(sigil, bobKey);
      const unsigned = serializeTransaction({ type: 'eip1559', chainId: anvil.chainId, nonce: 0, to: blocked, value: 1n, gas: 21000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n });
      const sign = (to: Hex) =>
        bob.signTransaction({
          type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
          timestampMs: String(Date.now()),
          organizationId: orgId,
          parameters: { signWith: from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: to === blocked ? unsigned : serializeTransaction({ type: 'eip1559', chainId: anvil.chainId, nonce: 0, to, value: 1n, gas: 21000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n }) },
        });
      const send = (to: Hex, value: string) =>
        bob.ethSendTransaction({
          type: 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2',
          timestampMs: String(Date.now()),
          organizationId: orgId,
          parameters: { from, caip2: CAIP2, calls: [{ to, value }] },
        } as never);
      const nonce = await publicClient.getTransactionCount({ address: from, blockTag: 'pending' });
      await expect(sign(blocked)).rejects.toThrow(/denied/i);
      await expect(send(blocked, '5')).rejects.toThrow(/denied/i);
      // Nothing went out and no nonce was taken.
      expect(await publicClient.getTransactionCount({ address: from, blockTag: 'pending' })).toBe(nonce);
      expect(await publicClient.getBalance({ address: blocked })).toBe(0n);
      const { nonce: next } = await sdkServerClient(sigil).getNonces({ address: from, caip2: CAIP2, nonce: true } as never);
      expect(next).toBe(String(nonce));
      // Another recipient: both allowed.
      await sign(recipient(0xa11ce));
      const sent = await send(recipient(0xa11ce), '5');
      const id = (sent.activity.result as any).ethSendTransactionResultV2.sendTransactionStatusId;
      await included(sigil, id);
      expect(await publicClient.getBalance({ address: recipient(0xa11ce) })).toBe(5n);
    } finally {
      await api.deletePolicy({ policyId: deny.policyId });
      await api.deletePolicy({ policyId: allow.policyId });
    }
  });

  /**
   * An eth_send_transaction that waits for alice and carol: submitted by alice on the first process,
   * approved by carol on the second. Answers the send's id once the approval completed the activity.
   */
  async function sendApprovedByTwo(to: Hex, value: string, afterApproval?: (id: string) => Promise<void>): Promise<string> {
    const { approvers: [alice, carol], policyId } = await twoApprovers(sigil, [`bcast alice ${value}`, `bcast carol ${value}`], "activity.type == 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2'");
    try {
      const submitted = await httpClient(sigil, alice.key).ethSendTransaction({
        type: 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2',
        timestampMs: String(Date.now()),
        organizationId: orgId,
        parameters: { from, caip2: CAIP2, calls: [{ to, value }] },
      } as never);
      expect(submitted.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
      expect(await publicClient.getBalance({ address: to })).toBe(0n);
      // Approved on the other process.
      await approve(second, carol.key, submitted.activity.fingerprint);
      const { activity } = await httpClient(sigil).getActivity({ organizationId: orgId, activityId: submitted.activity.id });
      expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
      const id = (activity.result as any).ethSendTransactionResultV2.sendTransactionStatusId as string;
      await afterApproval?.(id);
      return id;
    } finally {
      await sdkServerClient(sigil).deletePolicy({ policyId });
    }
  }

  it('a send that needs two approvals is sent once the second approval completes it', async () => {
    const id = await sendApprovedByTwo(recipient(0xa991), '77');
    const status = await included(sigil, id);
    expect((await publicClient.getTransaction({ hash: status.eth!.txHash as Hex })).to!.toLowerCase()).toBe(recipient(0xa991));
    expect(await publicClient.getBalance({ address: recipient(0xa991) })).toBe(77n);
  });

  it('an approved send that another hand already got mined is INCLUDED, not FAILED as "nonce too low"', async () => {
    // Two processes' trackers may both hand over the same approved send: the node mines the first and
    // refuses the second for its nonce. Here the test is the first hand: it broadcasts the recorded
    // transaction itself before the trackers do (they wait a few seconds after the approval).
    let hash = '';
    const id = await sendApprovedByTwo(recipient(0xa992), '78', async (sendId) => {
      const [row] = await execSql(sigil, 'select signed_transaction, status from send_transactions where id = ?', [sendId]);
      expect(row.status).toBe('INITIALIZED');
      hash = await publicClient.request({ method: 'eth_sendRawTransaction', params: [row.signed_transaction as Hex] });
      expect((await publicClient.waitForTransactionReceipt({ hash: hash as Hex })).status).toBe('success');
    });
    const status = await included(sigil, id);
    expect(status.eth!.txHash).toBe(hash);
    expect(await publicClient.getBalance({ address: recipient(0xa992) })).toBe(78n);
  });

  it('a call that reverts on chain is reported FAILED with its revert reason', async () => {
    // A gas limit given by the caller skips the estimate, so the reverting call is mined.
    const { sendTransactionStatusId } = await sdkServerClient(sigil).ethSendTransaction({
      from,
      caip2: CAIP2,
      gasLimit: '100000',
      calls: [{ to: REVERTER_ADDRESS, data: '0x12345678' }],
    } as never);
    tracked.reverted = sendTransactionStatusId;
    await expect(sdkServerClient(sigil).pollTransactionStatus({ sendTransactionStatusId, pollingIntervalMs: 100, timeoutMs: 120_000 })).rejects.toThrow(
      /execution reverted: nope/,
    );
    const status = await settled(sigil, sendTransactionStatusId);
    expect(status.txStatus).toBe('FAILED');
    expect(status.txError).toBe('execution reverted: nope');
    expect(status.error!.revertChain).toEqual([
      { address: REVERTER_ADDRESS, errorType: 'native', displayMessage: 'execution reverted: nope', native: { nativeType: 'error_string', message: 'nope' } },
    ]);
    const receipt = await publicClient.getTransactionReceipt({ hash: status.eth!.txHash as Hex });
    expect(receipt.status).toBe('reverted');
  });

  it('a call the node says would revert (no gas limit given) is refused with the reason, and nothing is sent', async () => {
    const nonce = await publicClient.getTransactionCount({ address: from, blockTag: 'pending' });
    const before = await dbSnapshot(sigil);
    const res = await rawPost(
      `${sigil.url}/public/v1/submit/eth_send_transaction`,
      activityBody(orgId, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2', { from, caip2: CAIP2, calls: [{ to: REVERTER_ADDRESS, data: '0x12345678' }] }),
      { key: sigil.root },
    );
    await expectRefusedUnchanged(sigil, before, res, 400, 3, 'REQUEST_INVALID', /would fail.*execution reverted: nope/);
    expect(await publicClient.getTransactionCount({ address: from, blockTag: 'pending' })).toBe(nonce);
  });

  it('50 concurrent sends from one address, through two processes, all land with consecutive nonces', async () => {
    const start = await publicClient.getTransactionCount({ address: from, blockTag: 'pending' });
    const began = performance.now();
    const ids = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        sdkServerClient(i % 2 === 0 ? sigil : second)
          .ethSendTransaction({ from, caip2: CAIP2, calls: [{ to: recipient(0xc0c0), value: String(1000 + i) }] } as never)
          .then((r) => r.sendTransactionStatusId),
      ),
    );
    expect(new Set(ids).size).toBe(50);
    const submitted = performance.now();
    const statuses = await Promise.all(ids.map((id, i) => included(i % 2 === 0 ? second : sigil, id)));
    // Figures for the record, not assertions (the machine is shared and noisy).
    console.log(`50 concurrent sends through two processes: all answered in ${Math.round(submitted - began)} ms, all INCLUDED after ${Math.round(performance.now() - began)} ms`);
    const txs = await Promise.all(statuses.map((s) => publicClient.getTransaction({ hash: s.eth!.txHash as Hex })));
    const nonces = txs.map((t) => t.nonce).sort((a, b) => a - b);
    expect(nonces).toEqual(Array.from({ length: 50 }, (_, i) => start + i));
    for (const t of txs) expect(t.from.toLowerCase()).toBe(from.toLowerCase());
    expect(new Set(txs.map((t) => t.value)).size).toBe(50);
    expect(await publicClient.getTransactionCount({ address: from })).toBe(start + 50);
    expect(await publicClient.getBalance({ address: recipient(0xc0c0) })).toBe(BigInt(50 * 1000 + (49 * 50) / 2));
  }, 180_000);

  it('an identical submission sent to both processes at once is sent once', async () => {
    const nonce = await publicClient.getTransactionCount({ address: from, blockTag: 'pending' });
    const body = JSON.stringify(activityBody(orgId, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2', { from, caip2: CAIP2, calls: [{ to: recipient(0xd0b1e), value: '11' }] }));
    const answers = await Promise.all([sigil, second, sigil, second].map((s) => rawPost(`${s.url}/public/v1/submit/eth_send_transaction`, body, { key: s.root })));
    const ids = new Set<string>();
    for (const a of answers) {
      // The winner's activity, or (while the winner is still recording it) a conflict that sent nothing.
      if (a.status === 200) ids.add(a.body.activity.result.ethSendTransactionResultV2.sendTransactionStatusId);
      else expect(a.body, JSON.stringify(a.body)).toMatchObject({ code: 6, message: expect.stringMatching(/identical submission/) });
    }
    expect(ids.size).toBe(1);
    await included(sigil, [...ids][0]);
    expect(await publicClient.getBalance({ address: recipient(0xd0b1e) })).toBe(11n);
    expect(await publicClient.getTransactionCount({ address: from, blockTag: 'pending' })).toBe(nonce + 1);
  });

  it('refuses a chain without an RPC (naming the setting) and sponsor: true, changing nothing', async () => {
    const submit = (parameters: unknown) => rawPost(`${sigil.url}/public/v1/submit/eth_send_transaction`, activityBody(orgId, 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2', parameters), { key: sigil.root });
    const nonce = await publicClient.getTransactionCount({ address: from, blockTag: 'pending' });
    await backgroundSettled();
    const before = await dbSnapshot(sigil);
    await expectRefusedUnchanged(sigil, before, await submit({ from, caip2: 'eip155:1', calls: [{ to: recipient(1), value: '1' }] }), 400, 9, 'REQUEST_INVALID', /eip155:1 is not configured.*SIGIL_EVM_RPC_1\b/);
    await expectRefusedUnchanged(sigil, before, await submit({ from, caip2: CAIP2, sponsor: true, calls: [{ to: recipient(1), value: '1' }] }), 404, 12, 'UNIMPLEMENTED', /sponsor: true .* not supported by this deployment/);
    await expectRefusedUnchanged(
      sigil,
      before,
      await submit({ from, caip2: CAIP2, calls: [{ to: recipient(1) }, { to: recipient(2) }] }),
      404,
      12,
      'UNIMPLEMENTED',
      /more than one call .* not supported by this deployment/,
    );
    const raw = await rawPost(`${sigil.url}/public/v1/submit/eth_send_raw_transaction`, activityBody(orgId, 'ACTIVITY_TYPE_ETH_SEND_RAW_TRANSACTION', { signedTransaction: '0x02', caip2: 'eip155:8453' }), { key: sigil.root });
    await expectRefusedUnchanged(sigil, before, raw, 400, 9, 'REQUEST_INVALID', /SIGIL_EVM_RPC_8453/);
    expect(await publicClient.getTransactionCount({ address: from, blockTag: 'pending' })).toBe(nonce);
  });
});

describe('eth_send_raw_transaction', () => {
  it('broadcasts a transaction signed elsewhere and answers its hash', async () => {
    const account = privateKeyToAccount(ANVIL_KEY);
    const nonce = await publicClient.getTransactionCount({ address: account.address, blockTag: 'pending' });
    const signed = await account.signTransaction({ type: 'eip1559', chainId: anvil.chainId, nonce, to: recipient(0x5a5a), value: 99n, gas: 21000n, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n });
    const res = await httpClient(sigil).ethSendRawTransaction({
      type: 'ACTIVITY_TYPE_ETH_SEND_RAW_TRANSACTION',
      timestampMs: String(Date.now()),
      organizationId: orgId,
      parameters: { signedTransaction: signed, caip2: CAIP2 },
    } as never);
    const hash = (res.activity.result as any).ethSendRawTransactionResult.transactionHash as Hex;
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 100 });
    expect(receipt.status).toBe('success');
    expect(receipt.from.toLowerCase()).toBe(account.address.toLowerCase());
    expect(await publicClient.getBalance({ address: recipient(0x5a5a) })).toBe(99n);
    // A transaction the node refuses (the same nonce again) fails the activity with the node's reason.
    const again = await account.signTransaction({ type: 'eip1559', chainId: anvil.chainId, nonce, to: recipient(0x5a5b), value: 1n, gas: 21000n, maxFeePerGas: 10n ** 11n, maxPriorityFeePerGas: 10n ** 9n });
    await expect(
      httpClient(sigil).ethSendRawTransaction({
        type: 'ACTIVITY_TYPE_ETH_SEND_RAW_TRANSACTION',
        timestampMs: String(Date.now()),
        organizationId: orgId,
        parameters: { signedTransaction: again, caip2: CAIP2 },
      } as never),
    ).rejects.toThrow(/the node refused the transaction: .*nonce/i);
  });
});

describe('get_nonces', () => {
  it('answers the nonce the next send takes, the chain agreeing once everything landed', async () => {
    const api = sdkServerClient(sigil);
    const { nonce } = await api.getNonces({ address: from, caip2: CAIP2, nonce: true } as never);
    expect(nonce).toBe(String(await publicClient.getTransactionCount({ address: from, blockTag: 'pending' })));
    const { sendTransactionStatusId } = await api.ethSendTransaction({ from, caip2: CAIP2, calls: [{ to: recipient(0xd00d), value: '1' }] } as never);
    await included(sigil, sendTransactionStatusId);
    expect((await httpClient(second).getNonces({ organizationId: orgId, address: from, caip2: CAIP2, nonce: true })).nonce).toBe(String(Number(nonce) + 1));
    // An address of none of the organization's keys is not answered (test/e2e/chain-safety.test.ts).
    await expect(api.getNonces({ address: recipient(0xd00d), caip2: CAIP2, nonce: true } as never)).rejects.toThrow(/not an Ethereum address of a wallet account or private key of this organization/);
    // Nothing requested, nothing answered; the Gas Station nonce is not offered.
    expect(await api.getNonces({ address: from, caip2: CAIP2 } as never)).toEqual({});
    await expect(api.getNonces({ address: from, caip2: CAIP2, gasStationNonce: true } as never)).rejects.toThrow(/not supported by this deployment/);
    await expect(api.getNonces({ address: from, caip2: 'eip155:137', nonce: true } as never)).rejects.toThrow(/SIGIL_EVM_RPC_137/);
  });
});

describe('SEND_TRANSACTION_STATUS_UPDATES', () => {
  /** The statuses delivered for one send, in order of arrival (a redelivery, at least once, counted once). */
  async function delivered(id: string, last: string) {
    for (;;) {
      const mine = receiver.events.filter((e) => e.msg.sendTransactionStatusId === id);
      if (mine.some((e) => e.msg.txStatus === last)) {
        const seen = new Map<string, any>();
        for (const e of mine) if (!seen.has(e.msg.idempotencyKey)) seen.set(e.msg.idempotencyKey, e);
        return [...seen.values()];
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('every status change of a send is delivered, in order, signed, with what get_send_transaction_status answers', async () => {
    const ok = await delivered(tracked.included!, 'INCLUDED');
    expect(ok.map((e) => e.msg.txStatus)).toEqual(['INITIALIZED', 'BROADCASTING', 'INCLUDED']);
    expect(ok.map((e) => e.msg.previousTxStatus)).toEqual([null, 'INITIALIZED', 'BROADCASTING']);
    const status = await httpClient(sigil).getSendTransactionStatus({ organizationId: orgId, sendTransactionStatusId: tracked.included! });
    for (const e of ok) {
      expect(e).toMatchObject({
        type: 'SEND_TRANSACTION_STATUS_UPDATES',
        msg: { organizationId: orgId, caip2: CAIP2, from: from.toLowerCase(), eth: { txHash: status.eth!.txHash }, idempotencyKey: `${tracked.included}:${e.msg.txStatus}` },
      });
    }
    const failed = await delivered(tracked.reverted!, 'FAILED');
    expect(failed.map((e) => e.msg.txStatus)).toEqual(['INITIALIZED', 'BROADCASTING', 'FAILED']);
    const reverted = await httpClient(sigil).getSendTransactionStatus({ organizationId: orgId, sendTransactionStatusId: tracked.reverted! });
    expect(failed[2].msg.txError).toBe('execution reverted: nope');
    expect(failed[2].msg.error).toEqual(reverted.error);
    expect(receiver.badSignatures()).toBe(0);
  });
});

describe('tracking', () => {
  const test = () => createTestClient({ mode: 'anvil', transport: http(anvil.url) });

  it('a transaction replaced by another with its nonce is reported FAILED, not hidden', async () => {
    await test().setAutomine(false);
    try {
      const api = sdkServerClient(sigil);
      const { sendTransactionStatusId } = await api.ethSendTransaction({ from, caip2: CAIP2, calls: [{ to: recipient(0xaaaa), value: '1' }] } as never);
      const first = await httpClient(sigil).getSendTransactionStatus({ organizationId: orgId, sendTransactionStatusId });
      const pending = await publicClient.getTransaction({ hash: first.eth!.txHash as Hex });
      // The same nonce, higher fees, another recipient: signed by Sigil, broadcast as a raw transaction.
      const unsigned = serializeTransaction({
        type: 'eip1559',
        chainId: anvil.chainId,
        nonce: pending.nonce,
        to: recipient(0xbbbb),
        value: 2n,
        gas: 21000n,
        maxFeePerGas: pending.maxFeePerGas! * 3n,
        maxPriorityFeePerGas: pending.maxPriorityFeePerGas! * 3n + 1n,
      });
      const { signedTransaction } = await api.signTransaction({ signWith: from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned });
      await httpClient(sigil).ethSendRawTransaction({
        type: 'ACTIVITY_TYPE_ETH_SEND_RAW_TRANSACTION',
        timestampMs: String(Date.now()),
        organizationId: orgId,
        parameters: { signedTransaction: `0x${signedTransaction}`, caip2: CAIP2 },
      } as never);
      await test().mine({ blocks: 1 });
      const status = await settled(sigil, sendTransactionStatusId);
      expect(status.txStatus).toBe('FAILED');
      expect(status.txError).toMatch(new RegExp(`replaced: nonce ${pending.nonce} of ${from.toLowerCase()} was used by another transaction|dropped: .*refused it again`));
      expect(await publicClient.getBalance({ address: recipient(0xaaaa) })).toBe(0n);
      expect(await publicClient.getBalance({ address: recipient(0xbbbb) })).toBe(2n);
    } finally {
      await test().setAutomine(true);
    }
  });

  it('a restarted deployment resumes tracking what was in flight when it stopped', async () => {
    await test().setAutomine(false);
    let restarted: SigilInstance | undefined;
    try {
      const { sendTransactionStatusId } = await sdkServerClient(sigil).ethSendTransaction({ from, caip2: CAIP2, calls: [{ to: recipient(0xcccc), value: '3' }] } as never);
      expect((await httpClient(sigil).getSendTransactionStatus({ organizationId: orgId, sendTransactionStatusId })).txStatus).toBe('BROADCASTING');
      // Every process stops while the transaction waits for a block; it is mined while none runs.
      await terminate(second.process);
      await terminate(sigil.process);
      await test().mine({ blocks: 1 });
      restarted = await serveAnother(sigil);
      const status = await included(restarted, sendTransactionStatusId);
      expect(status.txStatus).toBe('INCLUDED');
      expect(await publicClient.getBalance({ address: recipient(0xcccc) })).toBe(3n);
    } finally {
      await test().setAutomine(true);
      await restarted?.stop();
    }
  });
});
