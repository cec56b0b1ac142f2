// The policy engine end to end through the official SDKs: a non-root user signs only where an ALLOW
// policy lets it (eth.tx.to), an explicit DENY wins and is refused with the exact error the SDK
// snapshots, approvals move CONSENSUS_NEEDED activities to completion, a rejection ends one, a root
// quorum of 2 holds update_root_quorum until the second root user approves, and an uploaded ABI
// lets a policy read an ERC-20 transfer's amount.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { generateP256KeyPair } from '@turnkey/crypto';
import { createAccount } from '@turnkey/viem';
import { encodeFunctionData, parseEther, recoverTransactionAddress, serializeTransaction } from 'viem';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot } from '../helpers/db-snapshot.js';

let sigil: SigilInstance;
let root: ReturnType<typeof sdkServerClient>;
let org: string;
let ethAddress: `0x${string}`;
const users: Record<string, { id: string; key: KeyPair }> = {};

const ALLOWED_TO = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const BANNED_TO = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
const OTHER_TO = '0x90F79bf6EB2c4f870365E785982E1f101E93b906';
const TOKEN = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const ERC20_ABI = [
  { type: 'function', name: 'transfer', stateMutability: 'nonpayable', inputs: [{ name: 'to', type: 'address' }, { name: 'amount', type: 'uint256' }], outputs: [{ name: '', type: 'bool' }] },
] as const;

function http(key: KeyPair) {
  return new TurnkeyClient({ baseUrl: sigil.url }, new ApiKeyStamper({ apiPublicKey: key.apiPublicKey, apiPrivateKey: key.apiPrivateKey }));
}

async function newUser(name: string) {
  const k = generateP256KeyPair();
  const key = { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
  const { userIds } = await root.createUsers({
    users: [{ userName: name, apiKeys: [{ apiKeyName: `${name} key`, publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
  });
  users[name] = { id: userIds[0], key };
  return users[name];
}

function tx(to: string, data?: `0x${string}`) {
  return { type: 'eip1559' as const, chainId: 1, nonce: 0, to: to as `0x${string}`, value: parseEther('0.001'), maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n, gas: 60_000n, ...(data ? { data } : {}) };
}

beforeAll(async () => {
  sigil = await startSigil();
  root = sdkServerClient(sigil);
  org = sigil.root.organizationId;
  const w = await root.createWallet({ walletName: 'policy', accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] });
  ethAddress = w.addresses[0] as `0x${string}`;
  await newUser('alice');
  await newUser('bob');
  await newUser('carol');
});
afterAll(async () => {
  await sigil?.stop();
});

describe('ALLOW and DENY policies', () => {
  it('a non-root user signs to the allowed address only; an explicit DENY is refused with code 7', async () => {
    const alice = users.alice;
    await root.createPolicy({
      policyName: 'alice may pay the allowed address',
      effect: 'EFFECT_ALLOW',
      consensus: `approvers.any(user, user.id == '${alice.id}')`,
      condition: `activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN' && eth.tx.to == '${ALLOWED_TO}'`,
      notes: 'allowlist',
    });
    await root.createPolicy({
      policyName: 'never pay the banned address',
      effect: 'EFFECT_DENY',
      condition: `eth.tx.to == '${BANNED_TO.toLowerCase()}'`,
      notes: 'denylist; eth.tx.to compares case-insensitively',
    });
    const account = await createAccount({ client: http(alice.key), organizationId: org, signWith: ethAddress });
    const signed = await account.signTransaction(tx(ALLOWED_TO));
    expect(await recoverTransactionAddress({ serializedTransaction: signed as never })).toBe(ethAddress);

    await expect(account.signTransaction(tx(BANNED_TO))).rejects.toThrow(/Turnkey error 7: policy engine denied request explicitly/);
    // Nothing allows the third address: an implicit deny, also a 403, worded as the hosted service
    // words it (the SDK's gas-station example matches /permission/i), Sigil's reason in the details.
    await expect(account.signTransaction(tx(OTHER_TO))).rejects.toThrow(/permission/i);
    await expect(account.signTransaction(tx(OTHER_TO))).rejects.toThrow(
      /Turnkey error 7: You don't have sufficient permissions to take this action\..*PolicyEnginePermissionError.*no policy allows ACTIVITY_TYPE_SIGN_TRANSACTION_V2/,
    );
    // The exact error body of the explicit deny.
    const body = activityBody(org, 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2', {
      signWith: ethAddress,
      unsignedTransaction: serializeTransaction(tx(BANNED_TO)).slice(2),
      type: 'TRANSACTION_TYPE_ETHEREUM',
    });
    const before = await dbSnapshot(sigil);
    const res = await rawPost(`${sigil.url}/public/v1/submit/sign_transaction`, body, { key: alice.key });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ code: 7, message: 'policy engine denied request explicitly', details: [] });
    expect(await dbSnapshot(sigil)).toEqual(before);
  });

  it('a DENY beats an ALLOW that also matches', async () => {
    const alice = users.alice;
    const deny = await root.createPolicy({
      policyName: 'cap value to the allowed address',
      effect: 'EFFECT_DENY',
      condition: `eth.tx.to == '${ALLOWED_TO}' && eth.tx.value > 1000000000000000`,
      notes: 'at most 0.001 ETH',
    });
    const account = await createAccount({ client: http(alice.key), organizationId: org, signWith: ethAddress });
    await expect(account.signTransaction({ ...tx(ALLOWED_TO), value: parseEther('1') })).rejects.toThrow(/policy engine denied request explicitly/);
    await account.signTransaction(tx(ALLOWED_TO));
    await root.deletePolicy({ policyId: deny.policyId });
    await account.signTransaction({ ...tx(ALLOWED_TO), value: parseEther('1') });
  });

  it('an uploaded ABI lets a policy read an ERC-20 transfer amount', async () => {
    const alice = users.alice;
    await root.createSmartContractInterface({
      smartContractAddress: TOKEN,
      smartContractInterface: JSON.stringify(ERC20_ABI),
      type: 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM',
      label: 'Token',
      notes: 'ERC-20',
    });
    await root.createPolicy({
      policyName: 'small token transfers',
      effect: 'EFFECT_ALLOW',
      condition: `eth.tx.to == '${TOKEN}' && eth.tx.function_name == 'transfer' && eth.tx.contract_call_args['amount'] <= 1000`,
      notes: 'abi-decoded',
    });
    const account = await createAccount({ client: http(alice.key), organizationId: org, signWith: ethAddress });
    const small = encodeFunctionData({ abi: ERC20_ABI, functionName: 'transfer', args: [OTHER_TO, 500n] });
    const big = encodeFunctionData({ abi: ERC20_ABI, functionName: 'transfer', args: [OTHER_TO, 5000n] });
    await account.signTransaction(tx(TOKEN, small));
    await expect(account.signTransaction(tx(TOKEN, big))).rejects.toThrow(/sufficient permissions/);
  });
});

describe('consensus', () => {
  it('approvers.count() >= 2 waits for a second approval, then the signature is in the result', async () => {
    const { bob, carol } = users;
    await root.createPolicy({
      policyName: 'two people sign raw payloads',
      effect: 'EFFECT_ALLOW',
      condition: `activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2'`,
      consensus: `approvers.count() >= 2 && approvers.any(u, u.id == '${bob.id}' || u.id == '${carol.id}')`,
      notes: 'two-person rule',
    });
    const submitted = await http(bob.key).signRawPayload({
      type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: { signWith: ethAddress, payload: '0x' + '11'.repeat(32), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' },
    });
    expect(submitted.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    expect(submitted.activity.votes).toHaveLength(1);
    // Carol sees she can approve; bob, who already voted, cannot.
    const seenByCarol = (await http(carol.key).getActivity({ organizationId: org, activityId: submitted.activity.id })).activity;
    expect(seenByCarol.canApprove).toBe(true);
    expect((await http(bob.key).getActivity({ organizationId: org, activityId: submitted.activity.id })).activity.canApprove).toBe(false);

    // A duplicate vote by bob is refused.
    await expect(
      http(bob.key).approveActivity({ type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY', timestampMs: String(Date.now()), organizationId: org, parameters: { fingerprint: submitted.activity.fingerprint } }),
    ).rejects.toThrow(/duplicate vote/);

    const approval = await sdkServerClient(sigil, carol.key).approveActivity({ fingerprint: submitted.activity.fingerprint });
    expect(approval.activity.type).toBe('ACTIVITY_TYPE_APPROVE_ACTIVITY');
    const done = (await root.getActivity({ activityId: submitted.activity.id })).activity as any;
    expect(done.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(done.votes.map((v: { userId: string }) => v.userId)).toEqual([bob.id, carol.id]);
    expect(done.result.signRawPayloadResult.r).toMatch(/^[0-9a-f]{64}$/);
    const evaluations = await root.getPolicyEvaluations({ activityId: submitted.activity.id });
    expect(evaluations.policyEvaluations.length).toBeGreaterThanOrEqual(2);
  });

  it('a rejection ends the activity as REJECTED; unknown fingerprints are 404', async () => {
    const { bob, carol } = users;
    const submitted = await http(bob.key).signRawPayload({
      type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: { signWith: ethAddress, payload: '0x' + '22'.repeat(32), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' },
    });
    expect(submitted.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    await sdkServerClient(sigil, carol.key).rejectActivity({ fingerprint: submitted.activity.fingerprint });
    const ended = (await root.getActivity({ activityId: submitted.activity.id })).activity;
    expect(ended.status).toBe('ACTIVITY_STATUS_REJECTED');
    expect(ended.result).toEqual({ activity: expect.anything() });

    const unknown = await rawPost(`${sigil.url}/public/v1/submit/approve_activity`, activityBody(org, 'ACTIVITY_TYPE_APPROVE_ACTIVITY', { fingerprint: 'sha256:' + '0'.repeat(64) }), { key: carol.key });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe('No activity found with fingerprint. Consensus activities must target an existing activity by fingerprint');
  });
});

describe('root quorum', () => {
  it('a root quorum of 2 holds update_root_quorum until the second root user approves', async () => {
    const second = await newUser('second root');
    // Threshold 1 today: the root user alone raises it to 2.
    const raised = await root.updateRootQuorum({ threshold: 2, userIds: [sigil.root.userId, second.id] });
    expect(raised.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');

    const lower = await http(sigil.root).updateRootQuorum({
      type: 'ACTIVITY_TYPE_UPDATE_ROOT_QUORUM',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: { threshold: 1, userIds: [sigil.root.userId] },
    });
    expect(lower.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    expect((await root.getOrganizationConfigs({})).configs.quorum).toMatchObject({ threshold: 2 });
    // Alice is not in the root quorum: her vote is refused.
    await expect(sdkServerClient(sigil, users.alice.key).approveActivity({ fingerprint: lower.activity.fingerprint })).rejects.toThrow(/only root quorum members/);
    await sdkServerClient(sigil, second.key).approveActivity({ fingerprint: lower.activity.fingerprint });
    expect((await root.getActivity({ activityId: lower.activity.id })).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const org2 = await http(sigil.root).getOrganization({ organizationId: org });
    expect(org2.organizationData.rootQuorum).toEqual({ threshold: 1, userIds: [sigil.root.userId] });
  });

  it('organization features are root-quorum-only, even with a policy allowing everything', async () => {
    const set = await root.setOrganizationFeature({ name: 'FEATURE_NAME_WEBAUTHN_ORIGINS', value: 'https://wallet.example' });
    expect(set.features).toEqual([{ name: 'FEATURE_NAME_WEBAUTHN_ORIGINS', value: 'https://wallet.example' }]);
    expect((await root.getOrganizationConfigs({})).configs.features).toEqual(set.features);
    await root.createPolicy({ policyName: 'alice may do anything', effect: 'EFFECT_ALLOW', condition: 'true', consensus: `approvers.any(u, u.id == '${users.alice.id}')`, notes: 'broad' });
    await expect(sdkServerClient(sigil, users.alice.key).setOrganizationFeature({ name: 'FEATURE_NAME_EMAIL_AUTH', value: 'true' })).rejects.toThrow(
      /only the root quorum can run ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE/,
    );
    const removed = await root.removeOrganizationFeature({ name: 'FEATURE_NAME_WEBAUTHN_ORIGINS' });
    expect(removed.features).toEqual([]);
    await expect(root.removeOrganizationFeature({ name: 'FEATURE_NAME_WEBAUTHN_ORIGINS' })).rejects.toThrow(/is not set/);
  });

  it('refuses thresholds outside 1..members', async () => {
    await expect(root.updateRootQuorum({ threshold: 0, userIds: [sigil.root.userId] })).rejects.toThrow(/quorum threshold must be non-zero integer/);
    await expect(root.updateRootQuorum({ threshold: 2, userIds: [sigil.root.userId] })).rejects.toThrow(/exceeds the 1 quorum users/);
  });
});
