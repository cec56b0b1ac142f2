// Published vectors (test/vectors/tx-*.json) and RLP edge cases: checks that do not lean on the
// libraries the other tests compare against.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import * as btc from '@scure/btc-signer';
import { toRlp, fromRlp, bytesToHex } from 'viem';
import { ethTxPolicyFields, parseEthereumTransaction, signEthereumTransaction } from '../../../src/chains/ethereum/tx.js';
import { parseBitcoinPsbt, signBitcoinPsbt } from '../../../src/chains/bitcoin/psbt.js';
import { rlpDecode, rlpEncode, RlpError, type RlpItem } from '../../../src/chains/ethereum/rlp.js';
import { secpSigner, toHex } from './helpers.js';

const load = (name: string) => JSON.parse(readFileSync(new URL(`../../vectors/${name}`, import.meta.url), 'utf8'));
const hex = (h: string) => Uint8Array.from(Buffer.from(h, 'hex'));

describe('vectors: EIP-155', () => {
  for (const v of load('tx-ethereum.json').vectors) {
    it(v.name, () => {
      const tx = parseEthereumTransaction(v.unsigned);
      expect(toHex(tx.signingHash)).toBe(v.signingHash);
      expect(signEthereumTransaction(tx, secpSigner(hex(v.privateKey)))).toBe(v.signed);
      const p = ethTxPolicyFields(tx, '0x0000000000000000000000000000000000000000');
      for (const [k, want] of Object.entries(v.policy as Record<string, string>)) {
        const got = p[k as keyof typeof p];
        expect(typeof got === 'bigint' ? got.toString() : got).toBe(want);
      }
    });
  }
});

describe('vectors: BIP143 native P2WPKH', () => {
  for (const v of load('tx-bitcoin.json').vectors) {
    it(v.name, () => {
      const t = btc.Transaction.fromRaw(hex(v.unsignedTx), { allowUnknownOutputs: true, allowUnknownInputs: true });
      v.prevouts.forEach((p: { script: string; amount: string }, i: number) =>
        t.updateInput(i, { witnessUtxo: { script: hex(p.script), amount: BigInt(p.amount) } }, true),
      );
      const digests: Uint8Array[] = [];
      const res = signBitcoinPsbt(toHex(t.toPSBT()), { publicKey: hex(v.publicKey), ecdsa: secpSigner(hex(v.privateKey), digests) });
      expect(res.signedInputs).toEqual([v.signedInput]);
      expect(digests.map(toHex)).toEqual([v.sigHash]);
      const back = parseBitcoinPsbt(res.signedTransaction).psbt.getInput(v.signedInput);
      expect(toHex(back.partialSig![0][0])).toBe(v.publicKey);
      expect(toHex(back.partialSig![0][1])).toBe(v.signature);
    });
  }
});

describe('rlp', () => {
  const cases: Array<[RlpItem, string]> = [
    [new Uint8Array(0), '80'],
    [Uint8Array.of(0), '00'],
    [Uint8Array.of(0x7f), '7f'],
    [Uint8Array.of(0x80), '8180'],
    [Buffer.from('dog'), '83646f67'],
    [[Buffer.from('cat'), Buffer.from('dog')], 'c88363617483646f67'],
    [[], 'c0'],
    [Uint8Array.of(0x04, 0x00), '820400'],
    [[[], [[]], [[], [[]]]], 'c7c0c1c0c3c0c1c0'], // set-theoretic three
    [new Uint8Array(56).fill(0x61), 'b838' + '61'.repeat(56)],
    [new Uint8Array(1024).fill(1), 'b90400' + '01'.repeat(1024)],
  ];
  it('encodes and decodes the Yellow Paper / ethereum/tests examples', () => {
    for (const [item, enc] of cases) {
      expect(toHex(rlpEncode(item))).toBe(enc);
      expect(toHex(rlpEncode(rlpDecode(hex(enc))))).toBe(enc);
    }
  });
  it('agrees with viem on nested random data', () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff);
    const gen = (d: number): RlpItem =>
      d > 3 || rnd() % 3 === 0 ? Uint8Array.from({ length: rnd() % 70 }, () => rnd() & 0xff) : Array.from({ length: rnd() % 5 }, () => gen(d + 1));
    const toViem = (i: RlpItem): unknown => (i instanceof Uint8Array ? bytesToHex(i) : i.map(toViem));
    for (let n = 0; n < 200; n++) {
      const item = gen(0);
      const ours = toHex(rlpEncode(item));
      expect('0x' + ours).toBe(toRlp(toViem(item) as never));
      expect(JSON.stringify(toViem(rlpDecode(hex(ours))))).toBe(JSON.stringify(fromRlp(('0x' + ours) as `0x${string}`, 'hex')));
    }
  });
  it('rejects non-canonical and malformed encodings', () => {
    for (const bad of ['8100', '817f', 'b801ff', 'b90001' + '00', 'f800', 'c1', '8261', '', '80' + '00', 'c28080' + '80', 'b9000a' + '00'.repeat(10)]) {
      expect(() => rlpDecode(hex(bad)), bad).toThrow(RlpError);
    }
  });
});
