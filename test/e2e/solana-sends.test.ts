// Solana broadcasting (docs/broadcasting.md "Solana"): sol_send_transaction and
// get_send_transaction_status through the official clients (@turnkey/sdk-server's solSendTransaction
// and pollTransactionStatus, @turnkey/http's TurnkeyClient, and the older
// ACTIVITY_TYPE_SOL_SEND_TRANSACTION shape by a stamped POST), against a JSON-RPC node that runs the
// real Solana virtual machine (litesvm, test/helpers/solana-rpc.ts). Transactions are built with
// @solana/web3.js and @solana/spl-token, left unsigned and without a blockhash, as a client would;
// every outcome is read back from the node with web3.js's Connection (balances, token accounts,
// signature statuses). Status changes reach a webhook receiver on loopback as
// SEND_TRANSACTION_STATUS_UPDATES events, each signature checked with @turnkey/crypto. A send that
// waits for a second approval (a consensus policy needing two users) is recorded, signed and sent
// only once that approval arrives, and lands (test/helpers/approvals.ts sets the approvers up).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction, type TransactionInstruction } from '@solana/web3.js';
import {
  MINT_SIZE,
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  createTransferCheckedInstruction,
  getAccount,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { runSigil, startSigil, type SigilInstance } from '../helpers/sigil.js';
import { execSql } from '../helpers/db-snapshot.js';
import { approve, twoApprovers } from '../helpers/approvals.js';
import { receiveSendEvents, type SendEvents } from '../helpers/send-events.js';
import { activityBody, httpClient, newKey, rawPost, sdkServerClient } from '../helpers/clients.js';
import { startSolanaNode, type SolanaNode } from '../helpers/solana-rpc.js';

const CAIP2 = 'solana:devnet';
/** A placeholder blockhash: the client leaves it for Sigil to fill from the node. */
const NO_BLOCKHASH = PublicKey.default.toBase58();

let node: SolanaNode;
let sigil: SigilInstance;
let orgId: string;
let connection: Connection;
/** The fee payer and a second signer, both Sigil wallet accounts. */
let payer: PublicKey;
let cosigner: PublicKey;
/** The webhook receiver of SEND_TRANSACTION_STATUS_UPDATES (signatures checked). */
let receiver: SendEvents;
/** A local mint (its authority a test key, not Sigil's) with 1,000 tokens in the payer's token account. */
const mintAuthority = Keypair.generate();
const mint = Keypair.generate();
const DECIMALS = 6;

/** The hex of an unsigned transaction as a client sends it: fee payer set, no signatures, no real blockhash. */
function unsigned(instructions: TransactionInstruction[], feePayer = payer): string {
  const tx = new Transaction({ feePayer, recentBlockhash: NO_BLOCKHASH }).add(...instructions);
  return tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('hex');
}

async function send(unsignedTransaction: string, signWiths: string[] = [payer.toBase58()]): Promise<string> {
  const { sendTransactionStatusId } = await sdkServerClient(sigil).solSendTransaction({ unsignedTransaction, signWiths, caip2: CAIP2 } as never);
  return sendTransactionStatusId;
}

async function finalStatus(id: string) {
  for (;;) {
    const status = await httpClient(sigil).getSendTransactionStatus({ organizationId: orgId, sendTransactionStatusId: id });
    if (status.txStatus === 'INCLUDED' || status.txStatus === 'FAILED') return status;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * A transfer of `lamports` to a new address, sent while the node holds what it is sent (it answers as
 * a node that took it, and runs nothing): BROADCASTING when this returns, the node still holding.
 */
async function heldTransfer(lamports: number): Promise<{ id: string; to: PublicKey }> {
  const to = Keypair.generate().publicKey;
  node.hold();
  try {
    const id = await send(unsigned([SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports })]));
    expect((await httpClient(sigil).getSendTransactionStatus({ organizationId: orgId, sendTransactionStatusId: id })).txStatus).toBe('BROADCASTING');
    return { id, to };
  } catch (err) {
    node.release();
    throw err;
  }
}

/** Runs a set-up transaction signed by local keys (not Sigil's), with the node's blockhash. */
function setUp(instructions: TransactionInstruction[], signers: Keypair[]) {
  const tx = new Transaction({ feePayer: signers[0].publicKey, recentBlockhash: node.svm.latestBlockhash() }).add(...instructions);
  tx.sign(...signers);
  node.execute(tx.serialize());
}

beforeAll(async () => {
  node = await startSolanaNode();
  sigil = await startSigil({
    SIGIL_SOLANA_RPC_DEVNET: node.url,
    SIGIL_EVM_POLL_INTERVAL_MS: '100',
    SIGIL_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    SIGIL_WEBHOOK_POLL_MS: '50',
  });
  orgId = sigil.root.organizationId;
  connection = new Connection(node.url, 'confirmed');
  receiver = await receiveSendEvents(sigil);
  const account = (i: number) => ({ curve: 'CURVE_ED25519', pathFormat: 'PATH_FORMAT_BIP32', path: `m/44'/501'/${i}'/0'`, addressFormat: 'ADDRESS_FORMAT_SOLANA' }) as const;
  const w = await sdkServerClient(sigil).createWallet({ walletName: 'solana sender', accounts: [account(0), account(1)] });
  payer = new PublicKey(w.addresses[0]);
  cosigner = new PublicKey(w.addresses[1]);
  node.airdrop(payer.toBase58(), 100n * BigInt(LAMPORTS_PER_SOL));
  node.airdrop(cosigner.toBase58(), 10n * BigInt(LAMPORTS_PER_SOL));
  node.airdrop(mintAuthority.publicKey.toBase58(), 10n * BigInt(LAMPORTS_PER_SOL));
  const rent = Number(node.svm.minimumBalanceForRentExemption(BigInt(MINT_SIZE)));
  const payerAta = getAssociatedTokenAddressSync(mint.publicKey, payer);
  setUp(
    [
      SystemProgram.createAccount({ fromPubkey: mintAuthority.publicKey, newAccountPubkey: mint.publicKey, lamports: rent, space: MINT_SIZE, programId: TOKEN_PROGRAM_ID }),
      createInitializeMint2Instruction(mint.publicKey, DECIMALS, mintAuthority.publicKey, null),
      createAssociatedTokenAccountIdempotentInstruction(mintAuthority.publicKey, payerAta, payer, mint.publicKey),
      createMintToInstruction(mint.publicKey, payerAta, mintAuthority.publicKey, 1_000n * 10n ** BigInt(DECIMALS)),
    ],
    [mintAuthority, mint],
  );
}, 120_000);

afterAll(async () => {
  if (sigil) await sigil.stop();
  await node?.close();
  await receiver?.close();
});

describe('sol_send_transaction', () => {
  it('sends a SOL transfer: Sigil fills the blockhash, signs as the fee payer, and it lands', async () => {
    const to = Keypair.generate().publicKey;
    const before = await connection.getBalance(payer);
    const id = await send(unsigned([SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports: 1_234_567 })]));
    const status = await sdkServerClient(sigil).pollTransactionStatus({ sendTransactionStatusId: id, pollingIntervalMs: 50, timeoutMs: 60_000 });
    expect(status.txStatus).toBe('INCLUDED');
    const signature = (status as any).solana.signature as string;
    // The node's own record of the transaction, under the signature Sigil reports.
    const onChain = await connection.getSignatureStatus(signature);
    expect(onChain.value?.err).toBeNull();
    expect(await connection.getBalance(to)).toBe(1_234_567);
    expect(await connection.getBalance(payer)).toBe(before - 1_234_567 - 5000);
    // Sigil asked the node for the blockhash it signed over.
    expect(node.calls).toContain('getLatestBlockhash');
  });

  it('sends an SPL token transfer (TransferChecked) through @turnkey/http, checked by reading the token accounts', async () => {
    const to = Keypair.generate().publicKey;
    const fromAta = getAssociatedTokenAddressSync(mint.publicKey, payer);
    const toAta = getAssociatedTokenAddressSync(mint.publicKey, to);
    const before = (await getAccount(connection, fromAta)).amount;
    const tx = unsigned([
      createAssociatedTokenAccountIdempotentInstruction(payer, toAta, to, mint.publicKey),
      createTransferCheckedInstruction(fromAta, mint.publicKey, toAta, payer, 25_500_000n, DECIMALS),
    ]);
    const submitted = await httpClient(sigil).solSendTransaction({
      type: 'ACTIVITY_TYPE_SOL_SEND_TRANSACTION_V2',
      timestampMs: String(Date.now()),
      organizationId: orgId,
      parameters: { unsignedTransaction: tx, signWiths: [payer.toBase58()], caip2: CAIP2 },
    });
    expect(submitted.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const id = (submitted.activity.result as any).solSendTransactionResultV2.sendTransactionStatusId;
    expect(await finalStatus(id)).toEqual(expect.objectContaining({ txStatus: 'INCLUDED' }));
    expect((await getAccount(connection, toAta)).amount).toBe(25_500_000n);
    expect((await getAccount(connection, fromAta)).amount).toBe(before - 25_500_000n);
  });

  it('signs with every listed signer: a transfer from a second Sigil account, its fee paid by the first', async () => {
    const to = Keypair.generate().publicKey;
    const payerBefore = await connection.getBalance(payer);
    const cosignerBefore = await connection.getBalance(cosigner);
    const id = await send(unsigned([SystemProgram.transfer({ fromPubkey: cosigner, toPubkey: to, lamports: 1_777_000 })]), [payer.toBase58(), cosigner.toBase58()]);
    expect(await finalStatus(id)).toEqual(expect.objectContaining({ txStatus: 'INCLUDED' }));
    expect(await connection.getBalance(to)).toBe(1_777_000);
    expect(await connection.getBalance(cosigner)).toBe(cosignerBefore - 1_777_000);
    expect(await connection.getBalance(payer)).toBe(payerBefore - 10_000); // two signatures' fee
  });

  it('refuses a transaction whose required signer is not listed, and sends nothing', async () => {
    const to = Keypair.generate().publicKey;
    await expect(send(unsigned([SystemProgram.transfer({ fromPubkey: cosigner, toPubkey: to, lamports: 5 })]))).rejects.toThrow(/requires signatures from/);
    expect(await connection.getBalance(to)).toBe(0);
  });

  it('accepts the older ACTIVITY_TYPE_SOL_SEND_TRANSACTION with one signWith', async () => {
    const to = Keypair.generate().publicKey;
    const body = activityBody(orgId, 'ACTIVITY_TYPE_SOL_SEND_TRANSACTION', {
      unsignedTransaction: unsigned([SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports: 1_004_242 })]),
      signWith: payer.toBase58(),
      caip2: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
    });
    const res = await rawPost(`${sigil.url}/public/v1/submit/sol_send_transaction`, body, { key: sigil.root });
    expect(res.status).toBe(200);
    expect(res.body.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const id = res.body.activity.result.solSendTransactionResult.sendTransactionStatusId;
    expect(await finalStatus(id)).toEqual(expect.objectContaining({ txStatus: 'INCLUDED' }));
    expect(await connection.getBalance(to)).toBe(1_004_242);
  });

  it('concurrent sends from one fee payer all land', async () => {
    const recipients = Array.from({ length: 12 }, () => Keypair.generate().publicKey);
    const before = await connection.getBalance(payer);
    const ids = await Promise.all(recipients.map((to, i) => send(unsigned([SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports: 1_000_000 + i })]))));
    expect(new Set(ids).size).toBe(ids.length);
    const statuses = await Promise.all(ids.map(finalStatus));
    expect(statuses).toMatchObject(ids.map(() => ({ txStatus: 'INCLUDED' })));
    expect(new Set(statuses.map((s: any) => s.solana.signature)).size).toBe(ids.length);
    for (const [i, to] of recipients.entries()) expect(await connection.getBalance(to)).toBe(1_000_000 + i);
    const sent = recipients.reduce((sum, _to, i) => sum + 1_000_000 + i, 0);
    expect(await connection.getBalance(payer)).toBe(before - sent - 5000 * recipients.length);
  });

  it('a send whose blockhash expires before it lands is FAILED as expired', async () => {
    const { id, to } = await heldTransfer(99_000);
    node.expireBlockhash();
    node.release();
    const status = await finalStatus(id);
    expect(status.txStatus).toBe('FAILED');
    expect(status.txError).toMatch(/^expired: /);
    expect((status.error as any).solana.source).toBe('expiry');
    expect(await connection.getBalance(to)).toBe(0);
    expect((await connection.getSignatureStatus((status as any).solana.signature)).value).toBeNull();
  });

  // The tracker asks isBlockhashValid, then sends again. Between the two, the transaction may land
  // and its blockhash expire: the re-send is refused with BlockhashNotFound, and the transaction is
  // on chain all the same. (The node is released after the status too, so that a tracker that never
  // asked cannot leave it holding.)
  it('a re-send refused for its blockhash, of a transaction that landed meanwhile, is INCLUDED, not FAILED', async () => {
    const { id, to } = await heldTransfer(1_077_000);
    node.onNextValidityCheck(() => {
      node.release();
      node.expireBlockhash();
    });
    const status = await finalStatus(id).finally(() => node.release());
    expect(status.txStatus).toBe('INCLUDED');
    expect(await connection.getBalance(to)).toBe(1_077_000);
  });

  it('a re-send refused for its blockhash, of a transaction that did not land, is FAILED as expired', async () => {
    const { id, to } = await heldTransfer(1_078_000);
    node.onNextValidityCheck(() => {
      node.expireBlockhash();
      node.release();
    });
    const status = await finalStatus(id).finally(() => node.release());
    expect(status.txStatus).toBe('FAILED');
    expect(status.txError).toMatch(/^expired: /);
    expect((status.error as any).solana.source).toBe('expiry');
    expect(await connection.getBalance(to)).toBe(0);
  });

  // A process that stopped after handing a send over but before recording BROADCASTING leaves it
  // INITIALIZED; the next hand-over may find the blockhash gone and the transaction on chain.
  it('a send left INITIALIZED that landed before its blockhash expired is INCLUDED when handed over again', async () => {
    const { id, to } = await heldTransfer(1_079_000);
    try {
      // As that process left it: the tracker hands over an INITIALIZED send only seconds after it was written.
      await execSql(sigil, "update send_transactions set status = 'INITIALIZED', updated_at = ? where id = ?", [Date.now(), id]);
    } finally {
      node.release();
    }
    node.expireBlockhash();
    expect(await connection.getBalance(to)).toBe(1_079_000);
    const asked = node.calls.length;
    await execSql(sigil, 'update send_transactions set updated_at = 0 where id = ?', [id]);
    const status = await finalStatus(id);
    expect(status.txStatus).toBe('INCLUDED');
    // Found by the hand-over (refused for its blockhash, then looked up), not by following it.
    expect(node.calls.slice(asked)).toEqual(expect.arrayContaining(['sendTransaction', 'getSignatureStatuses']));
  });

  it('a program error refused at preflight is FAILED with the program logs', async () => {
    const to = Keypair.generate().publicKey;
    const fromAta = getAssociatedTokenAddressSync(mint.publicKey, payer);
    const toAta = getAssociatedTokenAddressSync(mint.publicKey, to);
    const balance = (await getAccount(connection, fromAta)).amount;
    const id = await send(
      unsigned([
        createAssociatedTokenAccountIdempotentInstruction(payer, toAta, to, mint.publicKey),
        createTransferCheckedInstruction(fromAta, mint.publicKey, toAta, payer, balance + 1n, DECIMALS),
      ]),
    );
    const status = await finalStatus(id);
    expect(status.txStatus).toBe('FAILED');
    const solana = (status.error as any).solana;
    expect(solana.source).toBe('preflight');
    expect(JSON.parse(solana.transactionErrorJson)).toEqual({ InstructionError: [1, { Custom: 1 }] });
    expect(solana.logs.join('\n')).toMatch(/Program log: Error: insufficient funds/);
    await expect(sdkServerClient(sigil).pollTransactionStatus({ sendTransactionStatusId: id, pollingIntervalMs: 50 })).rejects.toThrow(/insufficient funds/);
    expect((await getAccount(connection, fromAta)).amount).toBe(balance);
  });

  it('a program error on chain (the node took it, it failed in its block) is FAILED with the logs from getTransaction', async () => {
    const to = Keypair.generate().publicKey;
    const fromAta = getAssociatedTokenAddressSync(mint.publicKey, payer);
    const balance = (await getAccount(connection, fromAta)).amount;
    node.hold();
    let id: string;
    try {
      // The recipient's token account does not exist: the token program fails the transfer.
      id = await send(unsigned([createTransferCheckedInstruction(fromAta, mint.publicKey, getAssociatedTokenAddressSync(mint.publicKey, to), payer, 1n, DECIMALS)]));
    } finally {
      node.release();
    }
    const status = await finalStatus(id);
    expect(status.txStatus).toBe('FAILED');
    const solana = (status.error as any).solana;
    expect(solana.source).toBe('execution');
    expect(solana.logs.some((l: string) => l.includes(TOKEN_PROGRAM_ID.toBase58()))).toBe(true);
    const onChain = await connection.getSignatureStatus((status as any).solana.signature);
    expect(onChain.value?.err).toEqual(JSON.parse(solana.transactionErrorJson));
    expect((await getAccount(connection, fromAta)).amount).toBe(balance);
  });

  it('a DENY policy on solana.tx stops the send as it stops sign_transaction: nothing signed, recorded or sent', async () => {
    const api = sdkServerClient(sigil);
    // A non-root user: the root quorum is not subject to policies.
    const bobKey = newKey();
    const { userIds } = await api.createUsers({
      users: [{ userName: 'solana bob', apiKeys: [{ apiKeyName: 'k', publicKey: bobKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    const blocked = Keypair.generate().publicKey;
    const allow = await api.createPolicy({ policyName: 'bob signs', effect: 'EFFECT_ALLOW', condition: "activity.action == 'SIGN'", consensus: `approvers.any(user, user.id == '${userIds[0]}')`, notes: '' });
    const deny = await api.createPolicy({
      policyName: 'no SOL to the blocked address',
      effect: 'EFFECT_DENY',
      condition: `solana.tx.transfers.any(t, t.to == '${blocked.toBase58()}')`,
      notes: '',
    });
    try {
      const bob = sdkServerClient(sigil, bobKey);
      const toBlocked = unsigned([SystemProgram.transfer({ fromPubkey: payer, toPubkey: blocked, lamports: 1_000_000 })]);
      const before = node.calls.filter((c) => c === 'sendTransaction').length;
      await expect(bob.signTransaction({ signWith: payer.toBase58(), type: 'TRANSACTION_TYPE_SOLANA', unsignedTransaction: toBlocked })).rejects.toThrow(/denied/i);
      await expect(bob.solSendTransaction({ unsignedTransaction: toBlocked, signWiths: [payer.toBase58()], caip2: CAIP2 } as never)).rejects.toThrow(/denied/i);
      expect(node.calls.filter((c) => c === 'sendTransaction').length).toBe(before);
      expect(await connection.getBalance(blocked)).toBe(0);
      // What the policy does not name still goes.
      const other = Keypair.generate().publicKey;
      const { sendTransactionStatusId } = await bob.solSendTransaction({
        unsignedTransaction: unsigned([SystemProgram.transfer({ fromPubkey: payer, toPubkey: other, lamports: 1_000_000 })]),
        signWiths: [payer.toBase58()],
        caip2: CAIP2,
      } as never);
      expect(await finalStatus(sendTransactionStatusId)).toEqual(expect.objectContaining({ txStatus: 'INCLUDED' }));
      expect(await connection.getBalance(other)).toBe(1_000_000);
    } finally {
      await api.deletePolicy({ policyId: deny.policyId });
      await api.deletePolicy({ policyId: allow.policyId });
    }
  });

  it('sends count toward velocity controls as signed transactions do: a SOL limit stops the send that would pass it', async () => {
    const api = sdkServerClient(sigil);
    const carolKey = newKey();
    const { userIds } = await api.createUsers({
      users: [{ userName: 'solana carol', apiKeys: [{ apiKeyName: 'k', publicKey: carolKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    const allow = await api.createPolicy({ policyName: 'carol signs', effect: 'EFFECT_ALLOW', condition: "activity.action == 'SIGN'", consensus: `approvers.any(user, user.id == '${userIds[0]}')`, notes: '' });
    const control = await httpClient(sigil).createVelocityControl({
      type: 'ACTIVITY_TYPE_CREATE_VELOCITY_CONTROL',
      timestampMs: String(Date.now()),
      organizationId: orgId,
      parameters: {
        name: 'carol sol',
        identifier: 'carol_sol',
        dataSource: { chainAssetTransfer: { definition: [{ caip19: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1/slip44:501', decimals: '9' }] } },
        aggregation: {
          method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM',
          operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL',
          threshold: '2.5',
          window: { infinite: {} },
          groupBy: { user: {} },
        },
      } as never,
    });
    const velocityControlId = control.activity.result.createVelocityControlResult!.velocityControlId;
    const deny = await api.createPolicy({ policyName: 'carol sends at most 2.5 SOL', effect: 'EFFECT_DENY', condition: '!controls.carol_sol', notes: '' });
    try {
      const carol = sdkServerClient(sigil, carolKey);
      const to = Keypair.generate().publicKey;
      const SOL = LAMPORTS_PER_SOL;
      const sendSol = (lamports: number) =>
        carol.solSendTransaction({ unsignedTransaction: unsigned([SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports })]), signWiths: [payer.toBase58()], caip2: CAIP2 } as never);
      // Signed by two of the organization's keys, judged once per signer, counted once: 1.5 SOL, not 3.
      const twoSigners = await carol.solSendTransaction({
        unsignedTransaction: unsigned([SystemProgram.transfer({ fromPubkey: cosigner, toPubkey: to, lamports: 1.5 * SOL })]),
        signWiths: [payer.toBase58(), cosigner.toBase58()],
        caip2: CAIP2,
      } as never);
      expect(await finalStatus(twoSigners.sendTransactionStatusId)).toEqual(expect.objectContaining({ txStatus: 'INCLUDED' }));
      await expect(sendSol(1.5 * SOL)).rejects.toThrow(/denied/i);
      expect(await finalStatus((await sendSol(1 * SOL)).sendTransactionStatusId)).toEqual(expect.objectContaining({ txStatus: 'INCLUDED' }));
      await expect(sendSol(1)).rejects.toThrow(/denied/i);
      expect(await connection.getBalance(to)).toBe(2.5 * SOL);
    } finally {
      await api.deletePolicy({ policyId: deny.policyId });
      await api.deletePolicy({ policyId: allow.policyId });
      await httpClient(sigil).deleteVelocityControl({ type: 'ACTIVITY_TYPE_DELETE_VELOCITY_CONTROL', timestampMs: String(Date.now()), organizationId: orgId, parameters: { velocityControlId } });
    }
  });

  it('a send that needs a second approval (quorum 2 by a consensus policy) is signed and sent once the second approval arrives, and lands', async () => {
    const { approvers: [alice, carol], policyId } = await twoApprovers(sigil, ['solana alice', 'solana carol approver'], "activity.type == 'ACTIVITY_TYPE_SOL_SEND_TRANSACTION_V2'");
    try {
      const to = Keypair.generate().publicKey;
      const payerBefore = await connection.getBalance(payer);
      const sent = () => node.calls.filter((c) => c === 'sendTransaction').length;
      const submitted = await httpClient(sigil, alice.key).solSendTransaction({
        type: 'ACTIVITY_TYPE_SOL_SEND_TRANSACTION_V2',
        timestampMs: String(Date.now()),
        organizationId: orgId,
        parameters: { unsignedTransaction: unsigned([SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports: 2_121_212 })]), signWiths: [payer.toBase58()], caip2: CAIP2 },
      });
      expect(submitted.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
      // Waiting for carol: nothing is recorded, signed or sent.
      const sentBefore = sent();
      const recorded = () => execSql(sigil, 'select count(*) as n from send_transactions where activity_fingerprint = ?', [submitted.activity.fingerprint]);
      expect(Number((await recorded())[0].n)).toBe(0);
      expect(await connection.getBalance(to)).toBe(0);
      await approve(sigil, carol.key, submitted.activity.fingerprint);
      const { activity } = await httpClient(sigil).getActivity({ organizationId: orgId, activityId: submitted.activity.id });
      expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
      expect(Number((await recorded())[0].n)).toBe(1);
      const id = (activity.result as any).solSendTransactionResultV2.sendTransactionStatusId as string;
      const status = await finalStatus(id);
      expect(status.txStatus).toBe('INCLUDED');
      const signature = (status as any).solana.signature as string;
      expect((await connection.getSignatureStatus(signature)).value?.err).toBeNull();
      // Landed once: the transfer and one signature's fee, from the approved transaction.
      expect(await connection.getBalance(to)).toBe(2_121_212);
      expect(await connection.getBalance(payer)).toBe(payerBefore - 2_121_212 - 5000);
      expect(sent()).toBeGreaterThan(sentBefore);
    } finally {
      await sdkServerClient(sigil).deletePolicy({ policyId });
    }
  });

  it('a cluster without an RPC is refused, naming the setting', async () => {
    await expect(
      sdkServerClient(sigil).solSendTransaction({ unsignedTransaction: unsigned([SystemProgram.transfer({ fromPubkey: payer, toPubkey: payer, lamports: 1 })]), signWiths: [payer.toBase58()], caip2: 'solana:mainnet' } as never),
    ).rejects.toThrow(/SIGIL_SOLANA_RPC_MAINNET/);
  });
});

describe('SIGIL_SOLANA_RPC_<cluster>', () => {
  it('is shown by sigil config, https unless the host is listed, and names only known clusters', () => {
    const config = (env: Record<string, string>) => runSigil(['config', '--data-dir', sigil.dataDir], { ...sigil.env, ...env });
    const shown = JSON.parse(config({ SIGIL_SOLANA_RPC_MAINNET: 'https://sol.example.com/rpc' }).stdout);
    expect(shown.solanaRpcUrls).toEqual({ 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp': 'https://sol.example.com/rpc', 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1': `${node.url}/` });
    const plain = config({ SIGIL_SOLANA_RPC_MAINNET: 'http://sol.example.com/rpc' });
    expect(plain.status).toBe(1);
    expect(plain.stderr).toMatch(/SIGIL_SOLANA_RPC_MAINNET must be an https URL \(plain http only for hosts listed in SIGIL_EVM_RPC_HTTP_HOSTS/);
    expect(config({ SIGIL_SOLANA_RPC_MAINNET: 'http://sol.example.com/rpc', SIGIL_EVM_RPC_HTTP_HOSTS: 'sol.example.com,loopback' }).status).toBe(0);
    const unknown = config({ SIGIL_SOLANA_RPC_TESTNETX: 'https://sol.example.com/rpc' });
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/unknown Solana cluster "TESTNETX"/);
  });
});

describe('SEND_TRANSACTION_STATUS_UPDATES for Solana sends', () => {
  it('delivers every status change, in order, signed, naming the transaction by its signature', async () => {
    const to = Keypair.generate().publicKey;
    const id = await send(unsigned([SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports: 1_031_337 })]));
    const status = await finalStatus(id);
    let mine: any[] = [];
    for (;;) {
      mine = [...new Map(receiver.events.filter((e) => e.msg.sendTransactionStatusId === id).map((e) => [e.msg.idempotencyKey, e])).values()];
      if (mine.some((e) => e.msg.txStatus === 'INCLUDED')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(mine.map((e) => e.msg.txStatus)).toEqual(['INITIALIZED', 'BROADCASTING', 'INCLUDED']);
    for (const e of mine) {
      expect(e.msg).toMatchObject({ organizationId: orgId, caip2: 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1', from: payer.toBase58(), nonce: null, solana: { signature: (status as any).solana.signature } });
      expect(e.msg.eth).toBeUndefined();
    }
    expect(receiver.badSignatures()).toBe(0);
  });
});
