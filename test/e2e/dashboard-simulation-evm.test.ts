// The approval card's simulation from what a real Sigil serves (docs/policies.md "Simulation before
// approval", "On the approval card"), in Debian's Chromium against a real `sigil serve` with anvil
// as the chain's RPC. With a root quorum of two, a second member submits a native ETH transfer;
// Sigil simulates it before anyone approves, and the root user's Pending card says "This sends 1.5
// ETH from your wallet … to …" at the simulated block. Once approved, the signed transaction is sent
// to anvil and viem reads the recipient's balance: the card said what the chain then did.
// A waiting eth_send_transaction of 1.5 ETH gets the same card: its digest over the intent is
// recomputed in the browser, and approved from the page, the send lands on anvil.
//
// NOTE FOR THE INTEGRATOR: this file needs the server-side EVM simulation (the simulation run for a
// signing activity and recorded as `decodedView.simulation`), built on a parallel branch. It fails
// until that is merged; the card's rendering alone is proven by test/e2e/dashboard-simulation.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { generateP256KeyPair } from '@turnkey/crypto';
import { createPublicClient, createTestClient, http, parseEther, parseGwei, serializeTransaction, type Hex } from 'viem';
import { waitingSdkServerClient } from '../helpers/clients.js';
import { go, launchChromium, newPage, serveForBrowser, shoot, type DashboardSigil } from '../helpers/browser.js';
import { startAnvil, type Anvil } from '../helpers/anvil.js';

let anvil: Anvil;
let sigil: DashboardSigil;
let browser: Browser;
let page: Page;
let origin: string;
const consoleErrors: string[] = [];
const TO = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
const SEND_TO = '0x90F79bf6EB2c4f870365E785982E1f101E93b906';
let bobKey: { apiPublicKey: string; apiPrivateKey: string };
const api = (key?: { apiPublicKey: string; apiPrivateKey: string }) => waitingSdkServerClient(sigil, key);

beforeAll(async () => {
  anvil = await startAnvil();
  ({ sigil, origin } = await serveForBrowser({ [`SIGIL_EVM_RPC_${anvil.chainId}`]: anvil.url }));
  browser = await launchChromium();
  page = await newPage(browser, consoleErrors);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await sigil?.stop();
  await anvil?.stop();
});

describe('the approval card shows the simulation Sigil ran (needs the EVM simulation wiring)', () => {
  let from: Hex;
  let activityId: string;

  it('a second root-quorum member submits a native ETH transfer; Sigil records its simulation', async () => {
    const w = await api().createWallet({
      walletName: 'Simulated',
      accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }],
    });
    from = w.addresses[0] as Hex;
    await createTestClient({ mode: 'anvil', transport: http(anvil.url) }).setBalance({ address: from, value: parseEther('10') });
    const k = generateP256KeyPair();
    bobKey = { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
    const { userIds } = await api().createUsers({
      users: [{ userName: 'bob', apiKeys: [{ apiKeyName: 'bob key', publicKey: bobKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    await api().updateRootQuorum({ threshold: 2, userIds: [sigil.root.userId, userIds[0]] });
    const tx = serializeTransaction({ type: 'eip1559', chainId: anvil.chainId, nonce: 0, to: TO, value: parseEther('1.5'), gas: 21_000n, maxFeePerGas: parseGwei('20'), maxPriorityFeePerGas: parseGwei('1') });
    const r = await api(bobKey).signTransaction({ signWith: from, unsignedTransaction: tx.slice(2), type: 'TRANSACTION_TYPE_ETHEREUM' });
    expect(r.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    activityId = r.activity.id;
    const { activity } = (await api().getActivity({ activityId })) as { activity: any };
    expect(activity.decodedView.simulation).toMatchObject({ status: 'SIMULATED', chain: 'ethereum', network: String(anvil.chainId), reverted: false });
  });

  it('the Pending card says what it does, at the simulated block; approved and sent, the chain agrees', async () => {
    await page.goto(`${origin}/?organizationId=${sigil.root.organizationId}`);
    await page.getByLabel('Public key (compressed hex)').fill(sigil.root.apiPublicKey);
    await page.getByLabel('Private key (hex)').fill(sigil.root.apiPrivateKey);
    await page.getByRole('button', { name: 'Sign in with API key' }).click();
    await page.getByRole('heading', { name: 'Organization', level: 1 }).waitFor();
    await go(page, '#/pending', 'Pending');
    const card = page.locator(`.pending-card[data-activity-id="${activityId}"]`);
    const simulation = card.locator('.simulation');
    expect(await simulation.getAttribute('data-simulation')).toBe('SIMULATED');
    const text = (await simulation.textContent())!.replace(/\s+/g, ' ');
    expect(text).toMatch(new RegExp(`This sends 1\\.5 ETH from your wallet ${from} to ${TO}`, 'i'));
    expect(text).toMatch(new RegExp(`Simulated against block \\d+ of chain ${anvil.chainId} at `));
    await shoot(page, 'simulation-evm-card', () => card);

    await card.locator('[data-integrity="ok"]').waitFor();
    await card.getByRole('button', { name: /^Approve: / }).click();
    await card.waitFor({ state: 'detached' });
    const { activity } = (await api().getActivity({ activityId })) as { activity: any };
    expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const client = createPublicClient({ transport: http(anvil.url) });
    const before = await client.getBalance({ address: TO });
    const hash = await client.sendRawTransaction({ serializedTransaction: `0x${activity.result.signTransactionResult.signedTransaction}` as Hex });
    expect((await client.waitForTransactionReceipt({ hash })).status).toBe('success');
    expect(await client.getBalance({ address: TO })).toBe(before + parseEther('1.5'));
    expect(consoleErrors).toEqual([]);
  });

  it('a waiting eth_send_transaction shows what it does, its digest over the intent checked in the browser; approved, the send lands', async () => {
    const r = (await api(bobKey).ethSendTransaction({ from, caip2: `eip155:${anvil.chainId}`, calls: [{ to: SEND_TO, value: parseEther('1.5').toString() }] } as never)) as { activity: any };
    expect(r.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    const sendId = r.activity.id as string;
    const { activity: waiting } = (await api().getActivity({ activityId: sendId })) as { activity: any };
    expect(waiting.decodedView).toMatchObject({ format: 'ETHEREUM_SEND', summary: `send 1.5 ETH to ${SEND_TO} on chain ${anvil.chainId}`, simulation: { status: 'SIMULATED' } });
    expect(waiting.decodedView.digests[0]).toMatchObject({ over: 'intent', algorithm: 'sha256' });

    // Away and back, so the Pending page lists the send submitted since it was last drawn.
    await go(page, '#/users', 'Users');
    await go(page, '#/pending', 'Pending');
    const card = page.locator(`.pending-card[data-activity-id="${sendId}"]`);
    const text = (await card.locator('.simulation').textContent())!.replace(/\s+/g, ' ');
    expect(text).toMatch(new RegExp(`This sends 1\\.5 ETH from your wallet ${from} to ${SEND_TO}`, 'i'));
    expect((await card.textContent())!).toContain('filled by Sigil when approved');
    await card.locator('[data-integrity="ok"]').waitFor();
    const client = createPublicClient({ transport: http(anvil.url) });
    const before = await client.getBalance({ address: SEND_TO });
    await card.getByRole('button', { name: /^Approve: / }).click();
    await card.waitFor({ state: 'detached' });
    const { activity } = (await api().getActivity({ activityId: sendId })) as { activity: any };
    expect(activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    // Sigil broadcasts the send after the approval; the balance moves when anvil mines it.
    while ((await client.getBalance({ address: SEND_TO })) === before) await new Promise((res) => setTimeout(res, 200));
    expect(await client.getBalance({ address: SEND_TO })).toBe(before + parseEther('1.5'));
    expect(consoleErrors).toEqual([]);
  }, 120_000);
});
