// Bitcoin sign_transaction: a PSBT with P2WPKH, P2TR, P2PKH, P2SH-P2WPKH, P2WSH and a foreign input,
// built with @scure/btc-signer; we sign, then btc-signer and bitcoinjs-lib check the signatures,
// finalize and extract; our PSBT equals btc-signer signing the same inputs with the private key.
import { describe, expect, it } from 'vitest';
import * as btc from '@scure/btc-signer';
import { secp256k1, schnorr } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import * as bitcoinjs from 'bitcoinjs-lib';
import * as ecc from 'tiny-secp256k1';
import {
  bitcoinTxPolicyFields,
  parseBitcoinPsbt,
  signBitcoinPsbt,
  type BitcoinKey,
} from '../../../src/chains/bitcoin/psbt.js';
import { TransactionError } from '../../../src/chains/errors.js';
import { tapTweakHash } from '../../../src/crypto/taproot.js';
import { hexKey, schnorrSigner, secpSigner, toHex, ZERO_AUX } from './helpers.js';

bitcoinjs.initEccLib(ecc);

const PRIV = hexKey(0x41);
const PUB = secp256k1.getPublicKey(PRIV, true);
const XONLY = PUB.subarray(1);
const FOREIGN = hexKey(0x42);
const FOREIGN_PUB = secp256k1.getPublicKey(FOREIGN, true);
const key: BitcoinKey = { publicKey: PUB, ecdsa: secpSigner(PRIV), schnorr: schnorrSigner(PRIV) };
const NET = btc.NETWORK;

const wpkh = btc.p2wpkh(PUB, NET);
const tr = btc.p2tr(XONLY, undefined, NET);
const pkh = btc.p2pkh(PUB, NET);
const shwpkh = btc.p2sh(btc.p2wpkh(PUB, NET), NET);
const wsh = btc.p2wsh(btc.p2ms(1, [PUB]), NET); // docs/reference/addresses.md "Formats": P2WSH = 1-of-1 multisig
const foreign = btc.p2wpkh(FOREIGN_PUB, NET);

const txid = (b: number) => new Uint8Array(32).fill(b);

/** A previous transaction paying 50,000 sats to `script` at output 1, for non_witness_utxo. */
function prevTx(script: Uint8Array): { raw: Uint8Array; id: string } {
  const raw = btc.RawTx.encode({
    version: 2,
    segwitFlag: false,
    inputs: [{ txid: txid(0x99), index: 0, finalScriptSig: new Uint8Array([0x51]), sequence: 0xffffffff }],
    outputs: [
      { script: foreign.script, amount: 1000n },
      { script, amount: 50_000n },
    ],
    lockTime: 0,
  });
  // txid: double SHA-256 of the serialization, shown byte-reversed.
  return { raw, id: toHex(sha256(sha256(raw)).reverse()) };
}

const DEST_WPKH = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
const DEST_TR = 'bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr';

function build(): btc.Transaction {
  const t = new btc.Transaction({ lockTime: 800_000, allowUnknownOutputs: true });
  t.addInput({ txid: txid(1), index: 0, witnessUtxo: { script: wpkh.script, amount: 100_000n }, sequence: 0xfffffffd });
  t.addInput({ txid: txid(2), index: 3, witnessUtxo: { script: tr.script, amount: 200_000n }, tapInternalKey: tr.tapInternalKey });
  const p = prevTx(pkh.script);
  t.addInput({ txid: p.id, index: 1, nonWitnessUtxo: p.raw });
  t.addInput({ txid: txid(4), index: 0, witnessUtxo: { script: shwpkh.script, amount: 30_000n }, redeemScript: shwpkh.redeemScript });
  t.addInput({ txid: txid(5), index: 2, witnessUtxo: { script: wsh.script, amount: 20_000n }, witnessScript: wsh.witnessScript });
  t.addInput({ txid: txid(6), index: 0, witnessUtxo: { script: foreign.script, amount: 10_000n } });
  t.addOutputAddress(DEST_WPKH, 150_000n, NET);
  t.addOutputAddress(DEST_TR, 200_000n, NET);
  t.addOutput({ script: btc.Script.encode(['RETURN', new Uint8Array([1, 2, 3])]), amount: 0n });
  return t;
}
const OURS = [0, 1, 2, 3, 4];

describe('bitcoin: sign a mixed PSBT', () => {
  it('signs exactly our inputs, byte-identical to btc-signer signing with the private key', () => {
    const psbtHex = toHex(build().toPSBT());
    const res = signBitcoinPsbt(psbtHex, key);
    expect(res.signedInputs).toEqual(OURS);
    expect(res.signedTransaction).toMatch(/^70736274ff[0-9a-f]+$/);

    const ref = build();
    for (const i of OURS) ref.signIdx(PRIV, i, undefined, ZERO_AUX);
    expect(res.signedTransaction).toBe(toHex(ref.toPSBT()));

    // Not finalized; the foreign input untouched.
    const back = btc.Transaction.fromPSBT(Buffer.from(res.signedTransaction, 'hex'));
    for (let i = 0; i < back.inputsLength; i++) {
      expect(back.getInput(i).finalScriptWitness).toBeUndefined();
      expect(back.getInput(i).finalScriptSig).toBeUndefined();
    }
    expect(back.getInput(5).partialSig).toBeUndefined();
    expect(back.getInput(1).tapKeySig).toHaveLength(64); // SIGHASH_DEFAULT: no sighash byte
    expect(back.getInput(0).partialSig![0][1].at(-1)).toBe(0x01); // SIGHASH_ALL
  });

  it('signatures verify (bitcoinjs-lib) and the transaction finalizes and extracts (btc-signer)', () => {
    const res = signBitcoinPsbt(toHex(build().toPSBT()), key);
    const pj = bitcoinjs.Psbt.fromHex(res.signedTransaction);
    const validator = (pubkey: Uint8Array, msghash: Uint8Array, signature: Uint8Array) =>
      pubkey.length === 32 ? schnorr.verify(signature, msghash, pubkey) : secp256k1.verify(signature, msghash, pubkey, { prehash: false, format: 'compact' });
    for (const i of OURS) expect(pj.validateSignaturesOfInput(i, validator)).toBe(true);

    // A taproot key-path signature checked independently: BIP341 sighash from btc-signer, output key from the script.
    const t = btc.Transaction.fromPSBT(Buffer.from(res.signedTransaction, 'hex'));
    const prev = [0, 1, 2, 3, 4, 5].map((i) => {
      const inp = t.getInput(i);
      return inp.witnessUtxo ?? btc.RawTx.decode(prevTx(pkh.script).raw).outputs[1];
    });
    const msg = t.preimageWitnessV1(1, prev.map((p) => p.script), 0, prev.map((p) => p.amount));
    expect(schnorr.verify(t.getInput(1).tapKeySig!, msg, tr.script.subarray(2))).toBe(true);

    // The foreign party signs its input, then btc-signer finalizes and extracts.
    t.signIdx(FOREIGN, 5);
    t.finalize();
    const raw = t.extract();
    expect(raw.length).toBeGreaterThan(200);
    expect(btc.Transaction.fromRaw(raw, { allowUnknownOutputs: true }).id).toBe(t.id);
  });

  it('accepts base64 and 0x-hex input, returns hex', () => {
    const psbt = build().toPSBT();
    const fromB64 = signBitcoinPsbt(Buffer.from(psbt).toString('base64'), key).signedTransaction;
    const fromHex = signBitcoinPsbt('0x' + toHex(psbt), key).signedTransaction;
    expect(fromB64).toBe(fromHex);
  });

  it('a bitcoinjs-lib PSBT with P2WPKH and P2TR inputs', () => {
    const p = new bitcoinjs.Psbt();
    p.addInput({ hash: Buffer.alloc(32, 7), index: 0, witnessUtxo: { script: wpkh.script, value: 60_000n } });
    p.addInput({ hash: Buffer.alloc(32, 8), index: 1, witnessUtxo: { script: tr.script, value: 40_000n }, tapInternalKey: XONLY });
    p.addOutput({ address: DEST_WPKH, value: 99_000n });
    const res = signBitcoinPsbt(p.toHex(), key);
    expect(res.signedInputs).toEqual([0, 1]);
    const back = bitcoinjs.Psbt.fromHex(res.signedTransaction);
    const validator = (pubkey: Uint8Array, msghash: Uint8Array, signature: Uint8Array) =>
      pubkey.length === 32 ? ecc.verifySchnorr(msghash, pubkey, signature) : ecc.verify(msghash, pubkey, signature);
    expect(back.validateSignaturesOfInput(0, validator)).toBe(true);
    expect(back.validateSignaturesOfInput(1, validator)).toBe(true);
    back.finalizeAllInputs();
    expect(back.extractTransaction().ins).toHaveLength(2);
  });

  it('legacy P2SH multisig and P2SH-P2WSH inputs whose script holds the key', () => {
    const shms = btc.p2sh(btc.p2ms(1, [FOREIGN_PUB, PUB]), NET);
    const shwsh = btc.p2sh(btc.p2wsh(btc.p2ms(1, [PUB]), NET), NET);
    const p = prevTx(shms.script);
    const mk = () => {
      const t = new btc.Transaction();
      t.addInput({ txid: p.id, index: 1, nonWitnessUtxo: p.raw, redeemScript: shms.redeemScript });
      t.addInput({ txid: txid(8), index: 0, witnessUtxo: { script: shwsh.script, amount: 40_000n }, redeemScript: shwsh.redeemScript, witnessScript: shwsh.witnessScript });
      t.addOutputAddress(DEST_WPKH, 80_000n, NET);
      return t;
    };
    const res = signBitcoinPsbt(toHex(mk().toPSBT()), key);
    expect(res.signedInputs).toEqual([0, 1]);
    const ref = mk();
    ref.signIdx(PRIV, 0);
    ref.signIdx(PRIV, 1);
    expect(res.signedTransaction).toBe(toHex(ref.toPSBT()));
    const done = btc.Transaction.fromPSBT(Buffer.from(res.signedTransaction, 'hex'));
    done.finalize();
    expect(done.extract().length).toBeGreaterThan(0);
  });

  it('keeps unknown PSBT records and changes nothing but our signatures', () => {
    const p = new bitcoinjs.Psbt();
    p.addInput({ hash: Buffer.alloc(32, 7), index: 0, witnessUtxo: { script: wpkh.script, value: 60_000n } });
    p.addOutput({ address: DEST_WPKH, value: 59_000n });
    // An unassigned key type and a well-formed BIP174 proprietary key (0xfc, identifier "sigl", subtype 1).
    const unknownKey = Buffer.from([0x55, 0x01, 0x02]);
    const proprietaryKey = Buffer.from([0xfc, 0x04, ...Buffer.from('sigl'), 0x01]);
    p.addUnknownKeyValToInput(0, { key: unknownKey, value: Buffer.from('kept') });
    p.addUnknownKeyValToGlobal({ key: proprietaryKey, value: Buffer.from('global') });
    const res = signBitcoinPsbt(p.toHex(), key);
    const back = bitcoinjs.Psbt.fromHex(res.signedTransaction);
    const kv = (l?: Array<{ key: Uint8Array; value: Uint8Array }>) => l?.map((x) => [toHex(x.key), Buffer.from(x.value).toString()]);
    expect(kv(back.data.inputs[0].unknownKeyVals)).toEqual([[toHex(unknownKey), 'kept']]);
    expect(kv(back.data.globalMap.unknownKeyVals)).toEqual([[toHex(proprietaryKey), 'global']]);
    // bitcoinjs signing the same input with the private key gives the same PSBT.
    const signerJs = {
      publicKey: PUB,
      sign: (h: Uint8Array) => secp256k1.sign(h, PRIV, { prehash: false }),
    };
    p.signInput(0, signerJs);
    expect(res.signedTransaction).toBe(p.toHex());
  });
});

describe('bitcoin: bitcoin.tx policy fields', () => {
  it('inputs, outputs with address and type, locktime, fee', () => {
    const t = build();
    const p = bitcoinTxPolicyFields(parseBitcoinPsbt(toHex(t.toPSBT())), 'mainnet');
    expect(p.version).toBe('2');
    expect(p.inputs[0]).toEqual({ tx_id: '01'.repeat(32), vout: 0n, sequence: 0xfffffffdn });
    expect(p.inputs[2]).toEqual({ tx_id: prevTx(pkh.script).id, vout: 1n, sequence: 0xffffffffn });
    expect(p.inputs.map((i) => i.vout)).toEqual([0n, 3n, 1n, 0n, 2n, 0n]);
    expect(p.outputs).toEqual([
      { value: 150_000n, script_pubkey: toHex(btc.OutScript.encode(btc.Address(NET).decode(DEST_WPKH))), address: DEST_WPKH, address_type: 'P2WPKH' },
      { value: 200_000n, script_pubkey: toHex(btc.OutScript.encode(btc.Address(NET).decode(DEST_TR))), address: DEST_TR, address_type: 'P2TR' },
      { value: 0n, script_pubkey: '6a03010203', address: '', address_type: 'OP_RETURN' },
    ]);
    expect(p.locktime).toEqual({ amount: 800_000n, type: 'Blocks' });
    expect(p.fee).toBe(100_000n + 200_000n + 50_000n + 30_000n + 20_000n + 10_000n - 350_000n);
  });
  it('addresses per network and script kind', () => {
    const t = new btc.Transaction({ lockTime: 1_700_000_000 });
    t.addInput({ txid: txid(1), index: 0, witnessUtxo: { script: wpkh.script, amount: 10_000n } });
    for (const s of [pkh, shwpkh, wpkh, wsh, tr]) t.addOutput({ script: s.script, amount: 1000n });
    const parsed = parseBitcoinPsbt(toHex(t.toPSBT()));
    const main = bitcoinTxPolicyFields(parsed, 'mainnet');
    expect(main.outputs.map((o) => [o.address, o.address_type])).toEqual([
      [pkh.address, 'P2PKH'],
      [shwpkh.address, 'P2SH'],
      [wpkh.address, 'P2WPKH'],
      [wsh.address, 'P2WSH'],
      [tr.address, 'P2TR'],
    ]);
    expect(main.locktime.type).toBe('Seconds');
    const test = bitcoinTxPolicyFields(parsed, 'testnet').outputs.map((o) => o.address);
    expect(test).toEqual([pkh, shwpkh, wpkh, wsh, tr].map((s) => btc.Address(btc.TEST_NETWORK).encode(btc.OutScript.decode(s.script))));
    const reg = bitcoinTxPolicyFields(parsed, 'regtest').outputs;
    expect(reg[2].address.startsWith('bcrt1q')).toBe(true);
    expect(reg[4].address.startsWith('bcrt1p')).toBe(true);
  });
});

describe('bitcoin: refusals', () => {
  function expectErr(f: () => unknown, code: string, re: RegExp) {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(TransactionError);
      expect((e as TransactionError).chain).toBe('bitcoin');
      expect((e as TransactionError).code).toBe(code);
      expect((e as Error).message).toMatch(re);
      return;
    }
    throw new Error('expected a TransactionError');
  }
  it('not a PSBT', () => {
    expectErr(() => parseBitcoinPsbt('deadbeef'), 'INVALID_TRANSACTION', /magic/);
    expectErr(() => parseBitcoinPsbt('70736274ff00'), 'INVALID_TRANSACTION', /failed to parse PSBT/);
    expectErr(() => parseBitcoinPsbt('%%%'), 'INVALID_TRANSACTION', /hex or base64/);
  });
  it('no input belongs to the key', () => {
    const t = new btc.Transaction();
    t.addInput({ txid: txid(1), index: 0, witnessUtxo: { script: foreign.script, amount: 10_000n } });
    t.addOutputAddress(DEST_WPKH, 9_000n, NET);
    expectErr(() => signBitcoinPsbt(toHex(t.toPSBT()), key), 'NO_MATCHING_SIGNER', /no input/);
  });
  it('a taproot script tree on our key is refused', () => {
    const leaf = btc.p2tr_pk(FOREIGN_PUB.subarray(1));
    const withTree = btc.p2tr(XONLY, { script: leaf.script }, NET);
    const t = new btc.Transaction();
    t.addInput({
      txid: txid(1),
      index: 0,
      witnessUtxo: { script: withTree.script, amount: 10_000n },
      tapInternalKey: XONLY,
      tapLeafScript: withTree.tapLeafScript,
    });
    t.addOutputAddress(DEST_WPKH, 9_000n, NET);
    expectErr(() => signBitcoinPsbt(toHex(t.toPSBT()), key), 'UNSUPPORTED_TRANSACTION', /script trees/);
    // Same with only the merkle root declared.
    const u = new btc.Transaction();
    u.addInput({ txid: txid(1), index: 0, witnessUtxo: { script: withTree.script, amount: 10_000n }, tapInternalKey: XONLY, tapMerkleRoot: withTree.tapMerkleRoot });
    u.addOutputAddress(DEST_WPKH, 9_000n, NET);
    expectErr(() => signBitcoinPsbt(toHex(u.toPSBT()), key), 'UNSUPPORTED_TRANSACTION', /script trees/);
  });
  it('a sighash other than ALL / DEFAULT is refused', () => {
    const t = new btc.Transaction();
    t.addInput({ txid: txid(1), index: 0, witnessUtxo: { script: wpkh.script, amount: 10_000n }, sighashType: btc.SigHash.NONE });
    t.addOutputAddress(DEST_WPKH, 9_000n, NET);
    expectErr(() => signBitcoinPsbt(toHex(t.toPSBT()), key), 'UNSUPPORTED_TRANSACTION', /sighash type 2/);
  });
  it('a legacy input without non_witness_utxo is refused', () => {
    const t = new btc.Transaction({ allowLegacyWitnessUtxo: true });
    t.addInput({ txid: txid(1), index: 0, witnessUtxo: { script: pkh.script, amount: 10_000n } });
    t.addOutputAddress(DEST_WPKH, 9_000n, NET);
    expectErr(() => signBitcoinPsbt(toHex(t.toPSBT()), key), 'INVALID_TRANSACTION', /non_witness_utxo/);
  });
  it('a non_witness_utxo that is not the spent transaction is refused', () => {
    const p = prevTx(pkh.script);
    const t = new btc.Transaction();
    t.addInput({ txid: p.id, index: 1, nonWitnessUtxo: p.raw });
    t.addOutputAddress(DEST_WPKH, 9_000n, NET);
    // Point the unsigned transaction's input at another txid (stored byte-reversed) and keep the old prevtx.
    const internal = toHex(Buffer.from(p.id, 'hex').reverse());
    const bad = toHex(t.toPSBT()).replace(internal, '03'.repeat(32));
    expectErr(() => parseBitcoinPsbt(bad), 'INVALID_TRANSACTION', /txid/);
  });
  it('outputs larger than inputs: policy fields refuse a negative fee', () => {
    const t = new btc.Transaction();
    t.addInput({ txid: txid(1), index: 0, witnessUtxo: { script: wpkh.script, amount: 1_000n } });
    t.addOutputAddress(DEST_WPKH, 9_000n, NET);
    expectErr(() => bitcoinTxPolicyFields(parseBitcoinPsbt(toHex(t.toPSBT()))), 'INVALID_TRANSACTION', /more than the inputs/);
  });
});

describe('bitcoin: BIP341 helpers', () => {
  it('tap tweak and tweaked secret give the P2TR output key (BIP86)', () => {
    const t = tapTweakHash(XONLY);
    expect(toHex(t)).toBe(toHex(sha256(new Uint8Array([...sha256(new TextEncoder().encode('TapTweak')), ...sha256(new TextEncoder().encode('TapTweak')), ...XONLY]))));
  });
});
