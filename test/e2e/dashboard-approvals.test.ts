// Approving what you see (docs/policies.md "Approving what you see") in a real headless Chromium against
// a real `sigil serve`: with a root quorum of two, a second quorum member (bob) submits an ERC-20
// transfer (to a token whose interface is stored with its decimals), a Solana transfer, a Bitcoin PSBT
// with change and a Safe execTransaction that hides a proxy upgrade behind a delegatecall. Each waits
// for the root user's vote. The root user's Pending page lists exactly those four (with the count in the
// navigation), each decoded with the right amounts and addresses, the Safe one flagged as dangerous, and
// the digest recomputed by the page's own code. A payload altered in the page is reported as an
// integrity failure and the approval is not cast; then each is approved from the page (the button
// names what it approves) and the API shows it signed. Screenshots at 1280 and 390 px go to
// test-results/screenshots/ (the README's come from there, docs/images/).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { generateP256KeyPair } from '@turnkey/crypto';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import * as btc from '@scure/btc-signer';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { waitingSdkServerClient } from '../helpers/clients.js';
import { go as goTo, launchChromium, newPage, serveForBrowser, shoot as shootPage, type DashboardSigil } from '../helpers/browser.js';
import { ALICE, ERC20_ABI, erc20Transfer, EVIL, safeHiddenUpgrade, TOKEN } from '../helpers/approval-vectors.js';

let sigil: DashboardSigil;
let browser: Browser;
let page: Page;
let origin: string;
const consoleErrors: string[] = [];

const api = (key?: { apiPublicKey: string; apiPrivateKey: string }) => waitingSdkServerClient(sigil, key);

const shoot = (name: string) => shootPage(page, name);
const shootElement = (name: string, locate: () => ReturnType<Page['locator']>) => shootPage(page, name, locate);
const go = (hash: string, title: string | RegExp) => goTo(page, hash, title);

beforeAll(async () => {
  ({ sigil, origin } = await serveForBrowser());
  browser = await launchChromium();
  page = await newPage(browser, consoleErrors);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await sigil?.stop();
});

describe('approving what you see', () => {
  const ids: Record<string, string> = {};
  let eth: string;
  let sol: string;
  let btcAddress: string;
  let btcChange: string;
  const solRecipient = Keypair.fromSeed(new Uint8Array(32).fill(0x23)).publicKey.toBase58();
  const btcDest = btc.p2wpkh(secp256k1.getPublicKey(new Uint8Array(32).fill(0x44), true), btc.TEST_NETWORK).address!;

  it('a second root-quorum member submits an ERC-20 transfer, a Solana transfer, a PSBT and a Safe call; each waits for consensus', async () => {
    const w = await api().createWallet({
      walletName: 'Treasury',
      accounts: [
        { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' },
        { curve: 'CURVE_ED25519', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/501'/0'/0'", addressFormat: 'ADDRESS_FORMAT_SOLANA' },
        { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/84'/1'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH' },
        { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/84'/1'/0'/1/0", addressFormat: 'ADDRESS_FORMAT_BITCOIN_TESTNET_P2WPKH' },
      ],
    });
    [eth, sol, btcAddress, btcChange] = w.addresses;
    const accounts = (await api().getWalletAccounts({ walletId: w.walletId })).accounts;
    const btcPub = Buffer.from(accounts.find((a) => a.address === btcAddress)!.publicKey!, 'hex');
    await api().createSmartContractInterface({ smartContractAddress: TOKEN, smartContractInterface: ERC20_ABI, type: 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM', label: 'USDC', notes: 'decimals: 6' });

    const k = generateP256KeyPair();
    const bobKey = { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
    const { userIds } = await api().createUsers({
      users: [{ userName: 'bob', apiKeys: [{ apiKeyName: 'bob key', publicKey: bobKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    await api().updateRootQuorum({ threshold: 2, userIds: [sigil.root.userId, userIds[0]] });
    const bob = api(bobKey);

    const erc20 = erc20Transfer();
    const solTx = new Transaction({ feePayer: new PublicKey(sol), recentBlockhash: new PublicKey(new Uint8Array(32).fill(0x42)).toBase58() });
    solTx.add(SystemProgram.transfer({ fromPubkey: new PublicKey(sol), toPubkey: new PublicKey(solRecipient), lamports: 1_500_000_000n }));
    const psbt = new btc.Transaction();
    psbt.addInput({ txid: '11'.repeat(32), index: 0, witnessUtxo: { script: btc.p2wpkh(btcPub, btc.TEST_NETWORK).script, amount: 200_000n } });
    psbt.addOutputAddress(btcDest, 60_000n, btc.TEST_NETWORK);
    psbt.addOutputAddress(btcChange, 130_000n, btc.TEST_NETWORK);
    const safeCall = safeHiddenUpgrade();

    const submit = async (name: string, signWith: string, unsignedTransaction: string, type: string) => {
      const r = await bob.signTransaction({ signWith, unsignedTransaction, type: type as never });
      expect(r.activity.status, name).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
      ids[name] = r.activity.id;
    };
    await submit('erc20', eth, erc20.slice(2), 'TRANSACTION_TYPE_ETHEREUM');
    await submit('solana', sol, Buffer.from(solTx.serialize({ requireAllSignatures: false, verifySignatures: false })).toString('hex'), 'TRANSACTION_TYPE_SOLANA');
    await submit('psbt', btcAddress, Buffer.from(psbt.toPSBT()).toString('hex'), 'TRANSACTION_TYPE_BITCOIN');
    await submit('safe', eth, safeCall.slice(2), 'TRANSACTION_TYPE_ETHEREUM');

    // The API's record carries the decoded view for an official client too (which ignores it).
    const { activity } = (await api().getActivity({ activityId: ids.erc20 })) as { activity: any };
    expect(activity.decodedView.summary).toBe(`transfer 1.5 USDC to ${ALICE}`);
    expect(activity.decodedView.consensus.rootQuorum).toMatchObject({ threshold: 2, approvals: 1 });
  });

  it('the Pending page lists what the root user can vote on, decoded, with the count in the navigation', async () => {
    await page.goto(`${origin}/?organizationId=${sigil.root.organizationId}`);
    await page.getByLabel('Public key (compressed hex)').fill(sigil.root.apiPublicKey);
    await page.getByLabel('Private key (hex)').fill(sigil.root.apiPrivateKey);
    await page.getByRole('button', { name: 'Sign in with API key' }).click();
    await page.getByRole('heading', { name: 'Organization', level: 1 }).waitFor();
    await expect.poll(() => page.locator('#pending-count').textContent()).toBe(' 4');
    await go('#/pending', 'Pending');
    const card = (name: string) => page.locator(`.pending-card[data-activity-id="${ids[name]}"]`);
    for (const name of ['erc20', 'solana', 'psbt', 'safe']) await card(name).locator('[data-integrity="ok"]').waitFor();

    const erc20 = (await card('erc20').textContent())!;
    expect(erc20).toContain(`Signs: transfer 1.5 USDC to ${ALICE}`);
    expect(erc20).toContain('1.5 USDC');
    expect(erc20).toContain('transfer(address,uint256)');
    expect(erc20).toContain('Ethereum mainnet');
    expect(erc20).toContain('1 of 2 approvals');
    expect(await card('erc20').getByRole('button', { name: `Approve: transfer 1.5 USDC to ${ALICE}` }).isVisible()).toBe(true);

    const solana = (await card('solana').textContent())!;
    expect(solana).toContain(`Signs: send 1.5 SOL to ${solRecipient}`);
    expect(solana).toContain('System Program');
    expect(solana).toContain(`transfer 1.5 SOL from ${sol} to ${solRecipient}`);

    const psbt = (await card('psbt').textContent())!;
    expect(psbt).toContain(`Signs: send 0.0006 BTC to ${btcDest} (fee 0.0001 BTC)`);
    expect(psbt).toContain(`0.002 BTC from ${btcAddress}`);
    expect(psbt).toContain(`0.0013 BTC to ${btcChange}`);
    expect(psbt).toContain('change (one of this wallet’s addresses)');

    const safe = card('safe');
    expect(await safe.locator('[data-flag="PROXY_UPGRADE"]').textContent()).toContain(EVIL);
    expect(await safe.locator('[data-flag="DELEGATECALL"]').count()).toBe(1);
    await shoot('approvals-pending');
    await shootElement('approvals-erc20-card', () => card('erc20'));
    await shootElement('approvals-safe-card', () => card('safe'));
    await shootElement('approvals-solana-card', () => card('solana'));
    await shootElement('approvals-psbt-card', () => card('psbt'));
    expect(consoleErrors).toEqual([]);
  });

  it('a payload altered in the page fails the integrity check and the approval is not cast', async () => {
    const card = page.locator(`.pending-card[data-activity-id="${ids.erc20}"]`);
    await card.locator('details summary', { hasText: 'Exact payload' }).click();
    // Change the amount's last byte in the payload shown (1_500_000 = 0x16e360 → 0x16e361).
    await card.locator('.signed-payload').evaluate((el) => {
      el.textContent = el.textContent!.replace(/16e360/, '16e361');
    });
    await card.getByRole('button', { name: /^Approve/ }).click();
    await expect.poll(() => card.locator('[data-integrity]').getAttribute('data-integrity')).toBe('mismatch');
    expect(await card.getByRole('alert').first().textContent()).toMatch(/Integrity check failed.*digest mismatch/);
    expect(await card.textContent()).toContain('Not approved');
    await shoot('approvals-mismatch');
    await shootElement('approvals-mismatch-card', () => card);
    const { activity } = await api().getActivity({ activityId: ids.erc20 });
    expect(activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    expect(activity.votes).toHaveLength(1);
  });

  it('approves each from the page; the API shows them signed and the count goes to zero', async () => {
    await page.reload();
    await page.locator('#page-title', { hasText: 'Pending' }).waitFor();
    for (const name of ['erc20', 'solana', 'psbt']) {
      const card = page.locator(`.pending-card[data-activity-id="${ids[name]}"]`);
      await card.locator('[data-integrity="ok"]').waitFor();
      await card.getByRole('button', { name: /^Approve: / }).click();
      await expect.poll(() => page.locator('#flash').textContent()).toContain('the activity is now completed');
      await card.waitFor({ state: 'detached' });
      const { activity } = (await api().getActivity({ activityId: ids[name] })) as { activity: any };
      expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
      expect(activity.result.signTransactionResult.signedTransaction).toMatch(/^[0-9a-f]+$/);
    }
    await expect.poll(() => page.locator('#pending-count').textContent()).toBe(' 1');

    // The activity page shows the same decoding beside the record.
    await page.goto(`${origin}/#/activities/${ids.erc20}`);
    await page.getByRole('heading', { name: 'What it signs' }).waitFor();
    await page.locator('[data-integrity="ok"]').waitFor();
    expect(await page.locator('main').textContent()).toContain(`transfer 1.5 USDC to ${ALICE}`);
    await shoot('approvals-activity');
    expect(consoleErrors).toEqual([]);
  });
});
