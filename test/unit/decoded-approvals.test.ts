// Decoded approvals (docs/policies.md "Approving what you see"): the server's view of what a waiting
// signature signs, against vectors built with the chains' own libraries (viem, @solana/web3.js,
// @scure/btc-signer, TronWeb): amounts, addresses, names, flags for a proxy upgrade hidden in a Safe
// execTransaction and for EIP-7702 delegations, change identified by the wallet's own addresses, and
// digests equal to the libraries'.
import { describe, expect, it } from 'vitest';
import { encodeFunctionData, keccak256, parseAbi as viemAbi, serializeTransaction, hashTypedData } from 'viem';
import { Keypair, PublicKey, SystemProgram, Transaction, ComputeBudgetProgram } from '@solana/web3.js';
import * as btc from '@scure/btc-signer';
import { sha256 } from '@noble/hashes/sha2.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import bs58 from 'bs58';
import { TronWeb } from 'tronweb';
import { parseAbi } from '../../src/chains/ethereum/abi.js';
import { decodeEthereumSend, decodeSigningIntent, declaredDecimals, type DecodeSources, type DecodedView } from '../../src/domain/keys/decoded-approvals.js';

const USDC = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
const SAFE = '0x1111111111111111111111111111111111111111';
const PROXY = '0x2222222222222222222222222222222222222222';
const EVIL = '0x3333333333333333333333333333333333333333';
const ALICE = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const SIGNER = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';

const erc20 = viemAbi(['function transfer(address to, uint256 amount) returns (bool)', 'function decimals() view returns (uint8)']);
const safeAbi = viemAbi([
  'function execTransaction(address to, uint256 value, bytes data, uint8 operation, uint256 safeTxGas, uint256 baseGas, uint256 gasPrice, address gasToken, address refundReceiver, bytes signatures) returns (bool)',
]);
const proxyAbi = viemAbi(['function upgradeToAndCall(address newImplementation, bytes data)']);

function sources(contracts: Record<string, { label: string; notes?: string; abi: readonly unknown[] }> = {}, own: string[] = [], signerAddress = SIGNER): DecodeSources {
  return {
    signerAddress,
    contract: async (address) => {
      const c = Object.entries(contracts).find(([a]) => a.toLowerCase() === address.toLowerCase())?.[1];
      return c ? { label: c.label, notes: c.notes ?? '', abi: parseAbi(c.abi) } : undefined;
    },
    ownAddresses: async () => new Set(own),
  };
}

const rows = (v: DecodedView) => v.sections.flatMap((s) => s.rows);
const row = (v: DecodedView, label: string) => rows(v).find((r) => r.label === label);

describe('Ethereum', () => {
  it('an ERC-20 transfer decoded with the stored ABI, amount with the declared decimals, digest = the signing hash', async () => {
    const data = encodeFunctionData({ abi: erc20, functionName: 'transfer', args: [ALICE, 1_500_000n] });
    const unsigned = serializeTransaction({ chainId: 1, type: 'eip1559', to: USDC, nonce: 7, gas: 60_000n, maxFeePerGas: 30_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n, value: 0n, data });
    const v = (await decodeSigningIntent(
      { signWith: SIGNER, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned },
      sources({ [USDC]: { label: 'USDC', notes: 'decimals: 6', abi: erc20 as never } }),
    ))!;
    expect(v.format).toBe('ETHEREUM_TRANSACTION');
    expect(v.summary).toBe(`transfer 1.5 USDC to ${ALICE}`);
    expect(row(v, 'to')).toEqual({ label: 'to', value: USDC, note: 'USDC' });
    expect(row(v, 'chain')?.note).toBe('Ethereum mainnet');
    expect(row(v, 'nonce')?.value).toBe('7');
    expect(row(v, 'function')?.value).toBe('transfer(address,uint256)');
    expect(row(v, 'amount')).toMatchObject({ value: '1500000', note: '1.5 USDC' });
    expect(row(v, 'max network fee')?.value).toBe('0.0018 ETH');
    expect(v.flags).toEqual([]);
    expect(v.digests).toEqual([{ over: 'transaction', algorithm: 'keccak256', payloadIndex: 0, value: keccak256(unsigned) }]);
  });

  it('a plain ether send names the amount in ether and the recipient', async () => {
    const unsigned = serializeTransaction({ chainId: 11155111, type: 'legacy', to: ALICE, nonce: 0, gas: 21_000n, gasPrice: 2_000_000_000n, value: 1_500_000_000_000_000_000n });
    const v = (await decodeSigningIntent({ signWith: SIGNER, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned }, sources()))!;
    expect(v.summary).toBe(`send 1.5 ETH to ${ALICE}`);
    expect(row(v, 'from')?.value).toBe(SIGNER);
    expect(row(v, 'value')?.value).toBe('1.5 ETH');
    expect(v.digests[0].value).toBe(keccak256(unsigned));
  });

  it('flags a proxy upgrade hidden inside a Safe execTransaction, and the delegatecall operation', async () => {
    const upgrade = encodeFunctionData({ abi: proxyAbi, functionName: 'upgradeToAndCall', args: [EVIL, '0x'] });
    const exec = (operation: number) =>
      encodeFunctionData({ abi: safeAbi, functionName: 'execTransaction', args: [PROXY, 0n, upgrade, operation, 0n, 0n, 0n, '0x0000000000000000000000000000000000000000', '0x0000000000000000000000000000000000000000', '0x'] });
    for (const operation of [0, 1]) {
      const unsigned = serializeTransaction({ chainId: 1, type: 'eip1559', to: SAFE, nonce: 1, gas: 200_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n, data: exec(operation) });
      // No interface is stored for the Safe or the proxy: the well-known selectors still decode.
      const v = (await decodeSigningIntent({ signWith: SIGNER, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned }, sources()))!;
      const codes = v.flags.map((f) => f.code);
      expect(codes).toContain('PROXY_UPGRADE');
      expect(v.flags.find((f) => f.code === 'PROXY_UPGRADE')).toMatchObject({ severity: 'danger' });
      expect(v.flags.find((f) => f.code === 'PROXY_UPGRADE')!.message).toContain('inside execTransaction');
      expect(v.flags.find((f) => f.code === 'PROXY_UPGRADE')!.message).toContain(EVIL);
      expect(codes.includes('DELEGATECALL')).toBe(operation === 1);
      expect(rows(v).some((r) => r.label === 'execTransaction → newImplementation' && r.value === EVIL)).toBe(true);
    }
  });

  it('a direct upgradeTo is flagged', async () => {
    const data = encodeFunctionData({ abi: viemAbi(['function upgradeTo(address newImplementation)']), functionName: 'upgradeTo', args: [EVIL] });
    const unsigned = serializeTransaction({ chainId: 1, type: 'eip1559', to: PROXY, nonce: 1, gas: 1n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n, data });
    const v = (await decodeSigningIntent({ signWith: SIGNER, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned }, sources()))!;
    expect(v.flags.map((f) => f.code)).toEqual(['PROXY_UPGRADE']);
  });

  it('flags an EIP-7702 delegation in a type-4 transaction and in an authorization payload', async () => {
    const unsigned = serializeTransaction({
      chainId: 1,
      type: 'eip7702',
      to: SIGNER,
      nonce: 3,
      gas: 100_000n,
      maxFeePerGas: 1n,
      maxPriorityFeePerGas: 1n,
      authorizationList: [{ chainId: 1, address: EVIL, nonce: 4, yParity: 0, r: '0x01', s: '0x02' }],
    });
    const v = (await decodeSigningIntent({ signWith: SIGNER, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: unsigned }, sources()))!;
    expect(v.flags).toHaveLength(1);
    expect(v.flags[0]).toMatchObject({ severity: 'danger', code: 'EIP7702_DELEGATION' });
    expect(v.flags[0].message).toContain(EVIL);
    expect(v.summary).toContain(`delegate the account to ${EVIL}`);
    const auth = (await decodeSigningIntent(
      { signWith: SIGNER, payload: JSON.stringify({ address: EVIL, chainId: '1', nonce: '4' }), encoding: 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION', hashFunction: 'HASH_FUNCTION_NO_OP' },
      sources(),
    ))!;
    expect(auth.format).toBe('EIP7702_AUTHORIZATION');
    expect(auth.flags[0].code).toBe('EIP7702_DELEGATION');
  });

  it('reads decimals from an interface’s notes or label', () => {
    expect(declaredDecimals('decimals: 6')).toBe(6);
    expect(declaredDecimals('Wrapped BTC (8 decimals)')).toBe(8);
    expect(declaredDecimals('USDC')).toBeUndefined();
  });
});

describe('EIP-712 and raw payloads', () => {
  it('typed data: domain, primary type, message tree and the digest viem computes', async () => {
    const typed = {
      domain: { name: 'Permit2', chainId: 1, verifyingContract: USDC },
      types: { Transfer: [{ name: 'to', type: 'address' }, { name: 'amount', type: 'uint256' }] },
      primaryType: 'Transfer',
      message: { to: ALICE, amount: 42n },
    } as const;
    const payload = JSON.stringify({ ...typed, types: { EIP712Domain: [{ name: 'name', type: 'string' }, { name: 'chainId', type: 'uint256' }, { name: 'verifyingContract', type: 'address' }], ...typed.types }, message: { to: ALICE, amount: '42' } });
    const v = (await decodeSigningIntent({ signWith: SIGNER, payload, encoding: 'PAYLOAD_ENCODING_EIP712', hashFunction: 'HASH_FUNCTION_NO_OP' }, sources()))!;
    expect(v.format).toBe('EIP712');
    expect(v.sections.map((s) => s.title)).toEqual(['Domain', 'Message (Transfer)']);
    expect(row(v, 'amount')?.value).toBe('42');
    expect(row(v, 'name')?.value).toBe('Permit2');
    expect(v.digests[0].value).toBe(hashTypedData(typed as never));
  });

  it('UTF-8 text and hex payloads: the text and the digest of the hash function', async () => {
    const text = (await decodeSigningIntent({ signWith: SIGNER, payload: 'hello sigil', encoding: 'PAYLOAD_ENCODING_TEXT_UTF8', hashFunction: 'HASH_FUNCTION_SHA256' }, sources()))!;
    expect(row(text, 'text')?.value).toBe('hello sigil');
    expect(text.digests[0]).toEqual({ over: 'payload', algorithm: 'sha256', payloadIndex: 0, value: '0x' + Buffer.from(sha256(new TextEncoder().encode('hello sigil'))).toString('hex') });
    const many = (await decodeSigningIntent({ signWith: SIGNER, payloads: ['0xdeadbeef', '0x00ff'], encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_KECCAK256' }, sources()))!;
    expect(many.digests.map((d) => d.value)).toEqual([keccak256('0xdeadbeef'), keccak256('0x00ff')]);
    expect(row(many, 'text')).toBeUndefined();
  });
});

describe('Solana', () => {
  it('a SOL transfer with compute budget instructions: programs named, amounts and accounts, digest over the message', async () => {
    const payer = Keypair.fromSeed(new Uint8Array(32).fill(0x21)).publicKey;
    const to = Keypair.fromSeed(new Uint8Array(32).fill(0x23)).publicKey;
    const tx = new Transaction({ feePayer: payer, recentBlockhash: bs58.encode(new Uint8Array(32).fill(0x42)) });
    tx.add(ComputeBudgetProgram.setComputeUnitLimit({ units: 200_000 }), ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 5 }));
    tx.add(SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports: 1_500_000_000n }));
    const unsigned = Buffer.from(tx.serialize({ requireAllSignatures: false, verifySignatures: false })).toString('hex');
    const v = (await decodeSigningIntent({ signWith: payer.toBase58(), type: 'TRANSACTION_TYPE_SOLANA', unsignedTransaction: unsigned }, sources()))!;
    expect(v.summary).toBe(`send 1.5 SOL to ${to.toBase58()}`);
    expect(v.sections.map((s) => s.title)).toEqual(['Transaction', 'Instruction 0: Compute Budget', 'Instruction 1: Compute Budget', 'Instruction 2: System Program']);
    expect(row(v, 'action')?.value).toBe('set compute unit limit 200000');
    expect(v.sections[3].rows.find((r) => r.label === 'action')?.value).toBe(`transfer 1.5 SOL from ${payer.toBase58()} to ${to.toBase58()}`);
    expect(v.digests[0].value).toBe('0x' + Buffer.from(sha256(tx.serializeMessage())).toString('hex'));
    expect(v.flags).toEqual([]);
  });

  it('an unknown program is flagged', async () => {
    const payer = Keypair.fromSeed(new Uint8Array(32).fill(0x21)).publicKey;
    const program = new PublicKey(new Uint8Array(32).fill(9));
    const tx = new Transaction({ feePayer: payer, recentBlockhash: bs58.encode(new Uint8Array(32).fill(0x42)) });
    tx.add({ programId: program, keys: [{ pubkey: payer, isSigner: true, isWritable: true }], data: Buffer.from([1, 2]) });
    const unsigned = Buffer.from(tx.serialize({ requireAllSignatures: false, verifySignatures: false })).toString('hex');
    const v = (await decodeSigningIntent({ signWith: payer.toBase58(), type: 'TRANSACTION_TYPE_SOLANA', unsignedTransaction: unsigned }, sources()))!;
    expect(v.flags.map((f) => f.code)).toEqual(['UNKNOWN_PROGRAM']);
  });
});

describe('Bitcoin PSBT', () => {
  it('inputs, outputs with addresses and amounts, change by the wallet’s own addresses, the fee', async () => {
    const priv = new Uint8Array(32).fill(0x41);
    const pub = secp256k1.getPublicKey(priv, true);
    const spend = btc.p2wpkh(pub, btc.TEST_NETWORK);
    const change = btc.p2wpkh(secp256k1.getPublicKey(new Uint8Array(32).fill(0x43), true), btc.TEST_NETWORK).address!;
    const dest = btc.p2wpkh(secp256k1.getPublicKey(new Uint8Array(32).fill(0x44), true), btc.TEST_NETWORK).address!;
    const t = new btc.Transaction();
    t.addInput({ txid: '11'.repeat(32), index: 0, witnessUtxo: { script: spend.script, amount: 200_000n } });
    t.addOutputAddress(dest, 60_000n, btc.TEST_NETWORK);
    t.addOutputAddress(change, 130_000n, btc.TEST_NETWORK);
    const psbt = t.toPSBT();
    const v = (await decodeSigningIntent(
      { signWith: spend.address!, type: 'TRANSACTION_TYPE_BITCOIN', unsignedTransaction: Buffer.from(psbt).toString('hex') },
      sources({}, [spend.address!, change], spend.address!),
    ))!;
    expect(v.summary).toBe(`send 0.0006 BTC to ${dest} (fee 0.0001 BTC)`);
    expect(row(v, 'input 0')).toMatchObject({ value: `0.002 BTC from ${spend.address}` });
    expect(row(v, 'input 0')?.note).toContain('signed by this wallet');
    expect(row(v, 'output 0')).toEqual({ label: 'output 0', value: `0.0006 BTC to ${dest}`, note: 'P2WPKH' });
    expect(row(v, 'output 1')?.note).toMatch(/^change/);
    expect(row(v, 'fee')?.value).toBe('0.0001 BTC');
    expect(v.digests[0].value).toBe('0x' + Buffer.from(sha256(psbt)).toString('hex'));
  });
});

describe('Tron', () => {
  it('a TRX transfer: contract type and its fields, digest = the txID', async () => {
    const tw = new TronWeb({ fullHost: 'http://127.0.0.1:9' });
    const from = TronWeb.address.fromPrivateKey('11'.repeat(32)) as string;
    const to = TronWeb.address.fromPrivateKey('22'.repeat(32)) as string;
    const tx = await tw.transactionBuilder.sendTrx(to, 1_500_000, from, { blockHeader: { ref_block_bytes: 'c3e8', ref_block_hash: 'e3b7e1a1c2d3f4e5', expiration: 1700000060000, timestamp: 1700000000000 } } as never);
    const v = (await decodeSigningIntent({ signWith: from, type: 'TRANSACTION_TYPE_TRON', unsignedTransaction: (tx as { raw_data_hex: string }).raw_data_hex }, sources()))!;
    expect(v.summary).toBe(`send 1.5 TRX to ${to}`);
    expect(v.sections[1].title).toBe('Contract 0: TransferContract');
    expect(row(v, 'amount')?.value).toBe('1.5 TRX');
    expect(v.digests[0].value).toBe('0x' + (tx as { txID: string }).txID);
  });
});


describe("the dashboard's own check (dashboard/src/integrity.ts)", () => {
  it('recomputes every browser-checked digest the server gives, and catches a changed payload, recipient or value', async () => {
    const { checkView } = await import('../../dashboard/src/integrity.js');
    const payer = Keypair.fromSeed(new Uint8Array(32).fill(0x21)).publicKey;
    const solTx = new Transaction({ feePayer: payer, recentBlockhash: bs58.encode(new Uint8Array(32).fill(0x42)) });
    solTx.add(SystemProgram.transfer({ fromPubkey: payer, toPubkey: Keypair.fromSeed(new Uint8Array(32).fill(0x23)).publicKey, lamports: 5n }));
    const pub = secp256k1.getPublicKey(new Uint8Array(32).fill(0x41), true);
    const psbtTx = new btc.Transaction();
    psbtTx.addInput({ txid: '11'.repeat(32), index: 0, witnessUtxo: { script: btc.p2wpkh(pub, btc.TEST_NETWORK).script, amount: 10_000n } });
    psbtTx.addOutputAddress(btc.p2wpkh(pub, btc.TEST_NETWORK).address!, 9_000n, btc.TEST_NETWORK);
    const tw = new TronWeb({ fullHost: 'http://127.0.0.1:9' });
    const tron = (await tw.transactionBuilder.sendTrx(TronWeb.address.fromPrivateKey('22'.repeat(32)) as string, 7, TronWeb.address.fromPrivateKey('11'.repeat(32)) as string, {
      blockHeader: { ref_block_bytes: 'c3e8', ref_block_hash: 'e3b7e1a1c2d3f4e5', expiration: 1700000060000, timestamp: 1700000000000 },
    } as never)) as { raw_data_hex: string };
    const eth = serializeTransaction({ chainId: 1, type: 'eip1559', to: ALICE, nonce: 0, gas: 21_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n, value: 10n ** 18n });
    const legacy = serializeTransaction({ chainId: 5, type: 'legacy', to: ALICE, nonce: 0, gas: 21_000n, gasPrice: 1n, value: 1n });
    const cases: [Parameters<typeof decodeSigningIntent>[0], string[], string?][] = [
      [{ type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: eth }, [eth]],
      [{ type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: legacy }, [legacy]],
      [{ type: 'TRANSACTION_TYPE_SOLANA', unsignedTransaction: Buffer.from(solTx.serialize({ requireAllSignatures: false, verifySignatures: false })).toString('hex') }, []],
      [{ type: 'TRANSACTION_TYPE_SOLANA', unsignedTransaction: Buffer.from(solTx.serializeMessage()).toString('hex') }, []],
      [{ type: 'TRANSACTION_TYPE_BITCOIN', unsignedTransaction: Buffer.from(psbtTx.toPSBT()).toString('hex') }, []],
      [{ type: 'TRANSACTION_TYPE_TRON', unsignedTransaction: tron.raw_data_hex }, []],
      [{ payload: 'hello', encoding: 'PAYLOAD_ENCODING_TEXT_UTF8', hashFunction: 'HASH_FUNCTION_KECCAK256' }, [], 'PAYLOAD_ENCODING_TEXT_UTF8'],
      [{ payloads: ['0x' + '42'.repeat(32), '0xabcd'], encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' }, []],
    ];
    for (const [intent, , encoding] of cases) {
      const view = (await decodeSigningIntent({ signWith: SIGNER, ...intent }, sources()))!;
      const payloads = intent.unsignedTransaction ? [intent.unsignedTransaction] : intent.payload ? [intent.payload] : intent.payloads!;
      expect(await checkView(view as never, payloads, encoding ?? intent.encoding), JSON.stringify(intent).slice(0, 80)).toEqual([]);
      // One changed character of the payload shown is caught.
      const changed = payloads.map((p, i) => (i === 0 ? p.slice(0, -1) + (p.endsWith('0') ? '1' : '0') : p));
      expect((await checkView(view as never, changed, encoding ?? intent.encoding)).length, JSON.stringify(intent).slice(0, 80)).toBeGreaterThan(0);
    }
    // A renderer that shows another recipient or value for the same bytes is caught by the RLP reading.
    const view = (await decodeSigningIntent({ signWith: SIGNER, type: 'TRANSACTION_TYPE_ETHEREUM', unsignedTransaction: eth }, sources()))!;
    const lying = structuredClone(view);
    lying.sections[0].rows.find((r) => r.label === 'to')!.value = EVIL;
    lying.sections[0].rows.find((r) => r.label === 'value')!.note = '1 wei';
    expect(await checkView(lying as never, [eth])).toEqual([`recipient mismatch: shown ${EVIL}, the transaction pays ${ALICE.toLowerCase()}`, `value mismatch: shown 1 wei, the transaction sends ${10n ** 18n} wei`]);
  });
});

describe('a waiting eth_send_transaction', () => {
  const intent = { from: SIGNER, caip2: 'eip155:11155111', calls: [{ to: ALICE, value: '1500000000000000000' }] };

  it('shows the call and a digest over the intent the page recomputes', async () => {
    const view = await decodeEthereumSend(intent, sources());
    expect(view.format).toBe('ETHEREUM_SEND');
    expect(view.summary).toBe(`send 1.5 ETH to ${ALICE} on chain 11155111`);
    expect(view.sections[0].rows).toContainEqual({ label: 'nonce, gas and fees', value: 'filled by Sigil when approved' });
    // sha256 of the canonical JSON (keys sorted, no whitespace), computed here by hand.
    const canonical = `{"caip2":"eip155:11155111","calls":[{"to":"${ALICE}","value":"1500000000000000000"}],"from":"${SIGNER}"}`;
    expect(view.digests).toEqual([{ over: 'intent', algorithm: 'sha256', payloadIndex: 0, value: '0x' + Buffer.from(sha256(new TextEncoder().encode(canonical))).toString('hex') }]);
    const { checkView, canonicalJson } = await import('../../dashboard/src/integrity.js');
    expect(canonicalJson(intent)).toBe(canonical);
    expect(await checkView(view as never, [canonical])).toEqual([]);
  });

  it('decodes a call with the stored interfaces, flags included', async () => {
    const data = encodeFunctionData({ abi: proxyAbi, functionName: 'upgradeToAndCall', args: [EVIL, '0x'] });
    const view = await decodeEthereumSend({ from: SIGNER, caip2: 'eip155:1', to: PROXY, data }, sources());
    expect(view.flags.map((f) => f.code)).toContain('PROXY_UPGRADE');
  });

  it('attack: an intent with another recipient than the one the digest was computed over is refused in the browser', async () => {
    const view = await decodeEthereumSend(intent, sources());
    const { checkView, canonicalJson } = await import('../../dashboard/src/integrity.js');
    const swapped = canonicalJson({ ...intent, calls: [{ to: EVIL, value: '1500000000000000000' }] });
    const problems = await checkView(view as never, [swapped]);
    expect(problems[0]).toMatch(/^digest mismatch/);
    // A view rewritten to show the swapped recipient while the intent pays another is refused too.
    const lying = structuredClone(view);
    lying.sections[1].rows.find((r) => r.label === 'to')!.value = EVIL;
    expect(await checkView(lying as never, [canonicalJson(intent)])).toEqual([`recipient mismatch: shown ${EVIL}, the intent pays ${ALICE}`]);
  });
});
