// Ethereum transaction parsing and signing for ACTIVITY_TYPE_SIGN_TRANSACTION_V2 with
// TRANSACTION_TYPE_ETHEREUM (docs/reference/keys.md "Signing").
// Input: the unsigned serialized transaction as viem's `serializeTransaction` / ethers'
// `unsignedSerialized` produce it, hex with or without 0x. Envelopes (EIP-2718):
//   legacy  rlp([nonce, gasPrice, gas, to, value, data])                      (pre-EIP-155)
//           rlp([nonce, gasPrice, gas, to, value, data, chainId, 0, 0])       (EIP-155)
//   0x01    EIP-2930  rlp([chainId, nonce, gasPrice, gas, to, value, data, accessList])
//   0x02    EIP-1559  rlp([chainId, nonce, maxPriorityFeePerGas, maxFeePerGas, gas, to, value, data, accessList])
//   0x03    EIP-4844  rlp([... , accessList, maxFeePerBlobGas, blobVersionedHashes]) — payload body only;
//           the network wrapper with blobs is refused, as by the reference service
//   0x04    EIP-7702  rlp([... , accessList, authorizationList])
// Output: the signed transaction hex WITHOUT 0x (the SDK prepends it), byte-identical to what viem and
// ethers serialize for the same transaction and signature. The signature fields are appended to the
// fields exactly as received (strict RLP guarantees there is only one encoding of them).
// `ethTxPolicyFields` exposes the `eth.tx` policy struct with the field names of docs/reference/policies.md "Keywords"

import { keccak_256 } from '@noble/hashes/sha3.js';
import { bigIntToMinimalBytes, bytesToBigInt, concatBytes, toHex } from '../../crypto/bytes.js';
import { hexToBytes } from '../bytes.js';
import { TransactionError, invalid } from '../errors.js';
import { rlpDecode, rlpEncode, RlpError, type RlpItem } from './rlp.js';
import { callSecp256k1Signer, type Secp256k1Signer, type NormalizedEcdsa } from '../signer.js';

export type EthTxType = 'legacy' | 'eip2930' | 'eip1559' | 'eip4844' | 'eip7702';

export interface EthAccessListEntry {
  address: string; // 0x + 40 lowercase hex
  storageKeys: string[]; // 0x + 64 lowercase hex each
}

export interface EthAuthorization {
  chainId: bigint;
  address: string; // 0x + 40 lowercase hex
  nonce: bigint;
  yParity: bigint;
  r: bigint;
  s: bigint;
}

/** A parsed unsigned Ethereum transaction. Addresses are 0x-prefixed lowercase hex. */
export interface EthereumTransaction {
  type: EthTxType;
  /** EIP-2718 type byte, null for legacy. */
  typeByte: number | null;
  /** Null only for a pre-EIP-155 legacy transaction (replayable on every chain). */
  chainId: bigint | null;
  nonce: bigint;
  /** Legacy and EIP-2930. */
  gasPrice?: bigint;
  /** EIP-1559, 4844, 7702. */
  maxPriorityFeePerGas?: bigint;
  maxFeePerGas?: bigint;
  /** EIP-4844. */
  maxFeePerBlobGas?: bigint;
  blobVersionedHashes?: string[];
  gas: bigint;
  /** Null for contract creation. */
  to: string | null;
  value: bigint;
  data: Uint8Array;
  /** Every typed transaction. */
  accessList?: EthAccessListEntry[];
  /** EIP-7702. */
  authorizationList?: EthAuthorization[];
  /** keccak256 of the signing payload: what the key signs. */
  signingHash: Uint8Array;
  /** The RLP fields as received (legacy: the six common fields), reused to build the signed form. */
  readonly fields: readonly RlpItem[];
}

/** `eth.tx` as the policy engine sees it (docs/reference/policies.md "Keywords", names verbatim). */
export interface EthTxPolicy {
  /** The signing address (known to the caller, not in the unsigned bytes), lowercase 0x hex. */
  from: string;
  /** Lowercase 0x hex; '' for contract creation. */
  to: string;
  /** '0x' + lowercase hex ('0x' when empty), so `data[0..10]` is the selector. */
  data: string;
  value: bigint;
  gas: bigint;
  /** Legacy/2930: gasPrice; 1559/4844/7702: maxFeePerGas (docs/reference/policies.md "Keywords"). */
  gas_price: bigint;
  /** 0 for a pre-EIP-155 legacy transaction, which carries no chain id. */
  chain_id: bigint;
  nonce: bigint;
  /** Present only on types that have the field (absent → the engine's MissingField). */
  max_fee_per_gas?: bigint;
  max_priority_fee_per_gas?: bigint;
  max_fee_per_blob_gas?: bigint;
  type: 'LEGACY' | 'TYPE_1' | 'TYPE_2' | 'TYPE_3' | 'TYPE_4';
}

const TYPE_BY_BYTE: Record<number, EthTxType> = { 1: 'eip2930', 2: 'eip1559', 3: 'eip4844', 4: 'eip7702' };
/** Field count of the unsigned payload of each typed envelope. */
const FIELD_COUNT: Record<Exclude<EthTxType, 'legacy'>, number> = {
  eip2930: 8,
  eip1559: 9,
  eip4844: 11,
  eip7702: 10,
};
const POLICY_TYPE: Record<EthTxType, EthTxPolicy['type']> = {
  legacy: 'LEGACY',
  eip2930: 'TYPE_1',
  eip1559: 'TYPE_2',
  eip4844: 'TYPE_3',
  eip7702: 'TYPE_4',
};

function fail(message: string): TransactionError {
  return invalid('ethereum', message);
}

function asBytes(item: RlpItem | undefined, name: string): Uint8Array {
  if (!(item instanceof Uint8Array)) throw fail(`${name} must be a byte string`);
  return item;
}

function asList(item: RlpItem | undefined, name: string): RlpItem[] {
  if (item === undefined || item instanceof Uint8Array) throw fail(`${name} must be a list`);
  return item;
}

/** A canonical RLP integer (no leading zero byte) of at most `maxBytes` bytes. */
function asUint(item: RlpItem | undefined, name: string, maxBytes: number): bigint {
  const b = asBytes(item, name);
  if (b.length > 0 && b[0] === 0) throw fail(`${name} has a leading zero byte`);
  if (b.length > maxBytes) throw fail(`${name} is larger than ${maxBytes * 8} bits`);
  return bytesToBigInt(b);
}

function asAddress(item: RlpItem | undefined, name: string, allowEmpty: boolean): string | null {
  const b = asBytes(item, name);
  if (b.length === 0 && allowEmpty) return null;
  if (b.length !== 20) throw fail(`${name} must be a 20-byte address`);
  return '0x' + toHex(b);
}

function asHash(item: RlpItem, name: string): string {
  const b = asBytes(item, name);
  if (b.length !== 32) throw fail(`${name} must be 32 bytes`);
  return '0x' + toHex(b);
}

function parseAccessList(item: RlpItem | undefined): EthAccessListEntry[] {
  return asList(item, 'accessList').map((entry, i) => {
    const e = asList(entry, `accessList[${i}]`);
    if (e.length !== 2) throw fail(`accessList[${i}] must be [address, storageKeys]`);
    return {
      address: asAddress(e[0], `accessList[${i}].address`, false)!,
      storageKeys: asList(e[1], `accessList[${i}].storageKeys`).map((k, j) => asHash(k, `accessList[${i}].storageKeys[${j}]`)),
    };
  });
}

function parseAuthorizationList(item: RlpItem | undefined): EthAuthorization[] {
  const list = asList(item, 'authorizationList');
  // EIP-7702: "The transaction is also considered invalid when the length of authorization_list is zero."
  if (list.length === 0) throw fail('authorizationList must not be empty');
  return list.map((entry, i) => {
    const a = asList(entry, `authorizationList[${i}]`);
    if (a.length !== 6) throw fail(`authorizationList[${i}] must be [chainId, address, nonce, yParity, r, s]`);
    return {
      chainId: asUint(a[0], `authorizationList[${i}].chainId`, 32),
      address: asAddress(a[1], `authorizationList[${i}].address`, false)!,
      nonce: asUint(a[2], `authorizationList[${i}].nonce`, 8),
      yParity: asUint(a[3], `authorizationList[${i}].yParity`, 1),
      r: asUint(a[4], `authorizationList[${i}].r`, 32),
      s: asUint(a[5], `authorizationList[${i}].s`, 32),
    };
  });
}

function decodeRlp(bytes: Uint8Array): RlpItem {
  try {
    return rlpDecode(bytes);
  } catch (e) {
    if (e instanceof RlpError) throw fail(`failed to parse transaction: ${e.message}`);
    throw e;
  }
}

function parseLegacy(bytes: Uint8Array): EthereumTransaction {
  const f = asList(decodeRlp(bytes), 'transaction');
  if (f.length !== 6 && f.length !== 9) throw fail(`legacy transaction must have 6 or 9 fields, got ${f.length}`);
  let chainId: bigint | null = null;
  if (f.length === 9) {
    const r = asBytes(f[7], 'r');
    const s = asBytes(f[8], 's');
    if (r.length !== 0 || s.length !== 0) throw fail('transaction is already signed (r, s present)');
    chainId = asUint(f[6], 'chainId', 32);
    // EIP-155 puts the chain id where v goes; a zero there is neither EIP-155 nor pre-155.
    if (chainId === 0n) throw fail('legacy transaction has chainId 0');
  }
  const common = f.slice(0, 6);
  const tx: Omit<EthereumTransaction, 'signingHash'> = {
    type: 'legacy',
    typeByte: null,
    chainId,
    nonce: asUint(f[0], 'nonce', 8),
    gasPrice: asUint(f[1], 'gasPrice', 32),
    gas: asUint(f[2], 'gas', 8),
    to: asAddress(f[3], 'to', true),
    value: asUint(f[4], 'value', 32),
    data: asBytes(f[5], 'data'),
    fields: common,
  };
  const payload = chainId === null ? common : [...common, bigIntToMinimalBytes(chainId), new Uint8Array(0), new Uint8Array(0)];
  return { ...tx, signingHash: keccak_256(rlpEncode(payload)) };
}

function parseTyped(typeByte: number, body: Uint8Array): EthereumTransaction {
  const type = TYPE_BY_BYTE[typeByte];
  if (!type) throw new TransactionError('ethereum', 'UNSUPPORTED_TRANSACTION', `unsupported transaction type 0x${typeByte.toString(16).padStart(2, '0')}`);
  const decoded = decodeRlp(body);
  const f = asList(decoded, 'transaction');
  const want = FIELD_COUNT[type as Exclude<EthTxType, 'legacy'>];
  if (type === 'eip4844' && f.length === 4 && !(f[0] instanceof Uint8Array)) {
    throw new TransactionError(
      'ethereum',
      'UNSUPPORTED_TRANSACTION',
      'EIP-4844 network wrapper (blobs, commitments, proofs) is not accepted; send the transaction payload body only',
    );
  }
  if (f.length === want + 3) throw fail('transaction is already signed (yParity, r, s present)');
  if (f.length !== want) throw fail(`type 0x0${typeByte} transaction must have ${want} fields, got ${f.length}`);

  const tx: Partial<EthereumTransaction> & { fields: RlpItem[] } = {
    type,
    typeByte,
    chainId: asUint(f[0], 'chainId', 32),
    nonce: asUint(f[1], 'nonce', 8),
    fields: f,
  };
  let i = 2;
  if (type === 'eip2930') {
    tx.gasPrice = asUint(f[i++], 'gasPrice', 32);
  } else {
    tx.maxPriorityFeePerGas = asUint(f[i++], 'maxPriorityFeePerGas', 32);
    tx.maxFeePerGas = asUint(f[i++], 'maxFeePerGas', 32);
  }
  tx.gas = asUint(f[i++], 'gas', 8);
  // Blob and set-code transactions cannot create contracts (EIP-4844, EIP-7702).
  tx.to = asAddress(f[i++], 'to', type === 'eip2930' || type === 'eip1559');
  tx.value = asUint(f[i++], 'value', 32);
  tx.data = asBytes(f[i++], 'data');
  tx.accessList = parseAccessList(f[i++]);
  if (type === 'eip4844') {
    tx.maxFeePerBlobGas = asUint(f[i++], 'maxFeePerBlobGas', 32);
    const hashes = asList(f[i++], 'blobVersionedHashes');
    if (hashes.length === 0) throw fail('blobVersionedHashes must not be empty');
    tx.blobVersionedHashes = hashes.map((h, j) => asHash(h, `blobVersionedHashes[${j}]`));
  }
  if (type === 'eip7702') tx.authorizationList = parseAuthorizationList(f[i++]);
  tx.signingHash = keccak_256(concatBytes(Uint8Array.of(typeByte), rlpEncode(f)));
  return tx as EthereumTransaction;
}

/**
 * Parses an unsigned serialized Ethereum transaction (hex, 0x optional).
 * Throws TransactionError (chain 'ethereum') on anything else, including an already-signed one.
 */
export function parseEthereumTransaction(unsignedHex: string): EthereumTransaction {
  const bytes = hexToBytes('ethereum', unsignedHex);
  const first = bytes[0];
  if (first >= 0xc0) return parseLegacy(bytes);
  if (first === 0x76) {
    throw new TransactionError('ethereum', 'UNSUPPORTED_TRANSACTION', 'Tempo transactions (0x76) use TRANSACTION_TYPE_TEMPO');
  }
  if (first <= 0x7f) return parseTyped(first, bytes.subarray(1));
  throw fail('failed to parse transaction: not an RLP list or EIP-2718 typed envelope');
}

/** The `eth.tx` policy struct. `from` is the address that will sign (the caller knows it). */
export function ethTxPolicyFields(tx: EthereumTransaction, from: string): EthTxPolicy {
  const out: EthTxPolicy = {
    from: from.toLowerCase(),
    to: tx.to ?? '',
    data: '0x' + toHex(tx.data),
    value: tx.value,
    gas: tx.gas,
    gas_price: tx.gasPrice ?? tx.maxFeePerGas!,
    chain_id: tx.chainId ?? 0n,
    nonce: tx.nonce,
    type: POLICY_TYPE[tx.type],
  };
  if (tx.maxFeePerGas !== undefined) out.max_fee_per_gas = tx.maxFeePerGas;
  if (tx.maxPriorityFeePerGas !== undefined) out.max_priority_fee_per_gas = tx.maxPriorityFeePerGas;
  if (tx.maxFeePerBlobGas !== undefined) out.max_fee_per_blob_gas = tx.maxFeePerBlobGas;
  return out;
}

/** Serializes `tx` with an ECDSA signature, exactly as viem/ethers would; hex without 0x. */
export function serializeSignedEthereumTransaction(tx: EthereumTransaction, sig: NormalizedEcdsa): string {
  const r = bigIntToMinimalBytes(sig.r);
  const s = bigIntToMinimalBytes(sig.s);
  if (tx.typeByte === null) {
    // EIP-155: v = chainId * 2 + 35 + yParity; pre-155: v = 27 + yParity.
    const v = tx.chainId === null ? 27n + BigInt(sig.recovery) : tx.chainId * 2n + 35n + BigInt(sig.recovery);
    return toHex(rlpEncode([...tx.fields, bigIntToMinimalBytes(v), r, s]));
  }
  const yParity = bigIntToMinimalBytes(BigInt(sig.recovery));
  return toHex(concatBytes(Uint8Array.of(tx.typeByte), rlpEncode([...tx.fields, yParity, r, s])));
}

/**
 * Signs an unsigned Ethereum transaction (hex or already parsed) with `signer` over its signing hash and
 * returns the signed serialization as hex without 0x, the form `signTransactionResult.signedTransaction`
 * carries.
 */
export function signEthereumTransaction(unsigned: string | EthereumTransaction, signer: Secp256k1Signer): string {
  const tx = typeof unsigned === 'string' ? parseEthereumTransaction(unsigned) : unsigned;
  const sig = callSecp256k1Signer('ethereum', signer, tx.signingHash);
  return serializeSignedEthereumTransaction(tx, sig);
}

/** The fields of an EIP-1559 transaction Sigil builds itself (eth_send_transaction). */
export interface Eip1559Fields {
  chainId: bigint;
  nonce: bigint;
  maxPriorityFeePerGas: bigint;
  maxFeePerGas: bigint;
  gas: bigint;
  /** 0x + 40 hex; null for contract creation. */
  to: string | null;
  value: bigint;
  /** 0x hex ('0x' when empty). */
  data: string;
}

/**
 * The unsigned serialization of an EIP-1559 transaction (0x02 || rlp([...9 fields])), 0x-prefixed:
 * the form sign_transaction takes, so a transaction Sigil builds is parsed, judged and signed by the
 * same code as one a client sends.
 */
export function serializeUnsignedEip1559(f: Eip1559Fields): string {
  return '0x' + toHex(concatBytes(Uint8Array.of(2), rlpEncode(commonTypedFields(f))));
}

/** The fields of an EIP-7702 (set-code) transaction Sigil builds itself (eth_undelegate_7702). */
export interface Eip7702Fields extends Eip1559Fields {
  /** EIP-7702: a set-code transaction has a recipient. */
  to: string;
  /** Signed authorization tuples (EIP-7702 forbids an empty list). */
  authorizationList: EthAuthorization[];
}

/** The unsigned serialization of an EIP-7702 transaction (0x04 || rlp([...10 fields])), 0x-prefixed. */
export function serializeUnsignedEip7702(f: Eip7702Fields): string {
  const authorizations: RlpItem[] = f.authorizationList.map((a) => [
    bigIntToMinimalBytes(a.chainId),
    hexToBytes('ethereum', a.address),
    bigIntToMinimalBytes(a.nonce),
    bigIntToMinimalBytes(a.yParity),
    bigIntToMinimalBytes(a.r),
    bigIntToMinimalBytes(a.s),
  ]);
  return '0x' + toHex(concatBytes(Uint8Array.of(4), rlpEncode([...commonTypedFields(f), authorizations])));
}

/** chain_id … access_list, shared by the EIP-1559 and EIP-7702 payloads (the access list is empty). */
function commonTypedFields(f: Eip1559Fields): RlpItem[] {
  return [
    bigIntToMinimalBytes(f.chainId),
    bigIntToMinimalBytes(f.nonce),
    bigIntToMinimalBytes(f.maxPriorityFeePerGas),
    bigIntToMinimalBytes(f.maxFeePerGas),
    bigIntToMinimalBytes(f.gas),
    f.to === null ? new Uint8Array(0) : hexToBytes('ethereum', f.to),
    bigIntToMinimalBytes(f.value),
    f.data === '' || f.data === '0x' ? new Uint8Array(0) : hexToBytes('ethereum', f.data),
    [],
  ];
}

/** The hash a signed transaction is known by on chain: keccak256 of its serialization, 0x hex. */
export function ethereumTransactionHash(signedHex: string): string {
  return '0x' + toHex(keccak_256(hexToBytes('ethereum', signedHex)));
}
