// One send tracker per chain family, each reading only the sends of the chains it has a node for
// (docs/broadcasting.md "Tracking"): the EVM and Solana sends share one table, and a tracker that
// read the other family's sends would mark them as looked at without asking anyone about them
// (sending them to the back of their organization's line) and spend its per-organization places on
// them. A first process, with a node for Solana mainnet and for EVM chain 84532, leaves one send of
// each in flight and stops; a second process on the same deployment, whose EVM tracker knows only
// chain 11155111 and whose Solana tracker knows only devnet, runs both trackers through passes over
// that organization (each settles a send of its own, on real nodes: anvil and the litesvm-backed
// Solana node), and neither touches the first process's sends: status, updated_at and checked_at as
// they were. Balances are read with viem and @solana/web3.js.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createTestClient, http, parseEther, type Hex } from 'viem';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { serveAnother, startSigil, terminate, type SigilInstance } from '../helpers/sigil.js';
import { httpClient, sdkServerClient } from '../helpers/clients.js';
import { execSql } from '../helpers/db-snapshot.js';
import { startAnvil, type Anvil } from '../helpers/anvil.js';
import { startSolanaNode, type SolanaNode } from '../helpers/solana-rpc.js';

/** The chain only the first process has a node for, and the one only the second has. */
const FIRST_CHAIN = 84532;
const SECOND_CHAIN = 11155111;

let node: SolanaNode;
let firstAnvil: Anvil;
let secondAnvil: Anvil;
let first: SigilInstance;
let second: SigilInstance | undefined;

beforeAll(async () => {
  [node, firstAnvil, secondAnvil] = await Promise.all([startSolanaNode(), startAnvil(FIRST_CHAIN), startAnvil(SECOND_CHAIN)]);
  first = await startSigil(
    {
      SIGIL_SOLANA_RPC_MAINNET: node.url,
      [`SIGIL_EVM_RPC_${FIRST_CHAIN}`]: firstAnvil.url,
      SIGIL_EVM_POLL_INTERVAL_MS: '100',
    },
    { process: true },
  );
}, 120_000);

afterAll(async () => {
  await second?.stop();
  await first?.stop();
  await Promise.all([firstAnvil?.stop(), secondAnvil?.stop(), node?.close()]);
});

/** The unsigned transfer a client hands sol_send_transaction: fee payer set, no blockhash. */
function solTransfer(from: PublicKey, to: PublicKey, lamports: number): string {
  const tx = new Transaction({ feePayer: from, recentBlockhash: PublicKey.default.toBase58() }).add(SystemProgram.transfer({ fromPubkey: from, toPubkey: to, lamports }));
  return tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('hex');
}

async function settled(s: SigilInstance, sendTransactionStatusId: string) {
  for (;;) {
    const status = await httpClient(s).getSendTransactionStatus({ organizationId: s.root.organizationId, sendTransactionStatusId });
    if (status.txStatus === 'INCLUDED' || status.txStatus === 'FAILED') return status;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What a tracker writes on a send: its status, when it changed, and when a tracker last looked at it. */
async function trackedFields(s: SigilInstance, id: string) {
  const [row] = await execSql(s, 'select status, updated_at, checked_at from send_transactions where id = ?', [id]);
  return { status: row.status, updated_at: Number(row.updated_at), checked_at: Number(row.checked_at) };
}

describe('send trackers', () => {
  it('an EVM tracker never touches a Solana send, nor a Solana tracker an EVM send, both running in one Sigil', async () => {
    const w = await sdkServerClient(first).createWallet({
      walletName: 'two chains',
      accounts: [
        { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' },
        { curve: 'CURVE_ED25519', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/501'/0'/0'", addressFormat: 'ADDRESS_FORMAT_SOLANA' },
      ],
    });
    const from = w.addresses[0] as Hex;
    const payer = new PublicKey(w.addresses[1]);
    node.airdrop(payer.toBase58(), 10n * BigInt(LAMPORTS_PER_SOL));
    for (const anvil of [firstAnvil, secondAnvil]) await createTestClient({ mode: 'anvil', transport: http(anvil.url) }).setBalance({ address: from, value: parseEther('10') });

    // The first process leaves one send of each family in flight: an EVM transaction waiting in the
    // pool of a node that mines nothing, and a Solana transaction the node holds without running it.
    await createTestClient({ mode: 'anvil', transport: http(firstAnvil.url) }).setAutomine(false);
    const evm = await sdkServerClient(first).ethSendTransaction({ from, caip2: `eip155:${FIRST_CHAIN}`, calls: [{ to: '0x00000000000000000000000000000000000e1001', value: '5' }] } as never);
    node.hold();
    const solana = await sdkServerClient(first).solSendTransaction({ unsignedTransaction: solTransfer(payer, Keypair.generate().publicKey, 1_000_001), signWiths: [payer.toBase58()], caip2: 'solana:mainnet' } as never);
    for (const id of [evm.sendTransactionStatusId, solana.sendTransactionStatusId]) {
      expect((await httpClient(first).getSendTransactionStatus({ organizationId: first.root.organizationId, sendTransactionStatusId: id })).txStatus).toBe('BROADCASTING');
    }
    await terminate(first.process);
    const evmBefore = await trackedFields(first, evm.sendTransactionStatusId);
    const solanaBefore = await trackedFields(first, solana.sendTransactionStatusId);
    // What the node held now lands: a tracker that asked about the Solana send would see it landed.
    node.release();

    // The second process: an EVM tracker for another chain, a Solana tracker for another cluster.
    const env: NodeJS.ProcessEnv = { ...first.env, SIGIL_SOLANA_RPC_DEVNET: node.url, [`SIGIL_EVM_RPC_${SECOND_CHAIN}`]: secondAnvil.url };
    delete env.SIGIL_SOLANA_RPC_MAINNET;
    delete env[`SIGIL_EVM_RPC_${FIRST_CHAIN}`];
    second = await serveAnother({ ...first, env });
    const solanaTo = Keypair.generate().publicKey;
    const evmTo = '0x00000000000000000000000000000000000e1002' as Hex;
    const ownSolana = await sdkServerClient(second).solSendTransaction({ unsignedTransaction: solTransfer(payer, solanaTo, 1_000_002), signWiths: [payer.toBase58()], caip2: 'solana:devnet' } as never);
    const ownEvm = await sdkServerClient(second).ethSendTransaction({ from, caip2: `eip155:${SECOND_CHAIN}`, calls: [{ to: evmTo, value: '6' }] } as never);
    for (const id of [ownSolana.sendTransactionStatusId, ownEvm.sendTransactionStatusId]) expect((await settled(second, id)).txStatus).toBe('INCLUDED');
    expect(await new Connection(node.url, 'confirmed').getBalance(solanaTo)).toBe(1_000_002);
    expect(await createPublicClient({ transport: http(secondAnvil.url) }).getBalance({ address: evmTo })).toBe(6n);
    // Each tracker has finished a pass over the organization (it marks what it looked at at the end
    // of the pass in which it settled its own send).
    for (const id of [ownSolana.sendTransactionStatusId, ownEvm.sendTransactionStatusId]) {
      while ((await trackedFields(second, id)).checked_at === 0) await new Promise((r) => setTimeout(r, 100));
    }

    expect(await trackedFields(second, evm.sendTransactionStatusId)).toEqual(evmBefore);
    expect(await trackedFields(second, solana.sendTransactionStatusId)).toEqual(solanaBefore);
    expect(evmBefore.status).toBe('BROADCASTING');
    expect(solanaBefore.status).toBe('BROADCASTING');
  });
});
