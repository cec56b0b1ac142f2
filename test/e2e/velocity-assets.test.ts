// Velocity controls over token and Solana transfers (docs/velocity-controls.md "Velocity controls":
// chainAssetTransfer beyond ether), end to end: a real `sigil serve` (SQLite, or PostgreSQL with
// SIGIL_TEST_DATABASE_URL), controls created with @turnkey/http, transactions signed by @turnkey/viem
// (ERC-20 calls built with viem's encodeFunctionData and erc20Abi) and @turnkey/solana
// (SystemProgram.transfer, and SPL Token Transfer/TransferChecked instructions built by their layout: no
// SPL library is installed). Signing only: no chain is needed, since Sigil counts what it signs. What it
// proves: an 18-decimal and a 6-decimal token are summed in whole tokens and a SUM limit stops the
// transfer that would cross it; transfer, transferFrom and approve all count; the contract address
// matches whatever its case; other tokens and other chains do not count; a transaction moving ether and
// a token counts once for each; a listed token's call that does not decode is refused, not guessed;
// SOL transfers are summed in SOL, several per transaction; SPL TransferChecked counts toward its
// mint (one listed on another cluster too: a Solana transaction names none), and an unchecked
// Transfer, which names no mint, as the listed token with the fewest decimals. Bitcoin: a PSBT built
// by @scure/btc-signer and signed through @turnkey/http, as test/e2e/signing.test.ts signs one,
// counts the outputs leaving the wallet (a foreign address) and not its change (to the signing
// account or another of the wallet's accounts); a SUM limit stops the PSBT that would cross it, and a
// tb1 wallet's PSBT does not count on mainnet, while a private key's, whose network Sigil cannot
// tell, counts on every listed network. Tron: TronWeb-built (offline) TransferContract and
// TRC-20 transfer/transferFrom/approve calls count in TRX and in the token; other contracts do not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { createAccount } from '@turnkey/viem';
import { encodeFunctionData, erc20Abi, maxUint256, parseEther, parseUnits, recoverTransactionAddress, type Hex } from 'viem';
import { TurnkeySigner as SolanaSigner } from '@turnkey/solana';
import { Keypair, PublicKey, SystemProgram, Transaction, TransactionInstruction } from '@solana/web3.js';
import * as btc from '@scure/btc-signer';
import { TronWeb } from 'tronweb';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { httpClient, newKey, sdkServerClient } from '../helpers/clients.js';

let sigil: SigilInstance;
let root: TurnkeyClient;
let api: ReturnType<typeof sdkServerClient>;
let org: string;
const wallets: Record<string, string> = {};

// Two tokens on chain 1 (18 and 6 decimals), and one no control lists.
const TOKEN18 = '0x5fbdb2315678afecb367f032d93f642f64180aa3';
const TOKEN6 = '0xe7f1725e7734ce288f8367e1bb143e90bb3f0512';
const OTHER = '0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0';
const ALICE = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const BOB = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
const TOKEN_PROGRAM = new PublicKey('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');

async function newUser(name: string) {
  const key = newKey();
  const { userIds } = await api.createUsers({
    users: [{ userName: name, apiKeys: [{ apiKeyName: 'k', publicKey: key.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
  });
  await api.createPolicy({ policyName: `${name} signs`, effect: 'EFFECT_ALLOW', consensus: `approvers.any(user, user.id == '${userIds[0]}')`, condition: "activity.action == 'SIGN'", notes: '' });
  return { id: userIds[0], client: new TurnkeyClient({ baseUrl: sigil.url }, new ApiKeyStamper(key)) };
}

async function assetControl(identifier: string, definition: { caip19: string; decimals: string }[], aggregation: Record<string, unknown>) {
  const r = await root.createVelocityControl({
    type: 'ACTIVITY_TYPE_CREATE_VELOCITY_CONTROL',
    timestampMs: String(Date.now()),
    organizationId: org,
    parameters: {
      name: identifier,
      identifier,
      dataSource: { chainAssetTransfer: { definition } },
      aggregation: {
        method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM',
        operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL',
        window: { infinite: {} },
        groupBy: { wallet: {} },
        ...aggregation,
      },
    } as never,
  });
  return r.activity.result.createVelocityControlResult!.velocityControlId;
}

async function limit(identifier: string, condition: string) {
  return (await api.createPolicy({ policyName: `limit ${identifier}`, effect: 'EFFECT_DENY', condition, notes: '' })).policyId;
}

async function drop(policyId: string, controlIds: string[]) {
  await api.deletePolicy({ policyId });
  for (const velocityControlId of controlIds) {
    await root.deleteVelocityControl({ type: 'ACTIVITY_TYPE_DELETE_VELOCITY_CONTROL', timestampMs: String(Date.now()), organizationId: org, parameters: { velocityControlId } });
  }
}

/** 'ok' (signed, and the signature recovers to the account), 'denied' (explicit DENY), or the error. */
async function outcome(run: () => Promise<{ signed: string; address: string }>): Promise<string> {
  try {
    const { signed, address } = await run();
    expect(await recoverTransactionAddress({ serializedTransaction: signed as never })).toBe(address);
    return 'ok';
  } catch (err) {
    const m = String((err as Error).message);
    return /policy engine denied request explicitly/.test(m) ? 'denied' : m;
  }
}

beforeAll(async () => {
  sigil = await startSigil();
  root = httpClient(sigil);
  api = sdkServerClient(sigil);
  org = sigil.root.organizationId;
  for (const name of ['a', 'b']) {
    const w = await api.createWallet({
      walletName: name,
      accounts: [
        { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' },
        { curve: 'CURVE_ED25519', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/501'/0'/0'", addressFormat: 'ADDRESS_FORMAT_SOLANA' },
      ],
    });
    wallets[name] = w.addresses[0];
    wallets[`${name}_sol`] = w.addresses[1];
  }
}, 60_000);
afterAll(async () => {
  await sigil?.stop();
});

describe('chainAssetTransfer: ERC-20 tokens', () => {
  it('an 18-decimal and a 6-decimal token are summed in whole tokens; transfer, transferFrom and approve count; other tokens and chains do not', async () => {
    const u = await newUser('token sender');
    // The 6-decimal token is listed in a mixed-case spelling of its address: addresses match whatever their case.
    const mixedCase = '0xE7f1725E7734CE288F8367e1Bb143E90bb3F0512';
    const ids = [
      await assetControl('t18', [{ caip19: `eip155:1/erc20:${TOKEN18}`, decimals: '18' }], { threshold: '100' }),
      await assetControl('t6', [{ caip19: `eip155:1/erc20:${mixedCase}`, decimals: '6' }], { threshold: '1000.5' }),
    ];
    const { velocityControl } = await root.getVelocityControl({ organizationId: org, velocityControlId: ids[1] });
    expect(velocityControl.dataSource).toEqual({ chainAssetTransfer: { definition: [{ caip19: `eip155:1/erc20:${mixedCase}`, decimals: '6' }], phase: { signature: {} } } });
    const policy = await limit('tokens', "activity.kind == 'SIGN_TRANSACTION' && (!controls.t18 || !controls.t6)");

    const account = await createAccount({ client: u.client, organizationId: org, signWith: wallets.a });
    let nonce = 0;
    const call = (to: string, data: Hex, chainId = 1) => () =>
      account
        .signTransaction({ type: 'eip1559', chainId, nonce: nonce++, to: to as Hex, value: 0n, data, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n, gas: 100_000n })
        .then((signed) => ({ signed, address: account.address }));
    const transfer = (amount: bigint) => encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [ALICE, amount] });
    const transferFrom = (amount: bigint) => encodeFunctionData({ abi: erc20Abi, functionName: 'transferFrom', args: [BOB, ALICE, amount] });
    const approve = (amount: bigint) => encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [BOB, amount] });

    // 18 decimals: 60 + 40 = 100 tokens is within "at most 100"; one base unit more is not.
    expect(await outcome(call(TOKEN18, transfer(parseEther('60'))))).toBe('ok');
    expect(await outcome(call(TOKEN18, transfer(parseEther('40.000000000000000001'))))).toBe('denied');
    expect(await outcome(call(TOKEN18, transferFrom(parseEther('40'))))).toBe('ok');
    expect(await outcome(call(TOKEN18, transfer(1n)))).toBe('denied');
    expect(await outcome(call(TOKEN18, approve(1n)))).toBe('denied');
    // Revoking an allowance (approve 0) moves nothing.
    expect(await outcome(call(TOKEN18, approve(0n)))).toBe('ok');
    // Not counted: the same token address on another chain, a token no control lists.
    expect(await outcome(call(TOKEN18, transfer(parseEther('500')), 5))).toBe('ok');
    expect(await outcome(call(OTHER, transfer(parseEther('500'))))).toBe('ok');

    // 6 decimals: 1000.5 tokens is 1,000,500,000 base units; an approve counts as much as a transfer.
    expect(await outcome(call(TOKEN6, approve(parseUnits('1000', 6))))).toBe('ok');
    expect(await outcome(call(TOKEN6, transfer(parseUnits('0.500001', 6))))).toBe('denied');
    expect(await outcome(call(TOKEN6, transfer(parseUnits('0.5', 6))))).toBe('ok');
    expect(await outcome(call(TOKEN6, transfer(1n)))).toBe('denied');

    // Another wallet has a limit of its own, and an unlimited approval is more than any limit.
    const other = await createAccount({ client: u.client, organizationId: org, signWith: wallets.b });
    const sign = (data: Hex) => () =>
      other
        .signTransaction({ type: 'eip1559', chainId: 1, nonce: nonce++, to: TOKEN6, value: 0n, data, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n, gas: 100_000n })
        .then((signed) => ({ signed, address: other.address }));
    expect(await outcome(sign(approve(maxUint256)))).toBe('denied');
    expect(await outcome(sign(transfer(parseUnits('1000.5', 6))))).toBe('ok');
    await drop(policy, ids);
  });

  it('a transaction sending ether and calling a token counts for each listed asset; a chain-less (pre-EIP-155) one counts on every listed chain; a listed token call that does not decode is refused', async () => {
    const u = await newUser('mixed sender');
    const ids = [
      await assetControl(
        'moves',
        [
          { caip19: 'eip155:1/slip44:60', decimals: '18' },
          { caip19: 'eip155:5/slip44:60', decimals: '18' },
          { caip19: `eip155:1/erc20:${TOKEN18}`, decimals: '18' },
        ],
        { method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_COUNT', threshold: '4', groupBy: { user: {} } },
      ),
    ];
    const policy = await limit('moves', "activity.kind == 'SIGN_TRANSACTION' && !controls.moves");
    const account = await createAccount({ client: u.client, organizationId: org, signWith: wallets.b });
    let nonce = 1000;
    const send = (t: { to: string; value: bigint; data?: Hex; legacy?: boolean }) => () => {
      const fees = t.legacy ? { type: 'legacy' as const, gasPrice: 10n ** 10n } : { type: 'eip1559' as const, chainId: 1, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n };
      return account.signTransaction({ ...fees, nonce: nonce++, to: t.to as Hex, value: t.value, data: t.data, gas: 100_000n } as never).then((signed) => ({ signed, address: account.address }));
    };
    const transfer = encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [ALICE, 5n] });
    // Ether and a token in one call: 2 transfers.
    expect(await outcome(send({ to: TOKEN18, value: 1n, data: transfer }))).toBe('ok');
    // No chain id: replayable on chains 1 and 5, both listed: 2 more, 4 in all.
    expect(await outcome(send({ to: ALICE, value: 1n, legacy: true }))).toBe('ok');
    // Undecodable calldata to a listed token: refused with a reason (a short amount word).
    const truncated = (transfer.slice(0, 10 + 64 + 20) as Hex);
    expect(await outcome(send({ to: TOKEN18, value: 0n, data: truncated }))).toMatch(/velocity control 'moves' cannot measure this transaction: transfer\(address,uint256\) calldata does not decode/);
    // ...but to a token nothing lists it is no business of the controls.
    expect(await outcome(send({ to: OTHER, value: 0n, data: truncated }))).toBe('ok');
    // A token transfer alone is the fifth: over "at most 4".
    expect(await outcome(send({ to: TOKEN18, value: 0n, data: transfer }))).toBe('denied');
    await drop(policy, ids);
  });
});

describe('chainAssetTransfer: Solana', () => {
  const MAINNET = '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
  const DEVNET = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
  const BLOCKHASH = '11111111111111111111111111111111';

  it('SOL: System Program transfers are summed in SOL (9 decimals), several in one transaction, per wallet', async () => {
    const u = await newUser('sol sender');
    const ids = [await assetControl('sol_limit', [{ caip19: `solana:${MAINNET}/slip44:501`, decimals: '9' }], { threshold: '2.5' })];
    const policy = await limit('sol_limit', "activity.kind == 'SIGN_TRANSACTION' && !controls.sol_limit");
    const signer = new SolanaSigner({ organizationId: org, client: u.client });
    const to = Keypair.generate().publicKey;
    const send = async (wallet: string, lamports: number[]) => {
      const from = new PublicKey(wallet);
      const tx = new Transaction({ recentBlockhash: BLOCKHASH, feePayer: from });
      for (const l of lamports) tx.add(SystemProgram.transfer({ fromPubkey: from, toPubkey: to, lamports: l }));
      try {
        const signed = (await signer.signTransaction(tx, wallet)) as Transaction;
        return signed.verifySignatures() ? 'ok' : 'not signed';
      } catch (err) {
        const m = String((err as Error).message);
        return /policy engine denied request explicitly/.test(m) ? 'denied' : m;
      }
    };
    const SOL = 1_000_000_000;
    expect(await send(wallets.a_sol, [1.5 * SOL])).toBe('ok');
    expect(await send(wallets.a_sol, [0.6 * SOL, 0.5 * SOL])).toBe('denied');
    expect(await send(wallets.a_sol, [0.5 * SOL, 0.5 * SOL])).toBe('ok');
    expect(await send(wallets.a_sol, [1])).toBe('denied');
    // A transfer of 0 lamports moves nothing and adds nothing.
    expect(await send(wallets.a_sol, [0])).toBe('ok');
    // Another wallet has a limit of its own.
    expect(await send(wallets.b_sol, [2.5 * SOL])).toBe('ok');
    expect(await send(wallets.b_sol, [1])).toBe('denied');
    await drop(policy, ids);
  });

  it('SPL tokens: TransferChecked counts toward its mint (6 and 9 decimals summed in whole tokens); an unchecked Transfer, which names no mint, counts as the listed token with the fewest decimals; other mints do not count', async () => {
    const u = await newUser('spl sender');
    const usdc = Keypair.generate().publicKey;
    const nine = Keypair.generate().publicKey;
    const unlisted = Keypair.generate().publicKey;
    const ids = [
      await assetControl(
        'spl_limit',
        [
          { caip19: `solana:${MAINNET}/token:${usdc.toBase58()}`, decimals: '6' },
          { caip19: `solana:${DEVNET}/token:${nine.toBase58()}`, decimals: '9' },
        ],
        { threshold: '100' },
      ),
    ];
    const policy = await limit('spl_limit', "activity.kind == 'SIGN_TRANSACTION' && !controls.spl_limit");
    const signer = new SolanaSigner({ organizationId: org, client: u.client });
    const owner = new PublicKey(wallets.a_sol);
    const source = Keypair.generate().publicKey;
    const destination = Keypair.generate().publicKey;
    const amountData = (tag: number, amount: bigint, decimals?: number) => {
      const data = Buffer.alloc(decimals === undefined ? 9 : 10);
      data[0] = tag;
      data.writeBigUInt64LE(amount, 1);
      if (decimals !== undefined) data[9] = decimals;
      return data;
    };
    // SPL Token instructions by their layout: TransferChecked (12) {amount u64, decimals u8} over
    // [source, mint, destination, owner]; Transfer (3) {amount u64} over [source, destination, owner].
    const checked = (mint: PublicKey, amount: bigint, decimals: number) =>
      new TransactionInstruction({
        programId: TOKEN_PROGRAM,
        keys: [
          { pubkey: source, isSigner: false, isWritable: true },
          { pubkey: mint, isSigner: false, isWritable: false },
          { pubkey: destination, isSigner: false, isWritable: true },
          { pubkey: owner, isSigner: true, isWritable: false },
        ],
        data: amountData(12, amount, decimals),
      });
    const unchecked = (amount: bigint) =>
      new TransactionInstruction({
        programId: TOKEN_PROGRAM,
        keys: [
          { pubkey: source, isSigner: false, isWritable: true },
          { pubkey: destination, isSigner: false, isWritable: true },
          { pubkey: owner, isSigner: true, isWritable: false },
        ],
        data: amountData(3, amount),
      });
    const send = async (...instructions: TransactionInstruction[]) => {
      const tx = new Transaction({ recentBlockhash: BLOCKHASH, feePayer: owner }).add(...instructions);
      try {
        const signed = (await signer.signTransaction(tx, wallets.a_sol)) as Transaction;
        return signed.verifySignatures() ? 'ok' : 'not signed';
      } catch (err) {
        const m = String((err as Error).message);
        return /policy engine denied request explicitly/.test(m) ? 'denied' : m;
      }
    };
    expect(await send(checked(usdc, 98_000_000n, 6))).toBe('ok');
    // 1 whole token of the 9-decimal mint: 99 in all.
    expect(await send(checked(nine, 1_000_000_000n, 9))).toBe('ok');
    // Unchecked: 2,000,000 base units read as the 6-decimal token is 2 tokens, 101: refused (as the
    // 9-decimal one it would have been 0.002 and passed).
    expect(await send(unchecked(2_000_000n))).toBe('denied');
    expect(await send(unchecked(1_000_000n))).toBe('ok');
    expect(await send(checked(nine, 1n, 9))).toBe('denied');
    // A mint the control does not list.
    expect(await send(checked(unlisted, 10n ** 15n, 6))).toBe('ok');
    await drop(policy, ids);
  });
});

describe('chainAssetTransfer: Bitcoin and Tron', () => {
  const TESTNET3 = 'bip122:000000000933ea01ad0ee984209779ba';
  const MAINNET = 'bip122:000000000019d6689c085ae165831e93';
  const FOREIGN_TB1 = 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx';
  const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
  const TRON_OTHER = 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf';

  /** Signs through @turnkey/http as a user the policies judge: 'ok' when `check` accepts the result, 'denied', or the error. */
  async function signAs(client: TurnkeyClient, signWith: string, unsignedTransaction: string, type: string, check: (signed: string) => boolean): Promise<string> {
    try {
      const r = await client.signTransaction({
        type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
        timestampMs: String(Date.now()),
        organizationId: org,
        parameters: { signWith, unsignedTransaction, type: type as never },
      });
      const signed = r.activity.result.signTransactionResult?.signedTransaction;
      return signed && check(signed) ? 'ok' : `not signed: ${r.activity.status}`;
    } catch (err) {
      const m = String((err as Error).message);
      return /policy engine denied request explicitly/.test(m) ? 'denied' : m;
    }
  }

  it('bitcoin: the outputs leaving the wallet are summed in BTC, change to any of its accounts is not; a SUM limit stops the PSBT that would cross it; the network is the signing address\'s', async () => {
    const u = await newUser('btc sender');
    const w = await api.createWallet({
      walletName: 'btc',
      accounts: [
        { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/84'/1'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH' },
        { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/84'/1'/0'/1/0", addressFormat: 'ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH' },
      ],
    });
    const [signer, change] = w.addresses;
    const accounts = (await api.getWalletAccounts({ walletId: w.walletId })).accounts;
    const pub = Buffer.from(accounts.find((a) => a.address === signer)!.publicKey!, 'hex');
    const spend = btc.p2wpkh(pub, btc.TEST_NETWORK);
    expect(spend.address).toBe(signer);
    // testnet3 at most 0.001 BTC; mainnet at most 0: a tb1 wallet's PSBT must not count on mainnet.
    const ids = [
      await assetControl('btc_test', [{ caip19: `${TESTNET3}/slip44:0`, decimals: '8' }], { threshold: '0.001' }),
      await assetControl('btc_main', [{ caip19: `${MAINNET}/slip44:0`, decimals: '8' }], { threshold: '0' }),
    ];
    const policy = await limit('btc', "activity.kind == 'SIGN_TRANSACTION' && (!controls.btc_test || !controls.btc_main)");
    let n = 0;
    const psbt = (outputs: [string, bigint][]) => {
      const tx = new btc.Transaction();
      // 200,000 sat in; what the outputs leave is the fee.
      tx.addInput({ txid: (++n).toString(16).padStart(64, '0'), index: 0, witnessUtxo: { script: spend.script, amount: 200_000n } });
      for (const [to, amount] of outputs) tx.addOutputAddress(to, amount, btc.TEST_NETWORK);
      return Buffer.from(tx.toPSBT()).toString('hex');
    };
    const send = (outputs: [string, bigint][]) =>
      signAs(u.client, signer, psbt(outputs), 'TRANSACTION_TYPE_BITCOIN', (signed) => (btc.Transaction.fromPSBT(Buffer.from(signed, 'hex')).getInput(0).partialSig?.length ?? 0) === 1);
    // 60,000 sat leave; 130,000 come back as change (counted, they would be 0.0019 and over).
    expect(await send([[FOREIGN_TB1, 60_000n], [change, 130_000n]])).toBe('ok');
    // 30,000 more: 0.0009; change to the signing address itself does not count either.
    expect(await send([[FOREIGN_TB1, 30_000n], [signer, 160_000n]])).toBe('ok');
    // 20,000 more would be 0.0011: refused, and not counted.
    expect(await send([[FOREIGN_TB1, 20_000n], [change, 170_000n]])).toBe('denied');
    // Moving coins between the wallet's own addresses adds nothing.
    expect(await send([[change, 190_000n]])).toBe('ok');
    // Exactly 0.001 is still within "at most 0.001"; one more satoshi is not.
    expect(await send([[FOREIGN_TB1, 10_000n], [change, 180_000n]])).toBe('ok');
    expect(await send([[FOREIGN_TB1, 1n], [change, 189_999n]])).toBe('denied');
    await drop(policy, ids);
  });

  it('bitcoin: a private key, whose network Sigil cannot tell, counts its PSBT on every listed network; its own address is still change', async () => {
    const u = await newUser('btc key sender');
    const k = await api.createPrivateKeys({
      privateKeys: [{ privateKeyName: 'btc key', curve: 'CURVE_SECP256K1', privateKeyTags: [], addressFormats: ['ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH'] }],
    });
    const key = k.privateKeys[0];
    const own = key.addresses![0].address!;
    const pub = Buffer.from((await api.getPrivateKey({ privateKeyId: key.privateKeyId! })).privateKey.publicKey, 'hex');
    const spend = btc.p2wpkh(pub, btc.TEST_NETWORK);
    expect(spend.address).toBe(own);
    // Only mainnet is listed, per user (a private key has no wallet): a tb1 key's PSBT still counts.
    const ids = [await assetControl('btc_any', [{ caip19: `${MAINNET}/slip44:0`, decimals: '8' }], { threshold: '0.0005', groupBy: { user: {} } })];
    const policy = await limit('btc_any', "activity.kind == 'SIGN_TRANSACTION' && !controls.btc_any");
    const send = (outputs: [string, bigint][]) => {
      const tx = new btc.Transaction();
      tx.addInput({ txid: 'ab'.repeat(32), index: 0, witnessUtxo: { script: spend.script, amount: 200_000n } });
      for (const [to, amount] of outputs) tx.addOutputAddress(to, amount, btc.TEST_NETWORK);
      const check = (signed: string) => (btc.Transaction.fromPSBT(Buffer.from(signed, 'hex')).getInput(0).partialSig?.length ?? 0) === 1;
      return signAs(u.client, own, Buffer.from(tx.toPSBT()).toString('hex'), 'TRANSACTION_TYPE_BITCOIN', check);
    };
    // 40,000 leave and 150,000 come back to the key's own address: 0.0004 counted on mainnet.
    expect(await send([[FOREIGN_TB1, 40_000n], [own, 150_000n]])).toBe('ok');
    expect(await send([[FOREIGN_TB1, 20_000n], [own, 170_000n]])).toBe('denied');
    expect(await send([[FOREIGN_TB1, 10_000n], [own, 180_000n]])).toBe('ok');
    await drop(policy, ids);
  });

  it('Tron: TransferContract is summed in TRX (6 decimals); TRC-20 transfer, transferFrom and approve count toward their contract; other contracts do not', async () => {
    const u = await newUser('tron sender');
    const w = await api.createWallet({
      walletName: 'tron',
      accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/195'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_TRON' }],
    });
    const from = w.addresses[0];
    const ids = [
      await assetControl('trx', [{ caip19: 'tron:0x2b6653dc/slip44:195', decimals: '6' }], { threshold: '10' }),
      // The network in another spelling: a Tron transaction names none, so it is one asset whatever the spelling.
      await assetControl('usdt', [{ caip19: `tron:mainnet/trc20:${USDT}`, decimals: '6' }], { threshold: '100' }),
    ];
    const policy = await limit('tron', "activity.kind == 'SIGN_TRANSACTION' && (!controls.trx || !controls.usdt)");
    const tw = new TronWeb({ fullHost: 'http://127.0.0.1:9' }); // never contacted: the builders work offline
    const blockHeader = { ref_block_bytes: 'c3e8', ref_block_hash: 'e3b7e1a1c2d3f4e5', expiration: Date.now() + 60_000, timestamp: Date.now() };
    const send = async (unsigned: { raw_data_hex: string }) =>
      signAs(u.client, from, unsigned.raw_data_hex, 'TRANSACTION_TYPE_TRON', (signed) => tw.trx.ecRecover({ ...unsigned, signature: [signed.slice(-130)] } as never) === from);
    const trx = (sun: number) => tw.transactionBuilder.sendTrx(TRON_OTHER, sun, from, { blockHeader });
    const call = async (contract: string, selector: string, params: { type: string; value: string }[]) =>
      (await tw.transactionBuilder.triggerSmartContract(contract, selector, { txLocal: true, feeLimit: 10_000_000, blockHeader }, params, from)).transaction;
    const to = { type: 'address', value: TRON_OTHER };
    const amount = (v: bigint) => ({ type: 'uint256', value: v.toString() });
    expect(await send(await trx(9_000_000))).toBe('ok');
    expect(await send(await trx(1_000_001))).toBe('denied');
    expect(await send(await trx(1_000_000))).toBe('ok');
    // 60 + 30 + 10 USDT by the three calls: 100, within "at most 100".
    expect(await send(await call(USDT, 'transfer(address,uint256)', [to, amount(60_000_000n)]))).toBe('ok');
    expect(await send(await call(USDT, 'transferFrom(address,address,uint256)', [{ type: 'address', value: from }, to, amount(30_000_000n)]))).toBe('ok');
    expect(await send(await call(USDT, 'approve(address,uint256)', [to, amount(10_000_000n)]))).toBe('ok');
    expect(await send(await call(USDT, 'transfer(address,uint256)', [to, amount(1n)]))).toBe('denied');
    // Another contract is no business of these controls.
    expect(await send(await call(TRON_OTHER, 'transfer(address,uint256)', [to, amount(10n ** 12n)]))).toBe('ok');
    await drop(policy, ids);
  });
});
