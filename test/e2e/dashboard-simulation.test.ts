// The approval card's simulation (docs/policies.md "Simulation before approval", "On the approval
// card") in Debian's Chromium: the dashboard served by a real `sigil serve`, its own compiled
// modules loaded in the page, and approval cards drawn by its decodedPanel from activities whose
// `decodedView.simulation` is a fixed asset-changes object of each kind: an ERC-20 outflow with
// decimals, an unlimited approval, a deployment and a delegation; a Solana transfer; a revert; no
// simulation (NOT_SIMULATED) and a failed one, each saying why. The attack: a token symbol that is
// HTML (as any token contract can name itself) is shown as text and creates no element. The card
// drawn from what a real Sigil serves once the EVM simulation is wired is in
// test/e2e/dashboard-simulation-evm.test.ts. Screenshots go to test-results/screenshots/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, newPage, serveForBrowser, shoot, type DashboardSigil } from '../helpers/browser.js';

let sigil: DashboardSigil;
let browser: Browser;
let page: Page;
let origin: string;
const consoleErrors: string[] = [];

const OURS = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const TO = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
const SPENDER = '0x90F79bf6EB2c4f870365E785982E1f101E93b906';
const USDC = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
const EVIL_SYMBOL = '<img src=x id=pwned onerror="document.title=\'pwned\'">USDC';
const SOL_FROM = '8sbwYxZDj4A2CqZhHEY4UBj7iYwmjbo5mbMhBUGsTa5h';
const SOL_TO = 'BdwCRxnUpxo8GV1JZ6mi3WhpBpmL2KrRDJkJ7WjhnRgV';
const AT = '2026-11-28T01:00:00.000Z';

const usdc = { kind: 'erc20', contract: USDC, symbol: 'USDC', decimals: 6 };
const base = { chain: 'ethereum', network: '1', block: '21000000', simulatedAt: AT, reverted: false, transfers: [], approvals: [], balanceChanges: [], deployments: [], delegations: [] };

const FIXTURES: Record<string, unknown> = {
  outflow: {
    ...base,
    status: 'SIMULATED',
    transfers: [{ asset: usdc, from: OURS, to: TO, amount: '1200000000' }],
    approvals: [{ asset: { ...usdc, symbol: EVIL_SYMBOL }, owner: OURS, spender: SPENDER, amount: 'unlimited', revoked: false, via: 'approve' }],
    balanceChanges: [{ address: OURS, asset: usdc, delta: '-1200000000' }],
    deployments: ['0x5FbDB2315678afecb367f032d93F642f64180aa3'],
    delegations: [{ authority: OURS, delegate: SPENDER }],
  },
  solana: {
    ...base,
    status: 'SIMULATED',
    chain: 'solana',
    network: 'solana:devnet',
    block: '4242',
    transfers: [{ asset: { kind: 'native', symbol: 'SOL', decimals: 9 }, from: SOL_FROM, to: SOL_TO, amount: '1500000000' }],
    balanceChanges: [{ address: SOL_FROM, asset: { kind: 'native', symbol: 'SOL', decimals: 9 }, delta: '-1500005000' }],
  },
  reverts: { ...base, status: 'SIMULATED', reverted: true, revertReason: 'execution reverted: ERC20: transfer amount exceeds balance' },
  none: { ...base, status: 'NOT_SIMULATED', reason: 'no RPC is configured for eip155:1 (SIGIL_EVM_RPC_1)', block: undefined, simulatedAt: undefined },
  failed: { ...base, status: 'FAILED', reason: 'the node did not answer within 5 s', block: undefined, simulatedAt: undefined },
};

beforeAll(async () => {
  ({ sigil, origin } = await serveForBrowser());
  browser = await launchChromium();
  page = await newPage(browser, consoleErrors);
  await page.goto(`${origin}/`);
  await page.locator('#page-title').waitFor();
  // Each fixture becomes a Pending-style card drawn by the dashboard's own modules, as served. The
  // page script is a string so the test runner leaves its dynamic import() to the browser.
  await page.evaluate(`(async (fixtures) => {
    const { decodedPanel } = await import(location.origin + '/dashboard/pages/decoded.js');
    const host = document.createElement('ul');
    host.className = 'cards';
    host.id = 'fixtures';
    for (const [name, simulation] of Object.entries(fixtures)) {
      const activity = {
        id: name,
        type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
        intent: { signTransactionIntentV2: { unsignedTransaction: '02c0' } },
        decodedView: { summary: 'fixture ' + name, flags: [], sections: [], digests: [], simulation },
      };
      const card = document.createElement('li');
      card.className = 'card pending-card';
      card.dataset.fixture = name;
      card.append(decodedPanel(activity).element);
      host.append(card);
    }
    document.querySelector('main').replaceChildren(host);
  })(${JSON.stringify(FIXTURES)})`);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await sigil?.stop();
});

const card = (name: string) => page.locator(`[data-fixture="${name}"] .simulation`);
const lines = async (name: string) => (await card(name).locator('li').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());

describe('the approval card shows what a transaction does', () => {
  it('an outflow in whole tokens from the wallet, an unlimited approval, a deployment and a delegation, with the block and time', async () => {
    expect(await card('outflow').getAttribute('data-simulation')).toBe('SIMULATED');
    expect(await lines('outflow')).toEqual([
      `This sends 1,200 USDC from your wallet ${OURS} to ${TO}`,
      `Grants unlimited approval of ${EVIL_SYMBOL} to ${SPENDER}`,
      'Deploys a contract at 0x5FbDB2315678afecb367f032d93F642f64180aa3',
      `Sets a delegation of ${OURS} to ${SPENDER}`,
    ]);
    const text = (await card('outflow').textContent())!;
    expect(text).toContain(`Net change${OURS} -1,200 USDC`);
    expect(text).toMatch(/Simulated against block 21000000 of chain 1 at \S.*2026/);
    await shoot(page, 'simulation-outflow-card', () => page.locator('[data-fixture="outflow"]'));
  });

  it('a token symbol that is HTML is shown as text and creates no element (chain data is never markup)', async () => {
    expect(await card('outflow').locator('li').nth(1).textContent()).toContain('<img src=x id=pwned');
    expect(await page.locator('#pwned').count()).toBe(0);
    expect(await page.locator('#fixtures img').count()).toBe(0);
    expect(await page.title()).not.toBe('pwned');
  });

  it('a Solana transfer in SOL, at its slot', async () => {
    expect(await lines('solana')).toEqual([`This sends 1.5 SOL from your wallet ${SOL_FROM} to ${SOL_TO}`]);
    const text = (await card('solana').textContent())!;
    expect(text).toContain(`${SOL_FROM} -1.500005 SOL`);
    expect(text).toContain('Simulated against slot 4242 of Solana solana:devnet');
  });

  it('a revert is said first, with its reason', async () => {
    expect(await lines('reverts')).toEqual(['Reverts: execution reverted: ERC20: transfer amount exceeds balance. If sent, it fails and only the fee is paid.']);
    expect(await card('reverts').locator('.simulation-reverted').count()).toBe(1);
    await shoot(page, 'simulation-reverts-card', () => page.locator('[data-fixture="reverts"]'));
  });

  it('says plainly when no simulation ran, and when one failed, and why', async () => {
    expect(await card('none').getAttribute('data-simulation')).toBe('NOT_SIMULATED');
    expect(await card('none').textContent()).toContain('No simulation ran: no RPC is configured for eip155:1 (SIGIL_EVM_RPC_1).');
    expect(await card('none').textContent()).toContain('has not been checked against the chain');
    expect(await card('failed').getAttribute('role')).toBe('alert');
    expect(await card('failed').textContent()).toContain('The simulation failed: the node did not answer within 5 s.');
    await shoot(page, 'simulation-none-card', () => page.locator('[data-fixture="none"]'));
    expect(consoleErrors).toEqual([]);
  });
});
