// Velocity controls in the policy engine (docs/velocity-controls.md "Velocity controls") end to end:
// `controls.<identifier>` read by policies for activityExecution COUNT controls, through @turnkey/http's
// TurnkeyClient against two real `sigil serve` processes on one database (SQLite file, or PostgreSQL
// with SIGIL_TEST_DATABASE_URL). What it proves: 16 concurrent signatures against "at most 10 a day"
// complete exactly 10 across both processes; the rolling window rolls over (the servers' velocity
// clock is moved through the test-only clock file, never by sleeping); every operator, a fractional
// threshold, each group-by (organization, user, wallet, and an activity without a wallet), the
// infinite window; an activity held for consensus counts when it executes, a rejected one never;
// a control gone from under a policy fails closed; a SUM of Ethereum native value (chainAssetTransfer
// eip155:1/slip44:60) stops the @turnkey/viem transaction that would cross it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { serveAnother, startSigil, testDatabaseUrl, type SigilInstance } from '../helpers/sigil.js';
import { httpClient, newKey, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { execSql } from '../helpers/db-snapshot.js';
import { createAccount } from '@turnkey/viem';
import { parseEther, recoverTransactionAddress } from 'viem';

const DAY = 86_400;
let clockDir: string;
let clockFile: string;
let sigil: SigilInstance;
let other: SigilInstance;
let root: TurnkeyClient;
let api: ReturnType<typeof sdkServerClient>;
let org: string;
const wallets: Record<string, string> = {};
let privateKeyAddress: string;

/** Moves the servers' velocity clock to `seconds` after the real one (test-only clock file). */
function setClock(seconds: number) {
  writeFileSync(clockFile, String(seconds * 1000));
}

function clientOf(key: KeyPair, instance = sigil) {
  return new TurnkeyClient({ baseUrl: instance.url }, new ApiKeyStamper(key));
}

async function newUser(name: string) {
  const key = newKey();
  const { userIds } = await api.createUsers({
    users: [{ userName: name, apiKeys: [{ apiKeyName: 'k', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
  });
  // Each user may sign anything: the velocity controls are what limits them.
  await api.createPolicy({ policyName: `${name} signs`, effect: 'EFFECT_ALLOW', consensus: `approvers.any(user, user.id == '${userIds[0]}')`, condition: "activity.action == 'SIGN'", notes: '' });
  return { id: userIds[0], key, client: clientOf(key) };
}

const payload = () => randomBytes(32).toString('hex');

function sign(client: TurnkeyClient, signWith: string) {
  return client.signRawPayload({
    type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
    timestampMs: String(Date.now()),
    organizationId: org,
    parameters: { signWith, payload: payload(), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' },
  });
}

/** 'ok', 'denied' (explicit DENY), or the activity status / error text. */
async function outcome(p: Promise<{ activity: { status: string } }>): Promise<string> {
  try {
    const r = await p;
    return r.activity.status === 'ACTIVITY_STATUS_COMPLETED' ? 'ok' : r.activity.status;
  } catch (err) {
    const m = String((err as Error).message);
    return /policy engine denied request explicitly/.test(m) ? 'denied' : m;
  }
}

async function control(identifier: string, aggregation: Record<string, unknown>, activity: string[] | null = ['ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2']) {
  const r = await root.createVelocityControl({
    type: 'ACTIVITY_TYPE_CREATE_VELOCITY_CONTROL',
    timestampMs: String(Date.now()),
    organizationId: org,
    parameters: {
      name: identifier,
      identifier,
      dataSource: { activityExecution: activity ? { filter: { activity: activity.map((activityType) => ({ activityType })) } } : {} },
      aggregation: { method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_COUNT', window: { infinite: {} }, groupBy: { organization: {} }, ...aggregation },
    } as any,
  });
  return r.activity.result.createVelocityControlResult!.velocityControlId;
}

async function limit(identifier: string, condition: string) {
  return (await api.createPolicy({ policyName: `limit ${identifier}`, effect: 'EFFECT_DENY', condition, notes: '' })).policyId;
}

async function drop(policyId: string, controlId: string) {
  await api.deletePolicy({ policyId });
  await root.deleteVelocityControl({ type: 'ACTIVITY_TYPE_DELETE_VELOCITY_CONTROL', timestampMs: String(Date.now()), organizationId: org, parameters: { velocityControlId: controlId } });
}

beforeAll(async () => {
  clockDir = mkdtempSync(join(tmpdir(), 'sigil-clock-'));
  clockFile = join(clockDir, 'offset');
  setClock(0);
  sigil = await startSigil({ SIGIL_TEST_VELOCITY_CLOCK_FILE: clockFile, SIGIL_ENABLE_TEST_CLOCK: 'yes-this-is-a-test' });
  other = await serveAnother(sigil);
  root = httpClient(sigil);
  api = sdkServerClient(sigil);
  org = sigil.root.organizationId;
  for (const name of ['a', 'b']) {
    const w = await api.createWallet({ walletName: name, accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] });
    wallets[name] = w.addresses[0];
  }
  const pk = await api.createPrivateKeys({ privateKeys: [{ privateKeyName: 'loose key', curve: 'CURVE_SECP256K1', addressFormats: ['ADDRESS_FORMAT_ETHEREUM'], privateKeyTags: [] }] });
  privateKeyAddress = pk.privateKeys[0].addresses[0].address!;
}, 60_000);
afterAll(async () => {
  await other?.stop();
  await sigil?.stop();
  if (clockDir) rmSync(clockDir, { recursive: true, force: true });
});

describe('the hot path', () => {
  // PostgreSQL counts statements (SQLite runs in-process and counts none). Runs before any control
  // exists: the organization's empty list of controls comes from the read cache, so a signature still
  // costs one statement to read and one grouped statement to write (docs/operator-guide.md "Running on
  // PostgreSQL / in production").
  it.skipIf(!testDatabaseUrl())('a signature in an organization without controls costs no extra round trip', async () => {
    const trips = async () => Number(/sigil_database_round_trips_total\{[^}]*\} (\d+)/.exec(await (await fetch(`${sigil.url}/metrics`)).text())![1]);
    await sign(root, wallets.a);
    // The counter is the process's: a background task (the send tracker, the seal watch, a
    // checkpoint) may add a statement while the ten signatures run. Background work only adds, so
    // the fewest of three tries is what the signatures cost.
    const tries: number[] = [];
    for (let t = 0; t < 3 && !tries.includes(20); t++) {
      const before = await trips();
      for (let i = 0; i < 10; i++) await sign(root, wallets.a);
      tries.push((await trips()) - before);
    }
    expect(Math.min(...tries)).toBe(20);
  });
});

describe('cannot be raced', () => {
  it('16 concurrent signatures through two processes against "at most 10 a rolling day" complete exactly 10; the window rolls over', async () => {
    const signer = await newUser('racer');
    const id = await control('daily', { operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL', threshold: '10', window: { rolling: { duration: String(DAY) } }, groupBy: { user: {} } });
    const policy = await limit('daily', "activity.kind == 'SIGN_RAW_PAYLOAD' && !controls.daily");
    const clients = [signer.client, clientOf(signer.key, other)];
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => outcome(sign(clients[i % 2], wallets.a))));
    expect(results.filter((r) => r === 'ok')).toHaveLength(10);
    expect(results.filter((r) => r === 'denied')).toHaveLength(6);
    const completed = await execSql(sigil, "select count(*) as n from activities where organization_id = ? and type = 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' and status = 'ACTIVITY_STATUS_COMPLETED' and user_id = ?", [org, signer.id]);
    expect(Number(completed[0].n)).toBe(10);

    // A second before the day is over the ten still count; once the window (and its 1% bucket) has
    // passed them, ten more may sign, and the eleventh is refused again.
    setClock(DAY - 1);
    expect(await outcome(sign(signer.client, wallets.a))).toBe('denied');
    setClock(DAY + Math.floor(DAY / 100) + 1);
    const next = await Promise.all(Array.from({ length: 11 }, (_, i) => outcome(sign(clients[i % 2], wallets.a))));
    expect(next.filter((r) => r === 'ok')).toHaveLength(10);
    expect(next.filter((r) => r === 'denied')).toHaveLength(1);
    setClock(0);
    await drop(policy, id);
  }, 60_000);
});

describe('operators and thresholds', () => {
  // The root user's signatures count (the root quorum bypasses policies, not counting); a non-root
  // user's sign_raw_payloads (another kind, which the control does not count) probes what the
  // control says of the aggregate so far.
  const cases: [string, string, boolean[]][] = [
    ['VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN', '2', [true, true, false, false]],
    ['VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL', '2', [true, true, true, false]],
    ['VELOCITY_CONTROL_AGGREGATION_OPERATOR_EQUAL', '2', [false, false, true, false]],
    ['VELOCITY_CONTROL_AGGREGATION_OPERATOR_GREATER_THAN_OR_EQUAL', '2', [false, false, true, true]],
    ['VELOCITY_CONTROL_AGGREGATION_OPERATOR_GREATER_THAN', '2', [false, false, false, true]],
    ['VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN', '1.5', [true, true, false, false]],
    ['VELOCITY_CONTROL_AGGREGATION_OPERATOR_GREATER_THAN', '0.000000000000000001', [false, true, true, true]],
  ];
  for (const [operator, threshold, expected] of cases) {
    it(`${operator.replace('VELOCITY_CONTROL_AGGREGATION_OPERATOR_', '')} ${threshold} holds at aggregates 0..3 exactly when it should`, async () => {
      const prober = await newUser(`probe ${operator} ${threshold}`);
      const identifier = `op_${randomBytes(4).toString('hex')}`;
      const id = await control(identifier, { operator, threshold });
      const policy = await limit(identifier, `activity.kind == 'SIGN_RAW_PAYLOADS' && !controls.${identifier}`);
      const seen: boolean[] = [];
      for (let aggregate = 0; aggregate <= 3; aggregate++) {
        const probe = await outcome(
          prober.client.signRawPayloads({
            type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
            timestampMs: String(Date.now()),
            organizationId: org,
            parameters: { signWith: wallets.b, payloads: [payload()], encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' },
          }),
        );
        expect(['ok', 'denied']).toContain(probe);
        seen.push(probe === 'ok');
        expect(await outcome(sign(root, wallets.b))).toBe('ok');
      }
      expect(seen).toEqual(expected);
      await drop(policy, id);
    });
  }
});

describe('groups', () => {
  it('groupBy user: each user has a limit of their own', async () => {
    const [u1, u2] = [await newUser('per user 1'), await newUser('per user 2')];
    const id = await control('per_user', { operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL', threshold: '2', groupBy: { user: {} } });
    const policy = await limit('per_user', "activity.kind == 'SIGN_RAW_PAYLOAD' && !controls.per_user");
    expect([await outcome(sign(u1.client, wallets.a)), await outcome(sign(u1.client, wallets.a)), await outcome(sign(u1.client, wallets.a))]).toEqual(['ok', 'ok', 'denied']);
    expect([await outcome(sign(u2.client, wallets.a)), await outcome(sign(u2.client, wallets.a)), await outcome(sign(u2.client, wallets.a))]).toEqual(['ok', 'ok', 'denied']);
    await drop(policy, id);
  });

  it('groupBy wallet: each wallet has a limit of its own; signing with a private key (no wallet) is not counted or limited by it', async () => {
    const u = await newUser('per wallet');
    const id = await control('per_wallet', { operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL', threshold: '2', groupBy: { wallet: {} } });
    const policy = await limit('per_wallet', "activity.kind == 'SIGN_RAW_PAYLOAD' && !controls.per_wallet");
    expect([await outcome(sign(u.client, wallets.a)), await outcome(sign(u.client, wallets.a)), await outcome(sign(u.client, wallets.a))]).toEqual(['ok', 'ok', 'denied']);
    expect([await outcome(sign(u.client, wallets.b)), await outcome(sign(u.client, wallets.b)), await outcome(sign(u.client, wallets.b))]).toEqual(['ok', 'ok', 'denied']);
    expect([await outcome(sign(u.client, privateKeyAddress)), await outcome(sign(u.client, privateKeyAddress)), await outcome(sign(u.client, privateKeyAddress))]).toEqual(['ok', 'ok', 'ok']);
    await drop(policy, id);
  });

  it('groupBy organization, every activity type: one count for everything the organization executes', async () => {
    const u = await newUser('org wide');
    // Created after the user, so only what follows counts: two signatures and a policy creation.
    const id = await control('everything', { operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL', threshold: '3' }, null);
    const policy = await limit('everything', "activity.kind == 'SIGN_RAW_PAYLOAD' && !controls.everything");
    // The policy creation above counted (1); two signatures make 3; the third would make 4.
    expect([await outcome(sign(u.client, wallets.a)), await outcome(sign(u.client, wallets.b)), await outcome(sign(u.client, wallets.a))]).toEqual(['ok', 'ok', 'denied']);
    await drop(policy, id);
  });
});

describe('approvals', () => {
  it('an activity held for consensus counts when it executes; a rejected one never counts', async () => {
    const signer = await newUser('needs approval');
    const approver = await newUser('approver');
    // At most one signature per wallet, and the signer now needs the approver for each.
    const id = await control('once', { operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL', threshold: '1', groupBy: { wallet: {} } });
    const policy = await limit('once', "activity.kind == 'SIGN_RAW_PAYLOAD' && !controls.once");
    const { policies } = await api.getPolicies({});
    const own = policies.find((p) => p.policyName === 'needs approval signs')!;
    await api.updatePolicy({ policyId: own.policyId, policyConsensus: `approvers.any(user, user.id == '${signer.id}') && approvers.any(user, user.id == '${approver.id}')` });
    const vote = (type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY' | 'ACTIVITY_TYPE_REJECT_ACTIVITY', fingerprint: string) =>
      (type === 'ACTIVITY_TYPE_APPROVE_ACTIVITY' ? approver.client.approveActivity : approver.client.rejectActivity)({ type, timestampMs: String(Date.now()), organizationId: org, parameters: { fingerprint } } as any);
    // Three submissions wait for the approver; none has executed, so none counts yet.
    const [a, b, c] = [await sign(signer.client, wallets.b), await sign(signer.client, wallets.b), await sign(signer.client, wallets.b)];
    expect([a, b, c].map((x) => x.activity.status)).toEqual(Array(3).fill('ACTIVITY_STATUS_CONSENSUS_NEEDED'));
    await vote('ACTIVITY_TYPE_REJECT_ACTIVITY', c.activity.fingerprint);
    // Neither the waiting B nor the rejected C counted: A executes as the wallet's one signature…
    await vote('ACTIVITY_TYPE_APPROVE_ACTIVITY', a.activity.fingerprint);
    const status = async (id: string) => (await root.getActivity({ organizationId: org, activityId: id })).activity;
    expect((await status(a.activity.id)).status).toBe('ACTIVITY_STATUS_COMPLETED');
    // …and counted when it executed: B is judged again with A counted, the limit's DENY now applies
    // whoever approves, so no approval can execute it (the engine refuses votes that cannot count).
    await expect(vote('ACTIVITY_TYPE_APPROVE_ACTIVITY', b.activity.fingerprint)).rejects.toThrow(/is not included in the consensus of activity/);
    expect((await status(b.activity.id)).status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    expect((await status(c.activity.id)).status).toBe('ACTIVITY_STATUS_REJECTED');
    // A new submission for the wallet is refused outright; another wallet's group is untouched.
    expect(await outcome(sign(signer.client, wallets.b))).toBe('denied');
    expect((await sign(signer.client, wallets.a)).activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    await drop(policy, id);
  });
});

describe('failed activities', () => {
  // A rolling window keeps a running total beside its buckets (velocity-limits.ts): a release gives back both.
  it.each([
    ['an infinite', 'only_one', { infinite: {} }],
    ['a rolling', 'only_one_a_day', { rolling: { duration: String(DAY) } }],
  ])('an allowed activity that fails when it executes gives its count back (%s window)', async (_, identifier, window) => {
    const u = await newUser(`fails ${identifier}`);
    const id = await control(identifier, { operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL', threshold: '1', groupBy: { user: {} }, window });
    const policy = await limit(identifier, `activity.kind == 'SIGN_RAW_PAYLOAD' && !controls.${identifier}`);
    // An odd number of hex digits passes the schema and the policies, then fails at signing: the
    // count reserved when it was allowed is released, three times over.
    for (let i = 0; i < 3; i++) {
      const failed = await outcome(
        u.client.signRawPayload({
          type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
          timestampMs: String(Date.now() + i),
          organizationId: org,
          parameters: { signWith: wallets.a, payload: 'abc', encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' },
        }),
      );
      expect(failed).toMatch(/Turnkey error 3: invalid payload: PAYLOAD_ENCODING_HEXADECIMAL needs an even number of hex digits/);
    }
    expect(await outcome(sign(u.client, wallets.a))).toBe('ok');
    expect(await outcome(sign(u.client, wallets.a))).toBe('denied');
    await drop(policy, id);
  });
});

describe('a control gone from under a policy', () => {
  it('fails closed: a DENY reading it applies, an ALLOW reading it does not allow', async () => {
    const u = await newUser('orphaned');
    const id = await control('vanishing', { operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL', threshold: '100' });
    const policy = await limit('vanishing', "activity.kind == 'SIGN_RAW_PAYLOAD' && !controls.vanishing");
    expect(await outcome(sign(u.client, wallets.a))).toBe('ok');
    // The API refuses to delete a control a policy reads; a deletion that raced a policy update
    // (or a row removed by hand) is what this stands for.
    await execSql(sigil, 'delete from velocity_controls where id = ?', [id]);
    expect(await outcome(sign(u.client, wallets.a))).toBe('denied');
    const { policyEvaluations } = await api.getPolicyEvaluations({ activityId: (await sign(root, wallets.a)).activity.id });
    expect(policyEvaluations).toEqual([]);
    await api.deletePolicy({ policyId: policy });
    expect(await outcome(sign(u.client, wallets.a))).toBe('ok');
  });
});

describe('chainAssetTransfer: Ethereum native value', () => {
  it('a SUM of ether per wallet over a rolling day stops the @turnkey/viem transaction that would cross it', async () => {
    const u = await newUser('ether sender');
    const created = await root.createVelocityControl({
      type: 'ACTIVITY_TYPE_CREATE_VELOCITY_CONTROL',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: {
        name: '1.5 ether a day per wallet',
        identifier: 'daily_eth',
        dataSource: { chainAssetTransfer: { definition: [{ caip19: 'eip155:1/slip44:60', decimals: '18' }] } },
        aggregation: {
          method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM',
          operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL',
          threshold: '1.5',
          window: { rolling: { duration: String(DAY) } },
          groupBy: { wallet: {} },
        },
      },
    });
    const id = created.activity.result.createVelocityControlResult!.velocityControlId;
    const { velocityControl } = await root.getVelocityControl({ organizationId: org, velocityControlId: id });
    // The phase the client left out is shown as the one Sigil measures at: signature.
    expect(velocityControl.dataSource).toEqual({ chainAssetTransfer: { definition: [{ caip19: 'eip155:1/slip44:60', decimals: '18' }], phase: { signature: {} } } });
    const policy = await limit('daily_eth', "activity.kind == 'SIGN_TRANSACTION' && !controls.daily_eth");

    let nonce = 0;
    const tx = (value: bigint, chainId = 1) => ({
      type: 'eip1559' as const,
      chainId,
      nonce: nonce++,
      to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' as const,
      value,
      maxFeePerGas: 10n ** 10n,
      maxPriorityFeePerGas: 10n ** 9n,
      gas: 21_000n,
    });
    const accountA = await createAccount({ client: u.client, organizationId: org, signWith: wallets.a });
    const accountB = await createAccount({ client: u.client, organizationId: org, signWith: wallets.b });
    const send = async (account: typeof accountA, t: ReturnType<typeof tx>) => {
      try {
        const signed = await account.signTransaction(t);
        expect(await recoverTransactionAddress({ serializedTransaction: signed as never })).toBe(account.address);
        return 'ok';
      } catch (err) {
        return /policy engine denied request explicitly/.test(String((err as Error).message)) ? 'denied' : String(err);
      }
    };
    expect(await send(accountA, tx(parseEther('0.5')))).toBe('ok');
    expect(await send(accountA, tx(parseEther('0.5')))).toBe('ok');
    // 1.6 would cross 1.5; 1.5 exactly is within LESS_THAN_OR_EQUAL; then one more wei is too much.
    expect(await send(accountA, tx(parseEther('0.6')))).toBe('denied');
    expect(await send(accountA, tx(parseEther('0.5')))).toBe('ok');
    expect(await send(accountA, tx(1n))).toBe('denied');
    // Not counted: another chain, and a transaction sending no ether (a contract call).
    expect(await send(accountA, tx(parseEther('2'), 5))).toBe('ok');
    expect(await send(accountA, tx(0n))).toBe('ok');
    // Another wallet has a day of its own.
    expect(await send(accountB, tx(parseEther('1.5')))).toBe('ok');
    expect(await send(accountB, tx(parseEther('0.1')))).toBe('denied');
    // The day rolls over.
    setClock(DAY + Math.floor(DAY / 100) + 1);
    expect(await send(accountA, tx(parseEther('1.5')))).toBe('ok');
    expect(await send(accountA, tx(1n))).toBe('denied');
    setClock(0);
    await drop(policy, id);
  });

  it('COUNT of ether transfers per user over several chains counts only transfers that send ether on a listed chain', async () => {
    const u = await newUser('transfer counter');
    const created = await root.createVelocityControl({
      type: 'ACTIVITY_TYPE_CREATE_VELOCITY_CONTROL',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: {
        name: 'two ether transfers',
        identifier: 'eth_transfers',
        dataSource: {
          chainAssetTransfer: {
            definition: [{ caip19: 'eip155:1/slip44:60', decimals: '18' }, { caip19: 'eip155:5/slip44:60', decimals: '18' }],
            filter: { activity: [{ activityType: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2' }] },
            phase: { signature: {} },
          },
        },
        aggregation: {
          method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_COUNT',
          operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL',
          threshold: '2',
          window: { infinite: {} },
          groupBy: { user: {} },
        },
      },
    });
    const id = created.activity.result.createVelocityControlResult!.velocityControlId;
    const policy = await limit('eth_transfers', "activity.kind == 'SIGN_TRANSACTION' && !controls.eth_transfers");
    const account = await createAccount({ client: u.client, organizationId: org, signWith: wallets.b });
    let nonce = 100;
    const send = async (value: bigint, chainId: number) => {
      try {
        await account.signTransaction({ type: 'eip1559', chainId, nonce: nonce++, to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', value, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n, gas: 21_000n });
        return 'ok';
      } catch (err) {
        return /policy engine denied request explicitly/.test(String((err as Error).message)) ? 'denied' : String(err);
      }
    };
    expect(await send(parseEther('0.1'), 1)).toBe('ok');
    expect(await send(0n, 1)).toBe('ok');
    expect(await send(parseEther('0.1'), 10)).toBe('ok');
    expect(await send(parseEther('0.1'), 5)).toBe('ok');
    expect(await send(parseEther('0.1'), 1)).toBe('denied');
    expect(await send(parseEther('0.1'), 5)).toBe('denied');
    await drop(policy, id);
  });
});
