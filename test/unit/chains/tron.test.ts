// Tron sign_transaction: transactions built offline by TronWeb's TransactionBuilder (block header given,
// so no node is contacted), parsed into tron.tx, signed by us, compared with TronWeb's own signature and
// checked by recovering the signer address with TronWeb.
import { describe, expect, it } from 'vitest';
import { TronWeb, utils as twUtils } from 'tronweb';
import { parseTronTransaction, signTronTransaction, tronTxPolicyFields } from '../../../src/chains/tron/tx.js';
import { TransactionError } from '../../../src/chains/errors.js';
import { encodeBytesField } from '../../../src/chains/tron/protobuf.js';
import { hexKey, secpSigner, toHex } from './helpers.js';

const PRIV = hexKey(0x11);
const PRIV_HEX = toHex(PRIV);
const signer = secpSigner(PRIV);
const tw = new TronWeb({ fullHost: 'http://127.0.0.1:9' }); // never contacted: every builder call below is local
const FROM = TronWeb.address.fromPrivateKey(PRIV_HEX) as string;
const TO = TronWeb.address.fromPrivateKey('22'.repeat(32)) as string;
const USDT_NILE = 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf';
const blockHeader = { ref_block_bytes: 'c3e8', ref_block_hash: 'e3b7e1a1c2d3f4e5', expiration: 1700000060000, timestamp: 1700000000000 };

type AnyTx = { txID: string; raw_data_hex: string; raw_data: any; signature?: string[] };

async function builders(): Promise<Record<string, AnyTx>> {
  const b = tw.transactionBuilder;
  const trc20 = await b.triggerSmartContract(
    USDT_NILE,
    'transfer(address,uint256)',
    { feeLimit: 100_000_000, callValue: 0, txLocal: true, blockHeader } as never,
    [
      { type: 'address', value: TO },
      { type: 'uint256', value: 1000 },
    ],
    FROM,
  );
  const transfer = await b.sendTrx(TO, 1_234_567, FROM, { blockHeader });
  return {
    transfer,
    'transfer with memo': await b.addUpdateData(transfer, 'hello memo', 'utf8', { txLocal: true }),
    trc20: (trc20 as { transaction: AnyTx }).transaction,
    delegate: await b.delegateResource(1_000_000, TO, 'ENERGY', FROM, true, 86400, { blockHeader }),
    undelegate: await b.undelegateResource(2_000_000, TO, 'BANDWIDTH', FROM, { blockHeader }),
    freeze: await b.freezeBalanceV2(3_000_000, 'ENERGY', FROM, { blockHeader }),
    unfreeze: await b.unfreezeBalanceV2(4_000_000, 'BANDWIDTH', FROM, { blockHeader }),
    permissions: await b.updateAccountPermissions(
      FROM,
      { type: 0, permission_name: 'owner', threshold: 1, keys: [{ address: FROM, weight: 1 }] } as never,
      null,
      [
        {
          type: 2,
          permission_name: 'active0',
          threshold: 2,
          operations: '7fff1fc0033e0000000000000000000000000000000000000000000000000000',
          keys: [
            { address: FROM, weight: 1 },
            { address: TO, weight: 1 },
          ],
        },
      ] as never,
      { blockHeader },
    ),
  };
}

describe('tron: sign what TronWeb builds', async () => {
  const txs = await builders();
  for (const [name, tx] of Object.entries(txs)) {
    it(name, () => {
      const parsed = parseTronTransaction(tx.raw_data_hex);
      expect(toHex(parsed.txId)).toBe(tx.txID); // txID = sha256(raw_data)

      const signed = signTronTransaction(tx.raw_data_hex, signer);
      expect(signed).toMatch(/^[0-9a-f]+$/);
      // Serialized Transaction { raw_data = 1; signature = 2 }.
      const sig = signed.slice(-130);
      expect(signed).toBe(toHex(encodeBytesField(1, Buffer.from(tx.raw_data_hex, 'hex'))) + '1241' + sig);
      // Same signature TronWeb makes with the same key (RFC 6979; v = 27 + recovery id).
      const ref = twUtils.crypto.signTransaction(PRIV_HEX, JSON.parse(JSON.stringify(tx)));
      expect(ref.signature.map((x: string) => x.toLowerCase())).toEqual([sig]); // TronWeb writes v in uppercase hex
      // TronWeb recovers our signer from it.
      expect(tw.trx.ecRecover({ ...tx, signature: [sig] } as never)).toBe(FROM);
      // And TronWeb's protobuf reads the envelope back.
      const proto = (globalThis as any).TronWebProto.Transaction.deserializeBinary(Buffer.from(signed, 'hex'));
      expect(toHex(proto.getRawData().serializeBinary())).toBe(tx.raw_data_hex);
      expect(toHex(proto.getSignatureList_asU8()[0])).toBe(sig);
      // 0x accepted.
      expect(signTronTransaction('0x' + tx.raw_data_hex, signer)).toBe(signed);
    });
  }
});

describe('tron: tron.tx policy fields', async () => {
  const txs = await builders();
  const p = (name: string) => tronTxPolicyFields(parseTronTransaction(txs[name].raw_data_hex));
  it('TransferContract', () => {
    expect(p('transfer')).toEqual({
      ref_block_bytes: 'c3e8',
      ref_block_hash: 'e3b7e1a1c2d3f4e5',
      expiration: 1700000060000n,
      timestamp: 1700000000000n,
      data: '',
      fee_limit: 0n,
      contract: [{ type: 'TransferContract', permission_id: 0n, owner_address: FROM, to_address: TO, amount: 1_234_567n }],
    });
    expect(p('transfer with memo').data).toBe(Buffer.from('hello memo').toString('hex'));
  });
  it('TriggerSmartContract (TRC-20 transfer)', () => {
    const t = p('trc20');
    expect(t.fee_limit).toBe(100_000_000n);
    const c = t.contract[0];
    expect(c.type).toBe('TriggerSmartContract');
    expect(c.contract_address).toBe(USDT_NILE);
    expect(c.owner_address).toBe(FROM);
    expect(c.data!.slice(0, 8)).toBe('a9059cbb');
    expect(c.data).toBe(txs.trc20.raw_data.contract[0].parameter.value.data);
    expect(c.call_value).toBe(0n);
    expect(c.call_token_value).toBe(0n);
    expect(c.token_id).toBe(0n);
  });
  it('resource contracts', () => {
    expect(p('delegate').contract[0]).toEqual({
      type: 'DelegateResourceContract',
      permission_id: 0n,
      owner_address: FROM,
      resource: 'ENERGY',
      balance: 1_000_000n,
      receiver_address: TO,
      lock: true,
      lock_period: 86400n,
    });
    expect(p('undelegate').contract[0]).toEqual({
      type: 'UnDelegateResourceContract',
      permission_id: 0n,
      owner_address: FROM,
      resource: 'BANDWIDTH',
      balance: 2_000_000n,
      receiver_address: TO,
    });
    expect(p('freeze').contract[0]).toEqual({ type: 'FreezeBalanceV2Contract', permission_id: 0n, owner_address: FROM, frozen_balance: 3_000_000n, resource: 'ENERGY' });
    expect(p('unfreeze').contract[0]).toEqual({ type: 'UnfreezeBalanceV2Contract', permission_id: 0n, owner_address: FROM, unfreeze_balance: 4_000_000n, resource: 'BANDWIDTH' });
  });
  it('AccountPermissionUpdateContract', () => {
    const c = p('permissions').contract[0];
    expect(c.type).toBe('AccountPermissionUpdateContract');
    expect(c.owner).toEqual({ type: 'Owner', id: 0n, permission_name: 'owner', threshold: 1n, parent_id: 0n, operations: '', keys: [{ address: FROM, weight: 1n }] });
    expect(c.witness).toBeUndefined();
    expect(c.actives).toEqual([
      {
        type: 'Active',
        id: 0n, // tronweb leaves id unset; the node assigns 2+n
        permission_name: 'active0',
        threshold: 2n,
        parent_id: 0n,
        operations: '7fff1fc0033e0000000000000000000000000000000000000000000000000000',
        keys: [
          { address: FROM, weight: 1n },
          { address: TO, weight: 1n },
        ],
      },
    ]);
  });
});

describe('tron: envelopes, multi-signature and bad input', async () => {
  const txs = await builders();
  it('a whole Transaction with a signature gets a second one appended', () => {
    const other = secpSigner(hexKey(0x33));
    const first = signTronTransaction(txs.transfer.raw_data_hex, other);
    const both = signTronTransaction(first, signer);
    const proto = (globalThis as any).TronWebProto.Transaction.deserializeBinary(Buffer.from(both, 'hex'));
    const sigs = proto.getSignatureList_asU8().map((s: Uint8Array) => toHex(s));
    expect(sigs).toHaveLength(2);
    const recovered = tw.trx.ecRecover({ ...txs.transfer, signature: sigs } as never) as string[];
    expect(recovered).toEqual([TronWeb.address.fromPrivateKey('33'.repeat(32)), FROM]);
    // Signing again with the same key adds nothing.
    expect(signTronTransaction(both, signer)).toBe(both);
  });
  function expectErr(f: () => unknown, code: string, re: RegExp) {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(TransactionError);
      expect((e as TransactionError).chain).toBe('tron');
      expect((e as TransactionError).code).toBe(code);
      expect((e as Error).message).toMatch(re);
      return;
    }
    throw new Error('expected a TransactionError');
  }
  it('garbage and truncation', () => {
    expectErr(() => parseTronTransaction('nothex'), 'INVALID_TRANSACTION', /hex/);
    expectErr(() => parseTronTransaction(txs.transfer.raw_data_hex.slice(0, -2)), 'INVALID_TRANSACTION', /failed to parse/);
    // A Transaction envelope whose raw_data is garbage, and a raw_data without a contract.
    expectErr(() => parseTronTransaction('0a02c3e8'), 'INVALID_TRANSACTION', /failed to parse raw_data/);
    expectErr(() => parseTronTransaction('0a02c3e82208e3b7e1a1c2d3f4e5'), 'INVALID_TRANSACTION', /neither a Transaction.raw nor a Transaction/);
    const noContract = toHex(encodeBytesField(1, Buffer.from('0a02c3e82208e3b7e1a1c2d3f4e5', 'hex')));
    expectErr(() => parseTronTransaction(noContract), 'INVALID_TRANSACTION', /exactly one contract, found 0/);
  });
  it('unsupported contract types are refused unless allowed', async () => {
    const vote = await tw.transactionBuilder.vote({ [TO]: 5 }, FROM, { blockHeader } as never);
    expectErr(() => parseTronTransaction(vote.raw_data_hex), 'UNSUPPORTED_TRANSACTION', /VoteWitnessContract/);
    const p = tronTxPolicyFields(parseTronTransaction(vote.raw_data_hex, { allowUnsupportedContracts: true }));
    expect(p.contract).toEqual([{ type: 'VoteWitnessContract', permission_id: 0n, owner_address: FROM }]);
  });
  it('a parameter type_url that disagrees with the contract type is invalid', () => {
    const hex = txs.transfer.raw_data_hex.replace(Buffer.from('TransferContract').toString('hex'), Buffer.from('TransferContracX').toString('hex'));
    expectErr(() => parseTronTransaction(hex), 'INVALID_TRANSACTION', /does not match/);
  });
});
