// Signing through the official signers, verified by the chains' own libraries: @turnkey/viem
// (message, typed data, EIP-1559 transaction, EIP-7702 authorization), @turnkey/ethers, @turnkey/solana
// (legacy and versioned transfers, signAllTransactions, message), a Bitcoin PSBT with P2WPKH and P2TR
// inputs finalized by @scure/btc-signer, and a Tron transaction checked by recovering its signer.
// Bad input is refused with a clear error and no activity recorded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { createAccount } from '@turnkey/viem';
import { TurnkeySigner as EthersSigner } from '@turnkey/ethers';
import { TurnkeySigner as SolanaSigner } from '@turnkey/solana';
import {
  parseEther,
  recoverTransactionAddress,
  verifyMessage,
  verifyTypedData,
  createWalletClient,
  custom,
  type TypedDataDomain,
} from 'viem';
import { recoverAuthorizationAddress } from 'viem/utils';
import { ethers } from 'ethers';
import {
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import nacl from 'tweetnacl';
import * as btc from '@scure/btc-signer';
import { TronWeb } from 'tronweb';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient } from '../helpers/clients.js';
import { dbSnapshot } from '../helpers/db-snapshot.js';

let sigil: SigilInstance;
let client: TurnkeyClient;
let orgId: string;
const addr: Record<string, string> = {};
let ethKeyId = '';

const acct = (curve: string, path: string, addressFormat: string) => ({ curve, pathFormat: 'PATH_FORMAT_BIP32', path, addressFormat }) as never;

beforeAll(async () => {
  sigil = await startSigil();
  orgId = sigil.root.organizationId;
  client = new TurnkeyClient({ baseUrl: sigil.url }, new ApiKeyStamper({ apiPublicKey: sigil.root.apiPublicKey, apiPrivateKey: sigil.root.apiPrivateKey }));
  const api = sdkServerClient(sigil);
  const w = await api.createWallet({
    walletName: 'signing',
    accounts: [
      acct('CURVE_SECP256K1', "m/44'/60'/0'/0/0", 'ADDRESS_FORMAT_ETHEREUM'),
      acct('CURVE_ED25519', "m/44'/501'/0'/0'", 'ADDRESS_FORMAT_SOLANA'),
      acct('CURVE_SECP256K1', "m/84'/1'/0'/0/0", 'ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH'),
      acct('CURVE_SECP256K1', "m/86'/1'/0'/0/0", 'ADDRESS_FORMAT_BITCOIN_TESTNET_P2TR'),
      acct('CURVE_SECP256K1', "m/44'/195'/0'/0/0", 'ADDRESS_FORMAT_TRON'),
      acct('CURVE_ED25519', "m/44'/501'/1'/0'", 'ADDRESS_FORMAT_SOLANA'),
    ],
  });
  [addr.eth, addr.sol, addr.wpkh, addr.tr, addr.tron, addr.sol2] = w.addresses;
  const k = await api.createPrivateKeys({
    privateKeys: [{ privateKeyName: 'pk-eth', curve: 'CURVE_SECP256K1', privateKeyTags: [], addressFormats: ['ADDRESS_FORMAT_ETHEREUM'] }],
  });
  ethKeyId = k.privateKeys[0].privateKeyId!;
  addr.pkEth = k.privateKeys[0].addresses![0].address!;
});
afterAll(async () => {
  await sigil?.stop();
});

const domain: TypedDataDomain = { name: 'Ether Mail', version: '1', chainId: 1, verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC' };
const types = {
  Person: [
    { name: 'name', type: 'string' },
    { name: 'wallet', type: 'address' },
  ],
  Mail: [
    { name: 'from', type: 'Person' },
    { name: 'to', type: 'Person' },
    { name: 'contents', type: 'string' },
  ],
} as const;
const message = {
  from: { name: 'Cow', wallet: '0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826' },
  to: { name: 'Bob', wallet: '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB' },
  contents: 'Hello, Bob!',
} as const;

describe('@turnkey/viem', () => {
  it('signs messages, typed data, EIP-1559 transactions and EIP-7702 authorizations that viem verifies', async () => {
    for (const signWith of [addr.eth, ethKeyId]) {
      const account = await createAccount({ client, organizationId: orgId, signWith });
      const expected = signWith === ethKeyId ? addr.pkEth : addr.eth;
      expect(account.address).toBe(expected);
      const sig = await account.signMessage({ message: 'hello sigil' });
      expect(await verifyMessage({ address: expected as `0x${string}`, message: 'hello sigil', signature: sig })).toBe(true);

      // Through a wallet client, as dapps call it: viem adds the EIP712Domain type before signing.
      const wallet = createWalletClient({ account, transport: custom({ request: async () => { throw new Error('offline'); } }) });
      const typed = await wallet.signTypedData({ domain, types, primaryType: 'Mail', message });
      expect(await verifyTypedData({ address: expected as `0x${string}`, domain, types, primaryType: 'Mail', message, signature: typed })).toBe(true);

      const signedTx = await account.signTransaction({
        type: 'eip1559',
        chainId: 1,
        nonce: 7,
        to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        value: parseEther('0.01'),
        maxFeePerGas: 30_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
        gas: 21_000n,
      });
      expect(await recoverTransactionAddress({ serializedTransaction: signedTx as never })).toBe(expected);

      const auth = await account.signAuthorization!({ contractAddress: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', chainId: 1, nonce: 3 });
      expect(await recoverAuthorizationAddress({ authorization: auth })).toBe(expected);
    }
  });
});

describe('@turnkey/ethers', () => {
  it('signs messages, typed data and transactions that ethers verifies', async () => {
    const signer = new EthersSigner({ client, organizationId: orgId, signWith: addr.eth });
    expect(await signer.getAddress()).toBe(addr.eth);
    const sig = await signer.signMessage('hello ethers');
    expect(ethers.verifyMessage('hello ethers', sig)).toBe(addr.eth);
    const typed = await signer.signTypedData(domain as ethers.TypedDataDomain, types as never, message);
    expect(ethers.verifyTypedData(domain as ethers.TypedDataDomain, types as never, message, typed)).toBe(addr.eth);
    const raw = await signer.signTransaction({
      type: 2,
      chainId: 11155111,
      nonce: 0,
      to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      value: 1n,
      gasLimit: 21000n,
      maxFeePerGas: 2n * 10n ** 9n,
      maxPriorityFeePerGas: 10n ** 9n,
    });
    expect(ethers.Transaction.from(raw).from).toBe(addr.eth);
  });
});

describe('@turnkey/solana', () => {
  it('signs legacy and versioned transfers, several at once, and messages', async () => {
    const signer = new SolanaSigner({ organizationId: orgId, client });
    const from = new PublicKey(addr.sol);
    const to = Keypair.generate().publicKey;
    const blockhash = '11111111111111111111111111111111';
    const legacy = new Transaction({ recentBlockhash: blockhash, feePayer: from }).add(SystemProgram.transfer({ fromPubkey: from, toPubkey: to, lamports: 1000 }));
    const signedLegacy = (await signer.signTransaction(legacy, addr.sol)) as Transaction;
    expect(signedLegacy.verifySignatures()).toBe(true);

    const v0 = new VersionedTransaction(
      new TransactionMessage({ payerKey: from, recentBlockhash: blockhash, instructions: [SystemProgram.transfer({ fromPubkey: from, toPubkey: to, lamports: 5 })] }).compileToV0Message(),
    );
    const signedV0 = (await signer.signTransaction(v0, addr.sol)) as VersionedTransaction;
    expect(nacl.sign.detached.verify(signedV0.message.serialize(), signedV0.signatures[0], from.toBytes())).toBe(true);

    const many = [0, 1, 2].map(
      (i) => new Transaction({ recentBlockhash: blockhash, feePayer: from }).add(SystemProgram.transfer({ fromPubkey: from, toPubkey: to, lamports: 10 + i })),
    );
    const signedMany = (await signer.signAllTransactions(many, addr.sol)) as Transaction[];
    for (const t of signedMany) expect(t.verifySignatures()).toBe(true);

    const msg = new TextEncoder().encode('gm from sigil');
    const msgSig = await signer.signMessage(msg, addr.sol);
    expect(nacl.sign.detached.verify(msg, msgSig, from.toBytes())).toBe(true);
  });
});

describe('sign_transaction for Bitcoin and Tron', () => {
  it('signs the P2WPKH and P2TR inputs of a PSBT; btc-signer finalizes and validates it', async () => {
    const api = sdkServerClient(sigil);
    const accounts = (await api.getWalletAccounts({ walletId: (await api.getWallets({})).wallets[0].walletId })).accounts;
    const wpkhPub = Buffer.from(accounts.find((a) => a.address === addr.wpkh)!.publicKey!, 'hex');
    const trPub = Buffer.from(accounts.find((a) => a.address === addr.tr)!.publicKey!, 'hex').subarray(1);
    const wpkh = btc.p2wpkh(wpkhPub, btc.TEST_NETWORK);
    const tr = btc.p2tr(trPub, undefined, btc.TEST_NETWORK);
    const tx = new btc.Transaction();
    tx.addInput({ txid: '11'.repeat(32), index: 0, witnessUtxo: { script: wpkh.script, amount: 50_000n } });
    tx.addInput({ txid: '22'.repeat(32), index: 1, witnessUtxo: { script: tr.script, amount: 70_000n }, tapInternalKey: trPub });
    tx.addOutputAddress('tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', 100_000n, btc.TEST_NETWORK);
    let psbt = Buffer.from(tx.toPSBT()).toString('hex');
    for (const signWith of [addr.wpkh, addr.tr]) {
      const r = await api.signTransaction({ signWith, unsignedTransaction: psbt, type: 'TRANSACTION_TYPE_BITCOIN' });
      expect(r.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
      psbt = r.signedTransaction;
    }
    const signed = btc.Transaction.fromPSBT(Buffer.from(psbt, 'hex'));
    signed.finalize();
    expect(signed.isFinal).toBe(true);
    expect(signed.hex.length).toBeGreaterThan(0);
  });

  it('signs a Tron transfer whose signer TronWeb recovers', async () => {
    const tw = new TronWeb({ fullHost: 'http://127.0.0.1:9' }); // never contacted: the builder works offline
    const blockHeader = { ref_block_bytes: 'c3e8', ref_block_hash: 'e3b7e1a1c2d3f4e5', expiration: Date.now() + 60_000, timestamp: Date.now() };
    const unsigned = await tw.transactionBuilder.sendTrx('TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf', 1_000, addr.tron, { blockHeader });
    const r = await sdkServerClient(sigil).signTransaction({ signWith: addr.tron, unsignedTransaction: unsigned.raw_data_hex, type: 'TRANSACTION_TYPE_TRON' });
    // The signed protobuf ends with the 65-byte signature; recover the address from txID and signature.
    const sigHex = r.signedTransaction.slice(-130);
    expect(r.signedTransaction.startsWith(unsigned.raw_data_hex.slice(0, 16)) || r.signedTransaction.includes(unsigned.raw_data_hex)).toBe(true);
    expect(tw.trx.ecRecover({ ...unsigned, signature: [sigHex] } as never)).toBe(addr.tron);
  });
});

describe('raw payloads', () => {
  it('sign_raw_payloads signs several payloads; ed25519 returns r‖s that verifies', async () => {
    const api = sdkServerClient(sigil);
    const payloads = ['68656c6c6f', '0x776f726c64'];
    const r = await api.signRawPayloads({ signWith: addr.sol2, payloads, encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE' });
    expect(r.signatures).toHaveLength(2);
    for (const [i, s] of r.signatures!.entries()) {
      expect(s.v).toBe('00');
      const sig = Buffer.from(s.r + s.s, 'hex');
      expect(nacl.sign.detached.verify(Buffer.from(payloads[i].replace(/^0x/, ''), 'hex'), sig, new PublicKey(addr.sol2).toBytes())).toBe(true);
    }
  });
});

describe('bad signing input is refused and nothing is recorded', () => {
  const cases: [string, string, Record<string, unknown>, RegExp][] = [
    ['unknown signWith', 'sign_raw_payload', { signWith: '0x000000000000000000000000000000000000dEaD', payload: '00'.repeat(32), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' }, /Could not find any resource to sign with/],
    ['payload not hex', 'sign_raw_payload', { signWith: 'ETH', payload: 'zz', encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_SHA256' }, /invalid payload: PAYLOAD_ENCODING_HEXADECIMAL/],
    ['malformed EIP-712 JSON', 'sign_raw_payload', { signWith: 'ETH', payload: '{"types":', encoding: 'PAYLOAD_ENCODING_EIP712', hashFunction: 'HASH_FUNCTION_NO_OP' }, /invalid EIP-712 payload/],
    ['wrong hash function for ed25519', 'sign_raw_payload', { signWith: 'SOL', payload: 'abcd', encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_SHA256' }, /HASH_FUNCTION_NOT_APPLICABLE/],
    ['NOT_APPLICABLE for secp256k1', 'sign_raw_payload', { signWith: 'ETH', payload: 'abcd', encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NOT_APPLICABLE' }, /invalid hash function/],
    ['unparseable transaction', 'sign_transaction', { signWith: 'ETH', unsignedTransaction: '02deadbeef', type: 'TRANSACTION_TYPE_ETHEREUM' }, /./],
    ['wrong transaction type for the curve', 'sign_transaction', { signWith: 'SOL', unsignedTransaction: '02c0', type: 'TRANSACTION_TYPE_ETHEREUM' }, /needs a CURVE_SECP256K1 key/],
  ];
  for (const [name, op, params, message] of cases) {
    it(name, async () => {
      const p = { ...params, signWith: params.signWith === 'ETH' ? addr.eth : params.signWith === 'SOL' ? addr.sol : params.signWith };
      const type = op === 'sign_transaction' ? 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2' : 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2';
      const before = await dbSnapshot(sigil);
      const res = await rawPost(`${sigil.url}/public/v1/submit/${op}`, activityBody(orgId, type, p), { key: sigil.root });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.body.message).toMatch(message);
      expect(res.body.details[0]['@type']).toBe('type.googleapis.com/errors.v1.TurnkeyErrorDetail');
      expect(await dbSnapshot(sigil)).toEqual(before);
    });
  }
});
