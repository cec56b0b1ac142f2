// Ethereum sign_transaction: parse/sign every envelope viem and ethers emit, compare with their own
// signing byte for byte, recover the sender, and run the real @turnkey/viem and @turnkey/ethers signers
// against our output.
import { describe, expect, it } from 'vitest';
import {
  parseTransaction as viemParse,
  recoverTransactionAddress,
  serializeTransaction,
  type TransactionSerializable,
  keccak256,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { Transaction as EthersTx, Wallet } from 'ethers';
import { createAccountWithAddress } from '@turnkey/viem';
import { TurnkeySigner } from '@turnkey/ethers';
import {
  ethTxPolicyFields,
  parseEthereumTransaction,
  serializeUnsignedEip1559,
  serializeUnsignedEip7702,
  signEthereumTransaction,
} from '../../../src/chains/ethereum/tx.js';
import { TransactionError } from '../../../src/chains/errors.js';
import { rlpDecode, rlpEncode } from '../../../src/chains/ethereum/rlp.js';
import { hexKey, secpSigner, toHex } from './helpers.js';

const PRIV = hexKey(0x11);
const PRIV_HEX = ('0x' + toHex(PRIV)) as `0x${string}`;
const account = privateKeyToAccount(PRIV_HEX);
const signer = secpSigner(PRIV);
const TO = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8' as const;
const DATA = '0xa9059cbb0000000000000000000000003c44cdddb6a900fa2b585dd299e03d12fa4293bc00000000000000000000000000000000000000000000000000000000000f4240' as const;

async function authorization() {
  return account.signAuthorization({
    contractAddress: '0x90f79bf6eb2c4f870365e785982e1f101e93b906',
    chainId: 1,
    nonce: 7,
  });
}

async function cases(): Promise<Record<string, TransactionSerializable>> {
  return {
    'legacy EIP-155': { type: 'legacy', chainId: 1, nonce: 5, gasPrice: 20_000_000_000n, gas: 21000n, to: TO, value: 10n ** 18n },
    'legacy pre-155': { type: 'legacy', nonce: 0, gasPrice: 1n, gas: 21000n, to: TO, value: 1n },
    'legacy big chain id': { type: 'legacy', chainId: 11155111, nonce: 1, gasPrice: 3n, gas: 60000n, to: TO, value: 0n, data: DATA },
    eip2930: {
      type: 'eip2930',
      chainId: 10,
      nonce: 3,
      gasPrice: 5n,
      gas: 70000n,
      to: TO,
      value: 0n,
      data: DATA,
      accessList: [
        {
          address: '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc',
          storageKeys: ['0x0000000000000000000000000000000000000000000000000000000000000001'],
        },
      ],
    },
    eip1559: {
      type: 'eip1559',
      chainId: 8453,
      nonce: 42,
      maxFeePerGas: 30_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
      gas: 100000n,
      to: TO,
      value: 123456789n,
      data: DATA,
    },
    'eip1559 contract creation': {
      type: 'eip1559',
      chainId: 1,
      nonce: 0,
      maxFeePerGas: 2n,
      maxPriorityFeePerGas: 1n,
      gas: 3_000_000n,
      value: 0n,
      data: '0x6080604052348015600f57600080fd5b50',
    },
    eip4844: {
      type: 'eip4844',
      chainId: 1,
      nonce: 9,
      maxFeePerGas: 10n,
      maxPriorityFeePerGas: 1n,
      maxFeePerBlobGas: 7n,
      gas: 21000n,
      to: TO,
      value: 0n,
      blobVersionedHashes: ['0x01a915e4d060149eb4365960e6a7a45f334393093061116b197e3240065ff2d8'],
    },
    eip7702: {
      type: 'eip7702',
      chainId: 1,
      nonce: 8,
      maxFeePerGas: 10n,
      maxPriorityFeePerGas: 1n,
      gas: 90000n,
      to: account.address,
      value: 0n,
      data: '0xdeadbeef',
      authorizationList: [await authorization()],
    },
  };
}

describe('ethereum: parse and sign every envelope', async () => {
  const all = await cases();
  for (const [name, tx] of Object.entries(all)) {
    it(name, async () => {
      const unsigned = serializeTransaction(tx);
      const parsed = parseEthereumTransaction(unsigned.slice(2)); // the SDK strips 0x
      const parsed0x = parseEthereumTransaction(unsigned); // and 0x is accepted too
      expect(toHex(parsed0x.signingHash)).toBe(toHex(parsed.signingHash));

      // Parsed fields match viem's own parser.
      const v = viemParse(unsigned);
      expect(parsed.nonce).toBe(BigInt(v.nonce ?? 0));
      expect(parsed.gas).toBe(v.gas ?? 0n);
      expect(parsed.value).toBe(v.value ?? 0n);
      expect(parsed.to).toBe(v.to ?? null);
      expect('0x' + toHex(parsed.data)).toBe(v.data ?? '0x');
      expect(parsed.chainId).toBe(v.chainId === undefined ? null : BigInt(v.chainId));
      if ('maxFeePerGas' in v && v.maxFeePerGas !== undefined) expect(parsed.maxFeePerGas).toBe(v.maxFeePerGas);
      if ('gasPrice' in v && v.gasPrice !== undefined) expect(parsed.gasPrice).toBe(v.gasPrice);
      // Signing hash is keccak of the unsigned serialization (EIP-155 form for legacy).
      expect('0x' + toHex(parsed.signingHash)).toBe(keccak256(unsigned));

      const signed = signEthereumTransaction(unsigned.slice(2), signer);
      expect(signed.startsWith('0x')).toBe(false);
      expect(signed).toMatch(/^[0-9a-f]+$/);
      // Byte-identical to viem signing the same transaction with the same key (RFC 6979).
      const viemSigned = await account.signTransaction(tx);
      expect('0x' + signed).toBe(viemSigned);
      expect(await recoverTransactionAddress({ serializedTransaction: ('0x' + signed) as never })).toBe(account.address);

      // ethers agrees on the sender and re-serializes to the same bytes (it has no 4844-without-blobs
      // or 7702 quirks here).
      const e = EthersTx.from('0x' + signed);
      expect(e.from).toBe(account.address);
      expect(e.serialized).toBe('0x' + signed);
    });
  }

  it('ethers-built transactions sign to what ethers Wallet produces', async () => {
    const wallet = new Wallet(PRIV_HEX);
    for (const req of [
      { type: 2, chainId: 1n, nonce: 1, maxFeePerGas: 100n, maxPriorityFeePerGas: 2n, gasLimit: 21000n, to: TO, value: 5n },
      { type: 1, chainId: 137n, nonce: 2, gasPrice: 9n, gasLimit: 50000n, to: TO, data: DATA, accessList: [] },
      { type: 0, chainId: 56n, nonce: 3, gasPrice: 9n, gasLimit: 50000n, to: TO, value: 0n },
    ]) {
      const t = EthersTx.from(req);
      const signed = signEthereumTransaction(t.unsignedSerialized.substring(2), signer);
      expect('0x' + signed).toBe(await wallet.signTransaction(req));
      expect(EthersTx.from('0x' + signed).from).toBe(wallet.address);
    }
  });
});

describe('ethereum: policy struct (eth.tx)', async () => {
  const all = await cases();
  it('exposes the documented names and values', () => {
    const p = ethTxPolicyFields(parseEthereumTransaction(serializeTransaction(all.eip1559)), account.address);
    expect(p).toEqual({
      from: account.address.toLowerCase(),
      to: TO,
      data: DATA,
      value: 123456789n,
      gas: 100000n,
      gas_price: 30_000_000_000n,
      chain_id: 8453n,
      nonce: 42n,
      max_fee_per_gas: 30_000_000_000n,
      max_priority_fee_per_gas: 1_000_000_000n,
      type: 'TYPE_2',
    });
    expect(p.data.slice(0, 10)).toBe('0xa9059cbb');
    expect(p.data.slice(34, 74)).toBe('3c44cdddb6a900fa2b585dd299e03d12fa4293bc');
  });
  it('legacy: gas_price, chain id, no 1559 fields; creation has to ""', () => {
    const p = ethTxPolicyFields(parseEthereumTransaction(serializeTransaction(all['legacy EIP-155'])), account.address);
    expect(p.type).toBe('LEGACY');
    expect(p.gas_price).toBe(20_000_000_000n);
    expect(p.chain_id).toBe(1n);
    expect(p.data).toBe('0x');
    expect('max_fee_per_gas' in p).toBe(false);
    const pre = ethTxPolicyFields(parseEthereumTransaction(serializeTransaction(all['legacy pre-155'])), account.address);
    expect(pre.chain_id).toBe(0n);
    const c = ethTxPolicyFields(parseEthereumTransaction(serializeTransaction(all['eip1559 contract creation'])), account.address);
    expect(c.to).toBe('');
  });
  it('types 1, 3, 4', () => {
    expect(ethTxPolicyFields(parseEthereumTransaction(serializeTransaction(all.eip2930)), TO).type).toBe('TYPE_1');
    const b = ethTxPolicyFields(parseEthereumTransaction(serializeTransaction(all.eip4844)), TO);
    expect(b.type).toBe('TYPE_3');
    expect(b.max_fee_per_blob_gas).toBe(7n);
    const s = parseEthereumTransaction(serializeTransaction(all.eip7702));
    expect(ethTxPolicyFields(s, TO).type).toBe('TYPE_4');
    expect(s.authorizationList).toHaveLength(1);
    expect(s.authorizationList![0].address).toBe('0x90f79bf6eb2c4f870365e785982e1f101e93b906');
    expect(s.authorizationList![0].nonce).toBe(7n);
  });
});

describe('ethereum: the official SDK signers accept our output', async () => {
  const all = await cases();
  function fakeClient() {
    const seen: Array<{ unsignedTransaction: string; type: string }> = [];
    return {
      seen,
      client: {
        async signTransaction(p: { signWith: string; unsignedTransaction: string; type: string }) {
          seen.push(p);
          return {
            activity: { id: 'a', status: 'ACTIVITY_STATUS_COMPLETED' },
            signedTransaction: signEthereumTransaction(p.unsignedTransaction, signer),
          };
        },
      },
    };
  }
  it('@turnkey/viem signTransaction (1559, 7702, 4844)', async () => {
    const { client, seen } = fakeClient();
    const tk = createAccountWithAddress({ client: client as never, organizationId: 'o', signWith: account.address });
    for (const name of ['eip1559', 'eip7702', 'legacy EIP-155'] as const) {
      const out = await tk.signTransaction(all[name]);
      expect(out).toBe(await account.signTransaction(all[name]));
    }
    expect(seen.every((s) => s.type === 'TRANSACTION_TYPE_ETHEREUM' && !s.unsignedTransaction.startsWith('0x'))).toBe(true);
  });
  it('@turnkey/ethers TurnkeySigner.signTransaction', async () => {
    const { client } = fakeClient();
    const s = new TurnkeySigner({ client: client as never, organizationId: 'o', signWith: account.address });
    const req = { type: 2, chainId: 1n, nonce: 4, maxFeePerGas: 100n, maxPriorityFeePerGas: 2n, gasLimit: 21000n, to: TO, value: 5n };
    const out = await s.signTransaction(req);
    expect(out).toBe(await new Wallet(PRIV_HEX).signTransaction(req));
  });
});

describe('ethereum: bad input is a clear TransactionError', async () => {
  const all = await cases();
  const u1559 = serializeTransaction(all.eip1559);
  function expectInvalid(hex: string, code: string, re: RegExp) {
    try {
      parseEthereumTransaction(hex);
    } catch (e) {
      expect(e).toBeInstanceOf(TransactionError);
      expect((e as TransactionError).code).toBe(code);
      expect((e as TransactionError).chain).toBe('ethereum');
      expect((e as Error).message).toMatch(re);
      return;
    }
    throw new Error('expected a TransactionError');
  }
  it('not hex / empty / odd', () => {
    expectInvalid('', 'INVALID_TRANSACTION', /empty/);
    expectInvalid('0xzz', 'INVALID_TRANSACTION', /hex/);
    expectInvalid('abc', 'INVALID_TRANSACTION', /hex/);
  });
  it('truncated and trailing bytes', () => {
    expectInvalid(u1559.slice(0, -2), 'INVALID_TRANSACTION', /failed to parse/);
    expectInvalid(u1559 + '00', 'INVALID_TRANSACTION', /trailing/);
  });
  it('already signed', async () => {
    expectInvalid(await account.signTransaction(all.eip1559), 'INVALID_TRANSACTION', /already signed/);
    expectInvalid(await account.signTransaction(all['legacy EIP-155']), 'INVALID_TRANSACTION', /already signed/);
  });
  it('non-canonical integer (leading zero)', () => {
    const f = rlpDecode(Buffer.from(u1559.slice(4), 'hex')) as Uint8Array[];
    f[1] = Uint8Array.of(0, 42); // nonce 0x002a
    expectInvalid('02' + toHex(rlpEncode(f)), 'INVALID_TRANSACTION', /nonce has a leading zero/);
  });
  it('wrong field count, bad address', () => {
    const f = rlpDecode(Buffer.from(u1559.slice(4), 'hex')) as Uint8Array[];
    expectInvalid('02' + toHex(rlpEncode(f.slice(0, 8))), 'INVALID_TRANSACTION', /9 fields/);
    const g = [...f];
    g[5] = new Uint8Array(19);
    expectInvalid('02' + toHex(rlpEncode(g)), 'INVALID_TRANSACTION', /20-byte address/);
  });
  it('unsupported envelopes', () => {
    expectInvalid('05c0', 'UNSUPPORTED_TRANSACTION', /0x05/);
    expectInvalid('76c0', 'UNSUPPORTED_TRANSACTION', /Tempo/);
    // EIP-4844 network wrapper: rlp([body, blobs, commitments, proofs])
    const body = rlpDecode(Buffer.from(serializeTransaction(all.eip4844).slice(4), 'hex'));
    const wrapper = '03' + toHex(rlpEncode([body, [], [], []]));
    expectInvalid(wrapper, 'UNSUPPORTED_TRANSACTION', /wrapper/);
    expectInvalid('80', 'INVALID_TRANSACTION', /RLP list/);
  });
  it('a malformed signer answer is SIGNER_FAILURE', () => {
    expect(() => signEthereumTransaction(u1559, () => ({ r: new Uint8Array(31), s: new Uint8Array(32), recovery: 0 }))).toThrow(
      expect.objectContaining({ code: 'SIGNER_FAILURE' }),
    );
  });
  it('a high-S answer is normalized to low-S with the flipped recovery id', async () => {
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const highS = (d: Uint8Array) => {
      const good = signer(d);
      const s = n - BigInt('0x' + toHex(good.s));
      return { r: good.r, s: Buffer.from(s.toString(16).padStart(64, '0'), 'hex'), recovery: (good.recovery ^ 1) as 0 | 1 };
    };
    expect('0x' + signEthereumTransaction(u1559, highS)).toBe(await account.signTransaction(all.eip1559));
  });
});

describe('ethereum: transactions Sigil builds (eth_send_transaction, eth_undelegate_7702)', () => {
  const common = { chainId: 11155111n, nonce: 7n, maxPriorityFeePerGas: 10n ** 9n, maxFeePerGas: 3n * 10n ** 10n, gas: 100_000n, value: 0n, data: '0x' };
  const to = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';
  it('serializes unsigned EIP-1559 and EIP-7702 transactions byte for byte as viem does', () => {
    expect(serializeUnsignedEip1559({ ...common, to, value: 5n, data: '0xabcd' })).toBe(
      serializeTransaction({ type: 'eip1559', chainId: 11155111, nonce: 7, maxPriorityFeePerGas: 10n ** 9n, maxFeePerGas: 3n * 10n ** 10n, gas: 100_000n, to, value: 5n, data: '0xabcd' }),
    );
    const auth = { chainId: 11155111n, address: '0x0000000000000000000000000000000000000000', nonce: 8n, yParity: 1n, r: 2n ** 255n + 3n, s: 12345n };
    const ours = serializeUnsignedEip7702({ ...common, to, authorizationList: [auth] });
    expect(ours).toBe(
      serializeTransaction({
        type: 'eip7702',
        chainId: 11155111,
        nonce: 7,
        maxPriorityFeePerGas: 10n ** 9n,
        maxFeePerGas: 3n * 10n ** 10n,
        gas: 100_000n,
        to,
        value: 0n,
        authorizationList: [{ chainId: 11155111, address: auth.address, nonce: 8, yParity: 1, r: `0x${auth.r.toString(16)}`, s: `0x${auth.s.toString(16)}` }],
      } as TransactionSerializable),
    );
    const parsed = parseEthereumTransaction(ours);
    expect(parsed.type).toBe('eip7702');
    expect(parsed.authorizationList).toEqual([auth]);
  });
});
