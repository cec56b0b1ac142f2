// The official React wallet kit in a real browser against Sigil (docs/embedded-wallets.md "Embedded
// wallets"): an app built from the published @turnkey/react-wallet-kit (test/helpers/wallet-kit-app/),
// served from its own loopback origin and pointed at Sigil with apiBaseUrl, authProxyUrl,
// authProxyConfigId and organizationId only, runs in Debian's Chromium with a DevTools virtual
// authenticator. Everything the kit sends (wallet_kit_config and client params, signup_v2, account
// lookups, attested stamp_login, OTP v2, session refresh, the reads it polls, all cross-origin) goes
// unchanged to Sigil, and none is refused unless the test means it to be.
// Scenarios: passkey sign-up of a sub-organization with a wallet, log out, passkey login; Google-style
// OAuth against a loopback OIDC provider; wallets and accounts on Ethereum and Solana, messages and
// transactions signed (checked with viem and @solana/web3.js), and a signature the user's own policy
// denies refused in the page; export of a wallet, its accounts' keys and a private key through
// Sigil's export frame (the secrets read from the frame's page and checked with viem and
// @solana/web3.js), import of a mnemonic and a key through the import frame, and a Solana
// transaction signed in the export-and-sign frame (which the kit has no method for); email OTP
// through the app's backend (@turnkey/sdk-server), since @turnkey/core's browser OTP step encrypts
// to Turnkey's pinned key; the wallet proofs of a sign-up checked against the deployment's signer
// key, since the kit's verifyAppProofs wants AWS Nitro; and @turnkey/sdk-browser's passkey and
// IndexedDB clients in the same browser.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { createTestClient, http, keccak256, parseEther, parseTransaction, publicActions, recoverAddress, recoverMessageAddress, recoverTransactionAddress, serializeTransaction, toBytes, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import bs58 from 'bs58';
import { addVirtualAuthenticator, launchChromium, shoot } from '../helpers/browser.js';
import { newKey, sdkServerClient } from '../helpers/clients.js';
import { startAnvil } from '../helpers/anvil.js';
import { codeIn, smtpEnv, startInbox, type Inbox } from '../helpers/mail.js';
import { encryptOtpCodeToBundle, verifyAppProofSignature } from '@turnkey/crypto';
import { p256 } from '@noble/curves/nist.js';
import { createHash, createHmac } from 'node:crypto';
import { generateMnemonic, mnemonicToSeedSync, validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { GOOGLE_CLIENT_ID, GOOGLE_ISSUER, startKitDeployment, type KitDeployment } from '../helpers/wallet-kit.js';

let d: KitDeployment;
let browser: Browser;
let inbox: Inbox;

beforeAll(async () => {
  inbox = await startInbox();
  d = await startKitDeployment(smtpEnv(inbox));
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await d?.stop();
  await inbox?.close();
});

interface AppState {
  clientState?: string;
  authState: string;
  organizationId?: string;
  /** Seconds since the epoch. */
  sessionExpiry?: number;
  userId?: string;
  userName?: string;
  wallets: { walletId: string; walletName: string; accounts: { address: string; addressFormat: string; path: string }[] }[];
}

interface Call {
  method: string;
  path: string;
  status: number;
  body?: any;
  /** Why Chromium gave up on a request that got no answer (status 0). */
  error?: string;
}

/**
 * A person: a browser context of their own (own storage) with a passkey authenticator. `calls` is
 * every request the page made to Sigil (API, auth proxy and frames ports) with its answer; DevTools does not report CORS
 * preflights to the page, so a refused preflight shows as a failed request (status 0).
 */
async function person(): Promise<{ context: BrowserContext; page: Page; calls: Call[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const calls: Call[] = [];
  const sigilOrigins = [d.sigil.url, d.sigil.authProxyUrl, d.config.exportIframeUrl, d.config.importIframeUrl, d.config.exportAndSignIframeUrl].filter((u) => u !== undefined).map((u) => new URL(u).origin);
  page.on('response', async (r) => {
    const u = new URL(r.url());
    if (!sigilOrigins.includes(u.origin)) return;
    const call: Call = { method: r.request().method(), path: u.pathname, status: r.status() };
    calls.push(call);
    if (u.pathname.startsWith('/v1/wallet_kit') || u.pathname === '/v1/signup_v2') call.body = await r.json().catch(() => undefined);
  });
  // Only Sigil's: the kit's success screen also loads an animation from lottie.host, which this
  // machine cannot reach and which is no business of Sigil's.
  // A request the page cancelled itself is not one Sigil failed: a navigation (openApp after a
  // logout) cancels the kit's wallet polls still in flight, and Chromium reports those as
  // net::ERR_ABORTED, while a refused preflight is net::ERR_FAILED and a dropped connection
  // net::ERR_EMPTY_RESPONSE or net::ERR_CONNECTION_RESET.
  page.on('requestfailed', (r) => {
    const u = new URL(r.url());
    const error = r.failure()?.errorText ?? '';
    if (sigilOrigins.includes(u.origin) && error !== 'net::ERR_ABORTED') calls.push({ method: r.method(), path: u.pathname, status: 0, error });
  });
  await addVirtualAuthenticator(page);
  await openApp(page);
  return { context, page, calls };
}

/** The calls Sigil refused or that never completed (a CORS failure shows as status 0). */
const failed = (calls: Call[]) => calls.filter((c) => c.status === 0 || c.status >= 400).map((c) => `${c.method} ${c.path} ${c.status}${c.error ? ` ${c.error}` : ''}`);

async function openApp(page: Page) {
  await page.goto(d.app.origin);
  await expect.poll(async () => (await state(page)).clientState, { timeout: 30_000 }).toBe('ready');
}

async function state(page: Page): Promise<AppState> {
  const text = await page.locator('#state').textContent({ timeout: 30_000 });
  return JSON.parse(text ?? '{}');
}

/** Waits for the provider's authState (the modal's flows first wait up to 5 s for a captcha token). */
async function authState(page: Page, want: 'authenticated' | 'unauthenticated') {
  await expect.poll(async () => (await state(page)).authState, { timeout: 30_000 }).toBe(want);
  // Authenticated, the provider then fetches the user (get_user): wait for it too.
  if (want === 'authenticated') await expect.poll(async () => (await state(page)).userId, { timeout: 30_000 }).toBeDefined();
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
  await authState(page, 'authenticated');
  return state(page);
}

describe('passkeys', () => {
  it('signs up with a passkey (a sub-organization with a wallet), logs out, logs in again, refreshes the session and changes the user’s settings', async () => {
    const { page, context, calls } = await person();
    // What the operator configured reaches the kit through the proxy.
    await expect.poll(() => calls.find((c) => c.path === '/v1/wallet_kit_config')?.body, { timeout: 30_000 }).toMatchObject({
      enabledProviders: ['passkey', 'email', 'google'],
      sessionExpirationSeconds: '1800',
      organizationId: d.sigil.root.organizationId,
      oauthClientIds: { google: GOOGLE_CLIENT_ID },
      oauthRedirectUrl: d.app.oauthRedirectUrl,
      otpAlphanumeric: false,
      otpLength: '6',
    });
    // (the kit may ask for these after it reports itself ready, and a body is read after its status)
    await expect.poll(() => calls.find((c) => c.path === '/v1/wallet_kit_client_params')?.body, { timeout: 30_000 }).toEqual({ turnstileSiteKey: '' });
    // Those were cross-origin with a custom header, so Chromium sent a CORS preflight first (DevTools
    // does not report preflights to the page): the answer it got, asked the same way.
    const preflight = await fetch(`${d.sigil.authProxyUrl}/v1/wallet_kit_config`, {
      method: 'OPTIONS',
      headers: { origin: d.app.origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-auth-proxy-config-id' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe(d.app.origin);
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-auth-proxy-config-id');

    await kit(page, 'signUpWithPasskey', {
      passkeyDisplayName: 'ada laptop',
      createSubOrgParams: {
        userName: 'ada',
        customWallet: { walletName: 'Main', walletAccounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] },
      },
    });
    await authState(page, 'authenticated');
    await expect.poll(async () => (await state(page)).wallets.length, { timeout: 30_000 }).toBe(1);
    const signedUp = await state(page);
    expect(signedUp.organizationId).not.toBe(d.sigil.root.organizationId);
    expect(signedUp.userName).toBe('ada');
    expect(signedUp.wallets[0].walletName).toBe('Main');
    expect(signedUp.wallets[0].accounts[0].address).toMatch(/^0x[0-9a-fA-F]{40}$/);
    // The session lasts what the configuration says (1800 s), not the kit's default of 900 s.
    expect(signedUp.sessionExpiry! - Date.now() / 1000).toBeGreaterThan(1200);
    // The wallet was created by the sign-up itself, in the new sub-organization (Sigil's record).
    const { wallets } = await sdkServerClient(d.sigil, d.sigil.root, signedUp.organizationId).getWallets({ organizationId: signedUp.organizationId! });
    expect(wallets.map((w) => w.walletName)).toEqual(['Main']);

    // The sign-up answered the app proofs of the wallet's address. The kit's verifyAppProofs (what
    // auth.verifyWalletOnSignup runs) accepts only AWS Nitro boot proofs, so it refuses them...
    const { appProofs } = calls.find((c) => c.path === '/v1/signup_v2')!.body;
    const payloads = appProofs.map((p: { proofPayload: string }) => JSON.parse(p.proofPayload));
    expect(payloads.find((p: any) => p.type === 'APP_PROOF_TYPE_ADDRESS_DERIVATION').addressDerivationProof).toMatchObject({
      organizationId: signedUp.organizationId,
      address: signedUp.wallets[0].accounts[0].address,
      derivationPath: "m/44'/60'/0'/0/0",
    });
    const nitro = await kit(page, 'verifyAppProofs', { appProofs, organizationId: signedUp.organizationId }).then(() => 'verified', (e: Error) => e.message);
    // (the empty AWS attestation document is where it stops)
    expect(nitro).toContain('Failed to verify app proofs [VERIFY_APP_PROOFS_ERROR]');
    // ...and the app checks them instead against this deployment's signer key (docs/embedded-wallets.md
    // "Embedded wallets"): each proof's signature, and the boot statement binding the proofs' key to the
    // signer.
    for (const proof of appProofs) expect(() => verifyAppProofSignature(proof)).not.toThrow();
    const { bootProof } = await sdkServerClient(d.sigil).getBootProof({ ephemeralKey: appProofs[0].publicKey });
    const statement = Buffer.from(bootProof.qosManifestB64, 'base64');
    const { signature } = JSON.parse(Buffer.from(bootProof.qosManifestEnvelopeB64, 'base64').toString('utf8'));
    const digest = createHash('sha256').update(statement).digest();
    expect(p256.verify(Buffer.from(signature, 'hex'), digest, Buffer.from(d.sigil.root.signerPublicKey, 'hex'), { prehash: false, format: 'der' })).toBe(true);
    expect(JSON.parse(statement.toString('utf8')).ephemeralPublicKeyHex).toBe(appProofs[0].publicKey);

    await kit(page, 'logout');
    await authState(page, 'unauthenticated');
    // A fresh load forgets nothing but the session: the passkey stays with the authenticator.
    await openApp(page);
    expect((await state(page)).authState).toBe('unauthenticated');

    await kit(page, 'loginWithPasskey');
    await authState(page, 'authenticated');
    await expect.poll(async () => (await state(page)).wallets.length, { timeout: 30_000 }).toBe(1);
    const loggedIn = await state(page);
    expect(loggedIn).toMatchObject({ organizationId: signedUp.organizationId, userId: signedUp.userId });
    expect(loggedIn.wallets[0].accounts[0].address).toBe(signedUp.wallets[0].accounts[0].address);
    // The app heard of it through the kit's callback (this page load has seen only the login).
    const events = await page.evaluate(() => (window as any).kitEvents);
    expect(events.filter((e: any) => e.kind === 'authenticated').map((e: any) => [e.detail.action, e.detail.method])).toEqual([['LOGIN', 'passkey']]);
    expect(events.filter((e: any) => e.kind === 'error')).toEqual([]);

    // A reload keeps the session (the kit reads it back and polls the user and wallets again).
    await openApp(page);
    await expect.poll(async () => (await state(page)).wallets.length, { timeout: 30_000 }).toBe(1);
    expect(await state(page)).toMatchObject({ authState: 'authenticated', organizationId: signedUp.organizationId, userId: signedUp.userId });

    // Session refresh: a stamp_login with the session's own key, answered with a new session.
    const refreshed = await kit<{ session: string }>(page, 'refreshSession', { expirationSeconds: '3600' });
    expect(JSON.parse(atob(refreshed.session.split('.')[1]))).toMatchObject({ organization_id: signedUp.organizationId, user_id: signedUp.userId });
    await expect.poll(async () => (await state(page)).sessionExpiry! - Date.now() / 1000, { timeout: 30_000 }).toBeGreaterThan(3000);

    // The user's own settings, as the kit's account screens change them.
    const [added] = await kit<string[]>(page, 'addPasskey', { name: 'ada phone' });
    await kit(page, 'updateUserName', { userName: 'Ada L.' });
    await kit(page, 'refreshUser');
    await expect.poll(async () => (await state(page)).userName, { timeout: 30_000 }).toBe('Ada L.');
    const asSigilSees = async () => (await sdkServerClient(d.sigil, d.sigil.root, signedUp.organizationId).getUser({ organizationId: signedUp.organizationId!, userId: signedUp.userId! })).user;
    expect((await asSigilSees()).authenticators.map((a) => a.authenticatorName).sort()).toEqual(['ada laptop', 'ada phone']);
    await kit(page, 'removePasskeys', { authenticatorIds: [added] });
    expect((await asSigilSees()).authenticators.map((a) => a.authenticatorName)).toEqual(['ada laptop']);

    const used = new Set(calls.map((c) => `${c.method} ${c.path}`));
    for (const p of ['/v1/signup_v2', '/public/v1/submit/stamp_login', '/public/v1/query/get_user', '/public/v1/query/list_wallets', '/public/v1/query/list_wallet_accounts']) {
      expect(used.has(`POST ${p}`), p).toBe(true);
    }
    expect(failed(calls)).toEqual([]);
    await context.close();
  }, 120_000);
});

describe('the kit’s own sign-in modal', () => {
  it('shows the methods the operator enabled, signs up and logs in with a passkey by clicking', async () => {
    const { page, context, calls } = await person();
    // Not awaited: handleLogin resolves when the modal closes.
    await page.evaluate(() => void (window as any).kit.handleLogin());
    const signUpButton = page.getByTestId('passkey-signup-button');
    await signUpButton.waitFor();
    // The methods of wallet_kit_config: Google (with the operator's client id), email, passkeys; no SMS.
    expect(await page.getByTestId('oauth-google').count()).toBe(1);
    expect(await page.getByPlaceholder('Enter your email').count()).toBe(1);
    expect(await page.getByTestId('passkey-login-button').count()).toBe(1);
    expect(await page.getByPlaceholder(/phone/i).count()).toBe(0);
    await shoot(page, 'wallet-kit-sign-in');

    await signUpButton.click();
    await authState(page, 'authenticated');
    const signedUp = await state(page);
    expect(signedUp.organizationId).not.toBe(d.sigil.root.organizationId);

    await kit(page, 'logout');
    await authState(page, 'unauthenticated');
    // Another visit: the sign-in modal of a fresh page.
    await openApp(page);
    await page.evaluate(() => void (window as any).kit.handleLogin());
    await page.getByTestId('passkey-login-button').click();
    await authState(page, 'authenticated');
    expect(await state(page)).toMatchObject({ organizationId: signedUp.organizationId, userId: signedUp.userId });
    expect(failed(calls)).toEqual([]);
    await context.close();
  }, 120_000);
});

describe('an origin the operator did not allow', () => {
  it('the same app served from another origin gets no configuration from the auth proxy and cannot sign anyone up', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const refused: string[] = [];
    page.on('response', (r) => {
      if (r.url().startsWith(d.sigil.authProxyUrl) && r.status() >= 400) refused.push(`${new URL(r.url()).pathname} ${r.status()}`);
    });
    // 127.0.0.1 instead of localhost: the same server, another origin.
    await page.goto(d.app.origin.replace('localhost', '127.0.0.1'));
    await expect.poll(async () => (await state(page)).clientState, { timeout: 30_000 }).toBe('error');
    expect(refused).toContain('/v1/wallet_kit_config 403');
    const before = (await sdkServerClient(d.sigil).getSubOrgIds({})).organizationIds.length;
    const answer = await page.evaluate(async ([proxy, configId]) => {
      const r = await fetch(`${proxy}/v1/signup_v2`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-auth-proxy-config-id': configId as string },
        body: JSON.stringify({ userName: 'mallory', apiKeys: [{ apiKeyName: 'k', publicKey: '02' + 'cd'.repeat(32), curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] }),
      });
      return { status: r.status, body: await r.json() };
    }, [d.sigil.authProxyUrl, d.configId] as const);
    expect(answer.status).toBe(403);
    expect(answer.body.message).toContain('is not allowed by auth proxy config');
    expect((await sdkServerClient(d.sigil).getSubOrgIds({})).organizationIds.length).toBe(before);
    await context.close();
  }, 120_000);
});

describe('Google-style OAuth', () => {
  it('signs up through the kit’s Google popup against a loopback OIDC provider, then logs in again to the same sub-organization', async () => {
    const { page, context, calls } = await person();
    await d.oidc.route(context);
    d.oidc.signInAs('google-grace-1', 'grace@example.com');
    // The kit reads the Google client id and redirect URL from wallet_kit_config (the operator's).
    await kit(page, 'handleGoogleOauth');
    await authState(page, 'authenticated');
    const first = await state(page);
    expect(first.organizationId).not.toBe(d.sigil.root.organizationId);

    await kit(page, 'logout');
    await authState(page, 'unauthenticated');
    await kit(page, 'handleGoogleOauth');
    await authState(page, 'authenticated');
    expect(await state(page)).toMatchObject({ organizationId: first.organizationId, userId: first.userId });
    // Sigil registered the identity the provider vouched for, under Google's issuer and the app's client id.
    const { user } = await sdkServerClient(d.sigil, d.sigil.root, first.organizationId).getUser({ organizationId: first.organizationId!, userId: first.userId! });
    expect(user.oauthProviders.map((p) => [p.issuer, p.audience, p.subject])).toEqual([[GOOGLE_ISSUER, GOOGLE_CLIENT_ID, 'google-grace-1']]);
    expect(failed(calls)).toEqual([]);
    await context.close();
  }, 120_000);
});

describe('wallets and signing', () => {
  it('creates a wallet and accounts on Ethereum and Solana and signs messages and transactions; a signature the user’s policy denies is refused in the page', async () => {
    const { page, context, calls } = await person();
    const me = await signUp(page, 'lin');
    expect(me.wallets).toEqual([]);

    const walletId = await kit<string>(page, 'createWallet', { walletName: 'Spending', accounts: ['ADDRESS_FORMAT_ETHEREUM', 'ADDRESS_FORMAT_SOLANA'] });
    await kit(page, 'createWalletAccounts', { walletId, accounts: ['ADDRESS_FORMAT_ETHEREUM'] });
    await kit(page, 'refreshWallets');
    await expect.poll(async () => (await state(page)).wallets[0]?.accounts.length ?? 0, { timeout: 30_000 }).toBe(3);
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

    // And sent: the kit signs through Sigil and broadcasts to a real local chain (anvil) itself.
    const anvil = await startAnvil();
    try {
      const chain = { ...foundry, id: anvil.chainId };
      const node = createTestClient({ chain, mode: 'anvil', transport: http(anvil.url) }).extend(publicActions);
      await node.setBalance({ address: eth[0].address as Hex, value: parseEther('1') });
      const fees = await node.estimateFeesPerGas();
      const toSend = serializeTransaction({ type: 'eip1559', chainId: anvil.chainId, nonce: 0, to: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', value: parseEther('0.25'), gas: 21000n, ...fees });
      const hash = await withAccount<Hex>(page, 'signAndSendTransaction', eth[0].address, { unsignedTransaction: toSend, transactionType: 'TRANSACTION_TYPE_ETHEREUM', rpcUrl: anvil.url });
      const receipt = await node.waitForTransactionReceipt({ hash });
      expect(receipt.status).toBe('success');
      expect(receipt.from).toBe(eth[0].address.toLowerCase());
      expect(await node.getBalance({ address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' })).toBe(parseEther('10000.25'));
    } finally {
      await anvil.stop();
    }

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
    expect(failed(calls)).toEqual(['POST /public/v1/submit/sign_transaction 403']);
    await context.close();
  }, 120_000);
});

/** Ed25519 key of a hardened SLIP-10 path (what Solana wallets derive from a BIP-39 seed). */
function slip10Ed25519(seed: Uint8Array, path: string): Uint8Array {
  let I = createHmac('sha512', 'ed25519 seed').update(seed).digest();
  for (const segment of path.split('/').slice(1)) {
    const index = Buffer.alloc(4);
    index.writeUInt32BE((Number.parseInt(segment, 10) + 0x80000000) >>> 0);
    I = createHmac('sha512', I.subarray(32)).update(Buffer.concat([Buffer.alloc(1), I.subarray(0, 32), index])).digest();
  }
  return I.subarray(0, 32);
}

/** The kit's frame, where its export and import screens put it. */
async function kitFrame(page: Page): Promise<Frame> {
  const handle = await page.locator('iframe#turnkey-default-iframe-element-id').elementHandle({ timeout: 30_000 });
  return (await handle!.contentFrame())!;
}

/**
 * A kit export screen (handleExportWallet, handleExportWalletAccount, ...) clicked through as a
 * person would: the warning confirmed, the secret read from Sigil's export frame, then "Done".
 */
async function exportThroughKit(page: Page, method: string, params: Record<string, unknown>, shot?: string): Promise<string> {
  // Not awaited yet: the kit's promise settles when the person clicks "Done".
  await page.evaluate(([m, p]) => {
    const w = window as any;
    w.exportState = 'pending';
    w.exporting = w.kit[m as string](p).then(
      () => (w.exportState = 'done'),
      (e: any) => (w.exportState = `${e?.message} ${e?.cause?.message ?? ''}`),
    );
  }, [method, params] as const);
  // The kit's button is live before its frame is: clicked too early, the kit sends export_wallet
  // without a targetPublicKey (the frame's key is read from a client it sets once the frame has
  // answered init and APPLY_SETTINGS). A person reads the warning first; the test waits for the
  // kit's styles to arrive in the frame.
  // Bounded generously: on a loaded machine (the whole suite in parallel) the frame took over 30 s once.
  // A kit call that failed before it opened its frame says why instead of timing out silently.
  const kitState = () => page.evaluate(() => (window as any).exportState as string);
  await expect.poll(async () => ((await page.locator('iframe#turnkey-default-iframe-element-id').count()) > 0 ? 'frame' : await kitState()), { timeout: 90_000 }).not.toBe('pending');
  expect(await page.locator('iframe#turnkey-default-iframe-element-id').count(), await kitState()).toBeGreaterThan(0);
  const frame = await kitFrame(page);
  await expect.poll(() => frame.locator('#secret').getAttribute('style'), { timeout: 30_000 }).toContain('font-size');
  await page.getByTestId('confirm-export-warning-button').click();
  await expect.poll(async () => ((await frame.locator('#secret').textContent()) ?? '').trim(), { timeout: 30_000 }).not.toBe('');
  const secret = ((await frame.locator('#secret').textContent()) ?? '').trim();
  // The kit gives the frame no height (the browser's 150 px): the whole secret is still in view
  // (once the kit's modal has finished growing to its width).
  const inView = () =>
    frame.evaluate(() => {
      const e = document.getElementById('secret')!;
      return e.getBoundingClientRect().bottom <= innerHeight && e.scrollHeight <= e.clientHeight ? 'in view' : `${e.scrollHeight} px in ${innerWidth}x${innerHeight}`;
    });
  await expect.poll(inView, { timeout: 10_000 }).toBe('in view');
  if (shot) await shoot(page, shot, () => page.locator('iframe#turnkey-default-iframe-element-id'));
  await page.getByTestId('export-done').click();
  expect(await page.evaluate(() => (window as any).exporting)).toBe('done');
  // The modal closes with an animation; a screen opened before it has gone finds the old frame,
  // takes it for its own, and never starts one (the kit's race, not one a person clicks into).
  await expect.poll(() => page.locator('iframe#turnkey-default-iframe-element-id').count(), { timeout: 30_000 }).toBe(0);
  return secret;
}

// One retry, with a new person (browser context, sub-organization and wallet). Once in six runs with
// two test files at a time, one of the kit's export screens never opened its frame within 90 s (the
// kit's modal race described in exportThroughKit, on a loaded machine); the same steps passed on the
// retry's fresh page. A failure that repeats still fails the suite.
describe('export and import through Sigil’s frames', { retry: 1 }, () => {
  it('exports the wallet’s mnemonic, its accounts’ keys (hex, Solana) and a private key in Sigil’s export frame, imports a mnemonic (and signs with it) and a key through the import frame, and signs a Solana transaction in the export-and-sign frame', async () => {
    const { page, context, calls } = await person();
    const me = await signUp(page, 'noor');
    expect(d.config.exportIframeUrl).toMatch(/\/export$/);
    expect(d.config.importIframeUrl).toMatch(/\/import$/);
    const walletId = await kit<string>(page, 'createWallet', { walletName: 'Savings', accounts: ['ADDRESS_FORMAT_ETHEREUM', 'ADDRESS_FORMAT_SOLANA'] });
    await kit(page, 'refreshWallets');
    await expect.poll(async () => (await state(page)).wallets[0]?.accounts.length ?? 0, { timeout: 30_000 }).toBe(2);
    const accounts = (await state(page)).wallets[0].accounts;
    const eth = accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_ETHEREUM')!;
    const sol = accounts.find((a) => a.addressFormat === 'ADDRESS_FORMAT_SOLANA')!;

    // 4. The wallet: the kit asks Sigil for an export bundle to the frame's key and the frame shows
    // the mnemonic, which derives both accounts (viem; SLIP-10 + @solana/web3.js).
    const mnemonic = await exportThroughKit(page, 'handleExportWallet', { walletId }, 'kit-export-frame');
    expect(validateMnemonic(mnemonic, wordlist)).toBe(true);
    expect(mnemonicToAccount(mnemonic).address).toBe(eth.address);
    const solSeed = slip10Ed25519(mnemonicToSeedSync(mnemonic), sol.path.replace(/'/g, ''));
    expect(Keypair.fromSeed(solSeed).publicKey.toBase58()).toBe(sol.address);
    // The parent page never held it: not in its DOM, nor in anything the kit recorded.
    expect(await page.evaluate((m) => document.documentElement.outerHTML.includes(m) || JSON.stringify((window as any).kitEvents).includes(m), mnemonic)).toBe(false);

    // The accounts' private keys, in the format the kit asks the frame for.
    const hexKey = await exportThroughKit(page, 'handleExportWalletAccount', { address: eth.address, keyFormat: 'HEXADECIMAL' });
    expect(privateKeyToAccount(`0x${hexKey.replace(/^0x/, '')}` as Hex).address).toBe(eth.address);
    const solKey = await exportThroughKit(page, 'handleExportWalletAccount', { address: sol.address, keyFormat: 'SOLANA' });
    expect(Keypair.fromSecretKey(bs58.decode(solKey)).publicKey.toBase58()).toBe(sol.address);
    // A private key outside any wallet, through the kit's handleExportPrivateKey, in Solana format.
    const made = await api(page, 'createPrivateKeys', { privateKeys: [{ privateKeyName: 'noor key', curve: 'CURVE_ED25519', addressFormats: ['ADDRESS_FORMAT_SOLANA'], privateKeyTags: [] }] });
    const solPrivateKey = made.privateKeys[0] as { privateKeyId: string; addresses: { address: string }[] };
    const keyShown = await exportThroughKit(page, 'handleExportPrivateKey', { privateKeyId: solPrivateKey.privateKeyId, keyFormat: 'SOLANA' });
    expect(Keypair.fromSecretKey(bs58.decode(keyShown)).publicKey.toBase58()).toBe(solPrivateKey.addresses[0].address);

    // 5. Import: the kit's screen embeds Sigil's import frame; the person types a mnemonic into the
    // frame, the kit gets only the sealed bundle and imports it.
    const typed = generateMnemonic(wordlist);
    const importing = page.evaluate(() =>
      (window as any).kit
        .handleImportWallet({ walletName: 'Imported', defaultWalletAccounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] })
        .then((id: string) => id, (e: any) => `failed: ${e?.message} ${e?.cause?.message ?? ''}`),
    );
    const importFrame = await kitFrame(page);
    await importFrame.locator('#plaintext').fill(typed);
    await shoot(page, 'kit-import-frame', () => page.locator('iframe#turnkey-default-iframe-element-id'));
    await page.getByTestId('import-button').click();
    const importedId = await importing;
    expect(importedId).not.toMatch(/^failed/);
    await kit(page, 'refreshWallets');
    await expect.poll(async () => (await state(page)).wallets.find((w) => w.walletId === importedId)?.accounts.length ?? 0, { timeout: 30_000 }).toBe(1);
    const imported = (await state(page)).wallets.find((w) => w.walletId === importedId)!;
    expect(imported.walletName).toBe('Imported');
    expect(imported.accounts[0].address).toBe(mnemonicToAccount(typed).address);
    const message = 'signed by an imported wallet';
    const sig = await withAccount<{ r: string; s: string; v: string }>(page, 'signMessage', imported.accounts[0].address, { message, addEthereumPrefix: true });
    expect(await recoverMessageAddress({ message, signature: `0x${sig.r}${sig.s}${(27 + Number(sig.v)).toString(16)}` as Hex })).toBe(imported.accounts[0].address);
    // And a hex Ethereum key through the kit's handleImportPrivateKey.
    const typedKey = generatePrivateKey();
    await expect.poll(() => page.locator('iframe#turnkey-default-iframe-element-id').count(), { timeout: 30_000 }).toBe(0);
    const importingKey = page.evaluate(() =>
      (window as any).kit
        .handleImportPrivateKey({ keyName: 'imported key', curve: 'CURVE_SECP256K1', addressFormats: ['ADDRESS_FORMAT_ETHEREUM'], keyFormat: 'HEXADECIMAL' })
        .then((id: string) => id, (e: any) => `failed: ${e?.message} ${e?.cause?.message ?? ''}`),
    );
    await expect.poll(() => page.locator('iframe#turnkey-default-iframe-element-id').count(), { timeout: 30_000 }).toBe(1);
    await (await kitFrame(page)).locator('#plaintext').fill(typedKey);
    await page.getByTestId('import-button').click();
    const importedKeyId = await importingKey;
    expect(importedKeyId).not.toMatch(/^failed/);
    const { privateKey: importedKey } = await api(page, 'getPrivateKey', { privateKeyId: importedKeyId });
    expect(importedKey.addresses[0].address).toBe(privateKeyToAccount(typedKey).address);

    // 6. Export-and-sign: @turnkey/react-wallet-kit 2.4 has no method for it, so the app embeds
    // Sigil's export-and-sign frame with the published @turnkey/iframe-stamper, has the kit export
    // the account to the frame's key (exportWalletAccount), and the frame signs; the page gets the
    // signed transaction only.
    const payer = new PublicKey(sol.address);
    const to = Keypair.generate().publicKey;
    const tx = new Transaction({ feePayer: payer, recentBlockhash: bs58.encode(Buffer.alloc(32, 9)) }).add(SystemProgram.transfer({ fromPubkey: payer, toPubkey: to, lamports: 7000 }));
    const signedHex = await page.evaluate(
      async ([address, organizationId, unsigned]) => {
        const w = window as any;
        const container = document.createElement('div');
        document.body.append(container);
        const frame = new w.IframeStamper({ iframeUrl: w.SIGIL_KIT.exportAndSignIframeUrl, iframeContainer: container, iframeElementId: 'export-and-sign' });
        const targetPublicKey = await frame.init();
        const exportBundle = await w.kit.exportWalletAccount({ address, targetPublicKey });
        await frame.injectKeyExportBundle(exportBundle, organizationId, 'SOLANA', address);
        return frame.signTransaction({ transaction: unsigned, type: 'SOLANA' }, address);
      },
      [sol.address, me.organizationId!, tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('hex')] as const,
    );
    const signedSol = Transaction.from(Buffer.from(signedHex, 'hex'));
    expect(signedSol.verifySignatures()).toBe(true);
    expect(signedSol.signatures[0].publicKey.toBase58()).toBe(sol.address);
    expect((signedSol.instructions[0].keys[1].pubkey as PublicKey).toBase58()).toBe(to.toBase58());

    expect(failed(calls)).toEqual([]);
    expect((await page.evaluate(() => (window as any).kitEvents)).filter((e: any) => e.kind === 'error')).toEqual([]);
    await context.close();
  }, 180_000);
});

describe('email OTP', () => {
  it('the kit’s own verifyOtp cannot verify a code (it encrypts to Turnkey’s pinned key); the app’s backend verifies it with @turnkey/sdk-server and the kit signs up, then logs in, with the token', async () => {
    // The app's backend: it knows this deployment's signer key (GET /.well-known/sigil.json) and
    // verifies the code with the parent organization's API key.
    const { signerPublicKey } = (await (await fetch(`${d.sigil.url}/.well-known/sigil.json`)).json()) as { signerPublicKey: string };
    d.app.backend.set('/api/verify-otp', async (b: { otpId: string; otpCode: string; otpEncryptionTargetBundle: string; publicKey: string }) => {
      const encryptedOtpBundle = await encryptOtpCodeToBundle(b.otpCode, b.otpEncryptionTargetBundle, b.publicKey, signerPublicKey);
      const { verificationToken } = await sdkServerClient(d.sigil).verifyOtp({ otpId: b.otpId, encryptedOtpBundle, expirationSeconds: '600' });
      return { verificationToken };
    });
    const { page, context, calls } = await person();
    const email = 'olga@example.com';

    /** What the app does: the kit sends the code, the person types it, the backend verifies it. */
    const verifiedByBackend = async (): Promise<string> => {
      const before = inbox.count(email);
      const init = await kit<{ otpId: string; otpEncryptionTargetBundle: string }>(page, 'initOtp', { otpType: 'OTP_TYPE_EMAIL', contact: email });
      const otpCode = codeIn(await inbox.next(email, before));
      expect(otpCode).toMatch(/^\d{6}$/); // the operator's OTP settings, through the proxy
      return page.evaluate(
        async ([init, otpCode]) => {
          const publicKey = await (window as any).kit.createApiKeyPair();
          const r = await fetch('/api/verify-otp', { method: 'POST', body: JSON.stringify({ ...(init as object), otpCode, publicKey }) });
          return (await r.json()).verificationToken as string;
        },
        [init, otpCode] as const,
      );
    };

    // Unchanged, the kit's own step refuses the bundle: it is signed by this deployment, not Turnkey.
    const before = inbox.count(email);
    const init = await kit(page, 'initOtp', { otpType: 'OTP_TYPE_EMAIL', contact: email });
    const otpCode = codeIn(await inbox.next(email, before));
    const refused = await kit(page, 'verifyOtp', { ...init, otpCode }).then(() => 'verified', (e: Error) => e.message);
    expect(refused).toContain(`does not match signer key from bundle: ${signerPublicKey}`);

    const token = await verifiedByBackend();
    const account = await api(page, 'proxyGetAccount', { filterType: 'EMAIL', filterValue: email, verificationToken: token });
    expect(account.organizationId).toBeUndefined();
    await kit(page, 'signUpWithOtp', { verificationToken: token, contact: email, otpType: 'OTP_TYPE_EMAIL', createSubOrgParams: { userName: 'olga' } });
    await authState(page, 'authenticated');
    const signedUp = await state(page);
    expect(signedUp.userName).toBe('olga');

    await kit(page, 'logout');
    await authState(page, 'unauthenticated');
    const again = await verifiedByBackend();
    const found = await api(page, 'proxyGetAccount', { filterType: 'EMAIL', filterValue: email, verificationToken: again });
    expect(found.organizationId).toBe(signedUp.organizationId);
    await kit(page, 'loginWithOtp', { verificationToken: again, organizationId: found.organizationId });
    await authState(page, 'authenticated');
    expect(await state(page)).toMatchObject({ organizationId: signedUp.organizationId, userId: signedUp.userId });
    expect(failed(calls)).toEqual([]);
    await context.close();
  }, 120_000);
});

describe('@turnkey/sdk-browser', () => {
  it('registers a passkey for a sub-organization the app’s backend creates, logs in with it into an IndexedDB session, and signs', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await addVirtualAuthenticator(page);
    await page.goto(`${d.app.origin}/sdk-browser`);
    await page.getByText('sdk-browser ready').waitFor();

    // The browser makes the passkey; the app's backend (@turnkey/sdk-server, the parent's API key)
    // creates the user's sub-organization with it and a wallet.
    const passkey = await page.evaluate(async () => {
      const { Turnkey } = (window as any).sdkBrowser;
      const c = (window as any).SIGIL_KIT;
      const tk = new Turnkey({ apiBaseUrl: c.apiBaseUrl, defaultOrganizationId: c.organizationId, rpId: 'localhost' });
      return tk.passkeyClient().createUserPasskey({ publicKey: { user: { name: 'mia', displayName: 'mia' } } });
    });
    const { subOrganizationId, rootUserIds, wallet } = await sdkServerClient(d.sigil).createSubOrganization({
      subOrganizationName: 'mia',
      rootUsers: [{ userName: 'mia', apiKeys: [], oauthProviders: [], authenticators: [{ authenticatorName: 'mia passkey', challenge: passkey.encodedChallenge, attestation: passkey.attestation }] }],
      rootQuorumThreshold: 1,
      wallet: { walletName: 'mia wallet', accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] },
    });
    const address = wallet!.addresses[0];

    const message = 'signed through sdk-browser';
    const r = await page.evaluate(
      async ([organizationId, address, message]) => {
        const { Turnkey, SessionType } = (window as any).sdkBrowser;
        const c = (window as any).SIGIL_KIT;
        const tk = new Turnkey({ apiBaseUrl: c.apiBaseUrl, defaultOrganizationId: c.organizationId, rpId: 'localhost' });
        const idb = await tk.indexedDbClient();
        await idb.init();
        const publicKey = await idb.getPublicKey();
        await tk.passkeyClient().loginWithPasskey({ sessionType: SessionType.READ_WRITE, publicKey, organizationId });
        const session = await tk.getSession();
        const { wallets } = await idb.getWallets({ organizationId });
        const signed = await idb.signRawPayload({ organizationId, signWith: address, payload: message, encoding: 'PAYLOAD_ENCODING_TEXT_UTF8', hashFunction: 'HASH_FUNCTION_KECCAK256' });
        return { session, walletNames: wallets.map((w: any) => w.walletName), signed };
      },
      [subOrganizationId, address, message] as const,
    );
    expect(r.session).toMatchObject({ organizationId: subOrganizationId, userId: rootUserIds[0] });
    expect(r.walletNames).toEqual(['mia wallet']);
    const signature = `0x${r.signed.r}${r.signed.s}${(27 + Number(r.signed.v)).toString(16)}` as Hex;
    expect(await recoverAddress({ hash: keccak256(toBytes(message)), signature })).toBe(address);
    await context.close();
  }, 120_000);
});
