// Solana simulation before approval (docs/policies.md "Simulation before approval", "Solana"):
// simulateSolanaTransaction against a JSON-RPC node that runs the real Solana virtual machine
// (litesvm, test/helpers/solana-rpc.ts). Each transaction is built unsigned with @solana/web3.js and
// @solana/spl-token, as a client leaves it for Sigil, simulated, then really signed and sent; what the
// simulation said is checked against what web3.js and spl-token read from the accounts after the
// send: SOL deltas (fee and rent included), SPL Token and Token-2022 balance deltas, the delegate an
// Approve grants, a recipient loaded through an address lookup table, a transfer that fails on chain
// reported as reverted with the program’s reason, and an unreachable node reported as a FAILED
// simulation, never as "nothing happens".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AddressLookupTableAccount,
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import { address, lamports } from '@solana/kit';
import {
  MINT_SIZE,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  createApproveInstruction,
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMint2Instruction,
  createMintToInstruction,
  createTransferCheckedInstruction,
  getAccount,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { parseSolanaTransaction } from '../../src/chains/solana/tx.js';
import { SolanaRpc } from '../../src/delivery/solana-rpc.js';
import { simulateSolanaTransaction } from '../../src/domain/keys/solana-simulation.js';
import { startSolanaNode, type SolanaNode } from '../helpers/solana-rpc.js';
import type { AssetChanges } from '../../src/chains/simulation.js';

const NETWORK = 'solana:devnet';
/** A placeholder blockhash: the client leaves it for Sigil (and the simulating node) to fill. */
const NO_BLOCKHASH = PublicKey.default.toBase58();
const U64_MAX = (1n << 64n) - 1n;
const DECIMALS = 6;
const LAMPORTS_PER_SOL_BIG = BigInt(LAMPORTS_PER_SOL);

let node: SolanaNode;
let connection: Connection;
let rpc: SolanaRpc;
const payer = Keypair.generate();
const mintAuthority = Keypair.generate();

function unsignedHex(instructions: TransactionInstruction[]): string {
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: NO_BLOCKHASH }).add(...instructions);
  return tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('hex');
}

/** The same instructions, signed with the node's blockhash and sent for real. */
function sendForReal(instructions: TransactionInstruction[], signers: Keypair[] = [payer]) {
  const tx = new Transaction({ feePayer: signers[0].publicKey, recentBlockhash: node.svm.latestBlockhash() }).add(...instructions);
  tx.sign(...signers);
  node.execute(tx.serialize());
}

const simulate = (instructions: TransactionInstruction[], held?: (a: string) => boolean) =>
  simulateSolanaTransaction(rpc, parseSolanaTransaction(unsignedHex(instructions)), { network: NETWORK, held });

const changeOf = (c: AssetChanges, address: PublicKey, asset: string) =>
  c.balanceChanges.find((b) => b.address === address.toBase58() && (asset === 'SOL' ? b.asset.kind === 'native' : b.asset.contract === asset))?.delta;

/** A fresh mint of `program` with 1,000 tokens in the payer's associated token account. */
function newMint(program: PublicKey): PublicKey {
  const mint = Keypair.generate();
  const rent = Number(node.svm.minimumBalanceForRentExemption(BigInt(MINT_SIZE)));
  sendForReal(
    [
      SystemProgram.createAccount({ fromPubkey: mintAuthority.publicKey, newAccountPubkey: mint.publicKey, lamports: rent, space: MINT_SIZE, programId: program }),
      createInitializeMint2Instruction(mint.publicKey, DECIMALS, mintAuthority.publicKey, null, program),
      createAssociatedTokenAccountIdempotentInstruction(mintAuthority.publicKey, getAssociatedTokenAddressSync(mint.publicKey, payer.publicKey, false, program), payer.publicKey, mint.publicKey, program),
      createMintToInstruction(mint.publicKey, getAssociatedTokenAddressSync(mint.publicKey, payer.publicKey, false, program), mintAuthority.publicKey, 1_000n * 10n ** BigInt(DECIMALS), [], program),
    ],
    [mintAuthority, mint],
  );
  return mint.publicKey;
}

beforeAll(async () => {
  node = await startSolanaNode();
  connection = new Connection(node.url, 'confirmed');
  rpc = new SolanaRpc(node.url);
  node.airdrop(payer.publicKey.toBase58(), 100n * BigInt(LAMPORTS_PER_SOL));
  node.airdrop(mintAuthority.publicKey.toBase58(), 10n * BigInt(LAMPORTS_PER_SOL));
}, 120_000);

afterAll(async () => {
  await node?.close();
});

describe('Solana simulation before approval', () => {
  it('a SOL transfer: the simulated deltas and transfer are what the accounts show after the real send', async () => {
    const to = Keypair.generate().publicKey;
    const ix = [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1_500_000_000 })];
    const beforePayer = await connection.getBalance(payer.publicKey);
    const sim = await simulate(ix);
    // Simulating changes nothing.
    expect(await connection.getBalance(payer.publicKey)).toBe(beforePayer);
    expect(await connection.getBalance(to)).toBe(0);

    sendForReal(ix);
    const paid = (await connection.getBalance(payer.publicKey)) - beforePayer;
    expect(sim).toMatchObject({ status: 'SIMULATED', chain: 'solana', network: NETWORK, reverted: false, approvals: [], deployments: [], delegations: [] });
    expect(Number(sim.block)).toBeGreaterThanOrEqual(0);
    expect(Date.parse(sim.simulatedAt!)).not.toBeNaN();
    expect(changeOf(sim, payer.publicKey, 'SOL')).toBe(String(paid)); // the transfer and the fee
    expect(changeOf(sim, to, 'SOL')).toBe(String(await connection.getBalance(to)));
    expect(sim.transfers).toEqual([{ asset: { kind: 'native', symbol: 'SOL', decimals: 9 }, from: payer.publicKey.toBase58(), to: to.toBase58(), amount: '1500000000' }]);
  });

  for (const [name, program, approval] of [
    ['SPL Token', TOKEN_PROGRAM_ID, 100n * 10n ** BigInt(DECIMALS)],
    ['Token-2022', TOKEN_2022_PROGRAM_ID, U64_MAX],
  ] as const) {
    it(`${name}: a transfer to a new token account and an approval, as spl-token reads them after the send`, async () => {
      const mint = newMint(program);
      const recipient = Keypair.generate().publicKey;
      const delegate = Keypair.generate().publicKey;
      const fromAta = getAssociatedTokenAddressSync(mint, payer.publicKey, false, program);
      const toAta = getAssociatedTokenAddressSync(mint, recipient, false, program);
      const ix = [
        createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, toAta, recipient, mint, program),
        createTransferCheckedInstruction(fromAta, mint, toAta, payer.publicKey, 250n * 10n ** BigInt(DECIMALS), DECIMALS, [], program),
        createApproveInstruction(fromAta, delegate, payer.publicKey, approval, [], program),
      ];
      const fromBefore = (await getAccount(connection, fromAta, 'confirmed', program)).amount;
      const solBefore = await connection.getBalance(payer.publicKey);
      const sim = await simulate(ix);
      sendForReal(ix);

      const from = await getAccount(connection, fromAta, 'confirmed', program);
      const to = await getAccount(connection, toAta, 'confirmed', program);
      const asset = { kind: 'spl', contract: mint.toBase58(), decimals: DECIMALS };
      expect(sim.status).toBe('SIMULATED');
      expect(changeOf(sim, payer.publicKey, mint.toBase58())).toBe(String(from.amount - fromBefore));
      expect(changeOf(sim, recipient, mint.toBase58())).toBe(String(to.amount));
      expect(sim.transfers).toContainEqual({ asset, from: payer.publicKey.toBase58(), to: recipient.toBase58(), amount: String(to.amount) });
      // The new token account's rent leaves the payer and is counted as the recipient's (its owner's).
      expect(changeOf(sim, payer.publicKey, 'SOL')).toBe(String((await connection.getBalance(payer.publicKey)) - solBefore));
      expect(changeOf(sim, recipient, 'SOL')).toBe(String(await connection.getBalance(toAta)));
      // The delegate the chain now records is the approval the simulation reported.
      expect(from.delegate?.toBase58()).toBe(delegate.toBase58());
      expect(from.delegatedAmount).toBe(approval);
      expect(sim.approvals).toEqual([
        { asset, owner: payer.publicKey.toBase58(), spender: delegate.toBase58(), amount: approval === U64_MAX ? 'unlimited' : String(approval), revoked: false, via: 'delegate' },
      ]);
    });
  }

  it('a v0 transaction whose recipient comes from an address lookup table: the table is read and the recipient counted', async () => {
    const recipient = Keypair.generate().publicKey;
    const table = Keypair.generate().publicKey;
    // An active lookup table holding the recipient (header: type 1, never deactivated, extended at
    // slot 0, an authority), written straight into the runtime, then a slot later so it is usable.
    const header = Buffer.alloc(56);
    header.writeUInt32LE(1, 0);
    header.writeBigUInt64LE(U64_MAX, 4);
    header[21] = 1;
    payer.publicKey.toBuffer().copy(header, 22);
    const data = new Uint8Array(Buffer.concat([header, recipient.toBuffer()]));
    node.svm.setAccount({ address: address(table.toBase58()), lamports: lamports(LAMPORTS_PER_SOL_BIG), programAddress: address('AddressLookupTab1e1111111111111111111111111'), data, executable: false, space: BigInt(data.length) } as never);
    node.svm.warpToSlot(node.svm.getClock().slot + 2n);
    const lookup = new AddressLookupTableAccount({ key: table, state: { deactivationSlot: U64_MAX, lastExtendedSlot: 0, lastExtendedSlotStartIndex: 0, authority: payer.publicKey, addresses: [recipient] } });
    const ix = [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: LAMPORTS_PER_SOL })];
    const v0 = (recentBlockhash: string) => new VersionedTransaction(new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash, instructions: ix }).compileToV0Message([lookup]));
    const unsignedTx = v0(NO_BLOCKHASH);
    expect(unsignedTx.message.addressTableLookups).toHaveLength(1);
    const sim = await simulateSolanaTransaction(rpc, parseSolanaTransaction(Buffer.from(unsignedTx.serialize()).toString('hex')), { network: NETWORK });

    const signed = v0(node.svm.latestBlockhash());
    signed.sign([payer]);
    node.execute(signed.serialize());
    expect(sim.status).toBe('SIMULATED');
    expect(sim.transfers).toEqual([{ asset: { kind: 'native', symbol: 'SOL', decimals: 9 }, from: payer.publicKey.toBase58(), to: recipient.toBase58(), amount: String(LAMPORTS_PER_SOL) }]);
    expect(changeOf(sim, recipient, 'SOL')).toBe(String(await connection.getBalance(recipient)));
  });

  it('keeps balance changes for the addresses the organization holds only', async () => {
    const to = Keypair.generate().publicKey;
    const sim = await simulate([SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: LAMPORTS_PER_SOL })], (a) => a === payer.publicKey.toBase58());
    expect(sim.balanceChanges.map((b) => b.address)).toEqual([payer.publicKey.toBase58()]);
    expect(sim.transfers[0]).toMatchObject({ to: to.toBase58(), amount: String(LAMPORTS_PER_SOL) });
  });

  it('a transfer of more tokens than the account holds is reported as reverted with the program’s reason, and fails when sent', async () => {
    const mint = newMint(TOKEN_PROGRAM_ID);
    const recipient = Keypair.generate().publicKey;
    const fromAta = getAssociatedTokenAddressSync(mint, payer.publicKey);
    const toAta = getAssociatedTokenAddressSync(mint, recipient);
    const ix = [
      createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, toAta, recipient, mint),
      createTransferCheckedInstruction(fromAta, mint, toAta, payer.publicKey, 5_000n * 10n ** BigInt(DECIMALS), DECIMALS),
    ];
    const sim = await simulate(ix);
    expect(sim).toMatchObject({ status: 'SIMULATED', reverted: true, transfers: [], balanceChanges: [], approvals: [] });
    expect(sim.revertReason).toMatch(/InstructionError/);
    expect(sim.revertReason).toMatch(/insufficient funds/i);
    expect(() => sendForReal(ix)).toThrow();
    expect((await getAccount(connection, fromAta)).amount).toBe(1_000n * 10n ** BigInt(DECIMALS));
  });

  it('a node that cannot be reached is a FAILED simulation with its reason, not an empty success', async () => {
    const closed = await startSolanaNode();
    await closed.close();
    const sim = await simulateSolanaTransaction(new SolanaRpc(closed.url), parseSolanaTransaction(unsignedHex([SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 })])), { network: NETWORK });
    expect(sim).toMatchObject({ status: 'FAILED', chain: 'solana', network: NETWORK, transfers: [], balanceChanges: [] });
    expect(sim.reason).toMatch(/could not be reached/);
  });
});
