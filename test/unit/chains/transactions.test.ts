// The sign_transaction dispatcher: one parse per request, policy keyword + struct, sign bound to the
// parsed bytes, clear refusals for unsupported types and missing signers.
import { describe, expect, it } from 'vitest';
import { serializeTransaction, recoverTransactionAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import * as btc from '@scure/btc-signer';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { TronWeb } from 'tronweb';
import { bitcoinNetworkOfAddress, parseTransaction, TransactionError } from '../../../src/chains/transactions.js';
import { edSigner, hexKey, schnorrSigner, secpSigner, toHex } from './helpers.js';

const SECP = hexKey(0x61);
const SECP_PUB = secp256k1.getPublicKey(SECP, true);
const ED = hexKey(0x62);
const secpKey = { publicKey: SECP_PUB, secp256k1: secpSigner(SECP), schnorr: schnorrSigner(SECP) };

describe('parseTransaction', () => {
  it('ETHEREUM → eth.tx, signs', async () => {
    const account = privateKeyToAccount(('0x' + toHex(SECP)) as `0x${string}`);
    const unsigned = serializeTransaction({ type: 'eip1559', chainId: 1, nonce: 0, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n, gas: 21000n, to: account.address, value: 1n });
    const p = parseTransaction('TRANSACTION_TYPE_ETHEREUM', unsigned.slice(2), { signerAddress: account.address });
    expect(p.policy.keyword).toBe('eth.tx');
    expect(p.policy.value).toMatchObject({ from: account.address.toLowerCase(), chain_id: 1n, type: 'TYPE_2' });
    const signed = p.sign(secpKey);
    expect(await recoverTransactionAddress({ serializedTransaction: ('0x' + signed) as never })).toBe(account.address);
    expect(() => p.sign({ publicKey: SECP_PUB })).toThrow(/secp256k1 signer/);
  });

  it('SOLANA → solana.tx, signs', () => {
    const kp = Keypair.fromSeed(ED);
    const tx = new Transaction({ feePayer: kp.publicKey, recentBlockhash: bs58.encode(hexKey(1)) });
    tx.add(SystemProgram.transfer({ fromPubkey: kp.publicKey, toPubkey: kp.publicKey, lamports: 3 }));
    const hex = tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('hex');
    const p = parseTransaction('TRANSACTION_TYPE_SOLANA', hex, { signerAddress: kp.publicKey.toBase58() });
    expect(p.policy.keyword).toBe('solana.tx');
    const signed = p.sign({ publicKey: kp.publicKey.toBytes(), ed25519: edSigner(ED) });
    expect(Transaction.from(Buffer.from(signed, 'hex')).verifySignatures()).toBe(true);
  });

  it('TRON → tron.tx, signs', async () => {
    const tw = new TronWeb({ fullHost: 'http://127.0.0.1:9' });
    const from = TronWeb.address.fromPrivateKey(toHex(SECP)) as string;
    const tx = await tw.transactionBuilder.sendTrx(TronWeb.address.fromPrivateKey('77'.repeat(32)) as string, 5, from, {
      blockHeader: { ref_block_bytes: '0001', ref_block_hash: '0102030405060708', expiration: 2, timestamp: 1 },
    });
    const p = parseTransaction('TRANSACTION_TYPE_TRON', tx.raw_data_hex, { signerAddress: from });
    expect(p.policy.keyword).toBe('tron.tx');
    const signed = p.sign(secpKey);
    expect(tw.trx.ecRecover({ ...tx, signature: [signed.slice(-130)] } as never)).toBe(from);
  });

  it('BITCOIN → bitcoin.tx with the network of the signing address, signs', () => {
    const pay = btc.p2wpkh(SECP_PUB, btc.TEST_NETWORK);
    const t = new btc.Transaction();
    t.addInput({ txid: new Uint8Array(32).fill(9), index: 0, witnessUtxo: { script: pay.script, amount: 5000n } });
    t.addOutput({ script: pay.script, amount: 4000n });
    const p = parseTransaction('TRANSACTION_TYPE_BITCOIN', toHex(t.toPSBT()), { signerAddress: pay.address! });
    expect(p.policy.keyword).toBe('bitcoin.tx');
    if (p.policy.keyword !== 'bitcoin.tx') throw new Error('unreachable');
    expect(p.policy.value.outputs[0].address).toBe(pay.address);
    expect(p.policy.value.fee).toBe(1000n);
    const signed = btc.Transaction.fromPSBT(Buffer.from(p.sign({ publicKey: SECP_PUB, secp256k1: secpKey.secp256k1 }), 'hex'));
    signed.finalize();
    expect(signed.extract().length).toBeGreaterThan(0);
  });

  it('TEMPO and unknown types are UNSUPPORTED_TRANSACTION', () => {
    for (const type of ['TRANSACTION_TYPE_TEMPO', 'TRANSACTION_TYPE_SUI']) {
      try {
        parseTransaction(type, '76c0', { signerAddress: '0x' });
        throw new Error('expected a throw');
      } catch (e) {
        expect(e).toBeInstanceOf(TransactionError);
        expect((e as TransactionError).code).toBe('UNSUPPORTED_TRANSACTION');
      }
    }
  });

  it('bitcoinNetworkOfAddress', () => {
    expect(bitcoinNetworkOfAddress('bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4')).toBe('mainnet');
    expect(bitcoinNetworkOfAddress('tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx')).toBe('testnet');
    expect(bitcoinNetworkOfAddress('bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080')).toBe('regtest');
    expect(bitcoinNetworkOfAddress('1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2')).toBe('mainnet');
    expect(bitcoinNetworkOfAddress('mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn')).toBe('testnet');
    expect(bitcoinNetworkOfAddress('2MzQwSSnBHWHqSAqtTVQ6v47XtaisrJa1Vc')).toBe('testnet');
  });
});
