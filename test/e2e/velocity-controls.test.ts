// Velocity controls (docs/velocity-controls.md "Velocity controls") end to end through @turnkey/http
// 6.6.0's TurnkeyClient (createVelocityControl, deleteVelocityControl, getVelocityControl,
// listVelocityControls) against a real `sigil serve`: the v1VelocityControl record round trip, every
// refusal a 400 `{code, message, details}` that leaves the database as it was, policy evaluation of the
// two activities (POLICY / CREATE and DELETE), their activity and audit records, and
// `controls.<identifier>` in policies: unknown identifiers refused at policy creation, a control a
// policy reads cannot be deleted. And `usage`, Sigil's extra field on the record: each group's aggregate
// in its window against the threshold, as the checks read it, on the windows' clock (moved by the
// test-only clock file, never by sleeping).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TurnkeyClient } from '@turnkey/http';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, httpClient, newKey, rawPost, sdkServerClient, type KeyPair, type RawResponse } from '../helpers/clients.js';
import { dbSnapshot, execSql, expectRefusedUnchanged } from '../helpers/db-snapshot.js';

let sigil: SigilInstance;
let client: TurnkeyClient;
let org: string;
let clockDir: string;
let clockFile: string;

/** Moves the server's velocity clock to `seconds` after the real one (test-only clock file; only `usage` below moves it). */
function setClock(seconds: number) {
  writeFileSync(clockFile, String(seconds * 1000));
}

beforeAll(async () => {
  clockDir = mkdtempSync(join(tmpdir(), 'sigil-clock-'));
  clockFile = join(clockDir, 'offset');
  setClock(0);
  sigil = await startSigil({ SIGIL_TEST_VELOCITY_CLOCK_FILE: clockFile, SIGIL_ENABLE_TEST_CLOCK: 'yes-this-is-a-test' });
  client = httpClient(sigil);
  org = sigil.root.organizationId;
});
afterAll(async () => {
  await sigil?.stop();
  if (clockDir) rmSync(clockDir, { recursive: true, force: true });
});

const TS = { seconds: expect.stringMatching(/^\d+$/), nanos: expect.stringMatching(/^\d+$/) };

function intent(identifier: string, over: Record<string, unknown> = {}) {
  return {
    name: `limit ${identifier}`,
    identifier,
    dataSource: { activityExecution: { filter: { activity: [{ activityType: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' }] } } },
    aggregation: {
      method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_COUNT',
      operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL',
      threshold: '10',
      window: { rolling: { duration: '86400' } },
      groupBy: { organization: {} },
    },
    ...over,
  } as any;
}

function create(parameters: unknown, c: TurnkeyClient = client) {
  return c.createVelocityControl({ type: 'ACTIVITY_TYPE_CREATE_VELOCITY_CONTROL', timestampMs: String(Date.now()), organizationId: org, parameters: parameters as any });
}

function submitRaw(parameters: unknown, type = 'ACTIVITY_TYPE_CREATE_VELOCITY_CONTROL', path = 'create_velocity_control', key: KeyPair = sigil.root): Promise<RawResponse> {
  return rawPost(`${sigil.url}/public/v1/submit/${path}`, activityBody(org, type, parameters), { key });
}

describe('the endpoints', () => {
  it('create_velocity_control, get_velocity_control and list_velocity_controls round trip the v1VelocityControl record', async () => {
    const res = await create(intent('daily_signatures'));
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(res.activity.type).toBe('ACTIVITY_TYPE_CREATE_VELOCITY_CONTROL');
    const id = res.activity.result.createVelocityControlResult!.velocityControlId;
    expect(res.activity.intent.createVelocityControlIntent).toEqual(intent('daily_signatures'));
    const { velocityControl } = await client.getVelocityControl({ organizationId: org, velocityControlId: id });
    expect(velocityControl).toEqual({
      velocityControlId: id,
      organizationId: org,
      name: 'limit daily_signatures',
      identifier: 'daily_signatures',
      dataSource: { activityExecution: { filter: { activity: [{ activityType: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' }] } } },
      aggregation: {
        method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_COUNT',
        operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL',
        threshold: '10',
        window: { rolling: { duration: '86400' } },
        groupBy: { organization: {} },
      },
      createdAt: TS,
      updatedAt: TS,
      // Sigil's addition: nothing counted yet.
      usage: [],
    });

    const second = await create(intent('per_user_forever', {
      dataSource: { activityExecution: {} },
      aggregation: { ...intent('x').aggregation, operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN', threshold: '2.5', window: { infinite: {} }, groupBy: { user: {} } },
    }));
    const secondId = second.activity.result.createVelocityControlResult!.velocityControlId;
    const all = await client.listVelocityControls({ organizationId: org });
    expect(all.velocityControls.map((c) => c.velocityControlId)).toEqual([id, secondId]);
    expect(all.velocityControls[1].aggregation.window).toEqual({ infinite: {} });
    expect(all.velocityControls[1].dataSource).toEqual({ activityExecution: {} });
    const firstPage = await client.listVelocityControls({ organizationId: org, paginationOptions: { limit: '1' } });
    expect(firstPage.velocityControls.map((c) => c.velocityControlId)).toEqual([id]);
    expect(firstPage.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false, endCursor: id });
    const next = await client.listVelocityControls({ organizationId: org, paginationOptions: { limit: '1', after: id } });
    expect(next.velocityControls.map((c) => c.velocityControlId)).toEqual([secondId]);
    expect(next.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });

    // The activity log and the audit log hold the creation.
    const { activity } = await client.getActivity({ organizationId: org, activityId: res.activity.id });
    expect(activity.result.createVelocityControlResult).toEqual({ velocityControlId: id });
    const entries = await execSql(sigil, 'select kind, entry from audit_entries where activity_id = ?', [res.activity.id]);
    expect(entries.map((e) => ({ kind: e.kind, ...JSON.parse(e.entry) }))).toEqual([
      expect.objectContaining({ kind: 'activity', operation: 'create_velocity_control', status: 'ACTIVITY_STATUS_COMPLETED', userId: sigil.root.userId }),
    ]);

    const deleted = await client.deleteVelocityControl({
      type: 'ACTIVITY_TYPE_DELETE_VELOCITY_CONTROL',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: { velocityControlId: secondId },
    });
    expect(deleted.activity.result.deleteVelocityControlResult).toEqual({ velocityControlId: secondId });
    expect((await client.listVelocityControls({ organizationId: org })).velocityControls.map((c) => c.velocityControlId)).toEqual([id]);
    const deleteEntries = await execSql(sigil, 'select entry from audit_entries where activity_id = ?', [deleted.activity.id]);
    expect(JSON.parse(deleteEntries[0].entry)).toMatchObject({ operation: 'delete_velocity_control', status: 'ACTIVITY_STATUS_COMPLETED' });
  });

  it('get and delete of an unknown id answer 404 naming it', async () => {
    await expect(client.getVelocityControl({ organizationId: org, velocityControlId: 'no-such-control' })).rejects.toThrow(/velocity control not found: no-such-control/);
    const before = await dbSnapshot(sigil);
    const res = await submitRaw({ velocityControlId: 'no-such-control' }, 'ACTIVITY_TYPE_DELETE_VELOCITY_CONTROL', 'delete_velocity_control');
    await expectRefusedUnchanged(sigil, before, res, 404, 5, 'NOT_FOUND', /^velocity control not found: no-such-control$/);
  });

  const base = intent('fresh');
  const aggregation = (over: Record<string, unknown>) => ({ ...base.aggregation, ...over });
  const refusals: [string, unknown, RegExp][] = [
    ['an unknown method', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_AVERAGE' }) }, /aggregation\.method: must be one of/],
    ['SUM of activity executions', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }) }, /aggregation\.method: .*counted/],
    ['an unknown operator', { ...base, aggregation: aggregation({ operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_NOT_EQUAL' }) }, /aggregation\.operator: must be one of/],
    ['a window that is neither', { ...base, aggregation: aggregation({ window: { tumbling: { duration: '60' } } }) }, /aggregation\.window: must set exactly one of rolling, infinite/],
    ['a window that is both', { ...base, aggregation: aggregation({ window: { rolling: { duration: '60' }, infinite: {} } }) }, /exactly one of rolling, infinite \(got rolling and infinite\)/],
    ['a zero duration', { ...base, aggregation: aggregation({ window: { rolling: { duration: '0' } } }) }, /duration: must be a whole number of seconds/],
    ['a fractional duration', { ...base, aggregation: aggregation({ window: { rolling: { duration: '1.5' } } }) }, /duration: must be a whole number of seconds/],
    ['an unknown groupBy', { ...base, aggregation: aggregation({ groupBy: { apiKey: {} } }) }, /aggregation\.groupBy: must set exactly one of organization, user, wallet/],
    ['two groupBys', { ...base, aggregation: aggregation({ groupBy: { user: {}, wallet: {} } }) }, /\(got user and wallet\)/],
    ['a negative threshold', { ...base, aggregation: aggregation({ threshold: '-1' }) }, /threshold: must be a non-negative base-10 decimal string/],
    ['an exponent threshold', { ...base, aggregation: aggregation({ threshold: '1e3' }) }, /threshold: must be a non-negative base-10 decimal string/],
    ['19 fractional digits', { ...base, aggregation: aggregation({ threshold: '1.0000000000000000001' }) }, /threshold: has 19 fractional digits; at most 18/],
    ['39 digits', { ...base, aggregation: aggregation({ threshold: '1'.repeat(21) + '.' + '1'.repeat(18) }) }, /threshold: has 39 digits; at most 38/],
    ['an identifier starting with a digit', { ...base, identifier: '1daily' }, /identifier: "1daily" cannot be read as controls\.<identifier>/],
    ['an identifier with a dash', { ...base, identifier: 'daily-limit' }, /identifier: "daily-limit" cannot be read as controls\.<identifier>/],
    ['a reserved word', { ...base, identifier: 'true' }, /identifier: "true" cannot be read/],
    ['a duplicate identifier', { ...base, identifier: 'daily_signatures' }, /velocity control identifier must be unique: the organization already has a control "daily_signatures"/],
    ['an unknown activity type', { ...base, dataSource: { activityExecution: { filter: { activity: [{ activityType: 'ACTIVITY_TYPE_FLY' }] } } } }, /activity\[0\]\.activityType: "ACTIVITY_TYPE_FLY" is not an activity type/],
    ['an empty activity filter', { ...base, dataSource: { activityExecution: { filter: { activity: [] } } } }, /must list at least one activity type/],
    ['two data sources', { ...base, dataSource: { activityExecution: {}, chainAssetTransfer: { definition: [] } } }, /dataSource: must set exactly one of chainAssetTransfer, activityExecution/],
    ['an asset namespace not measured (a Cosmos ATOM)', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }), dataSource: { chainAssetTransfer: { definition: [{ caip19: 'cosmos:cosmoshub-4/slip44:118', decimals: '6' }] } } }, /definition\[0\]\.caip19: .*measures eip155:<chainId>\/slip44:60 \(ether\), .* bip122:<genesis>\/slip44:0 \(bitcoin\), tron:<network>\/slip44:195 \(TRX\) .* would never hold/],
    ['a Bitcoin network Sigil does not know (the Litecoin genesis)', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }), dataSource: { chainAssetTransfer: { definition: [{ caip19: 'bip122:12a765e31ffd4059bada1e25190f6e98/slip44:0', decimals: '8' }] } } }, /definition\[0\]\.caip19: .*bip122:12a765e31ffd4059bada1e25190f6e98 is not a Bitcoin network this Sigil measures \(mainnet bip122:000000000019d6689c085ae165831e93/],
    ['bitcoin with 18 decimals', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }), dataSource: { chainAssetTransfer: { definition: [{ caip19: 'bip122:000000000019d6689c085ae165831e93/slip44:0', decimals: '18' }] } } }, /definition\[0\]\.decimals: bitcoin has 8 decimals, got "18"/],
    ['a Tron network Sigil does not know', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }), dataSource: { chainAssetTransfer: { definition: [{ caip19: 'tron:0xdeadbeef/slip44:195', decimals: '6' }] } } }, /definition\[0\]\.caip19: .*tron:0xdeadbeef is not a Tron network this Sigil measures/],
    ['TRX with 18 decimals', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }), dataSource: { chainAssetTransfer: { definition: [{ caip19: 'tron:0x2b6653dc/slip44:195', decimals: '18' }] } } }, /definition\[0\]\.decimals: TRX has 6 decimals, got "18"/],
    ['a TRC-20 contract whose checksum is wrong', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }), dataSource: { chainAssetTransfer: { definition: [{ caip19: 'tron:0x2b6653dc/trc20:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u', decimals: '6' }] } } }, /definition\[0\]\.caip19: .*the contract TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u is not a base58check Tron address/],
    ['TRX listed for two spellings of mainnet', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }), dataSource: { chainAssetTransfer: { definition: [{ caip19: 'tron:0x2b6653dc/slip44:195', decimals: '6' }, { caip19: 'tron:mainnet/slip44:195', decimals: '6' }] } } }, /definition\[1\]\.caip19: .* is listed twice \(a Tron transaction does not name its network/],
    ['an ERC-20 contract that is not an address', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }), dataSource: { chainAssetTransfer: { definition: [{ caip19: 'eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb4', decimals: '6' }] } } }, /definition\[0\]\.caip19: .*would never hold/],
    ['a token with 19 decimals', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }), dataSource: { chainAssetTransfer: { definition: [{ caip19: 'eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', decimals: '19' }] } } }, /definition\[0\]\.decimals: must be a whole number from "0" to "18"/],
    ['a token with decimals that are not a whole number', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }), dataSource: { chainAssetTransfer: { definition: [{ caip19: 'eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', decimals: '06' }] } } }, /definition\[0\]\.decimals: must be a whole number/],
    ['one token listed twice, in two spellings of its address', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }), dataSource: { chainAssetTransfer: { definition: [{ caip19: 'eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', decimals: '6' }, { caip19: 'eip155:1/erc20:0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', decimals: '6' }] } } }, /definition\[1\]\.caip19: .* is listed twice/],
    ['SOL with 18 decimals', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }), dataSource: { chainAssetTransfer: { definition: [{ caip19: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp/slip44:501', decimals: '18' }] } } }, /definition\[0\]\.decimals: SOL has 9 decimals, got "18"/],
    ['an SPL mint that is not a public key', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }), dataSource: { chainAssetTransfer: { definition: [{ caip19: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp/token:1111111111111111111111111111111111111111111', decimals: '6' }] } } }, /definition\[0\]\.caip19: .*the mint .* is not a base58 32-byte public key/],
    ['SOL listed for two clusters', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }), dataSource: { chainAssetTransfer: { definition: [{ caip19: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp/slip44:501', decimals: '9' }, { caip19: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1/slip44:501', decimals: '9' }] } } }, /definition\[1\]\.caip19: .* is listed twice \(a Solana transaction does not name its cluster/],
    ['ether with 6 decimals', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }), dataSource: { chainAssetTransfer: { definition: [{ caip19: 'eip155:1/slip44:60', decimals: '6' }] } } }, /definition\[0\]\.decimals: ether has 18 decimals, got "6"/],
    ['no assets', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }), dataSource: { chainAssetTransfer: { definition: [] } } }, /definition: must list at least one asset/],
    ['the reserved submission phase', { ...base, aggregation: aggregation({ method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM' }), dataSource: { chainAssetTransfer: { definition: [{ caip19: 'eip155:1/slip44:60', decimals: '18' }], phase: { submission: {} } } } }, /phase\.submission: is reserved/],
    ['an empty name', { ...base, name: ' ' }, /name must not be empty/],
  ];
  for (const [what, parameters, message] of refusals) {
    it(`refuses ${what} with 400 and changes nothing`, async () => {
      const before = await dbSnapshot(sigil);
      const res = await submitRaw(parameters);
      await expectRefusedUnchanged(sigil, before, res, 400, 3, 'REQUEST_INVALID', message);
    });
  }

  it('refuses a body the schema rejects (missing aggregation, a threshold that is a number) through the official client too', async () => {
    const { aggregation: _dropped, ...noAggregation } = base;
    const before = await dbSnapshot(sigil);
    await expectRefusedUnchanged(sigil, before, await submitRaw(noAggregation), 400, 3, 'REQUEST_INVALID', /missing parameter: parameters\.aggregation/);
    await expectRefusedUnchanged(sigil, before, await submitRaw({ ...base, aggregation: aggregation({ threshold: 10 }) }), 400, 3, 'REQUEST_INVALID', /parameters\.aggregation\.threshold: must be string/);
    await expect(create({ ...base, aggregation: aggregation({ operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_NOT_EQUAL' }) })).rejects.toThrow(/Turnkey error 3: bad request body: parameters\.aggregation\.operator: must be one of/);
    expect(await dbSnapshot(sigil)).toEqual(before);
  });
});

describe('policy evaluation of the activities', () => {
  it('a non-root user creates and deletes controls only where a policy on POLICY allows it', async () => {
    const key = newKey();
    const api = sdkServerClient(sigil);
    const { userIds } = await api.createUsers({
      users: [{ userName: 'treasurer', apiKeys: [{ apiKeyName: 'k', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    const treasurer = new TurnkeyClient({ baseUrl: sigil.url }, new (await import('@turnkey/api-key-stamper')).ApiKeyStamper(key));
    const before = await dbSnapshot(sigil);
    await expect(create(intent('treasury'), treasurer)).rejects.toThrow(/Turnkey error 7: .*no policy allows ACTIVITY_TYPE_CREATE_VELOCITY_CONTROL/);
    expect(await dbSnapshot(sigil)).toEqual(before);
    const policy = await api.createPolicy({
      policyName: 'treasurer manages limits',
      effect: 'EFFECT_ALLOW',
      consensus: `approvers.any(user, user.id == '${userIds[0]}')`,
      condition: "activity.resource == 'POLICY' && activity.action in ['CREATE', 'DELETE'] && activity.kind in ['CREATE_VELOCITY_CONTROL', 'DELETE_VELOCITY_CONTROL']",
      notes: '',
    });
    const made = await create(intent('treasury'), treasurer);
    expect(made.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const { policyEvaluations } = await api.getPolicyEvaluations({ activityId: made.activity.id });
    expect(policyEvaluations[0].policyEvaluations).toContainEqual({ policyId: policy.policyId, outcome: 'OUTCOME_ALLOW' });
    const gone = await treasurer.deleteVelocityControl({
      type: 'ACTIVITY_TYPE_DELETE_VELOCITY_CONTROL',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: { velocityControlId: made.activity.result.createVelocityControlResult!.velocityControlId },
    });
    expect(gone.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    await api.deletePolicy({ policyId: policy.policyId });
  });
});

describe('controls.<identifier> in policies', () => {
  it('a policy may read a control of the organization; an unknown identifier is refused at creation', async () => {
    const api = sdkServerClient(sigil);
    const before = await dbSnapshot(sigil);
    const res = await rawPost(
      `${sigil.url}/public/v1/submit/create_policy`,
      activityBody(org, 'ACTIVITY_TYPE_CREATE_POLICY_V3', { policyName: 'typo', effect: 'EFFECT_DENY', condition: '!controls.daily_signaturez', notes: '' }),
      { key: sigil.root },
    );
    await expectRefusedUnchanged(sigil, before, res, 400, 3, 'REQUEST_INVALID', /invalid policy condition: .*unknown velocity control 'daily_signaturez'.*its controls are daily_signatures/);
    await expect(api.createPolicy({ policyName: 'bare', effect: 'EFFECT_DENY', condition: 'controls.count() > 1', notes: '' })).rejects.toThrow(/invalid policy condition/);
    await expect(api.createPolicy({ policyName: 'dyn', effect: 'EFFECT_DENY', condition: "controls[activity.kind]", notes: '' })).rejects.toThrow(/controls\.<identifier>/);
    const ok = await api.createPolicy({ policyName: 'cap signatures', effect: 'EFFECT_DENY', condition: "activity.action == 'SIGN' && !controls.daily_signatures", notes: '' });
    const { policy } = await api.getPolicy({ policyId: ok.policyId });
    expect(policy.condition).toBe("activity.action == 'SIGN' && !controls.daily_signatures");
    // Consensus may read controls too (the issue: "policy conditions and consensus").
    const consensus = await api.createPolicy({ policyName: 'quorum over the limit', effect: 'EFFECT_ALLOW', consensus: "controls['daily_signatures'] || approvers.count() >= 2", condition: "activity.action == 'SIGN'", notes: '' });
    await api.deletePolicy({ policyId: consensus.policyId });
  });

  it('a control a policy reads cannot be deleted until the policy stops reading it', async () => {
    const api = sdkServerClient(sigil);
    const { velocityControls } = await client.listVelocityControls({ organizationId: org });
    const control = velocityControls.find((c) => c.identifier === 'daily_signatures')!;
    const { policies } = await api.getPolicies({});
    const reader = policies.find((p) => p.policyName === 'cap signatures')!;
    const before = await dbSnapshot(sigil);
    const res = await submitRaw({ velocityControlId: control.velocityControlId }, 'ACTIVITY_TYPE_DELETE_VELOCITY_CONTROL', 'delete_velocity_control');
    await expectRefusedUnchanged(
      sigil,
      before,
      res,
      400,
      3,
      'REQUEST_INVALID',
      new RegExp(`velocity control "daily_signatures" is read by policy "cap signatures" \\(${reader.policyId}\\): update or delete it first`),
    );
    await api.updatePolicy({ policyId: reader.policyId, policyCondition: "activity.action == 'SIGN'" });
    const deleted = await client.deleteVelocityControl({ type: 'ACTIVITY_TYPE_DELETE_VELOCITY_CONTROL', timestampMs: String(Date.now()), organizationId: org, parameters: { velocityControlId: control.velocityControlId } });
    expect(deleted.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    // Now unknown: a policy update naming it is refused.
    await expect(api.updatePolicy({ policyId: reader.policyId, policyCondition: '!controls.daily_signatures' })).rejects.toThrow(/unknown velocity control 'daily_signatures'/);
    await api.deletePolicy({ policyId: reader.policyId });
  });
});

describe('usage: each group\'s aggregate against the threshold', () => {
  it('get_velocity_control and list_velocity_controls show what counted per wallet and per user, and a policy check agrees', async () => {
    const api = sdkServerClient(sigil);
    const { walletId, addresses } = await api.createWallet({
      walletName: 'usage wallet',
      accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }],
    });
    const signs = { activityExecution: { filter: { activity: [{ activityType: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' }] } } };
    const perWallet = (await create(intent('wallet_signatures', { dataSource: signs, aggregation: { ...intent('x').aggregation, threshold: '3', groupBy: { wallet: {} } } })))
      .activity.result.createVelocityControlResult!.velocityControlId;
    const perUser = (await create(intent('user_signatures', { dataSource: signs, aggregation: { ...intent('x').aggregation, threshold: '2.5', window: { infinite: {} }, groupBy: { user: {} } } })))
      .activity.result.createVelocityControlResult!.velocityControlId;
    const unused = (await create(intent('unused_exports', { dataSource: { activityExecution: { filter: { activity: [{ activityType: 'ACTIVITY_TYPE_EXPORT_WALLET' }] } } } })))
      .activity.result.createVelocityControlResult!.velocityControlId;
    const policy = await api.createPolicy({ policyName: 'three a day per wallet', effect: 'EFFECT_DENY', condition: "activity.kind == 'SIGN_RAW_PAYLOAD' && !controls.wallet_signatures", notes: '' });
    // Bob is not root: the policies apply to him (the DENY reading the control, and an ALLOW for signing).
    const bobKey = newKey();
    const { userIds } = await api.createUsers({ users: [{ userName: 'usage bob', apiKeys: [{ apiKeyName: 'k', publicKey: bobKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }] });
    const allow = await api.createPolicy({ policyName: 'raw signing', effect: 'EFFECT_ALLOW', condition: "activity.kind == 'SIGN_RAW_PAYLOAD'", notes: '' });
    const bob = sdkServerClient(sigil, bobKey);
    const sign = (c: typeof api, n: number) => c.signRawPayload({ signWith: addresses[0], payload: '0x' + n.toString(16).padStart(64, '0'), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' });
    await sign(api, 1);
    await sign(bob, 2);

    let { velocityControl } = await client.getVelocityControl({ organizationId: org, velocityControlId: perWallet });
    expect((velocityControl as any).usage).toEqual([{ groupBy: 'wallet', groupId: walletId, aggregate: '2', threshold: '3', remaining: '1' }]);
    ({ velocityControl } = await client.getVelocityControl({ organizationId: org, velocityControlId: perUser }));
    // Nearest the threshold first, then by id; the threshold as the decimal it was written in.
    const byUser = [
      { groupBy: 'user', groupId: sigil.root.userId, aggregate: '1', threshold: '2.5', remaining: '1.5' },
      { groupBy: 'user', groupId: userIds[0], aggregate: '1', threshold: '2.5', remaining: '1.5' },
    ].sort((a, b) => (a.groupId < b.groupId ? -1 : 1));
    expect((velocityControl as any).usage).toEqual(byUser);

    // The third signature reaches the threshold; the fourth, which would pass it, is refused and counts nothing.
    await sign(bob, 3);
    await expect(sign(bob, 4)).rejects.toThrow(/policy engine denied request explicitly/);
    const listed = (await client.listVelocityControls({ organizationId: org })).velocityControls as any[];
    const usage = Object.fromEntries(listed.map((c) => [c.velocityControlId, c.usage]));
    expect(usage[perWallet]).toEqual([{ groupBy: 'wallet', groupId: walletId, aggregate: '3', threshold: '3', remaining: '0' }]);
    expect(usage[perUser]).toEqual([
      { groupBy: 'user', groupId: userIds[0], aggregate: '2', threshold: '2.5', remaining: '0.5' },
      { groupBy: 'user', groupId: sigil.root.userId, aggregate: '1', threshold: '2.5', remaining: '1.5' },
    ]);
    expect(usage[unused]).toEqual([]);

    // A day and 1% later the rolling window has let the signatures go; the infinite one keeps them.
    setClock(86_400 * 1.01 + 1);
    expect(((await client.getVelocityControl({ organizationId: org, velocityControlId: perWallet })).velocityControl as any).usage).toEqual([]);
    expect(((await client.getVelocityControl({ organizationId: org, velocityControlId: perUser })).velocityControl as any).usage).toHaveLength(2);
    // And a check agrees: bob may sign again.
    expect((await sign(bob, 5)).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');

    await api.deletePolicy({ policyId: policy.policyId });
    await api.deletePolicy({ policyId: allow.policyId });
  });
});
