// Solana sign_transaction: legacy and v0 transactions built with @solana/web3.js, signed by us, read
// back and verified with web3.js and tweetnacl, plus the real @turnkey/solana signer against our output.
import { describe, expect, it } from 'vitest';
import {
  AddressLookupTableAccount,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import nacl from 'tweetnacl';
import bs58 from 'bs58';
import { TurnkeySigner } from '@turnkey/solana';
import {
  ADDRESS_TABLE_LOOKUP,
  parseSolanaTransaction,
  signSolanaTransaction,
  serializeSolanaTransaction,
  solanaTxPolicyFields,
  withRecentBlockhash,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
} from '../../../src/chains/solana/tx.js';
import { TransactionError } from '../../../src/chains/errors.js';
import { edSigner, hexKey, toHex } from './helpers.js';

const seedA = hexKey(0x21);
const seedB = hexKey(0x22);
const payer = Keypair.fromSeed(seedA);
const other = Keypair.fromSeed(seedB);
const keyA = { publicKey: payer.publicKey.toBytes(), sign: edSigner(seedA) };
const keyB = { publicKey: other.publicKey.toBytes(), sign: edSigner(seedB) };
const recipient = Keypair.fromSeed(hexKey(0x23)).publicKey;
const blockhash = bs58.encode(hexKey(0x42));

function u64le(n: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return b;
}

function legacyTransfer(): Transaction {
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash });
  tx.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: 1_500_000_000n }));
  return tx;
}

function unsignedHex(tx: Transaction | VersionedTransaction): string {
  return Buffer.from(tx.serialize(tx instanceof Transaction ? { requireAllSignatures: false, verifySignatures: false } : undefined)).toString('hex');
}

/** Our signer/writable flags for every instruction account agree with web3.js's own message logic. */
function expectFlagsMatchWeb3(hex: string) {
  const parsed = parseSolanaTransaction(hex);
  const p = solanaTxPolicyFields(parsed);
  const msg = VersionedTransaction.deserialize(Buffer.from(hex, 'hex')).message;
  parsed.instructions.forEach((ix, n) => {
    ix.accountIndexes.forEach((idx, j) => {
      expect(p.instructions[n].accounts[j].signer, `ix ${n} account ${j} signer`).toBe(msg.isAccountSigner(idx));
      expect(p.instructions[n].accounts[j].writable, `ix ${n} account ${j} writable`).toBe(msg.isAccountWritable(idx));
    });
  });
}

describe('solana: legacy transaction', () => {
  it('signs a SOL transfer exactly like web3.js and the result verifies', () => {
    const tx = legacyTransfer();
    const hex = unsignedHex(tx);
    const signed = signSolanaTransaction(hex, keyA);
    expect(signed).toMatch(/^[0-9a-f]+$/);

    const back = Transaction.from(Buffer.from(signed, 'hex'));
    expect(back.verifySignatures()).toBe(true);
    const msg = back.serializeMessage();
    expect(nacl.sign.detached.verify(msg, back.signatures[0].signature!, payer.publicKey.toBytes())).toBe(true);

    const ref = legacyTransfer();
    ref.sign(payer);
    expect(signed).toBe(ref.serialize().toString('hex'));
    // 0x prefix accepted
    expect(signSolanaTransaction('0x' + hex, keyA)).toBe(signed);
  });

  it('exposes solana.tx: keys, programs, instructions, transfers', () => {
    const p = solanaTxPolicyFields(parseSolanaTransaction(unsignedHex(legacyTransfer())));
    expect(p.account_keys).toEqual([payer.publicKey.toBase58(), recipient.toBase58(), SystemProgram.programId.toBase58()]);
    expect(p.static_account_keys).toEqual(p.account_keys);
    expect(p.program_keys).toEqual(['11111111111111111111111111111111']);
    expect(p.recent_blockhash).toBe(blockhash);
    expect(p.transfers).toEqual([{ from: payer.publicKey.toBase58(), to: recipient.toBase58(), amount: 1_500_000_000n }]);
    expect(p.instructions).toHaveLength(1);
    expect(p.instructions[0]).toEqual({
      program_key: '11111111111111111111111111111111',
      accounts: [
        { account_key: payer.publicKey.toBase58(), signer: true, writable: true },
        { account_key: recipient.toBase58(), signer: false, writable: true },
      ],
      instruction_data_hex: '02000000' + u64le(1_500_000_000n).toString('hex'),
      address_table_lookups: [],
    });
    expect(p.address_table_lookups).toEqual([]);
    expect(p.spl_transfers).toEqual([]);
  });

  it('SPL Transfer / TransferChecked / TransferCheckedWithFee', () => {
    const src = Keypair.fromSeed(hexKey(0x31)).publicKey;
    const dst = Keypair.fromSeed(hexKey(0x32)).publicKey;
    const mint = Keypair.fromSeed(hexKey(0x33)).publicKey;
    const ms1 = Keypair.fromSeed(hexKey(0x34)).publicKey;
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash });
    tx.add(
      new TransactionInstruction({
        programId: new PublicKey(TOKEN_PROGRAM),
        keys: [
          { pubkey: src, isSigner: false, isWritable: true },
          { pubkey: dst, isSigner: false, isWritable: true },
          { pubkey: payer.publicKey, isSigner: true, isWritable: false },
        ],
        data: Buffer.concat([Buffer.from([3]), u64le(77n)]),
      }),
      new TransactionInstruction({
        programId: new PublicKey(TOKEN_PROGRAM),
        keys: [
          { pubkey: src, isSigner: false, isWritable: true },
          { pubkey: mint, isSigner: false, isWritable: false },
          { pubkey: dst, isSigner: false, isWritable: true },
          { pubkey: other.publicKey, isSigner: false, isWritable: false },
          { pubkey: ms1, isSigner: true, isWritable: false },
        ],
        data: Buffer.concat([Buffer.from([12]), u64le(1_000_000n), Buffer.from([6])]),
      }),
      new TransactionInstruction({
        programId: new PublicKey(TOKEN_2022_PROGRAM),
        keys: [
          { pubkey: src, isSigner: false, isWritable: true },
          { pubkey: mint, isSigner: false, isWritable: false },
          { pubkey: dst, isSigner: false, isWritable: true },
          { pubkey: payer.publicKey, isSigner: true, isWritable: false },
        ],
        data: Buffer.concat([Buffer.from([26, 1]), u64le(500n), Buffer.from([9]), u64le(5n)]),
      }),
    );
    const parsed = parseSolanaTransaction(unsignedHex(tx));
    expect(parsed.header.numRequiredSignatures).toBe(2); // payer + multisig signer ms1
    const p = solanaTxPolicyFields(parsed);
    expect(p.spl_transfers).toEqual([
      { from: src.toBase58(), to: dst.toBase58(), amount: 77n, owner: payer.publicKey.toBase58(), signers: [], token_mint: '' },
      { from: src.toBase58(), to: dst.toBase58(), amount: 1_000_000n, owner: other.publicKey.toBase58(), signers: [ms1.toBase58()], token_mint: mint.toBase58() },
      { from: src.toBase58(), to: dst.toBase58(), amount: 500n, owner: payer.publicKey.toBase58(), signers: [], token_mint: mint.toBase58() },
    ]);
    expect(p.program_keys).toEqual([TOKEN_PROGRAM, TOKEN_2022_PROGRAM]);
    expect(p.transfers).toEqual([]);
    expect(p.instructions[1].instruction_data_hex).toBe('0c' + u64le(1_000_000n).toString('hex') + '06');
    expectFlagsMatchWeb3(unsignedHex(tx));
  });

  it('multi-signer: fills only our slot, a second call adds the other', () => {
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash });
    tx.add(SystemProgram.transfer({ fromPubkey: other.publicKey, toPubkey: recipient, lamports: 5 }));
    const first = signSolanaTransaction(unsignedHex(tx), keyA);
    const mid = Transaction.from(Buffer.from(first, 'hex'));
    expect(mid.signatures.find((s) => s.publicKey.equals(payer.publicKey))!.signature).not.toBeNull();
    expect(mid.signatures.find((s) => s.publicKey.equals(other.publicKey))!.signature).toBeNull(); // zeros
    const both = signSolanaTransaction(first, keyB);
    expect(Transaction.from(Buffer.from(both, 'hex')).verifySignatures()).toBe(true);
    // Both keys at once give the same result.
    expect(signSolanaTransaction(unsignedHex(tx), [keyB, keyA])).toBe(both);
  });

  it('a bare message is answered with a full transaction', () => {
    const tx = legacyTransfer();
    const msgHex = tx.serializeMessage().toString('hex');
    const signed = signSolanaTransaction(msgHex, keyA);
    expect(Transaction.from(Buffer.from(signed, 'hex')).verifySignatures()).toBe(true);
  });
});

describe('solana: v0 transaction with an address lookup table', () => {
  const tableKey = Keypair.fromSeed(hexKey(0x51)).publicKey;
  const tableAddrs = [0x52, 0x53, 0x54].map((b) => Keypair.fromSeed(hexKey(b)).publicKey);
  const table = new AddressLookupTableAccount({
    key: tableKey,
    state: { deactivationSlot: 2n ** 64n - 1n, lastExtendedSlot: 0, lastExtendedSlotStartIndex: 0, addresses: tableAddrs },
  });
  function build(): VersionedTransaction {
    const msg = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: blockhash,
      instructions: [
        SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: 42 }),
        SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: tableAddrs[1], lamports: 7 }),
        new TransactionInstruction({
          programId: new PublicKey(TOKEN_PROGRAM),
          keys: [{ pubkey: tableAddrs[2], isSigner: false, isWritable: false }],
          data: Buffer.from([9]),
        }),
      ],
    }).compileToV0Message([table]);
    return new VersionedTransaction(msg);
  }

  it('signs; deserializes; verifies with tweetnacl; equals web3.js signing', () => {
    const hex = unsignedHex(build());
    const parsed = parseSolanaTransaction(hex);
    expect(parsed.version).toBe(0);
    const signed = signSolanaTransaction(hex, keyA);
    const back = VersionedTransaction.deserialize(Buffer.from(signed, 'hex'));
    expect(nacl.sign.detached.verify(back.message.serialize(), back.signatures[0], payer.publicKey.toBytes())).toBe(true);
    const ref = build();
    ref.sign([payer]);
    expect(signed).toBe(Buffer.from(ref.serialize()).toString('hex'));
  });

  it('lookup-table accounts appear as ADDRESS_TABLE_LOOKUP; lookups and references exposed', () => {
    const p = solanaTxPolicyFields(parseSolanaTransaction(unsignedHex(build())));
    expect(p.account_keys).not.toContain(ADDRESS_TABLE_LOOKUP); // static keys only
    expect(p.transfers).toEqual([
      { from: payer.publicKey.toBase58(), to: recipient.toBase58(), amount: 42n },
      { from: payer.publicKey.toBase58(), to: ADDRESS_TABLE_LOOKUP, amount: 7n },
    ]);
    expect(p.address_table_lookups).toEqual([{ address_table_key: tableKey.toBase58(), writable_indexes: [1n], readonly_indexes: [2n] }]);
    expect(p.address_table_lookup_references).toEqual([
      { address_table_key: tableKey.toBase58(), index: 1n, writable: true },
      { address_table_key: tableKey.toBase58(), index: 2n, writable: false },
    ]);
    expect(p.instructions[1].accounts[1]).toEqual({ account_key: ADDRESS_TABLE_LOOKUP, signer: false, writable: true });
    expect(p.instructions[1].address_table_lookups).toEqual([{ address_table_key: tableKey.toBase58(), writable_indexes: [1n], readonly_indexes: [] }]);
    expect(p.instructions[2].accounts[0]).toEqual({ account_key: ADDRESS_TABLE_LOOKUP, signer: false, writable: false });
    expect(p.instructions[2].instruction_data_hex).toBe('09');
    expect(p.instructions[0].address_table_lookups).toEqual([]);
    expectFlagsMatchWeb3(unsignedHex(build()));
  });

  it('a program id resolved through a lookup table is rejected', () => {
    // Hand-edit the compiled message so the third instruction's program index points past the static keys.
    const tx = build();
    const m = tx.message as unknown as { compiledInstructions: Array<{ programIdIndex: number }>; staticAccountKeys: PublicKey[] };
    m.compiledInstructions[2].programIdIndex = m.staticAccountKeys.length; // first loaded address
    const hex = unsignedHex(tx);
    expect(() => parseSolanaTransaction(hex)).toThrow(expect.objectContaining({ code: 'UNSUPPORTED_TRANSACTION', message: expect.stringMatching(/lookup tables/) }));
  });
});

describe('solana: @turnkey/solana signTransaction accepts our output', () => {
  function fakeClient() {
    return {
      async signTransaction(p: { signWith: string; unsignedTransaction: string; type: string }) {
        expect(p.type).toBe('TRANSACTION_TYPE_SOLANA');
        expect(p.signWith).toBe(payer.publicKey.toBase58());
        return { activity: { id: 'a', status: 'ACTIVITY_STATUS_COMPLETED' }, signedTransaction: signSolanaTransaction(p.unsignedTransaction, keyA) };
      },
    };
  }
  it('legacy and versioned', async () => {
    const s = new TurnkeySigner({ organizationId: 'o', client: fakeClient() as never });
    const legacy = (await s.signTransaction(legacyTransfer(), payer.publicKey.toBase58())) as Transaction;
    expect(legacy.verifySignatures()).toBe(true);
    const v0msg = new TransactionMessage({
      payerKey: payer.publicKey,
      recentBlockhash: blockhash,
      instructions: [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: 1 })],
    }).compileToV0Message();
    const v0 = (await s.signTransaction(new VersionedTransaction(v0msg), payer.publicKey.toBase58())) as VersionedTransaction;
    expect(nacl.sign.detached.verify(v0.message.serialize(), v0.signatures[0], payer.publicKey.toBytes())).toBe(true);
  });
});

describe('solana: bad input', () => {
  function expectErr(f: () => unknown, code: string, re: RegExp) {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(TransactionError);
      expect((e as TransactionError).chain).toBe('solana');
      expect((e as TransactionError).code).toBe(code);
      expect((e as Error).message).toMatch(re);
      return;
    }
    throw new Error('expected a TransactionError');
  }
  it('garbage, truncation, trailing bytes', () => {
    const hex = unsignedHex(legacyTransfer());
    expectErr(() => parseSolanaTransaction('zz'), 'INVALID_TRANSACTION', /hex/);
    expectErr(() => parseSolanaTransaction(hex.slice(0, -2)), 'INVALID_TRANSACTION', /end of data|parse/);
    expectErr(() => parseSolanaTransaction(hex + '00'), 'INVALID_TRANSACTION', /trailing/);
    expectErr(() => parseSolanaTransaction('00'), 'INVALID_TRANSACTION', /./);
  });
  it('signature count disagrees with the header', () => {
    const hex = unsignedHex(legacyTransfer());
    const bad = '02' + hex.slice(2, 2 + 128) + '00'.repeat(64) + hex.slice(2 + 128);
    expectErr(() => parseSolanaTransaction(bad), 'INVALID_TRANSACTION', /signature slots/);
  });
  it('signing key not a signer', () => {
    const stranger = { publicKey: recipient.toBytes(), sign: edSigner(hexKey(0x23)) };
    expectErr(() => signSolanaTransaction(unsignedHex(legacyTransfer()), stranger), 'NO_MATCHING_SIGNER', /not a required signer/);
  });
  it('unsupported version', () => {
    const v0 = toHex(new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: blockhash, instructions: [] }).compileToV0Message().serialize());
    const v1 = '81' + v0.slice(2);
    expectErr(() => parseSolanaTransaction('01' + '00'.repeat(64) + v1), 'UNSUPPORTED_TRANSACTION', /version 1/);
  });
});

describe('withRecentBlockhash (sol_send_transaction fills the blockhash)', () => {
  it('replaces the blockhash of legacy and v0 messages, as web3.js reads them, and clears every signature', () => {
    const payer = Keypair.generate();
    const other = Keypair.generate();
    const fresh = Keypair.generate().publicKey;
    const ix = SystemProgram.transfer({ fromPubkey: other.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 5 });
    const legacy = new Transaction({ feePayer: payer.publicKey, recentBlockhash: PublicKey.default.toBase58() }).add(ix);
    legacy.sign(payer, other);
    const v0 = new VersionedTransaction(new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: PublicKey.default.toBase58(), instructions: [ix] }).compileToV0Message());
    v0.sign([payer, other]);
    for (const hex of [legacy.serialize().toString('hex'), Buffer.from(v0.serialize()).toString('hex')]) {
      const filled = Buffer.from(serializeSolanaTransaction(withRecentBlockhash(parseSolanaTransaction(hex), fresh.toBytes())), 'hex');
      const read = VersionedTransaction.deserialize(filled);
      expect(read.message.recentBlockhash).toBe(fresh.toBase58());
      expect(read.signatures.every((sig) => sig.every((b) => b === 0))).toBe(true);
      // Nothing else in the message moved.
      const before = VersionedTransaction.deserialize(Buffer.from(hex, 'hex')).message;
      expect(read.message.staticAccountKeys.map(String)).toEqual(before.staticAccountKeys.map(String));
      expect(read.message.compiledInstructions).toEqual(before.compiledInstructions);
    }
  });
});
