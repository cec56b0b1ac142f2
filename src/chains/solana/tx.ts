// Solana transaction parsing and signing for TRANSACTION_TYPE_SOLANA (docs/reference/keys.md "Signing"
// `solana.tx`; wire format of the Solana docs "Transactions" / solana-sdk `Message` and `v0::Message`).
// Input: what @turnkey/solana sends — hex (0x optional) of `tx.serialize({requireAllSignatures: false,
// verifySignatures: false})`, i.e. compact-u16 signature count, that many 64-byte slots (zeros where
// unsigned), then the message (legacy, or versioned with prefix 0x80|version; only v0 exists). A bare
// message without the signature section is accepted as well; it is answered with a full transaction.
// Signing: Ed25519 over the message bytes for every signer slot whose public key is one offered;
// other slots are left as they are. Output: the full transaction, hex without 0x, same layout, which
// `Transaction.from` / `VersionedTransaction.deserialize` read back (docs/reference/keys.md "Signing").
// Program ids loaded through address lookup tables are rejected, as by the reference service.

import { base58 } from '@scure/base';
import { concatBytes, equalBytes, toHex } from '../../crypto/bytes.js';
import { hexToBytes } from '../bytes.js';
import { TransactionError, invalid } from '../errors.js';
import { callEd25519Signer, type Ed25519Signer } from '../signer.js';

export const SYSTEM_PROGRAM = '11111111111111111111111111111111';
export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export const TOKEN_2022_PROGRAM = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
/** How the reference service names an account that comes from an address lookup table. */
export const ADDRESS_TABLE_LOOKUP = 'ADDRESS_TABLE_LOOKUP';

export interface SolanaInstruction {
  programIdIndex: number;
  accountIndexes: number[];
  data: Uint8Array;
}

export interface SolanaAddressTableLookup {
  accountKey: Uint8Array;
  writableIndexes: number[];
  readonlyIndexes: number[];
}

/** A parsed transaction (or bare message). Keys are raw 32-byte arrays; see the policy struct for base58. */
export interface SolanaTransaction {
  version: 'legacy' | 0;
  header: { numRequiredSignatures: number; numReadonlySignedAccounts: number; numReadonlyUnsignedAccounts: number };
  staticAccountKeys: Uint8Array[];
  recentBlockhash: Uint8Array;
  instructions: SolanaInstruction[];
  addressTableLookups: SolanaAddressTableLookup[];
  /** The serialized message: the bytes every signature covers. */
  message: Uint8Array;
  /** One slot per required signature (all zero = not yet signed). */
  signatures: Uint8Array[];
}

/** A key offered for signing. */
export interface SolanaKey {
  publicKey: Uint8Array; // 32 bytes
  sign: Ed25519Signer;
}

// ---- `solana.tx` policy struct (docs/reference/policies.md "Keywords"; names verbatim; integers as bigint) ----
export interface SolanaAccountPolicy {
  account_key: string;
  signer: boolean;
  writable: boolean;
}
export interface SolanaAddressTableLookupPolicy {
  address_table_key: string;
  writable_indexes: bigint[];
  readonly_indexes: bigint[];
}
export interface SolanaAddressTableLookupReferencePolicy {
  address_table_key: string;
  index: bigint;
  writable: boolean;
}
export interface SolanaInstructionPolicy {
  program_key: string;
  accounts: SolanaAccountPolicy[];
  /** Lowercase hex, no 0x. */
  instruction_data_hex: string;
  /** The lookup-table entries this instruction's accounts come from (same shape as the top level). */
  address_table_lookups: SolanaAddressTableLookupPolicy[];
}
export interface SolanaTransferPolicy {
  from: string;
  to: string;
  amount: bigint;
}
export interface SolanaSplTransferPolicy {
  from: string;
  to: string;
  amount: bigint;
  owner: string;
  signers: string[];
  token_mint: string;
}
export interface SolanaTxPolicy {
  account_keys: string[];
  static_account_keys: string[];
  program_keys: string[];
  top_level_program_keys: string[];
  instructions: SolanaInstructionPolicy[];
  top_level_instructions: SolanaInstructionPolicy[];
  transfers: SolanaTransferPolicy[];
  spl_transfers: SolanaSplTransferPolicy[];
  recent_blockhash: string;
  address_table_lookups: SolanaAddressTableLookupPolicy[];
  address_table_lookup_references: SolanaAddressTableLookupReferencePolicy[];
}

function fail(message: string): TransactionError {
  return invalid('solana', message);
}

class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array) {}
  u8(): number {
    if (this.pos >= this.buf.length) throw fail('failed to parse transaction: unexpected end of data');
    return this.buf[this.pos++];
  }
  bytes(n: number): Uint8Array {
    if (this.pos + n > this.buf.length) throw fail('failed to parse transaction: unexpected end of data');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  /** compact-u16 ("shortvec"): 1–3 bytes, 7 bits each, little-endian; aliases are rejected like the runtime does. */
  shortvec(): number {
    let value = 0;
    for (let i = 0; i < 3; i++) {
      const b = this.u8();
      value |= (b & 0x7f) << (7 * i);
      if ((b & 0x80) === 0) {
        if (i > 0 && b === 0) throw fail('failed to parse transaction: non-canonical compact-u16');
        if (value > 0xffff) throw fail('failed to parse transaction: compact-u16 overflow');
        return value;
      }
    }
    throw fail('failed to parse transaction: compact-u16 too long');
  }
  get done(): boolean {
    return this.pos === this.buf.length;
  }
}

function encodeShortvec(n: number): Uint8Array {
  const out: number[] = [];
  let v = n;
  for (;;) {
    const b = v & 0x7f;
    v >>= 7;
    if (v === 0) {
      out.push(b);
      return Uint8Array.from(out);
    }
    out.push(b | 0x80);
  }
}

function parseMessage(buf: Uint8Array): Omit<SolanaTransaction, 'signatures'> {
  const r = new Reader(buf);
  let version: 'legacy' | 0 = 'legacy';
  let first = r.u8();
  if (first & 0x80) {
    const v = first & 0x7f;
    if (v !== 0) throw new TransactionError('solana', 'UNSUPPORTED_TRANSACTION', `unsupported message version ${v}`);
    version = 0;
    first = r.u8();
  }
  const header = {
    numRequiredSignatures: first,
    numReadonlySignedAccounts: r.u8(),
    numReadonlyUnsignedAccounts: r.u8(),
  };
  const nKeys = r.shortvec();
  const staticAccountKeys: Uint8Array[] = [];
  for (let i = 0; i < nKeys; i++) staticAccountKeys.push(r.bytes(32));
  const recentBlockhash = r.bytes(32);
  const nIx = r.shortvec();
  const instructions: SolanaInstruction[] = [];
  for (let i = 0; i < nIx; i++) {
    const programIdIndex = r.u8();
    const nAcc = r.shortvec();
    const accountIndexes = Array.from(r.bytes(nAcc));
    const data = r.bytes(r.shortvec());
    instructions.push({ programIdIndex, accountIndexes, data });
  }
  const addressTableLookups: SolanaAddressTableLookup[] = [];
  if (version === 0) {
    const nL = r.shortvec();
    for (let i = 0; i < nL; i++) {
      const accountKey = r.bytes(32);
      const writableIndexes = Array.from(r.bytes(r.shortvec()));
      const readonlyIndexes = Array.from(r.bytes(r.shortvec()));
      addressTableLookups.push({ accountKey, writableIndexes, readonlyIndexes });
    }
  }
  if (!r.done) throw fail('failed to parse transaction: trailing bytes after the message');

  // The checks of solana-sdk `Message::sanitize` / `v0::Message::sanitize` that matter to a signer.
  const h = header;
  if (h.numRequiredSignatures === 0) throw fail('message requires no signatures');
  if (h.numReadonlySignedAccounts >= h.numRequiredSignatures) throw fail('message has no writable fee payer');
  if (h.numRequiredSignatures + h.numReadonlyUnsignedAccounts > nKeys) throw fail('message header does not fit its account keys');
  const seen = new Set<string>();
  for (const k of staticAccountKeys) {
    const s = toHex(k);
    if (seen.has(s)) throw fail('message has duplicate account keys');
    seen.add(s);
  }
  const loaded = addressTableLookups.reduce((n, l) => n + l.writableIndexes.length + l.readonlyIndexes.length, 0);
  for (const l of addressTableLookups) {
    if (l.writableIndexes.length + l.readonlyIndexes.length === 0) throw fail('address table lookup loads no accounts');
  }
  const total = nKeys + loaded;
  if (total > 256) throw fail('message references more than 256 accounts');
  for (const [i, ix] of instructions.entries()) {
    if (ix.programIdIndex >= total) throw fail(`instruction ${i}: program id index out of range`);
    if (ix.programIdIndex >= nKeys) {
      throw new TransactionError('solana', 'UNSUPPORTED_TRANSACTION', `instruction ${i}: program ids resolved through address lookup tables are rejected`);
    }
    if (ix.programIdIndex === 0) throw fail(`instruction ${i}: the fee payer cannot be a program`);
    for (const a of ix.accountIndexes) if (a >= total) throw fail(`instruction ${i}: account index out of range`);
  }
  return { version, header, staticAccountKeys, recentBlockhash, instructions, addressTableLookups, message: buf };
}

function parseFull(bytes: Uint8Array): SolanaTransaction {
  const r = new Reader(bytes);
  const n = r.shortvec();
  const signatures: Uint8Array[] = [];
  for (let i = 0; i < n; i++) signatures.push(r.bytes(64));
  const msg = parseMessage(bytes.subarray(r.pos));
  if (msg.header.numRequiredSignatures !== n) {
    throw fail(`transaction has ${n} signature slots but its message requires ${msg.header.numRequiredSignatures}`);
  }
  return { ...msg, signatures };
}

/**
 * Parses a serialized Solana transaction (signature section + message) or a bare message, hex with or
 * without 0x. Throws TransactionError (chain 'solana').
 */
export function parseSolanaTransaction(unsignedHex: string): SolanaTransaction {
  const bytes = hexToBytes('solana', unsignedHex);
  try {
    return parseFull(bytes);
  } catch (fullErr) {
    // A bare message begins with its header (or the 0x80 version prefix), which almost never also
    // reads as a consistent signature section, so trying it second is unambiguous in practice.
    try {
      const msg = parseMessage(bytes);
      return { ...msg, signatures: msg.staticAccountKeys.slice(0, msg.header.numRequiredSignatures).map(() => new Uint8Array(64)) };
    } catch {
      throw fullErr;
    }
  }
}

/** Full account list in index order; table-loaded entries are described by their table and index. */
export interface ResolvedAccount {
  key: string; // base58, or ADDRESS_TABLE_LOOKUP
  signer: boolean;
  writable: boolean;
  lookup?: { table: string; index: number };
}

export function resolveAccounts(tx: SolanaTransaction): ResolvedAccount[] {
  const h = tx.header;
  const nStatic = tx.staticAccountKeys.length;
  const out: ResolvedAccount[] = tx.staticAccountKeys.map((k, i) => ({
    key: base58.encode(k),
    signer: i < h.numRequiredSignatures,
    writable:
      i < h.numRequiredSignatures
        ? i < h.numRequiredSignatures - h.numReadonlySignedAccounts
        : i < nStatic - h.numReadonlyUnsignedAccounts,
  }));
  // v0 account order: static keys, then every table's writable entries, then every table's readonly ones.
  for (const l of tx.addressTableLookups) {
    const table = base58.encode(l.accountKey);
    for (const index of l.writableIndexes) out.push({ key: ADDRESS_TABLE_LOOKUP, signer: false, writable: true, lookup: { table, index } });
  }
  for (const l of tx.addressTableLookups) {
    const table = base58.encode(l.accountKey);
    for (const index of l.readonlyIndexes) out.push({ key: ADDRESS_TABLE_LOOKUP, signer: false, writable: false, lookup: { table, index } });
  }
  return out;
}

export function readU64LE(b: Uint8Array, off: number): bigint {
  let v = 0n;
  for (let i = 7; i >= 0; i--) v = (v << 8n) | BigInt(b[off + i]);
  return v;
}

function readU32LE(b: Uint8Array, off: number): number {
  return (b[off] | (b[off + 1] << 8) | (b[off + 2] << 16)) + b[off + 3] * 0x1000000;
}

/** The `solana.tx` policy struct (docs/reference/policies.md "Keywords"). */
export function solanaTxPolicyFields(tx: SolanaTransaction): SolanaTxPolicy {
  const accounts = resolveAccounts(tx);
  const staticKeys = tx.staticAccountKeys.map((k) => base58.encode(k));
  const programKeys: string[] = [];
  const instructions: SolanaInstructionPolicy[] = [];
  const transfers: SolanaTransferPolicy[] = [];
  const splTransfers: SolanaSplTransferPolicy[] = [];

  for (const ix of tx.instructions) {
    const program = accounts[ix.programIdIndex].key;
    if (!programKeys.includes(program)) programKeys.push(program);
    const accs = ix.accountIndexes.map((i) => accounts[i]);
    // Per-instruction lookups: the table entries this instruction touches, grouped by table.
    const perTable = new Map<string, SolanaAddressTableLookupPolicy>();
    for (const a of accs) {
      if (!a.lookup) continue;
      let e = perTable.get(a.lookup.table);
      if (!e) perTable.set(a.lookup.table, (e = { address_table_key: a.lookup.table, writable_indexes: [], readonly_indexes: [] }));
      const list = a.writable ? e.writable_indexes : e.readonly_indexes;
      if (!list.includes(BigInt(a.lookup.index))) list.push(BigInt(a.lookup.index));
    }
    instructions.push({
      program_key: program,
      accounts: accs.map((a) => ({ account_key: a.key, signer: a.signer, writable: a.writable })),
      instruction_data_hex: toHex(ix.data),
      address_table_lookups: [...perTable.values()],
    });

    const d = ix.data;
    const k = (n: number) => accs[n]?.key;
    if (program === SYSTEM_PROGRAM && d.length >= 4) {
      const disc = readU32LE(d, 0);
      // SystemInstruction::Transfer { lamports } — accounts [from, to]
      if (disc === 2 && d.length === 12 && accs.length >= 2) transfers.push({ from: k(0)!, to: k(1)!, amount: readU64LE(d, 4) });
      // SystemInstruction::TransferWithSeed { lamports, from_seed, from_owner } — accounts [from, base, to]
      if (disc === 11 && d.length >= 12 && accs.length >= 3) transfers.push({ from: k(0)!, to: k(2)!, amount: readU64LE(d, 4) });
    }
    if ((program === TOKEN_PROGRAM || program === TOKEN_2022_PROGRAM) && d.length >= 1) {
      const signersFrom = (n: number) => accs.slice(n).map((a) => a.key);
      // TokenInstruction::Transfer { amount } — [source, destination, owner, ...multisig signers]
      if (d[0] === 3 && d.length === 9 && accs.length >= 3) {
        splTransfers.push({ from: k(0)!, to: k(1)!, amount: readU64LE(d, 1), owner: k(2)!, signers: signersFrom(3), token_mint: '' });
      }
      // TokenInstruction::TransferChecked { amount, decimals } — [source, mint, destination, owner, ...signers]
      if (d[0] === 12 && d.length === 10 && accs.length >= 4) {
        splTransfers.push({ from: k(0)!, to: k(2)!, amount: readU64LE(d, 1), owner: k(3)!, signers: signersFrom(4), token_mint: k(1)! });
      }
      // Token-2022 TransferFeeExtension::TransferCheckedWithFee { amount, decimals, fee }
      if (program === TOKEN_2022_PROGRAM && d[0] === 26 && d.length === 19 && d[1] === 1 && accs.length >= 4) {
        splTransfers.push({ from: k(0)!, to: k(2)!, amount: readU64LE(d, 2), owner: k(3)!, signers: signersFrom(4), token_mint: k(1)! });
      }
    }
  }

  const lookups: SolanaAddressTableLookupPolicy[] = tx.addressTableLookups.map((l) => ({
    address_table_key: base58.encode(l.accountKey),
    writable_indexes: l.writableIndexes.map(BigInt),
    readonly_indexes: l.readonlyIndexes.map(BigInt),
  }));
  const references: SolanaAddressTableLookupReferencePolicy[] = [];
  for (const l of lookups) {
    for (const index of l.writable_indexes) references.push({ address_table_key: l.address_table_key, index, writable: true });
    for (const index of l.readonly_indexes) references.push({ address_table_key: l.address_table_key, index, writable: false });
  }
  return {
    account_keys: staticKeys,
    static_account_keys: staticKeys,
    program_keys: programKeys,
    top_level_program_keys: programKeys,
    instructions,
    top_level_instructions: instructions,
    transfers,
    spl_transfers: splTransfers,
    recent_blockhash: base58.encode(tx.recentBlockhash),
    address_table_lookups: lookups,
    address_table_lookup_references: references,
  };
}

export function serializeSolanaTransaction(tx: SolanaTransaction): string {
  return toHex(concatBytes(encodeShortvec(tx.signatures.length), ...tx.signatures, tx.message));
}

/**
 * Signs every signer slot whose key is among `keys` and returns the full transaction hex (no 0x).
 * Throws NO_MATCHING_SIGNER when none of the keys is a required signer.
 */
export function signSolanaTransaction(unsigned: string | SolanaTransaction, keys: SolanaKey | SolanaKey[]): string {
  const tx = typeof unsigned === 'string' ? parseSolanaTransaction(unsigned) : unsigned;
  const list = Array.isArray(keys) ? keys : [keys];
  for (const k of list) {
    if (!(k.publicKey instanceof Uint8Array) || k.publicKey.length !== 32) throw new TypeError('solana signing needs a 32-byte public key');
  }
  const signatures: Uint8Array[] = tx.signatures.map((s) => s.slice());
  let signed = 0;
  for (let i = 0; i < tx.header.numRequiredSignatures; i++) {
    const key = list.find((k) => equalBytes(k.publicKey, tx.staticAccountKeys[i]));
    if (!key) continue;
    signatures[i] = callEd25519Signer('solana', key.sign, tx.message);
    signed++;
  }
  if (signed === 0) throw new TransactionError('solana', 'NO_MATCHING_SIGNER', 'the signing key is not a required signer of this transaction');
  return serializeSolanaTransaction({ ...tx, signatures });
}

/**
 * The transaction with its message's recent blockhash replaced (sol_send_transaction fills it from
 * the cluster) and every signature slot cleared, since a signature over the old message is void.
 */
export function withRecentBlockhash(tx: SolanaTransaction, blockhash: Uint8Array): SolanaTransaction {
  if (blockhash.length !== 32) throw new TransactionError('solana', 'INVALID_TRANSACTION', 'a recent blockhash is 32 bytes');
  // The blockhash follows the version prefix, the 3-byte header and the static account keys.
  const at = (tx.version === 0 ? 1 : 0) + 3 + encodeShortvec(tx.staticAccountKeys.length).length + 32 * tx.staticAccountKeys.length;
  const message = tx.message.slice();
  message.set(blockhash, at);
  return { ...tx, recentBlockhash: blockhash.slice(), message, signatures: tx.signatures.map(() => new Uint8Array(64)) };
}
