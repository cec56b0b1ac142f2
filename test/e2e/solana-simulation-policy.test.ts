// Solana simulation before approval, end to end (docs/policies.md "Simulation before approval",
// docs/broadcasting.md "Simulation"): through @turnkey/sdk-server, against a JSON-RPC node that runs
// the real Solana virtual machine (litesvm, test/helpers/solana-rpc.ts). bob's Solana sign_transaction
// waits for a second approval; while it waits, decodedView.simulation shows the SOL transfer, and once
// root approves, the signed transaction is sent to the node and @solana/web3.js's reading of the
// balances must agree. A DENY policy on simulation.outflows refuses a sol_send_transaction moving
// 2,000,000 lamports and lets one moving 10 through, which lands. Which cluster: two are configured and
// SIGIL_SOLANA_SIMULATION_CLUSTER names the one a signature is simulated on; without it a signature is
// NOT_SIMULATED with a reason naming the setting; a deployment with no Solana RPC says NOT_SIMULATED too,
// and a policy reading simulation.* then refuses rather than passing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction, type TransactionInstruction } from '@solana/web3.js';
import { runSigil, startSigil, type SigilInstance } from '../helpers/sigil.js';
import { execSql } from '../helpers/db-snapshot.js';
import { newKey, sdkServerClient, waitingSdkServerClient, type KeyPair } from '../helpers/clients.js';
import { startSolanaNode, type SolanaNode } from '../helpers/solana-rpc.js';

const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
const SOL = { kind: 'native', symbol: 'SOL', decimals: 9 };
const FEE = 5000;

let node: SolanaNode;
let sigil: SigilInstance;
let connection: Connection;
let payer: PublicKey;
let bobKey: KeyPair;
/** A funded account that is not the organization's: transfers to it need no rent. */
const recipient = Keypair.generate().publicKey;

/** An unsigned SOL transfer from the payer, with the node's blockhash (sign_transaction signs what it is given). */
function transfer(lamports: number, from = payer, blockhash = node.svm.latestBlockhash()): string {
  const tx = new Transaction({ feePayer: from, recentBlockhash: blockhash }).add(SystemProgram.transfer({ fromPubkey: from, toPubkey: recipient, lamports }) as TransactionInstruction);
  return tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('hex');
}

async function solanaWallet(s: SigilInstance): Promise<PublicKey> {
  const w = await sdkServerClient(s).createWallet({
    walletName: 'solana',
    accounts: [{ curve: 'CURVE_ED25519', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/501'/0'/0'", addressFormat: 'ADDRESS_FORMAT_SOLANA' }],
  });
  return new PublicKey(w.addresses[0]);
}

beforeAll(async () => {
  node = await startSolanaNode();
  // Two clusters (the same node behind both names); signatures are simulated on devnet.
  sigil = await startSigil({ SIGIL_SOLANA_RPC_DEVNET: node.url, SIGIL_SOLANA_RPC_MAINNET: node.url, SIGIL_SOLANA_SIMULATION_CLUSTER: 'solana:devnet', SIGIL_EVM_POLL_INTERVAL_MS: '100' });
  connection = new Connection(node.url, 'confirmed');
  payer = await solanaWallet(sigil);
  node.airdrop(payer.toBase58(), 100n * BigInt(LAMPORTS_PER_SOL));
  node.airdrop(recipient.toBase58(), BigInt(LAMPORTS_PER_SOL));
  bobKey = newKey();
  const root = sdkServerClient(sigil);
  await root.createUsers({ users: [{ userName: 'bob', apiKeys: [{ apiKeyName: 'bob', publicKey: bobKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }] });
  // bob's signatures wait for a second approval (root's), so each is read while it waits.
  await root.createPolicy({ policyName: 'bob signs with a second approval', effect: 'EFFECT_ALLOW', condition: "activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN'", consensus: 'approvers.count() >= 2', notes: '' });
}, 120_000);

afterAll(async () => {
  await sigil?.stop();
  await node?.close();
});

describe('Solana simulation before approval', () => {
  it("a waiting sign_transaction shows the SOL transfer, and the balances after the real send agree", async () => {
    const r = await waitingSdkServerClient(sigil, bobKey).signTransaction({ signWith: payer.toBase58(), unsignedTransaction: transfer(1_234_567), type: 'TRANSACTION_TYPE_SOLANA' });
    expect(r.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    const { activity } = (await sdkServerClient(sigil).getActivity({ activityId: r.activity.id })) as { activity: any };
    const sim = activity.decodedView.simulation;
    expect(sim).toMatchObject({ status: 'SIMULATED', chain: 'solana', network: DEVNET, reverted: false });
    expect(Date.parse(sim.simulatedAt)).not.toBeNaN();
    expect(sim.transfers).toEqual([{ asset: SOL, from: payer.toBase58(), to: recipient.toBase58(), amount: '1234567' }]);
    // Only the organization's own address has a balance change; the fee is in it.
    expect(sim.balanceChanges).toEqual([{ address: payer.toBase58(), asset: SOL, delta: String(-1_234_567 - FEE) }]);
    const summary = activity.decodedView.sections.find((s: any) => s.title === 'Simulation').rows.find((row: any) => row.label === 'summary').value;
    expect(summary).toMatch(/^sends 0\.001234567 SOL from /);

    const [payerBefore, recipientBefore] = [await connection.getBalance(payer), await connection.getBalance(recipient)];
    await sdkServerClient(sigil).approveActivity({ fingerprint: activity.fingerprint });
    const { activity: done } = (await sdkServerClient(sigil).getActivity({ activityId: activity.id })) as { activity: any };
    expect(done.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const signed = Buffer.from(done.result.signTransactionResult.signedTransaction as string, 'hex');
    const signature = await connection.sendRawTransaction(signed);
    expect((await connection.getSignatureStatus(signature)).value?.err).toBeNull();
    expect((await connection.getBalance(payer)) - payerBefore).toBe(Number(sim.balanceChanges[0].delta));
    expect((await connection.getBalance(recipient)) - recipientBefore).toBe(Number(sim.transfers[0].amount));
  });

  it('a DENY policy on simulation.outflows refuses a sol_send_transaction moving 2,000,000 lamports and allows one moving 10', async () => {
    const root = sdkServerClient(sigil);
    const allow = await root.createPolicy({ policyName: 'bob may send', effect: 'EFFECT_ALLOW', condition: "activity.type == 'ACTIVITY_TYPE_SOL_SEND_TRANSACTION_V2'", notes: '' });
    const deny = await root.createPolicy({ policyName: 'at most 1,000,000 lamports out', effect: 'EFFECT_DENY', condition: 'simulation.outflows.any(o, o.amount > 1000000)', notes: '' });
    const bob = sdkServerClient(sigil, bobKey);
    // The client leaves the blockhash for Sigil to fill.
    const send = (lamports: number) => bob.solSendTransaction({ unsignedTransaction: transfer(lamports, payer, PublicKey.default.toBase58()), signWiths: [payer.toBase58()], caip2: 'solana:devnet' } as never);
    try {
      const recipientBefore = await connection.getBalance(recipient);
      const sentBefore = node.calls.filter((c) => c === 'sendTransaction').length;
      await expect(send(2_000_000)).rejects.toThrow(/denied/);
      expect(node.calls.filter((c) => c === 'sendTransaction').length).toBe(sentBefore);

      const small = await send(10);
      const status = await root.pollTransactionStatus({ sendTransactionStatusId: small.sendTransactionStatusId, pollingIntervalMs: 50, timeoutMs: 60_000 });
      expect(status.txStatus).toBe('INCLUDED');
      expect((await connection.getBalance(recipient)) - recipientBefore).toBe(10);
      // The send's simulation, on the cluster it names, is recorded with it.
      const [row] = await execSql(sigil, `select simulation from activities where id = '${small.activity.id}'`);
      const recorded = JSON.parse(String(row.simulation));
      expect(recorded).toMatchObject({ status: 'SIMULATED', chain: 'solana', network: DEVNET });
      expect(recorded.transfers).toEqual([{ asset: SOL, from: payer.toBase58(), to: recipient.toBase58(), amount: '10' }]);
    } finally {
      await root.deletePolicy({ policyId: deny.policyId });
      await root.deletePolicy({ policyId: allow.policyId });
    }
  });

  it('SIGIL_SOLANA_SIMULATION_CLUSTER must name a configured cluster', () => {
    const config = (env: Record<string, string>) => runSigil(['config', '--data-dir', sigil.dataDir], { ...sigil.env, ...env });
    expect(JSON.parse(config({}).stdout).solanaSimulationCluster).toBe(DEVNET);
    const unknown = config({ SIGIL_SOLANA_SIMULATION_CLUSTER: 'solana:testnet' });
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/SIGIL_SOLANA_SIMULATION_CLUSTER must name a Solana cluster/);
    const unconfigured = config({ SIGIL_SOLANA_RPC_MAINNET: '', SIGIL_SOLANA_SIMULATION_CLUSTER: 'MAINNET' });
    expect(unconfigured.status).toBe(1);
    expect(unconfigured.stderr).toMatch(/SIGIL_SOLANA_SIMULATION_CLUSTER names MAINNET, which has no RPC: set SIGIL_SOLANA_RPC_MAINNET/);
  });
});

describe('Solana transactions that are not simulated', () => {
  /** A policy reading simulation.* refuses a Solana signature there, saying why; without it, the record says NOT_SIMULATED. */
  async function notSimulated(s: SigilInstance, reason: RegExp) {
    const root = sdkServerClient(s);
    const own = await solanaWallet(s);
    const user = newKey();
    await root.createUsers({ users: [{ userName: 'dave', apiKeys: [{ apiKeyName: 'dave', publicKey: user.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }] });
    const allow = await root.createPolicy({ policyName: 'small outflows only', effect: 'EFFECT_ALLOW', condition: "activity.action == 'SIGN' && simulation.outflows.all(o, o.amount <= 1000000)", notes: '' });
    const unsignedTransaction = transfer(10, own);
    await expect(sdkServerClient(s, user).signTransaction({ signWith: own.toBase58(), unsignedTransaction, type: 'TRANSACTION_TYPE_SOLANA' })).rejects.toThrow(reason);
    await root.deletePolicy({ policyId: allow.policyId });
    const signed = await root.signTransaction({ signWith: own.toBase58(), unsignedTransaction, type: 'TRANSACTION_TYPE_SOLANA' });
    const { activity } = (await root.getActivity({ activityId: signed.activity.id })) as { activity: any };
    return activity.decodedView.simulation;
  }

  it('no Solana RPC configured: NOT_SIMULATED with the reason, and a policy reading simulation.* refuses', async () => {
    const bare = await startSigil({});
    try {
      const calls = node.calls.length;
      const sim = await notSimulated(bare, /simulation is NOT_SIMULATED: no Solana RPC is configured \(SIGIL_SOLANA_RPC_MAINNET or SIGIL_SOLANA_RPC_DEVNET\)/);
      expect(sim).toMatchObject({ status: 'NOT_SIMULATED', chain: 'solana', reason: expect.stringMatching(/SIGIL_SOLANA_RPC_\*/) });
      expect(node.calls.length).toBe(calls);
    } finally {
      await bare.stop();
    }
  });

  it('several clusters and none named for signatures: NOT_SIMULATED, naming SIGIL_SOLANA_SIMULATION_CLUSTER', async () => {
    const two = await startSigil({ SIGIL_SOLANA_RPC_DEVNET: node.url, SIGIL_SOLANA_RPC_MAINNET: node.url });
    try {
      const sim = await notSimulated(two, /simulation is NOT_SIMULATED: set SIGIL_SOLANA_SIMULATION_CLUSTER: several Solana clusters are configured/);
      expect(sim).toMatchObject({ status: 'NOT_SIMULATED', chain: 'solana', reason: expect.stringMatching(/SIGIL_SOLANA_SIMULATION_CLUSTER/) });
    } finally {
      await two.stop();
    }
  });
});
