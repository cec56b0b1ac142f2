// Bitcoin PSBT parsing and signing for TRANSACTION_TYPE_BITCOIN (docs/reference/keys.md "Signing"
// `bitcoin.tx`; BIP174 PSBT, BIP143 segwit v0 sighash, BIP340/341 taproot; docs/reference/addresses.md for the
// script kinds Sigil derives).
// Input: a PSBT as hex (what the reference service documents) or base64 (what most wallets exchange).
// Signing: every input whose spending condition belongs to the offered key is signed and the signature
// is put back into the PSBT; nothing is finalized (the client finalizes and broadcasts):
//   P2PKH, P2WPKH, P2SH-P2WPKH, P2WSH / P2SH / P2SH-P2WSH whose script contains the key
//     → ECDSA partial signature, SIGHASH_ALL
//   P2TR key path with the BIP86 tweak (no script tree) → BIP340 `tap_key_sig`, SIGHASH_DEFAULT
// The reference service rejects wrapped P2SH-P2WPKH; Sigil signs it because docs/reference/addresses.md makes
// BITCOIN_*_P2SH addresses exactly that (BIP49), and an address one can receive on but never spend from
// would strand funds. Taproot script trees (tap_merkle_root / tap_leaf_script on our input) are
// refused, as by the reference service. Legacy (non-segwit) inputs need `non_witness_utxo` so the
// amount being spent is proven by the previous transaction.
// Output: the updated PSBT as lowercase hex without 0x.

import { RawTx, Script, Transaction } from '@scure/btc-signer';
import { sha256 } from '@noble/hashes/sha2.js';
import { ripemd160 } from '@noble/hashes/legacy.js';
import { base64, bech32, bech32m, createBase58check } from '@scure/base';
import { concatBytes, equalBytes, toHex, stripLeadingZeros } from '../../crypto/bytes.js';
import { tapTweakHash, taprootOutputKey } from '../../crypto/taproot.js';
import { TransactionError, invalid } from '../errors.js';
import { callSchnorrSigner, callSecp256k1Signer, type SchnorrSigner, type Secp256k1Signer } from '../signer.js';

export type BitcoinNetwork = 'mainnet' | 'testnet' | 'signet' | 'regtest';

/** `bitcoin.tx` as the policy engine sees it (docs/reference/policies.md "Keywords", names verbatim). */
export interface BitcoinTxPolicy {
  version: string;
  inputs: Array<{ tx_id: string; vout: bigint; sequence: bigint }>;
  outputs: Array<{ value: bigint; script_pubkey: string; address: string; address_type: BitcoinAddressType }>;
  locktime: { amount: bigint; type: 'Blocks' | 'Seconds' };
  /** Σ inputs − Σ outputs, satoshis. */
  fee: bigint;
}

export type BitcoinAddressType = 'P2PKH' | 'P2SH' | 'P2WPKH' | 'P2WSH' | 'P2TR' | 'WITNESS_UNKNOWN' | 'OP_RETURN' | 'UNKNOWN';

/** A parsed PSBT. `psbt` is the btc-signer object (signing works on a clone of it). */
export interface BitcoinPsbt {
  readonly psbt: Transaction;
  /** Amount and script of the output each input spends, in input order. */
  readonly prevouts: ReadonlyArray<{ amount: bigint; script: Uint8Array }>;
}

/** The key offered for signing: compressed public key and the two signer callbacks. */
export interface BitcoinKey {
  /** 33-byte compressed SEC1 public key. */
  publicKey: Uint8Array;
  ecdsa: Secp256k1Signer;
  /** Needed only when a taproot input belongs to the key. */
  schnorr?: SchnorrSigner;
}

export interface BitcoinSignResult {
  /** The PSBT with our signatures added, lowercase hex without 0x, not finalized. */
  signedTransaction: string;
  /** Indices of the inputs that were signed. */
  signedInputs: number[];
}

const SIGHASH_DEFAULT = 0x00;
const SIGHASH_ALL = 0x01;
const PSBT_MAGIC = Uint8Array.of(0x70, 0x73, 0x62, 0x74, 0xff);
const b58check = createBase58check(sha256);

const NETWORKS: Record<BitcoinNetwork, { bech32: string; pkh: number; sh: number }> = {
  mainnet: { bech32: 'bc', pkh: 0x00, sh: 0x05 },
  testnet: { bech32: 'tb', pkh: 0x6f, sh: 0xc4 },
  signet: { bech32: 'tb', pkh: 0x6f, sh: 0xc4 },
  regtest: { bech32: 'bcrt', pkh: 0x6f, sh: 0xc4 },
};

function fail(message: string): TransactionError {
  return invalid('bitcoin', message);
}

const hash160 = (b: Uint8Array): Uint8Array => ripemd160(sha256(b));

function decodePsbtInput(input: string): Uint8Array {
  if (typeof input !== 'string' || input.length === 0) throw fail('PSBT is empty');
  const h = input.startsWith('0x') || input.startsWith('0X') ? input.slice(2) : input;
  let bytes: Uint8Array | undefined;
  if (/^[0-9a-fA-F]+$/.test(h) && h.length % 2 === 0) bytes = Uint8Array.from(Buffer.from(h, 'hex'));
  else {
    try {
      bytes = base64.decode(input.trim());
    } catch {
      throw fail('PSBT must be hex or base64');
    }
  }
  if (bytes.length < 5 || !equalBytes(bytes.subarray(0, 5), PSBT_MAGIC)) throw fail('not a PSBT (missing psbt magic)');
  return bytes;
}

const TX_OPTS = {
  // Keep unknown and proprietary records: the PSBT goes back to the client with only our signatures added.
  unknown: 'ignore' as const,
  // Inputs and outputs we do not sign may have any script.
  allowUnknownInputs: true,
  allowUnknownOutputs: true,
};

function prevoutOf(psbt: Transaction, i: number): { amount: bigint; script: Uint8Array } {
  const inp = psbt.getInput(i);
  const index = inp.index!;
  let fromFull: { amount: bigint; script: Uint8Array } | undefined;
  if (inp.nonWitnessUtxo) {
    const prev = inp.nonWitnessUtxo;
    // The previous transaction must be the one the input names, or its amounts prove nothing
    // (btc-signer checks this while parsing too; the check stays here so this file's guarantee does
    // not depend on a library default).
    if (toHex(legacyTxid(prev)) !== toHex(inp.txid!)) throw fail(`input ${i}: non_witness_utxo does not match the input's txid`);
    const out = prev.outputs[index];
    if (!out) throw fail(`input ${i}: non_witness_utxo has no output ${index}`);
    fromFull = { amount: out.amount, script: out.script };
  }
  if (inp.witnessUtxo) {
    const w = { amount: inp.witnessUtxo.amount, script: inp.witnessUtxo.script };
    if (fromFull && (fromFull.amount !== w.amount || !equalBytes(fromFull.script, w.script))) {
      throw fail(`input ${i}: witness_utxo disagrees with non_witness_utxo`);
    }
    return w;
  }
  if (fromFull) return fromFull;
  throw fail(`input ${i} has neither witness_utxo nor non_witness_utxo`);
}

/** txid (display order) of a decoded previous transaction: double SHA-256 of its witness-free form. */
function legacyTxid(prev: NonNullable<ReturnType<Transaction['getInput']>['nonWitnessUtxo']>): Uint8Array {
  const raw = RawTx.encode({ ...(prev as Parameters<typeof RawTx.encode>[0]), segwitFlag: false, witnesses: undefined });
  return sha256(sha256(raw)).reverse();
}

/** Parses a PSBT (hex or base64) and the outputs its inputs spend. */
export function parseBitcoinPsbt(input: string): BitcoinPsbt {
  const bytes = decodePsbtInput(input);
  let psbt: Transaction;
  try {
    psbt = Transaction.fromPSBT(bytes, TX_OPTS);
  } catch (e) {
    throw fail(`failed to parse PSBT: ${(e as Error).message}`);
  }
  if (psbt.inputsLength === 0) throw fail('PSBT has no inputs');
  const prevouts: Array<{ amount: bigint; script: Uint8Array }> = [];
  for (let i = 0; i < psbt.inputsLength; i++) prevouts.push(prevoutOf(psbt, i));
  return { psbt, prevouts };
}

function classify(script: Uint8Array): { type: BitcoinAddressType; version?: number; program?: Uint8Array; hash?: Uint8Array } {
  const s = script;
  if (s.length === 25 && s[0] === 0x76 && s[1] === 0xa9 && s[2] === 0x14 && s[23] === 0x88 && s[24] === 0xac) {
    return { type: 'P2PKH', hash: s.subarray(3, 23) };
  }
  if (s.length === 23 && s[0] === 0xa9 && s[1] === 0x14 && s[22] === 0x87) return { type: 'P2SH', hash: s.subarray(2, 22) };
  if (s.length >= 1 && s[0] === 0x6a) return { type: 'OP_RETURN' };
  // Witness program: OP_0 or OP_1..OP_16, then one direct push of 2..40 bytes (BIP141).
  if (s.length >= 4 && s.length <= 42 && (s[0] === 0x00 || (s[0] >= 0x51 && s[0] <= 0x60)) && s[1] === s.length - 2 && s[1] >= 2 && s[1] <= 40) {
    const version = s[0] === 0 ? 0 : s[0] - 0x50;
    const program = s.subarray(2);
    if (version === 0 && program.length === 20) return { type: 'P2WPKH', version, program, hash: program };
    if (version === 0 && program.length === 32) return { type: 'P2WSH', version, program, hash: program };
    if (version === 1 && program.length === 32) return { type: 'P2TR', version, program };
    if (version === 0) return { type: 'UNKNOWN' };
    return { type: 'WITNESS_UNKNOWN', version, program };
  }
  return { type: 'UNKNOWN' };
}

/** The address an output script pays on `network` ('' for scripts without one, e.g. OP_RETURN). */
export function addressOf(script: Uint8Array, network: BitcoinNetwork): { address: string; address_type: BitcoinAddressType } {
  const net = NETWORKS[network];
  const c = classify(script);
  switch (c.type) {
    case 'P2PKH':
      return { address: b58check.encode(concatBytes(Uint8Array.of(net.pkh), c.hash!)), address_type: c.type };
    case 'P2SH':
      return { address: b58check.encode(concatBytes(Uint8Array.of(net.sh), c.hash!)), address_type: c.type };
    case 'P2WPKH':
    case 'P2WSH':
      return { address: bech32.encode(net.bech32, [0, ...bech32.toWords(c.program!)]), address_type: c.type };
    case 'P2TR':
    case 'WITNESS_UNKNOWN':
      return { address: bech32m.encode(net.bech32, [c.version!, ...bech32m.toWords(c.program!)]), address_type: c.type };
    default:
      return { address: '', address_type: c.type };
  }
}

/**
 * The `bitcoin.tx` policy struct. Addresses need a network, which a PSBT does not carry: the caller
 * passes the network of the signing address (ADDRESS_FORMAT_BITCOIN_<NET>_*).
 */
export function bitcoinTxPolicyFields(parsed: BitcoinPsbt, network: BitcoinNetwork = 'mainnet'): BitcoinTxPolicy {
  const { psbt, prevouts } = parsed;
  const inputs: BitcoinTxPolicy['inputs'] = [];
  for (let i = 0; i < psbt.inputsLength; i++) {
    const inp = psbt.getInput(i);
    inputs.push({
      tx_id: toHex(inp.txid!),
      vout: BigInt(inp.index!),
      sequence: BigInt(inp.sequence ?? 0xffffffff),
    });
  }
  const outputs: BitcoinTxPolicy['outputs'] = [];
  let outSum = 0n;
  for (let i = 0; i < psbt.outputsLength; i++) {
    const o = psbt.getOutput(i);
    outSum += o.amount!;
    outputs.push({ value: o.amount!, script_pubkey: toHex(o.script!), ...addressOf(o.script!, network) });
  }
  const inSum = prevouts.reduce((a, p) => a + p.amount, 0n);
  const fee = inSum - outSum;
  if (fee < 0n) throw fail('outputs spend more than the inputs provide');
  const lt = psbt.lockTime;
  return {
    version: String(psbt.version),
    inputs,
    outputs,
    // BIP65/consensus: nLockTime below 500,000,000 is a block height, otherwise a unix time.
    locktime: { amount: BigInt(lt), type: lt < 500_000_000 ? 'Blocks' : 'Seconds' },
    fee,
  };
}

function derInt(x32: Uint8Array): Uint8Array {
  let v = stripLeadingZeros(x32);
  if (v.length === 0) v = Uint8Array.of(0);
  if (v[0] & 0x80) v = concatBytes(Uint8Array.of(0), v);
  return concatBytes(Uint8Array.of(0x02, v.length), v);
}

/** DER-encoded ECDSA signature (BIP66) followed by the sighash byte, as PSBT partial_sig wants. */
function derWithHashType(r32: Uint8Array, s32: Uint8Array, hashType: number): Uint8Array {
  const body = concatBytes(derInt(r32), derInt(s32));
  return concatBytes(Uint8Array.of(0x30, body.length), body, Uint8Array.of(hashType));
}

function scriptHasKey(script: Uint8Array, pub: Uint8Array): boolean {
  try {
    return Script.decode(script).some((op) => op instanceof Uint8Array && equalBytes(op, pub));
  } catch {
    return false;
  }
}

type Plan =
  | { kind: 'legacy'; scriptCode: Uint8Array }
  | { kind: 'segwit'; scriptCode: Uint8Array }
  | { kind: 'taproot'; tweak: Uint8Array };

/** Decides whether input `i` is ours and how to sign it; null = not ours (left untouched). */
interface OurKey {
  pub: Uint8Array;
  xonly: Uint8Array;
  pkh: Uint8Array;
  /** BIP86 tweak and output key, computed on first use (a point multiplication). */
  bip86(): { tweak: Uint8Array; outputKey: Uint8Array };
}

function planInput(psbt: Transaction, i: number, prevScript: Uint8Array, key: OurKey): Plan | null {
  const { pub, xonly, pkh } = key;
  const inp = psbt.getInput(i);
  const c = classify(prevScript);
  const p2pkhCode = (h: Uint8Array) => concatBytes(Uint8Array.of(0x76, 0xa9, 0x14), h, Uint8Array.of(0x88, 0xac));
  switch (c.type) {
    case 'P2PKH':
      if (!equalBytes(c.hash!, pkh)) return null;
      if (!inp.nonWitnessUtxo) throw fail(`input ${i}: a legacy input needs non_witness_utxo`);
      return { kind: 'legacy', scriptCode: prevScript };
    case 'P2WPKH':
      if (!equalBytes(c.hash!, pkh)) return null;
      return { kind: 'segwit', scriptCode: p2pkhCode(pkh) };
    case 'P2WSH': {
      const ws = inp.witnessScript;
      if (!ws || !scriptHasKey(ws, pub)) return null;
      if (!equalBytes(sha256(ws), c.hash!)) throw fail(`input ${i}: witness_script does not match the P2WSH output`);
      return { kind: 'segwit', scriptCode: ws };
    }
    case 'P2SH': {
      const rs = inp.redeemScript;
      if (!rs) return null;
      if (!equalBytes(hash160(rs), c.hash!)) throw fail(`input ${i}: redeem_script does not match the P2SH output`);
      const inner = classify(rs);
      if (inner.type === 'P2WPKH') {
        if (!equalBytes(inner.hash!, pkh)) return null;
        return { kind: 'segwit', scriptCode: p2pkhCode(pkh) };
      }
      if (inner.type === 'P2WSH') {
        const ws = inp.witnessScript;
        if (!ws || !scriptHasKey(ws, pub)) return null;
        if (!equalBytes(sha256(ws), inner.hash!)) throw fail(`input ${i}: witness_script does not match the P2SH-P2WSH program`);
        return { kind: 'segwit', scriptCode: ws };
      }
      if (!scriptHasKey(rs, pub) && !scriptHasKey(rs, pkh)) return null;
      if (!inp.nonWitnessUtxo) throw fail(`input ${i}: a legacy input needs non_witness_utxo`);
      return { kind: 'legacy', scriptCode: rs };
    }
    case 'P2TR': {
      const { tweak, outputKey } = key.bip86();
      const ours = equalBytes(outputKey, c.program!);
      const internalIsOurs = inp.tapInternalKey !== undefined && equalBytes(inp.tapInternalKey, xonly);
      if (internalIsOurs && (inp.tapMerkleRoot || inp.tapLeafScript?.length)) {
        throw new TransactionError('bitcoin', 'UNSUPPORTED_TRANSACTION', `input ${i}: taproot script trees are not supported (key path with BIP86 tweak only)`);
      }
      if (!ours) return null;
      if (inp.tapInternalKey && !internalIsOurs) return null;
      return { kind: 'taproot', tweak };
    }
    default:
      return null;
  }
}

/**
 * Signs every input of the PSBT that `key` can spend and returns the updated, unfinalized PSBT hex.
 * Throws NO_MATCHING_SIGNER when no input belongs to the key.
 */
export function signBitcoinPsbt(unsigned: string | BitcoinPsbt, key: BitcoinKey): BitcoinSignResult {
  const parsed = typeof unsigned === 'string' ? parseBitcoinPsbt(unsigned) : unsigned;
  const psbt = parsed.psbt.clone();
  const pub = key.publicKey;
  if (!(pub instanceof Uint8Array) || pub.length !== 33 || (pub[0] !== 2 && pub[0] !== 3)) {
    throw new TypeError('bitcoin signing needs a 33-byte compressed public key');
  }
  const xonly = pub.subarray(1);
  let bip86: { tweak: Uint8Array; outputKey: Uint8Array } | undefined;
  const ours: OurKey = {
    pub,
    xonly,
    pkh: hash160(pub),
    bip86() {
      if (!bip86) {
        bip86 = { tweak: tapTweakHash(xonly), outputKey: taprootOutputKey(xonly).outputKey };
      }
      return bip86;
    },
  };
  const allScripts = parsed.prevouts.map((p) => p.script);
  const allAmounts = parsed.prevouts.map((p) => p.amount);
  const signedInputs: number[] = [];

  for (let i = 0; i < psbt.inputsLength; i++) {
    const inp = psbt.getInput(i);
    if (inp.finalScriptSig?.length || inp.finalScriptWitness?.length) continue; // already final
    const prev = parsed.prevouts[i];
    const plan = planInput(psbt, i, prev.script, ours);
    if (!plan) continue;
    const requested = inp.sighashType;
    if (plan.kind === 'taproot') {
      if (requested !== undefined && requested !== SIGHASH_DEFAULT && requested !== SIGHASH_ALL) {
        throw new TransactionError('bitcoin', 'UNSUPPORTED_TRANSACTION', `input ${i}: sighash type ${requested} is not supported (SIGHASH_DEFAULT only)`);
      }
      const hashType = requested ?? SIGHASH_DEFAULT;
      const digest = psbt.preimageWitnessV1(i, allScripts, hashType, allAmounts);
      if (!key.schnorr) throw new TypeError(`input ${i} is a taproot input of this key: a schnorr signer is needed`);
      const sig = callSchnorrSigner('bitcoin', key.schnorr, digest, plan.tweak);
      // BIP341: SIGHASH_DEFAULT signatures are 64 bytes; any other type appends its byte.
      const tapKeySig = hashType === SIGHASH_DEFAULT ? sig : concatBytes(sig, Uint8Array.of(hashType));
      psbt.updateInput(i, { tapKeySig }, true);
    } else {
      if (requested !== undefined && requested !== SIGHASH_ALL) {
        throw new TransactionError('bitcoin', 'UNSUPPORTED_TRANSACTION', `input ${i}: sighash type ${requested} is not supported (SIGHASH_ALL only)`);
      }
      const digest =
        plan.kind === 'segwit'
          ? psbt.preimageWitnessV0(i, plan.scriptCode, SIGHASH_ALL, prev.amount)
          : legacySighash(psbt, i, plan.scriptCode);
      const sig = callSecp256k1Signer('bitcoin', key.ecdsa, digest);
      psbt.updateInput(i, { partialSig: [[pub, derWithHashType(sig.r32, sig.s32, SIGHASH_ALL)]] }, true);
    }
    signedInputs.push(i);
  }
  if (signedInputs.length === 0) {
    throw new TransactionError('bitcoin', 'NO_MATCHING_SIGNER', 'no input of this PSBT can be signed by the given key');
  }
  return { signedTransaction: toHex(psbt.toPSBT()), signedInputs };
}

/**
 * The pre-segwit sighash (SIGHASH_ALL). btc-signer implements it but keeps it private in its types;
 * reuse its implementation rather than maintaining a second one, and fail loudly if it ever moves.
 */
function legacySighash(psbt: Transaction, i: number, scriptCode: Uint8Array): Uint8Array {
  const impl = (psbt as unknown as { preimageLegacy?: (idx: number, script: Uint8Array, hashType: number) => Uint8Array }).preimageLegacy;
  if (typeof impl !== 'function') throw new Error('@scure/btc-signer no longer provides preimageLegacy');
  return impl.call(psbt, i, scriptCode, SIGHASH_ALL);
}
