// Tron transaction parsing and signing for TRANSACTION_TYPE_TRON (docs/reference/keys.md "Signing"
// `tron.tx`; java-tron protocol/Tron.proto `Transaction`, `Transaction.raw`, `Transaction.Contract`, and
// the contract messages of balance_contract.proto, smart_contract.proto, account_contract.proto).
// Input: the unsigned `raw_data_hex` of a TronWeb transaction (protobuf `Transaction.raw`), hex with or
// without 0x — what the reference service's TronWeb example sends. A whole serialized `Transaction`
// (raw_data plus any signatures already on it) is accepted too, for multi-signature flows.
// Signing: txID = sha256(raw_data); the signature is 65 bytes r ‖ s ‖ v with v = 27 + recovery id,
// exactly what TronWeb's own `signTransaction` puts in `transaction.signature` (java-tron accepts v as
// 0/1 or 27/28; matching TronWeb keeps our output byte-identical to a TronWeb-signed transaction).
// Output: the signed `Transaction` protobuf (field 1 raw_data, field 2 signature…) as hex without 0x,
// which `tronWeb.trx.sendHexTransaction` / `wallet/broadcasthex` broadcast as is (the reference SDK's
// Tron example and @turnkey/core broadcast `signedTransaction` that way).
// Policy: `tron.tx` with the field names of docs/reference/policies.md "Keywords", for the seven contract types the reference
// service supports; other contract types are refused unless the caller opts in.

import { sha256 } from '@noble/hashes/sha2.js';
import { createBase58check } from '@scure/base';
import { concatBytes, equalBytes, toHex } from '../../crypto/bytes.js';
import { hexToBytes } from '../bytes.js';
import { TransactionError, invalid } from '../errors.js';
import { encodeBytesField, readFields, ProtobufError, type PbField } from './protobuf.js';
import { callSecp256k1Signer, type Secp256k1Signer } from '../signer.js';

const b58check = createBase58check(sha256);

/** Transaction.Contract.ContractType → message name (Tron.proto). */
const CONTRACT_NAMES: Record<number, string> = {
  0: 'AccountCreateContract',
  1: 'TransferContract',
  2: 'TransferAssetContract',
  3: 'VoteAssetContract',
  4: 'VoteWitnessContract',
  5: 'WitnessCreateContract',
  6: 'AssetIssueContract',
  8: 'WitnessUpdateContract',
  9: 'ParticipateAssetIssueContract',
  10: 'AccountUpdateContract',
  11: 'FreezeBalanceContract',
  12: 'UnfreezeBalanceContract',
  13: 'WithdrawBalanceContract',
  14: 'UnfreezeAssetContract',
  15: 'UpdateAssetContract',
  16: 'ProposalCreateContract',
  17: 'ProposalApproveContract',
  18: 'ProposalDeleteContract',
  19: 'SetAccountIdContract',
  20: 'CustomContract',
  30: 'CreateSmartContract',
  31: 'TriggerSmartContract',
  32: 'GetContract',
  33: 'UpdateSettingContract',
  41: 'ExchangeCreateContract',
  42: 'ExchangeInjectContract',
  43: 'ExchangeWithdrawContract',
  44: 'ExchangeTransactionContract',
  45: 'UpdateEnergyLimitContract',
  46: 'AccountPermissionUpdateContract',
  48: 'ClearABIContract',
  49: 'UpdateBrokerageContract',
  51: 'ShieldedTransferContract',
  52: 'MarketSellAssetContract',
  53: 'MarketCancelOrderContract',
  54: 'FreezeBalanceV2Contract',
  55: 'UnfreezeBalanceV2Contract',
  56: 'WithdrawExpireUnfreezeContract',
  57: 'DelegateResourceContract',
  58: 'UnDelegateResourceContract',
  59: 'CancelAllUnfreezeV2Contract',
};

/** The contract types whose fields `tron.tx` exposes (docs/reference/policies.md "Keywords"). */
export const SUPPORTED_TRON_CONTRACTS = [
  'TransferContract',
  'TriggerSmartContract',
  'DelegateResourceContract',
  'UnDelegateResourceContract',
  'FreezeBalanceV2Contract',
  'UnfreezeBalanceV2Contract',
  'AccountPermissionUpdateContract',
] as const;

const RESOURCE: Record<number, TronResource> = { 0: 'BANDWIDTH', 1: 'ENERGY', 2: 'TRON_POWER' };
const PERMISSION_TYPE: Record<number, TronPermissionPolicy['type']> = { 0: 'Owner', 1: 'Witness', 2: 'Active' };

export type TronResource = 'BANDWIDTH' | 'ENERGY' | 'TRON_POWER';

export interface TronPermissionPolicy {
  type: 'Owner' | 'Witness' | 'Active';
  id: bigint;
  permission_name: string;
  threshold: bigint;
  parent_id: bigint;
  /** 32-byte operations bitmap, lowercase hex ('' when absent). */
  operations: string;
  keys: Array<{ address: string; weight: bigint }>;
}

/** One entry of `tron.tx.contract`. Only the fields of its contract type are present. Addresses are base58 (T…). */
export interface TronContractPolicy {
  type: string;
  permission_id: bigint;
  owner_address: string;
  // TransferContract
  to_address?: string;
  amount?: bigint;
  // TriggerSmartContract
  contract_address?: string;
  call_value?: bigint;
  /** Call data (selector ‖ arguments), lowercase hex without 0x, so `data[0..8]` is the selector. */
  data?: string;
  call_token_value?: bigint;
  token_id?: bigint;
  // Delegate/UnDelegate/FreezeV2/UnfreezeV2
  resource?: TronResource;
  balance?: bigint;
  receiver_address?: string;
  lock?: boolean;
  lock_period?: bigint;
  frozen_balance?: bigint;
  unfreeze_balance?: bigint;
  // AccountPermissionUpdateContract
  owner?: TronPermissionPolicy;
  witness?: TronPermissionPolicy;
  actives?: TronPermissionPolicy[];
}

/** `tron.tx` as the policy engine sees it (docs/reference/policies.md "Keywords", names verbatim). */
export interface TronTxPolicy {
  /** Lowercase hex. */
  ref_block_bytes: string;
  /** Lowercase hex. */
  ref_block_hash: string;
  /** Milliseconds. */
  expiration: bigint;
  /** Milliseconds. */
  timestamp: bigint;
  /** The memo, lowercase hex as in TronWeb's `raw_data.data` ('' when absent). */
  data: string;
  /** Sun; 0 when absent. */
  fee_limit: bigint;
  contract: TronContractPolicy[];
}

export interface TronTransaction {
  /** Serialized `Transaction.raw`: what the txID hashes. */
  rawData: Uint8Array;
  /** sha256(rawData). */
  txId: Uint8Array;
  /** The whole serialized `Transaction` when one was given (signatures get appended to it), else null. */
  envelope: Uint8Array | null;
  /** Signatures already on the envelope. */
  signatures: Uint8Array[];
  fields: TronTxPolicy;
}

export interface TronParseOptions {
  /** Parse contract types outside SUPPORTED_TRON_CONTRACTS (exposing only type, permission_id, owner_address). */
  allowUnsupportedContracts?: boolean;
}

function fail(message: string): TransactionError {
  return invalid('tron', message);
}

function fields(buf: Uint8Array, what: string): PbField[] {
  try {
    return readFields(buf);
  } catch (e) {
    if (e instanceof ProtobufError) throw fail(`failed to parse ${what}: ${e.message}`);
    throw e;
  }
}

/** proto3 view of a message: for scalars the last occurrence wins; repeated fields keep every entry. */
class Msg {
  constructor(
    readonly f: PbField[],
    readonly what: string,
  ) {}
  private last(no: number, wire: number): PbField | undefined {
    let hit: PbField | undefined;
    for (const x of this.f) {
      if (x.no !== no) continue;
      if (x.wire !== wire) throw fail(`${this.what}: field ${no} has the wrong wire type`);
      hit = x;
    }
    return hit;
  }
  bytes(no: number): Uint8Array {
    return this.last(no, 2)?.bytes ?? new Uint8Array(0);
  }
  all(no: number): Uint8Array[] {
    return this.f.filter((x) => x.no === no).map((x) => {
      if (x.wire !== 2) throw fail(`${this.what}: field ${no} has the wrong wire type`);
      return x.bytes!;
    });
  }
  int64(no: number): bigint {
    return BigInt.asIntN(64, this.last(no, 0)?.int ?? 0n);
  }
  bool(no: number): boolean {
    return (this.last(no, 0)?.int ?? 0n) !== 0n;
  }
  has(no: number): boolean {
    return this.f.some((x) => x.no === no);
  }
  string(no: number): string {
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(this.bytes(no));
    } catch {
      throw fail(`${this.what}: field ${no} is not UTF-8`);
    }
  }
}

function address(b: Uint8Array, what: string): string {
  if (b.length === 0) return '';
  if (b.length !== 21 || b[0] !== 0x41) throw fail(`${what} is not a Tron address (21 bytes starting 0x41)`);
  return b58check.encode(b);
}

function resource(m: Msg, no: number): TronResource {
  const v = Number(m.int64(no));
  const r = RESOURCE[v];
  if (!r) throw fail(`${m.what}: unknown resource code ${v}`);
  return r;
}

function permission(buf: Uint8Array, what: string): TronPermissionPolicy {
  const m = new Msg(fields(buf, what), what);
  const t = Number(m.int64(1));
  const type = PERMISSION_TYPE[t];
  if (!type) throw fail(`${what}: unknown permission type ${t}`);
  return {
    type,
    id: m.int64(2),
    permission_name: m.string(3),
    threshold: m.int64(4),
    parent_id: m.int64(5),
    operations: toHex(m.bytes(6)),
    keys: m.all(7).map((k, i) => {
      const km = new Msg(fields(k, `${what}.keys[${i}]`), `${what}.keys[${i}]`);
      return { address: address(km.bytes(1), `${what}.keys[${i}].address`), weight: km.int64(2) };
    }),
  };
}

function contractFields(name: string, value: Uint8Array, supported: boolean): Omit<TronContractPolicy, 'type' | 'permission_id'> {
  const what = name;
  const m = new Msg(fields(value, what), what);
  // Field 1 is owner_address in every Tron contract message.
  const owner_address = address(m.bytes(1), `${what}.owner_address`);
  if (!supported) return { owner_address };
  switch (name) {
    case 'TransferContract':
      return { owner_address, to_address: address(m.bytes(2), `${what}.to_address`), amount: m.int64(3) };
    case 'TriggerSmartContract':
      return {
        owner_address,
        contract_address: address(m.bytes(2), `${what}.contract_address`),
        call_value: m.int64(3),
        data: toHex(m.bytes(4)),
        call_token_value: m.int64(5),
        token_id: m.int64(6),
      };
    case 'DelegateResourceContract':
      return {
        owner_address,
        resource: resource(m, 2),
        balance: m.int64(3),
        receiver_address: address(m.bytes(4), `${what}.receiver_address`),
        lock: m.bool(5),
        lock_period: m.int64(6),
      };
    case 'UnDelegateResourceContract':
      return {
        owner_address,
        resource: resource(m, 2),
        balance: m.int64(3),
        receiver_address: address(m.bytes(4), `${what}.receiver_address`),
      };
    case 'FreezeBalanceV2Contract':
      return { owner_address, frozen_balance: m.int64(2), resource: resource(m, 3) };
    case 'UnfreezeBalanceV2Contract':
      return { owner_address, unfreeze_balance: m.int64(2), resource: resource(m, 3) };
    case 'AccountPermissionUpdateContract': {
      const out: Omit<TronContractPolicy, 'type' | 'permission_id'> = {
        owner_address,
        actives: m.all(4).map((p, i) => permission(p, `${what}.actives[${i}]`)),
      };
      if (m.has(2)) out.owner = permission(m.bytes(2), `${what}.owner`);
      if (m.has(3)) out.witness = permission(m.bytes(3), `${what}.witness`);
      return out;
    }
    default:
      throw new Error(`unreachable: ${name}`);
  }
}

function parseRaw(raw: Uint8Array, opts: TronParseOptions): TronTxPolicy {
  const m = new Msg(fields(raw, 'raw_data'), 'raw_data');
  const contracts = m.all(11);
  // java-tron accepts exactly one contract per transaction.
  if (contracts.length !== 1) throw fail(`transaction must contain exactly one contract, found ${contracts.length}`);
  const contract = contracts.map((c, i) => {
    const what = `contract[${i}]`;
    const cm = new Msg(fields(c, what), what);
    const typeNo = Number(cm.int64(1));
    const name = CONTRACT_NAMES[typeNo];
    if (!name) throw fail(`${what}: unknown contract type ${typeNo}`);
    const supported = (SUPPORTED_TRON_CONTRACTS as readonly string[]).includes(name);
    if (!supported && !opts.allowUnsupportedContracts) {
      throw new TransactionError('tron', 'UNSUPPORTED_TRANSACTION', `${name} is not a supported Tron contract type`);
    }
    const any = new Msg(fields(cm.bytes(2), `${what}.parameter`), `${what}.parameter`);
    const typeUrl = any.string(1);
    // The Any's type must agree with the declared contract type, or the policy would read other bytes than the node.
    if (typeUrl !== `type.googleapis.com/protocol.${name}`) throw fail(`${what}: parameter type ${typeUrl || '(none)'} does not match ${name}`);
    return { type: name, permission_id: cm.int64(5), ...contractFields(name, any.bytes(2), supported) };
  });
  return {
    ref_block_bytes: toHex(m.bytes(1)),
    ref_block_hash: toHex(m.bytes(4)),
    expiration: m.int64(8),
    timestamp: m.int64(14),
    data: toHex(m.bytes(10)),
    fee_limit: m.int64(18),
    contract,
  };
}

/**
 * Parses a Tron transaction: `raw_data_hex` (protobuf Transaction.raw) or a whole serialized
 * `Transaction`. Throws TransactionError (chain 'tron').
 */
export function parseTronTransaction(unsignedHex: string, opts: TronParseOptions = {}): TronTransaction {
  const bytes = hexToBytes('tron', unsignedHex);
  const top = fields(bytes, 'transaction');
  // Transaction.raw always has field 11 (contract); a Transaction never does (its fields are 1, 2, 5).
  if (top.some((f) => f.no === 11)) {
    return { rawData: bytes, txId: sha256(bytes), envelope: null, signatures: [], fields: parseRaw(bytes, opts) };
  }
  const env = new Msg(top, 'transaction');
  if (top.some((f) => f.no !== 1 && f.no !== 2 && f.no !== 5) || !env.has(1)) {
    throw fail('failed to parse transaction: neither a Transaction.raw nor a Transaction');
  }
  const raw = env.bytes(1);
  const signatures = env.all(2);
  for (const s of signatures) if (s.length !== 65) throw fail('existing signature is not 65 bytes');
  return { rawData: raw, txId: sha256(raw), envelope: bytes, signatures, fields: parseRaw(raw, opts) };
}

/** The `tron.tx` policy struct. */
export function tronTxPolicyFields(tx: TronTransaction): TronTxPolicy {
  return tx.fields;
}

/**
 * Signs the transaction (sha256 of raw_data) and returns the serialized signed `Transaction` as hex
 * without 0x. An identical signature already present is not added twice.
 */
export function signTronTransaction(unsigned: string | TronTransaction, signer: Secp256k1Signer): string {
  const tx = typeof unsigned === 'string' ? parseTronTransaction(unsigned) : unsigned;
  const sig = callSecp256k1Signer('tron', signer, tx.txId);
  const sig65 = concatBytes(sig.r32, sig.s32, Uint8Array.of(27 + sig.recovery));
  const base = tx.envelope ?? encodeBytesField(1, tx.rawData);
  if (tx.signatures.some((s) => equalBytes(s, sig65))) return toHex(base);
  return toHex(concatBytes(base, encodeBytesField(2, sig65)));
}
