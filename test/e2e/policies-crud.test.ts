// Policies and smart contract interfaces through the official @turnkey/sdk-server client against a
// real `sigil serve` (docs/reference/policies.md; docs/reference/organizations.md "Smart contract
// interfaces and OAuth 2.0 credentials"): CRUD round trips with the exact v1Policy /
// SmartContractInterface records, expressions refused at write time with the compiler's `invalid policy
// …` message, unique names, the 400kb interface limit, ABI validation, and every refusal leaving the
// database unchanged. The last block reads the same database through the domain functions the policy
// engine calls (loadCompiledPolicies, decodeEthCallForPolicy).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, erc20Abi, getAddress } from 'viem';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient, type RawResponse } from '../helpers/clients.js';
import { dbSnapshot } from '../helpers/db-snapshot.js';
import { Store } from '../../src/store/index.js';
import { compiledPolicyCacheSize, loadCompiledPolicies } from '../../src/domain/governance/policies.js';
import { decodeEthCallForPolicy } from '../../src/domain/keys/contract-interfaces.js';
import { evaluatePolicyExpression } from '../../src/policy/index.js';

let sigil: SigilInstance;
let api: ReturnType<typeof sdkServerClient>;
beforeAll(async () => {
  sigil = await startSigil();
  api = sdkServerClient(sigil);
});
afterAll(async () => {
  await sigil?.stop();
});

const TS = { seconds: expect.stringMatching(/^\d+$/), nanos: expect.stringMatching(/^\d+$/) };
const ERC20_ABI = JSON.stringify(erc20Abi);
const TOKEN = '0x1f9840a85d5af5bf1d1762f925bdaddc4201f984'; // lowercase on purpose
const SOLANA_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const SOLANA_IDL = JSON.stringify({ version: '0.1.0', name: 'demo', instructions: [{ name: 'init', accounts: [], args: [] }], types: [] });

function submit(path: string, type: string, parameters: unknown): Promise<RawResponse> {
  return rawPost(`${sigil.url}/public/v1/submit/${path}`, activityBody(sigil.root.organizationId, type, parameters), { key: sigil.root });
}

/** A refusal: HTTP 400, gRPC 3, the Turnkey error code, the message. */
function expectInvalid(res: RawResponse, message: RegExp, turnkeyErrorCode = 'REQUEST_INVALID') {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.code).toBe(3);
  expect(res.body.message).toMatch(message);
  expect(res.body.details[0]).toEqual({ '@type': 'type.googleapis.com/errors.v1.TurnkeyErrorDetail', turnkeyErrorCode });
}

/** An ABI text of exactly `bytes` UTF-8 bytes: many functions, padded with trailing whitespace. */
function abiOfSize(bytes: number): string {
  const entries: unknown[] = [];
  let text = '[]';
  for (let i = 0; text.length < bytes - 200; i++) {
    entries.push({ type: 'function', name: `fn${i}`, stateMutability: 'nonpayable', inputs: [{ name: 'who', type: 'address' }, { name: 'amount', type: 'uint256' }], outputs: [] });
    if (i % 200 === 0 || text.length > bytes - 2000) text = JSON.stringify(entries);
  }
  text = JSON.stringify(entries);
  while (text.length > bytes) {
    entries.pop();
    text = JSON.stringify(entries);
  }
  return text + ' '.repeat(bytes - Buffer.byteLength(text));
}

describe('policies', () => {
  it('create_policy, get_policy, list_policies round trip with exact v1Policy records', async () => {
    const created = await api.createPolicy({
      policyName: 'allow wallet creation',
      effect: 'EFFECT_ALLOW',
      condition: "activity.resource == 'WALLET' && activity.action == 'CREATE'",
      consensus: `approvers.any(user, user.id == '${sigil.root.userId}')`,
      notes: 'only wallets',
    });
    expect(created.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(created.activity.type).toBe('ACTIVITY_TYPE_CREATE_POLICY_V3');
    const { policy } = await api.getPolicy({ policyId: created.policyId });
    expect(policy).toEqual({
      policyId: created.policyId,
      policyName: 'allow wallet creation',
      effect: 'EFFECT_ALLOW',
      createdAt: TS,
      updatedAt: TS,
      notes: 'only wallets',
      consensus: `approvers.any(user, user.id == '${sigil.root.userId}')`,
      condition: "activity.resource == 'WALLET' && activity.action == 'CREATE'",
      time: '',
    });
    expect(policy.updatedAt).toEqual(policy.createdAt);

    // Absent condition and consensus are no constraint and read back as '' (the swagger requires them).
    const bare = await api.createPolicy({ policyName: 'deny nothing in particular', effect: 'EFFECT_DENY', notes: '' });
    const got = (await api.getPolicy({ policyId: bare.policyId })).policy;
    expect(got).toMatchObject({ condition: '', consensus: '', time: '', notes: '', effect: 'EFFECT_DENY' });

    const listed = await api.getPolicies({});
    expect(listed.policies.map((p) => p.policyId)).toEqual([created.policyId, bare.policyId]);
    expect(listed.policies[0]).toEqual(policy);

    // The same list through the raw query path, as any Turnkey client sends it.
    const raw = await rawPost(`${sigil.url}/public/v1/query/list_policies`, { organizationId: sigil.root.organizationId }, { key: sigil.root });
    expect(raw.status).toBe(200);
    expect(raw.body.policies).toEqual(listed.policies);
  });

  it('create_policies creates all of a batch in order, with time windows', async () => {
    const r = await api.createPolicies({
      policies: [
        { policyName: 'batch-1', effect: 'EFFECT_ALLOW', condition: "activity.type == 'ACTIVITY_TYPE_CREATE_USERS_V4'", notes: 'one' },
        { policyName: 'batch-2', effect: 'EFFECT_DENY', condition: 'true', notes: 'two', time: "time.now > Timestamp('2030-01-01T00:00:00Z')" },
        { policyName: 'batch-3', effect: 'EFFECT_ALLOW', notes: 'three', time: '' },
      ],
    });
    expect(r.policyIds).toHaveLength(3);
    const policies = (await api.getPolicies({})).policies.filter((p) => p.policyName.startsWith('batch-'));
    expect(policies.map((p) => [p.policyId, p.policyName, p.time])).toEqual([
      [r.policyIds[0], 'batch-1', ''],
      [r.policyIds[1], 'batch-2', "time.now > Timestamp('2030-01-01T00:00:00Z')"],
      [r.policyIds[2], 'batch-3', ''],
    ]);
  });

  it('update_policy changes only the given fields and keeps names unique', async () => {
    const { policyId } = await api.createPolicy({ policyName: 'to-update', effect: 'EFFECT_ALLOW', condition: 'true', notes: 'n1' });
    const before = (await api.getPolicy({ policyId })).policy;
    await new Promise((r) => setTimeout(r, 5));
    const updated = await api.updatePolicy({ policyId, policyName: 'updated', policyCondition: "activity.action == 'SIGN'" });
    expect(updated.policyId).toBe(policyId);
    expect(updated.activity.type).toBe('ACTIVITY_TYPE_UPDATE_POLICY_V2');
    const after = (await api.getPolicy({ policyId })).policy;
    expect(after).toEqual({ ...before, policyName: 'updated', condition: "activity.action == 'SIGN'", updatedAt: TS });
    expect(BigInt(after.updatedAt.seconds) * 1000n + BigInt(after.updatedAt.nanos) / 1_000_000n).toBeGreaterThan(
      BigInt(before.updatedAt.seconds) * 1000n + BigInt(before.updatedAt.nanos) / 1_000_000n,
    );

    await api.updatePolicy({ policyId, policyEffect: 'EFFECT_DENY', policyNotes: 'n2', policyConsensus: 'approvers.count() >= 2', time: "time.now < Timestamp('2100-01-01T00:00:00Z')" });
    expect((await api.getPolicy({ policyId })).policy).toMatchObject({
      policyName: 'updated',
      effect: 'EFFECT_DENY',
      notes: 'n2',
      condition: "activity.action == 'SIGN'",
      consensus: 'approvers.count() >= 2',
      time: "time.now < Timestamp('2100-01-01T00:00:00Z')",
    });
    // '' lifts the time window; keeping its own name is not a clash.
    await api.updatePolicy({ policyId, policyName: 'updated', time: '' });
    expect((await api.getPolicy({ policyId })).policy.time).toBe('');

    await expect(api.updatePolicy({ policyId, policyName: 'batch-1' })).rejects.toThrow(/policy label must be unique/);
    await expect(api.updatePolicy({ policyId: '00000000-0000-7000-8000-000000000000', policyNotes: 'x' })).rejects.toThrow(/policy not found/);
  });

  it('delete_policy and delete_policies; a missing id deletes nothing', async () => {
    const a = await api.createPolicy({ policyName: 'del-a', effect: 'EFFECT_ALLOW', notes: '' });
    const { policyIds } = await api.createPolicies({
      policies: [
        { policyName: 'del-b', effect: 'EFFECT_ALLOW', notes: '' },
        { policyName: 'del-c', effect: 'EFFECT_DENY', notes: '' },
      ],
    });
    const removed = await api.deletePolicy({ policyId: a.policyId });
    expect(removed.policyId).toBe(a.policyId);
    await expect(api.getPolicy({ policyId: a.policyId })).rejects.toThrow(/policy not found/);

    const snapshot = await dbSnapshot(sigil);
    const missing = await submit('delete_policies', 'ACTIVITY_TYPE_DELETE_POLICIES', { policyIds: [policyIds[0], a.policyId] });
    expect(missing.status).toBe(404);
    expect(missing.body.message).toMatch(new RegExp(`policy not found: ${a.policyId}`));
    expect(await dbSnapshot(sigil)).toEqual(snapshot);

    const both = await api.deletePolicies({ policyIds });
    expect(both.policyIds).toEqual(policyIds);
    const names = (await api.getPolicies({})).policies.map((p) => p.policyName);
    expect(names.filter((n) => n.startsWith('del-'))).toEqual([]);
    // A deleted name is free again.
    await api.createPolicy({ policyName: 'del-a', effect: 'EFFECT_ALLOW', notes: '' });
  });

  it('refuses bad expressions, duplicate names and missing notes, changing nothing', async () => {
    await api.createPolicy({ policyName: 'taken', effect: 'EFFECT_ALLOW', notes: '' });
    const existing = (await api.getPolicies({})).policies.find((p) => p.policyName === 'taken')!;
    const before = await dbSnapshot(sigil);
    const create = (p: Record<string, unknown>) =>
      submit('create_policy', 'ACTIVITY_TYPE_CREATE_POLICY_V3', { policyName: 'fresh', effect: 'EFFECT_ALLOW', notes: '', ...p });

    expectInvalid(await create({ condition: "activity.type ==" }), /^invalid policy condition: 1:17: expected an expression/);
    expectInvalid(await create({ condition: "activity.type == 'A' &&& true" }), /^invalid policy condition: /);
    expectInvalid(await create({ condition: 'foo.bar == 1' }), /^invalid policy condition: 1:1: unknown identifier 'foo'/);
    expectInvalid(await create({ condition: 'activity.type == 5' }), /^invalid policy condition: .*cannot compare string with int/);
    expectInvalid(await create({ condition: '' }), /^invalid policy condition: 1:1: empty expression/);
    expectInvalid(await create({ consensus: '' }), /^invalid policy consensus: 1:1: empty expression/);
    expectInvalid(await create({ consensus: "activity.type == 'X'" }), /^invalid policy consensus: .*condition keyword/);
    expectInvalid(await create({ time: 'time.now > 5' }), /^invalid policy time: /);
    expectInvalid(await create({ policyName: 'taken' }), /^policy label must be unique/);
    expectInvalid(await create({ policyName: '  ' }), /policyName must not be empty/);
    const noNotes = await submit('create_policy', 'ACTIVITY_TYPE_CREATE_POLICY_V3', { policyName: 'fresh', effect: 'EFFECT_ALLOW' });
    expectInvalid(noNotes, /notes/);
    const badEffect = await create({ effect: 'EFFECT_MAYBE' });
    expectInvalid(badEffect, /effect/);

    const batch = (policies: unknown[]) => submit('create_policies', 'ACTIVITY_TYPE_CREATE_POLICIES', { policies });
    expectInvalid(
      await batch([
        { policyName: 'b-ok', effect: 'EFFECT_ALLOW', notes: '' },
        { policyName: 'b-bad', effect: 'EFFECT_ALLOW', notes: '', condition: 'activity.nope' },
      ]),
      /^invalid policy condition: .*\(policies\[1\]\.condition\)$/,
    );
    expectInvalid(
      await batch([
        { policyName: 'same', effect: 'EFFECT_ALLOW', notes: '' },
        { policyName: 'same', effect: 'EFFECT_DENY', notes: '' },
      ]),
      /^policy label must be unique: policies\[1\]\.policyName "same" repeats policies\[0\]\.policyName/,
    );
    expectInvalid(await batch([{ policyName: 'taken', effect: 'EFFECT_ALLOW', notes: '' }]), /^policy label must be unique/);
    expectInvalid(await batch([]), /at least one policy/);

    const update = (p: Record<string, unknown>) => submit('update_policy', 'ACTIVITY_TYPE_UPDATE_POLICY_V2', { policyId: existing.policyId, ...p });
    expectInvalid(await update({ policyCondition: 'activity.type == 5' }), /^invalid policy condition: /);
    expectInvalid(await update({ policyConsensus: '' }), /^invalid policy consensus: 1:1: empty expression/);
    expectInvalid(await update({ policyName: '' }), /policyName must not be empty/);

    // The legacy selector-based type is accepted (test/e2e/older-activity-versions.test.ts), but a
    // policy without selectors, which would apply to everything, is not.
    const legacy = await submit('create_policy', 'ACTIVITY_TYPE_CREATE_POLICY_V2', { policyName: 'x', selectors: [], effect: 'EFFECT_ALLOW' });
    expectInvalid(legacy, /^selectors must list at least one selector/);

    expect(await dbSnapshot(sigil)).toEqual(before);
  });
});

describe('smart contract interfaces', () => {
  it('create, get, list and delete Ethereum and Solana interfaces', async () => {
    const eth = await api.createSmartContractInterface({
      smartContractAddress: TOKEN,
      smartContractInterface: ERC20_ABI,
      type: 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM',
      label: 'UNI token',
      notes: 'ERC-20',
    });
    expect(eth.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const got = await api.getSmartContractInterface({ smartContractInterfaceId: eth.smartContractInterfaceId });
    expect(got.smartContractInterface).toEqual({
      organizationId: sigil.root.organizationId,
      smartContractInterfaceId: eth.smartContractInterfaceId,
      smartContractAddress: getAddress(TOKEN), // stored EIP-55 checksummed
      smartContractInterface: ERC20_ABI,
      type: 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM',
      label: 'UNI token',
      notes: 'ERC-20',
      createdAt: TS,
      updatedAt: TS,
    });

    const sol = await api.createSmartContractInterface({
      smartContractAddress: SOLANA_PROGRAM,
      smartContractInterface: SOLANA_IDL,
      type: 'SMART_CONTRACT_INTERFACE_TYPE_SOLANA',
      label: 'demo program',
    });
    const list = await api.getSmartContractInterfaces({});
    expect(list.smartContractInterfaces.map((i) => [i.smartContractInterfaceId, i.smartContractAddress, i.notes])).toEqual([
      [eth.smartContractInterfaceId, getAddress(TOKEN), 'ERC-20'],
      [sol.smartContractInterfaceId, SOLANA_PROGRAM, ''],
    ]);
    const raw = await rawPost(`${sigil.url}/public/v1/query/list_smart_contract_interfaces`, { organizationId: sigil.root.organizationId }, { key: sigil.root });
    expect(raw.status).toBe(200);
    expect(raw.body.smartContractInterfaces).toEqual(list.smartContractInterfaces);

    const removed = await api.deleteSmartContractInterface({ smartContractInterfaceId: sol.smartContractInterfaceId });
    expect(removed.smartContractInterfaceId).toBe(sol.smartContractInterfaceId);
    await expect(api.getSmartContractInterface({ smartContractInterfaceId: sol.smartContractInterfaceId })).rejects.toThrow(
      /smart contract interface not found/,
    );
    await expect(api.deleteSmartContractInterface({ smartContractInterfaceId: sol.smartContractInterfaceId })).rejects.toThrow(
      /smart contract interface not found/,
    );
    expect((await api.getSmartContractInterfaces({})).smartContractInterfaces).toHaveLength(1);
  });

  it('accepts an ABI of exactly 400kb', async () => {
    const text = abiOfSize(400 * 1024);
    expect(Buffer.byteLength(text)).toBe(409600);
    const r = await api.createSmartContractInterface({
      smartContractAddress: '0x' + '22'.repeat(20),
      smartContractInterface: text,
      type: 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM',
      label: 'big',
    });
    const got = await api.getSmartContractInterface({ smartContractInterfaceId: r.smartContractInterfaceId });
    expect(got.smartContractInterface.smartContractInterface).toBe(text);
    await api.deleteSmartContractInterface({ smartContractInterfaceId: r.smartContractInterfaceId });
  });

  it('refuses oversized, non-JSON and malformed interfaces and bad addresses, changing nothing', async () => {
    const before = await dbSnapshot(sigil);
    const create = (p: Record<string, unknown>) =>
      submit('create_smart_contract_interface', 'ACTIVITY_TYPE_CREATE_SMART_CONTRACT_INTERFACE', {
        smartContractAddress: TOKEN,
        smartContractInterface: ERC20_ABI,
        type: 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM',
        label: 'x',
        ...p,
      });
    expectInvalid(await create({ smartContractInterface: abiOfSize(400 * 1024 + 1) }), /smartContractInterface is 409601 bytes; the limit is 400kb/);
    // Multi-byte characters count as bytes, not characters.
    const wide = `[${' '.repeat(10)}]` + '\u00e9'.repeat(204_795);
    expectInvalid(await create({ smartContractInterface: wide }), /the limit is 400kb/);
    expectInvalid(await create({ smartContractInterface: '[{"type":"function",' }), /^smartContractInterface is not valid JSON/);
    expectInvalid(await create({ smartContractInterface: '{"abi":[]}' }), /not a valid Ethereum ABI: an Ethereum ABI must be a JSON array/);
    expectInvalid(
      await create({ smartContractInterface: '[{"type":"function","name":"f","inputs":[{"name":"a","type":"uint7"}]}]' }),
      /not a valid Ethereum ABI: abi\[0\]\.inputs\[0\]\.type: invalid type uint7/,
    );
    expectInvalid(await create({ smartContractInterface: '[{"type":"function","inputs":[]}]' }), /abi\[0\]\.name/);
    expectInvalid(await create({ smartContractAddress: '0x1234' }), /invalid smartContractAddress "0x1234"/);
    expectInvalid(await create({ smartContractAddress: getAddress(TOKEN).replace('F', 'f').replace('a', 'A') }), /EIP-55 checksum does not match/);
    expectInvalid(await create({ label: '' }), /label must not be empty/);
    expectInvalid(await create({ type: 'SMART_CONTRACT_INTERFACE_TYPE_TRON' }), /type/);
    const solana = (p: Record<string, unknown>) =>
      create({ type: 'SMART_CONTRACT_INTERFACE_TYPE_SOLANA', smartContractAddress: SOLANA_PROGRAM, smartContractInterface: SOLANA_IDL, ...p });
    expectInvalid(await solana({ smartContractAddress: TOKEN }), /a Solana address is the base58 encoding of 32 bytes/);
    expectInvalid(await solana({ smartContractAddress: '0OIl' }), /a Solana address/);
    expectInvalid(await solana({ smartContractInterface: ERC20_ABI }), /not a valid Solana IDL: expected a JSON object/);
    expectInvalid(await solana({ smartContractInterface: '{"instructions":[]}' }), /"types" must be an array/);
    expect(await dbSnapshot(sigil)).toEqual(before);
  });
});

describe('what the policy engine reads', () => {
  let store: Store;
  beforeAll(async () => {
    store = await Store.open({ dataDir: sigil.dataDir, databaseUrl: sigil.databaseUrl });
  });
  afterAll(async () => {
    await store?.close();
  });

  it('loadCompiledPolicies returns every policy compiled, and reuses unchanged ones', async () => {
    const { policyId } = await api.createPolicy({
      policyName: 'engine-view',
      effect: 'EFFECT_DENY',
      condition: "activity.resource == 'WALLET'",
      consensus: 'approvers.count() >= 1',
      notes: '',
    });
    const orgId = sigil.root.organizationId;
    const first = await loadCompiledPolicies(store.repos, orgId);
    const listed = (await api.getPolicies({})).policies;
    expect(first.map((p) => p.id)).toEqual(listed.map((p) => p.policyId));
    const mine = first.find((p) => p.id === policyId)!;
    expect(mine).toMatchObject({ name: 'engine-view', effect: 'EFFECT_DENY' });
    expect(mine.condition?.source).toBe("activity.resource == 'WALLET'");
    expect(mine.consensus?.kind).toBe('consensus');
    expect(mine.time).toBeUndefined();
    expect(mine.compileErrors).toBeUndefined();
    const hit = evaluatePolicyExpression(mine.condition!, { activity: { type: 'ACTIVITY_TYPE_CREATE_WALLET', kind: 'CREATE_WALLET', resource: 'WALLET', action: 'CREATE', params: {} } } as never);
    expect(hit).toMatchObject({ ok: true, value: true });

    const again = await loadCompiledPolicies(store.repos, orgId);
    expect(again.find((p) => p.id === policyId)).toBe(mine); // same object: not recompiled
    expect(compiledPolicyCacheSize()).toBe(first.length);

    await api.updatePolicy({ policyId, policyCondition: "activity.resource == 'USER'" });
    const changed = (await loadCompiledPolicies(store.repos, orgId)).find((p) => p.id === policyId)!;
    expect(changed).not.toBe(mine);
    expect(changed.condition?.source).toBe("activity.resource == 'USER'");
  });

  it('decodeEthCallForPolicy decodes calls to a contract with an uploaded ABI, matching the address in any case', async () => {
    const orgId = sigil.root.organizationId;
    const recipient = getAddress('0x' + 'ab'.repeat(20));
    const data = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [recipient, 5_000_000n] });
    for (const to of [TOKEN, TOKEN.toUpperCase().replace('0X', '0x'), getAddress(TOKEN)]) {
      expect(await decodeEthCallForPolicy(store.repos, orgId, to, data)).toEqual({
        function_name: 'transfer',
        function_signature: '0xa9059cbb',
        contract_call_args: { recipient, amount: 5_000_000n },
      });
    }
    // No ABI for the address, a selector the ABI does not know, contract creation: nothing to add.
    expect(await decodeEthCallForPolicy(store.repos, orgId, '0x' + '33'.repeat(20), data)).toBeUndefined();
    expect(await decodeEthCallForPolicy(store.repos, orgId, TOKEN, '0xdeadbeef')).toBeUndefined();
    expect(await decodeEthCallForPolicy(store.repos, orgId, '', data)).toBeUndefined();
    // Another organization's ABI is not used.
    expect(await decodeEthCallForPolicy(store.repos, '00000000-0000-7000-8000-000000000000', TOKEN, data)).toBeUndefined();
    // A known selector with arguments that do not decode is refused rather than evaluated blind.
    const dirty = data.slice(0, 10) + 'ff' + data.slice(12);
    await expect(decodeEthCallForPolicy(store.repos, orgId, TOKEN, dirty)).rejects.toMatchObject({
      turnkeyErrorCode: 'INVALID_TRANSACTION',
      message: expect.stringMatching(/transfer\(address,uint256\).*non-zero upper bytes/),
    });
  });
});
