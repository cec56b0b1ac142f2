// An activity's target is loaded once (docs/design.md "An operation is data"): sign_transaction and
// sign_raw_payload resolve their key, and parse the transaction, in their declaration's `load`, and
// what the policy judged is the very object that is signed. Sigil runs in this process (startApp on
// ephemeral ports, a fresh deployment made by `sigil init`), so the test can watch the declarations:
// it counts the loads of each request and checks that the policy context and `execute` were handed
// the same frozen object; the official @turnkey/http client submits, and viem checks the signatures.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { keccak256, parseTransaction, recoverAddress, recoverTransactionAddress, serializeTransaction, type Hex } from 'viem';
import { loadConfig } from '../../src/config/config.js';
import { startApp, type RunningApp } from '../../src/cli/app.js';
import { signRawPayloadOp, signTransactionOp } from '../../src/operations/signing.js';
import { dropSchema, freshDeploymentEnv, initDeployment, type SigilInstance } from '../helpers/sigil.js';
import { httpClient, newKey, sdkServerClient, waitingSdkServerClient } from '../helpers/clients.js';

/** What one declaration's hooks were handed, in order. */
interface Watch {
  loads: unknown[];
  judged: unknown[];
  executed: unknown[];
}

/** Wraps a declaration's load, policyContext and execute to record the objects they see (the registry holds this very object). */
function watch(decl: { load?: any; policyContext?: any; execute: any }): Watch {
  const seen: Watch = { loads: [], judged: [], executed: [] };
  const { load, policyContext, execute } = decl;
  decl.load = async (ctx: unknown, p: unknown) => {
    const loaded = await load(ctx, p);
    seen.loads.push(loaded);
    return loaded;
  };
  decl.policyContext = (ctx: unknown, p: unknown, loaded: unknown) => {
    seen.judged.push(loaded);
    return policyContext(ctx, p, loaded);
  };
  decl.execute = (ctx: unknown, p: unknown, loaded: unknown) => {
    seen.executed.push(loaded);
    return execute(ctx, p, loaded);
  };
  return seen;
}

const reset = (w: Watch) => {
  w.loads.length = 0;
  w.judged.length = 0;
  w.executed.length = 0;
};

let app: RunningApp;
let sigil: SigilInstance;
let dataDir: string;
let databaseUrl: string | undefined;
let from: Hex;
const transactions = watch(signTransactionOp);
const payloads = watch(signRawPayloadOp);

beforeAll(async () => {
  const env = freshDeploymentEnv();
  ({ dataDir, databaseUrl } = env);
  const root = initDeployment(dataDir, env.env);
  app = await startApp(loadConfig({ 'data-dir': dataDir, port: '0', 'auth-proxy-port': '0' }, env.env), pino({ level: 'warn' }));
  sigil = { url: app.publicUrl, root } as SigilInstance;
  const w = await sdkServerClient(sigil).createWallet({
    walletName: 'load once',
    accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }],
  });
  from = w.addresses[0] as Hex;
}, 120_000);

afterAll(async () => {
  await app?.close();
  rmSync(dataDir, { recursive: true, force: true });
  if (databaseUrl) await dropSchema(databaseUrl);
});

const unsigned = (to: Hex, value: bigint) => serializeTransaction({ type: 'eip1559', chainId: 11155111, nonce: 3, to, value, gas: 21000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 1n });

describe('a signing target loaded once', () => {
  it('sign_transaction under a policy: one load, judged and signed as the same frozen object', async () => {
    const api = sdkServerClient(sigil);
    const bobKey = newKey();
    const { userIds } = await api.createUsers({
      users: [{ userName: 'load bob', apiKeys: [{ apiKeyName: 'b', publicKey: bobKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    const to = '0x00000000000000000000000000000000000a11ce' as Hex;
    await api.createPolicy({
      policyName: 'bob signs to alice',
      effect: 'EFFECT_ALLOW',
      condition: `activity.action == 'SIGN' && eth.tx.to == '${to}'`,
      consensus: `approvers.any(user, user.id == '${userIds[0]}')`,
      notes: '',
    });
    reset(transactions);
    const tx = unsigned(to, 5n);
    const res = await httpClient(sigil, bobKey).signTransaction({
      type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
      timestampMs: String(Date.now()),
      organizationId: sigil.root.organizationId,
      parameters: { signWith: from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: tx },
    });
    expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(transactions.loads).toHaveLength(1);
    const loaded = transactions.loads[0] as { parsed: { policy: { value: { to: string; value: unknown } } } };
    expect(Object.isFrozen(loaded)).toBe(true);
    expect(transactions.judged.length).toBeGreaterThan(0);
    for (const judged of transactions.judged) expect(judged).toBe(loaded);
    expect(transactions.executed).toEqual([loaded]);
    expect(transactions.executed[0]).toBe(loaded);
    // What the policy saw is what was signed, by the key it named.
    expect(loaded.parsed.policy.value.to.toLowerCase()).toBe(to);
    const signed = `0x${(res.activity.result as any).signTransactionResult.signedTransaction}` as Hex;
    const parsed = parseTransaction(signed);
    expect(parsed.to?.toLowerCase()).toBe(to);
    expect(parsed.value).toBe(5n);
    expect((await recoverTransactionAddress({ serializedTransaction: signed as never })).toLowerCase()).toBe(from.toLowerCase());
  });

  it('sign_raw_payload: one load per request; the key judged is the key that signs', async () => {
    reset(payloads);
    const payload = keccak256('0x1234');
    const { r, s, v } = await sdkServerClient(sigil).signRawPayload({ signWith: from, payload, encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' });
    expect(payloads.loads).toHaveLength(1);
    expect(Object.isFrozen(payloads.loads[0])).toBe(true);
    expect(payloads.executed).toHaveLength(1);
    expect(payloads.executed[0]).toBe(payloads.loads[0]);
    for (const judged of payloads.judged) expect(judged).toBe(payloads.loads[0]);
    const signer = await recoverAddress({ hash: payload, signature: { r: `0x${r}`, s: `0x${s}`, v: BigInt(v) + 27n } });
    expect(signer.toLowerCase()).toBe(from.toLowerCase());
  });

  it('an approval loads the waiting transaction once, before deciding, and signs what it judged', async () => {
    const api = sdkServerClient(sigil);
    const aliceKey = newKey();
    const carolKey = newKey();
    const { userIds } = await api.createUsers({
      users: [
        { userName: 'load alice', apiKeys: [{ apiKeyName: 'a', publicKey: aliceKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] },
        { userName: 'load carol', apiKeys: [{ apiKeyName: 'c', publicKey: carolKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] },
      ],
    });
    const to = '0x0000000000000000000000000000000000000ca1' as Hex;
    await api.createPolicy({
      policyName: 'alice and carol together',
      effect: 'EFFECT_ALLOW',
      condition: `activity.action == 'SIGN' && eth.tx.to == '${to}'`,
      consensus: `approvers.filter(u, u.id == '${userIds[0]}' || u.id == '${userIds[1]}').count() >= 2`,
      notes: '',
    });
    const submitted = await httpClient(sigil, aliceKey).signTransaction({
      type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
      timestampMs: String(Date.now()),
      organizationId: sigil.root.organizationId,
      parameters: { signWith: from, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned(to, 9n) },
    });
    expect(submitted.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    reset(transactions);
    await waitingSdkServerClient(sigil, carolKey).approveActivity({ fingerprint: submitted.activity.fingerprint, organizationId: sigil.root.organizationId } as never);
    expect(transactions.loads).toHaveLength(1);
    const loaded = transactions.loads[0];
    for (const judged of transactions.judged) expect(judged).toBe(loaded);
    expect(transactions.executed).toHaveLength(1);
    expect(transactions.executed[0]).toBe(loaded);
    const { activity } = await httpClient(sigil).getActivity({ organizationId: sigil.root.organizationId, activityId: submitted.activity.id });
    expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const signed = `0x${(activity.result as any).signTransactionResult.signedTransaction}` as Hex;
    expect(parseTransaction(signed).value).toBe(9n);
    expect((await recoverTransactionAddress({ serializedTransaction: signed as never })).toLowerCase()).toBe(from.toLowerCase());
  });
});
