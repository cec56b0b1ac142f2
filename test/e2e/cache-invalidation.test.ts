// The read cache across processes (docs/operator-guide.md "Running on PostgreSQL / in production": every
// change that affects authentication, authorization or key state is seen by every process on its very
// next request). Two `sigil
// serve` processes on one database; each case warms the first process's cache with a request, makes
// the change through the second, and the very next request to the first is answered as the change
// demands: a deleted API key, a deleted user, a new and a deleted policy, a changed root quorum, an IP
// allowlist, a deleted wallet account and an expired session. Runs on SQLite (two processes on one
// WAL file) and on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateP256KeyPair } from '@turnkey/crypto';
import { serveAnother, startSigil, type SigilInstance } from '../helpers/sigil.js';
import { sdkServerClient, type KeyPair } from '../helpers/clients.js';

let first: SigilInstance;
let second: SigilInstance;

beforeAll(async () => {
  first = await startSigil();
  second = await serveAnother(first);
}, 60_000);

afterAll(async () => {
  await second?.stop();
  await first?.stop();
});

function newKey(): KeyPair {
  const k = generateP256KeyPair();
  return { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
}

/** A user with one API key, made through the second process. */
async function userWithKey(name: string): Promise<{ id: string; key: KeyPair }> {
  const key = newKey();
  const { userIds } = await sdkServerClient(second).createUsers({
    users: [{ userName: name, apiKeys: [{ apiKeyName: `${name} key`, publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
  });
  return { id: userIds[0], key };
}

const ETH = { curve: 'CURVE_SECP256K1' as const, pathFormat: 'PATH_FORMAT_BIP32' as const, path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' as const };

describe('a change made through one process is seen by the other on its next request', () => {
  it('a deleted API key and a deleted user are refused', async () => {
    const alice = await userWithKey('alice');
    const extra = newKey();
    await sdkServerClient(second).createApiKeys({ userId: alice.id, apiKeys: [{ apiKeyName: 'extra', publicKey: extra.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }] });
    // Warm the first process: both keys authenticate there.
    expect((await sdkServerClient(first, alice.key).getWhoami({})).userId).toBe(alice.id);
    expect((await sdkServerClient(first, extra).getWhoami({})).userId).toBe(alice.id);
    const { apiKeys } = await sdkServerClient(second).getApiKeys({ userId: alice.id });
    const extraId = apiKeys.find((k) => k.credential.publicKey === extra.apiPublicKey)!.apiKeyId;
    await sdkServerClient(second).deleteApiKeys({ userId: alice.id, apiKeyIds: [extraId] });
    await expect(sdkServerClient(first, extra).getWhoami({})).rejects.toThrow(/could not find public key/);
    expect((await sdkServerClient(first, alice.key).getWhoami({})).userId).toBe(alice.id);
    await sdkServerClient(second).deleteUsers({ userIds: [alice.id] });
    await expect(sdkServerClient(first, alice.key).getWhoami({})).rejects.toThrow(/could not find public key/);
  });

  it('a new DENY policy applies at once, and stops applying once deleted', async () => {
    const bob = await userWithKey('bob');
    await sdkServerClient(second).createPolicy({ policyName: 'bob creates wallets', notes: '', effect: 'EFFECT_ALLOW', consensus: `approvers.any(user, user.id == '${bob.id}')`, condition: "activity.type == 'ACTIVITY_TYPE_CREATE_WALLET'" });
    const bobFirst = sdkServerClient(first, bob.key);
    expect((await bobFirst.createWallet({ walletName: 'bob-1', accounts: [] })).walletId).toBeTruthy();
    const { policyId } = await sdkServerClient(second).createPolicy({ policyName: 'no wallets for bob', notes: '', effect: 'EFFECT_DENY', consensus: `approvers.any(user, user.id == '${bob.id}')`, condition: "activity.type == 'ACTIVITY_TYPE_CREATE_WALLET'" });
    await expect(bobFirst.createWallet({ walletName: 'bob-2', accounts: [] })).rejects.toThrow(/policy engine denied request explicitly/);
    await sdkServerClient(second).deletePolicy({ policyId });
    expect((await bobFirst.createWallet({ walletName: 'bob-3', accounts: [] })).walletId).toBeTruthy();
  });

  it('a deleted wallet account no longer signs', async () => {
    const w = await sdkServerClient(second).createWallet({ walletName: 'signer', accounts: [ETH] });
    const sign = () => sdkServerClient(first).signRawPayload({ signWith: w.addresses[0], payload: 'ab'.repeat(32), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' });
    expect((await sign()).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    await sdkServerClient(second).deleteWallets({ walletIds: [w.walletId], deleteWithoutExport: true });
    await expect(sign()).rejects.toThrow(/Could not find any resource to sign with/);
  });

  it('an IP allowlist set through one process refuses the next request at the other', async () => {
    const carol = await userWithKey('carol');
    expect((await sdkServerClient(first, carol.key).getWhoami({})).userId).toBe(carol.id);
    const root = sdkServerClient(second);
    // The organization list keeps loopback open (for the root user); carol's own list does not.
    await root.setIpAllowlist({ enabled: true, rules: [{ cidr: '127.0.0.0/24', label: 'loopback' }] } as never);
    await root.setIpAllowlist({ publicKey: carol.key.apiPublicKey, rules: [{ cidr: '10.20.0.0/24', label: 'office' }] } as never);
    await expect(sdkServerClient(first, carol.key).getWhoami({})).rejects.toThrow(/allowlist/i);
    await root.removeIpAllowlist({ publicKey: carol.key.apiPublicKey } as never);
    await root.removeIpAllowlist({} as never);
    expect((await sdkServerClient(first, carol.key).getWhoami({})).userId).toBe(carol.id);
  });

  it('an expired session key is refused', async () => {
    const session = newKey();
    await sdkServerClient(second).stampLogin({ publicKey: session.apiPublicKey, expirationSeconds: '2' });
    expect((await sdkServerClient(first, session).getWhoami({})).userId).toBe(second.root.userId);
    await new Promise((r) => setTimeout(r, 2500));
    await expect(sdkServerClient(first, session).getWhoami({})).rejects.toThrow(/expired api key/);
  });

  it('a changed root quorum holds the next root activity at the other process', async () => {
    const dave = await userWithKey('dave');
    expect((await sdkServerClient(first).createWallet({ walletName: 'before-quorum', accounts: [] })).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    await sdkServerClient(second).updateRootQuorum({ threshold: 2, userIds: [second.root.userId, dave.id] });
    const held = await sdkServerClient(first).createWallet({ walletName: 'after-quorum', accounts: [] });
    expect(held.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
  });
});
