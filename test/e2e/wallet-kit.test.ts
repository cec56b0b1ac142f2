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
import { ed25519 } from '@noble/curves/ed25519.js';
import bs58 from 'bs58';
import { addVirtualAuthenticator, launchChromium } from '../helpers/browser.js';
import { newKey } from '../helpers/clients.js';
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

/** Calls a kit method with `walletAccount` set to the kit's own account object for `address`. */
async function withAccount<T = any>(page: Page, method: string, address: string, params: Record<string, unknown>): Promise<T> {
  return page.evaluate(
    async ([m, a, p]) => {
      const k = (window as any).kit;
      const walletAccount = k.wallets.flatMap((w: any) => w.accounts).find((acc: any) => acc.address === a);
      if (!walletAccount) throw new Error(`the kit has no account ${a}`);
      try {
        return await k[m as string]({ ...(p as object), walletAccount });
      } catch (e: any) {
        throw new Error(`${e?.message} [${e?.code ?? ''}] ${e?.cause?.message ?? e?.cause ?? ''}`);
      }
    },
    [method, address, params] as const,
  );
}

/** Calls the kit's HTTP client (@turnkey/core's generated client, stamped with the session) in the page. */
async function api<T = any>(page: Page, method: string, body: unknown): Promise<T> {
  return page.evaluate(
    async ([m, b]) => {
      try {
        return await (window as any).kit.httpClient[m as string](b);
      } catch (e: any) {
        throw new Error(`${e?.message} ${e?.cause?.message ?? ''}`);
      }
    },
    [method, body] as const,
  );
}

async function signUp(page: Page, userName: string) {
  await kit(page, 'signUpWithPasskey', { passkeyDisplayName: `${userName} passkey`, createSubOrgParams: { userName } });
  await expect.poll(async () => (await state(page)).authState).toBe('authenticated');
  return state(page);
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

describe('Google-style OAuth', () => {
  it('signs up through the kit’s Google popup against a loopback OIDC provider, then logs in again to the same sub-organization', async () => {
    const { page, context } = await person();
    await d.oidc.route(context);
    d.oidc.signInAs('google-grace-1', 'grace@example.com');
    // The kit reads the Google client id and redirect URL from wallet_kit_config (the operator's).
    await kit(page, 'handleGoogleOauth');
    await expect.poll(async () => (await state(page)).authState).toBe('authenticated');
    const first = await state(page);
    expect(first.organizationId).not.toBe(d.sigil.root.organizationId);

    await kit(page, 'logout');
    await expect.poll(async () => (await state(page)).authState).toBe('unauthenticated');
    await kit(page, 'handleGoogleOauth');
    await expect.poll(async () => (await state(page)).authState).toBe('authenticated');
    expect(await state(page)).toMatchObject({ organizationId: first.organizationId, userId: first.userId });
    await context.close();
  });
});

describe('wallets and signing', () => {
  it('creates a wallet and accounts on Ethereum and Solana and signs messages and transactions; a signature the user’s policy denies is refused in the page', async () => {
    const { page, context } = await person();
    const me = await signUp(page, 'lin');
    expect(me.wallets).toEqual([]);

    const walletId = await kit<string>(page, 'createWallet', { walletName: 'Spending', accounts: ['ADDRESS_FORMAT_ETHEREUM', 'ADDRESS_FORMAT_SOLANA'] });
    await kit(page, 'createWalletAccounts', { walletId, accounts: ['ADDRESS_FORMAT_ETHEREUM'] });
    await kit(page, 'refreshWallets');
    await expect.poll(async () => (await state(page)).wallets[0]?.accounts.length ?? 0).toBe(3);
    const accounts = (await state(page)).wallets[0].accounts;
    const eth = accounts.filter((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM');
    const sol = accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_SOLANA')!;
    // The kit takes the next BIP-44 account for an address format the wallet already has.
    expect(eth.map((a) => a.path)).toEqual(["m/44'/60'/0'/0/0", "m/44'/60'/1'/0/0"]);
    expect(sol.path).toBe("m/44'/501'/0'/0'");

    // Ethereum: an EIP-191 message and an EIP-1559 transaction, recovered by viem to the account.
    const message = 'Sigil says hello to the wallet kit';
    const sig = await withAccount<{ r: string; s: string; v: string }>(page, 'signMessage', eth[1].address, { message, addEthereumPrefix: true });
    const signature = `0x${sig.r}${sig.s}${(27 + Number(sig.v)).toString(16)}` as Hex;
    expect(await recoverMessageAddress({ message, signature })).toBe(eth[1].address);
    const unsigned = serializeTransaction({ type: 'eip1559', chainId: 31337, nonce: 0, to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', value: 10n ** 15n, gas: 21000n, maxFeePerGas: 2n * 10n ** 9n, maxPriorityFeePerGas: 10n ** 9n });
    const signedTx = await withAccount<string>(page, 'signTransaction', eth[0].address, { unsignedTransaction: unsigned, transactionType: 'TRANSACTION_TYPE_ETHEREUM' });
    const serialized = (signedTx.startsWith('0x') ? signedTx : `0x${signedTx}`) as Hex;
    expect(await recoverTransactionAddress({ serializedTransaction: serialized as any })).toBe(eth[0].address);
    expect(parseTransaction(serialized)).toMatchObject({ to: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8', value: 10n ** 15n, chainId: 31337 });

    // Solana: an Ed25519 message signature, and a transfer whose fee payer's signature web3.js verifies.
    const solSig = await withAccount<{ r: string; s: string }>(page, 'signMessage', sol.address, { message });
    expect(ed25519.verify(Buffer.from(solSig.r + solSig.s, 'hex'), Buffer.from(message), new PublicKey(sol.address).toBytes())).toBe(true);
    const payer = new PublicKey(sol.address);
    const tx = new Transaction({ feePayer: payer, recentBlockhash: bs58.encode(Buffer.alloc(32, 7)) }).add(
      SystemProgram.transfer({ fromPubkey: payer, toPubkey: Keypair.generate().publicKey, lamports: 5000 }),
    );
    const signedSol = await withAccount<string>(page, 'signTransaction', sol.address, {
      unsignedTransaction: tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('hex'),
      transactionType: 'TRANSACTION_TYPE_SOLANA',
    });
    const parsed = Transaction.from(Buffer.from(signedSol, 'hex'));
    expect(parsed.verifySignatures()).toBe(true);
    expect(parsed.signatures[0].publicKey.toBase58()).toBe(sol.address);

    // The user's own policy, as an app with delegated access sets it up: the user leaves the root
    // quorum to the app's backend user, may sign, but never to a blocked address.
    const backend = await api(page, 'createUsers', {
      users: [{ userName: 'app backend', userTags: [], authenticators: [], oauthProviders: [], apiKeys: [{ apiKeyName: 'backend', publicKey: newKey().apiPublicKey, curveType: 'API_KEY_CURVE_P256' }] }],
    });
    const blocked = '0x000000000000000000000000000000000000dEaD';
    await api(page, 'createPolicies', {
      policies: [
        { policyName: 'lin signs', effect: 'EFFECT_ALLOW', consensus: `approvers.any(user, user.id == '${me.userId}')`, condition: "activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN'", notes: '' },
        { policyName: 'never to the blocked address', effect: 'EFFECT_DENY', condition: `eth.tx.to == '${blocked.toLowerCase()}'`, notes: '' },
      ],
    });
    await api(page, 'updateRootQuorum', { threshold: 1, userIds: [backend.userIds[0]] });
    const toBlocked = serializeTransaction({ type: 'eip1559', chainId: 31337, nonce: 1, to: blocked, value: 1n, gas: 21000n, maxFeePerGas: 2n * 10n ** 9n, maxPriorityFeePerGas: 10n ** 9n });
    await expect(withAccount(page, 'signTransaction', eth[0].address, { unsignedTransaction: toBlocked, transactionType: 'TRANSACTION_TYPE_ETHEREUM' })).rejects.toThrow(
      /policy engine denied request explicitly/,
    );
    // The policy allows the rest: another transaction is signed.
    const again = await withAccount<string>(page, 'signTransaction', eth[0].address, { unsignedTransaction: unsigned, transactionType: 'TRANSACTION_TYPE_ETHEREUM' });
    expect(await recoverTransactionAddress({ serializedTransaction: (again.startsWith('0x') ? again : `0x${again}`) as any })).toBe(eth[0].address);
    await context.close();
  });
});
