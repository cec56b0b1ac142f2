// Entry point of the transaction codecs: one call per `sign_transaction` request
// (ACTIVITY_TYPE_SIGN_TRANSACTION_V2, docs/reference/keys.md "Signing"). `parseTransaction` reads the unsigned
// bytes once and returns both the policy keyword struct (docs/reference/policies.md "Keywords") and a `sign` function bound to those
// same bytes, so what the policy engine judged is exactly what gets signed.
// Pure: no I/O; keys arrive as signer callbacks (signer.ts).

import { TransactionError } from './errors.js';
import { ethTxPolicyFields, parseEthereumTransaction, signEthereumTransaction, type EthTxPolicy, type EthereumTransaction } from './ethereum/tx.js';
import { parseSolanaTransaction, signSolanaTransaction, solanaTxPolicyFields, type SolanaTransaction, type SolanaTxPolicy } from './solana/tx.js';
import { parseTronTransaction, signTronTransaction, tronTxPolicyFields, type TronTxPolicy } from './tron/tx.js';
import { bitcoinTxPolicyFields, parseBitcoinPsbt, signBitcoinPsbt, type BitcoinNetwork, type BitcoinTxPolicy } from './bitcoin/psbt.js';
import type { Ed25519Signer, SchnorrSigner, Secp256k1Signer } from './signer.js';

export * from './errors.js';
export * from './signer.js';
export * from './ethereum/tx.js';
export * from './solana/tx.js';
export * from './tron/tx.js';
export * from './bitcoin/psbt.js';

export type TransactionType =
  | 'TRANSACTION_TYPE_ETHEREUM'
  | 'TRANSACTION_TYPE_SOLANA'
  | 'TRANSACTION_TYPE_TRON'
  | 'TRANSACTION_TYPE_BITCOIN'
  | 'TRANSACTION_TYPE_TEMPO';

/** The condition keyword a SIGN_TRANSACTION request populates, with its struct. */
export type PolicyTransaction =
  | { keyword: 'eth.tx'; value: EthTxPolicy }
  | { keyword: 'solana.tx'; value: SolanaTxPolicy }
  | { keyword: 'tron.tx'; value: TronTxPolicy }
  | { keyword: 'bitcoin.tx'; value: BitcoinTxPolicy };

export interface ParseContext {
  /** Address of the signing account (what `signWith` resolved to); Ethereum's `eth.tx.from`. */
  signerAddress: string;
  /** Network for `bitcoin.tx` output addresses; inferred from `signerAddress` when omitted. */
  bitcoinNetwork?: BitcoinNetwork;
  /** Tron: parse contract types outside the seven the policy language describes. Default false. */
  tronAllowUnsupportedContracts?: boolean;
}

/**
 * The key that signs: its public key and the callback(s) for its curve.
 * secp256k1 accounts give `secp256k1` (and `schnorr` for Bitcoin taproot) with the 33-byte compressed
 * public key; ed25519 accounts give `ed25519` with the 32-byte public key.
 */
export interface TxSigningKey {
  publicKey: Uint8Array;
  secp256k1?: Secp256k1Signer;
  schnorr?: SchnorrSigner;
  ed25519?: Ed25519Signer;
}

export interface ParsedTransaction {
  type: TransactionType;
  policy: PolicyTransaction;
  /** Signs the parsed bytes; returns `signedTransaction` (hex, no 0x). */
  sign(key: TxSigningKey): string;
  /** The Ethereum transaction itself, for what reads more than its policy fields (a simulation). */
  ethereum?: EthereumTransaction;
  /** The Solana transaction itself, likewise (its accounts and instructions, for a simulation). */
  solana?: SolanaTransaction;
}

function need<T>(v: T | undefined, what: string): T {
  if (v === undefined) throw new TypeError(`this transaction type needs a ${what} signer`);
  return v;
}

/** Bitcoin network of an address by its prefix (signet shares testnet's encodings, so it reads as testnet). */
export function bitcoinNetworkOfAddress(address: string): BitcoinNetwork {
  const a = address.toLowerCase();
  if (a.startsWith('bcrt1')) return 'regtest';
  if (a.startsWith('bc1')) return 'mainnet';
  if (a.startsWith('tb1')) return 'testnet';
  const c = address[0];
  if (c === '1' || c === '3') return 'mainnet';
  if (c === 'm' || c === 'n' || c === '2') return 'testnet';
  return 'mainnet';
}

/**
 * Parses `unsignedTransaction` of the given type. Throws TransactionError for malformed input
 * (INVALID_TRANSACTION) and for types or features that are not signed (UNSUPPORTED_TRANSACTION).
 */
export function parseTransaction(type: TransactionType | string, unsignedTransaction: string, ctx: ParseContext): ParsedTransaction {
  switch (type) {
    case 'TRANSACTION_TYPE_ETHEREUM': {
      const tx = parseEthereumTransaction(unsignedTransaction);
      return {
        type,
        policy: { keyword: 'eth.tx', value: ethTxPolicyFields(tx, ctx.signerAddress) },
        sign: (key) => signEthereumTransaction(tx, need(key.secp256k1, 'secp256k1')),
        ethereum: tx,
      };
    }
    case 'TRANSACTION_TYPE_SOLANA': {
      const tx = parseSolanaTransaction(unsignedTransaction);
      return {
        type,
        policy: { keyword: 'solana.tx', value: solanaTxPolicyFields(tx) },
        sign: (key) => signSolanaTransaction(tx, { publicKey: key.publicKey, sign: need(key.ed25519, 'ed25519') }),
        solana: tx,
      };
    }
    case 'TRANSACTION_TYPE_TRON': {
      const tx = parseTronTransaction(unsignedTransaction, { allowUnsupportedContracts: ctx.tronAllowUnsupportedContracts });
      return {
        type,
        policy: { keyword: 'tron.tx', value: tronTxPolicyFields(tx) },
        sign: (key) => signTronTransaction(tx, need(key.secp256k1, 'secp256k1')),
      };
    }
    case 'TRANSACTION_TYPE_BITCOIN': {
      const psbt = parseBitcoinPsbt(unsignedTransaction);
      const network = ctx.bitcoinNetwork ?? bitcoinNetworkOfAddress(ctx.signerAddress);
      return {
        type,
        policy: { keyword: 'bitcoin.tx', value: bitcoinTxPolicyFields(psbt, network) },
        sign: (key) =>
          signBitcoinPsbt(psbt, {
            publicKey: key.publicKey,
            ecdsa: need(key.secp256k1, 'secp256k1'),
            schnorr: key.schnorr,
          }).signedTransaction,
      };
    }
    case 'TRANSACTION_TYPE_TEMPO':
      throw new TransactionError('tempo', 'UNSUPPORTED_TRANSACTION', 'TRANSACTION_TYPE_TEMPO is not supported');
    default:
      throw new TransactionError('other', 'UNSUPPORTED_TRANSACTION', `unsupported transaction type ${String(type)}`);
  }
}
