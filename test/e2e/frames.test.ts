// Sigil's own frames (docs/embedded-wallets.md "Embedded wallets: Sigil's frames") driven by the
// published @turnkey/iframe-stamper, unchanged, from a parent page on another loopback origin, in
// Debian's Chromium: a wallet export whose mnemonic (read from the frame's page) derives the wallet's
// addresses, key exports in every KeyFormat, a mnemonic imported through the import frame and then
// signing through @turnkey/sdk-server, export-and-sign signing Solana and Ethereum payloads, the
// auth frame stamping a request Sigil accepts, and @turnkey/sdk-browser's iframe client logging a
// user in by email auth through the auth frame. Attacks: a page on an origin the operator did not
// allow cannot embed the frames (CSP frame-ancestors, and the frame's own check of the channel's
// origin), and a bundle signed by a key other than the deployment's is refused by the frame.
import { createServer, type Server } from 'node:http';
import { generateKeyPairSync, sign as nodeSign } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from 'esbuild';
import type { Browser, Frame, Page } from 'playwright-core';
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { keccak256, parseTransaction, recoverAddress, recoverTransactionAddress, serializeTransaction, toHex, verifyMessage, type Hex } from 'viem';
import { Keypair, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import bs58check from 'bs58check';
import { generateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { decodeSuiPrivateKey } from '@mysten/sui/cryptography';
import { dropSchema, freshDeploymentEnv, initDeployment, ROOT, runSigil, startSigil, type SigilInstance } from '../helpers/sigil.js';
import { rawPost, sdkServerClient } from '../helpers/clients.js';
import { bundleIn, parse, smtpEnv, startInbox, type Inbox } from '../helpers/mail.js';
import { freePort, launchChromium, SHOTS } from '../helpers/browser.js';

const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } as const;
const SOL = { curve: 'CURVE_ED25519', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/501'/0'/0'", addressFormat: 'ADDRESS_FORMAT_SOLANA' } as const;

// The parent page: the published stamper, bundled here, with a few helpers the test calls through
// page.evaluate. Nothing of Sigil is in it but the frame URLs the test passes in.
const PARENT_SCRIPT = `
import { IframeStamper } from '@turnkey/iframe-stamper';
import { Turnkey } from '@turnkey/sdk-browser';
const stampers = {};
let sdkBrowserClient;
window.frameTest = {
  // @turnkey/sdk-browser's iframe client, as an app logs a user in by email with it.
  async sdkBrowserOpen(apiBaseUrl, organizationId, iframeUrl) {
    const turnkey = new Turnkey({ apiBaseUrl, defaultOrganizationId: organizationId });
    sdkBrowserClient = await turnkey.iframeClient({ iframeContainer: document.getElementById('frames'), iframeUrl, iframeElementId: 'sdk-browser-auth' });
    return sdkBrowserClient.iframePublicKey;
  },
  async sdkBrowserLogin(credentialBundle, organizationId) {
    await sdkBrowserClient.injectCredentialBundle(credentialBundle);
    return sdkBrowserClient.getWhoami({ organizationId });
  },
  async open(id, url) {
    const s = new IframeStamper({ iframeUrl: url, iframeElementId: id, iframeContainer: document.getElementById('frames') });
    stampers[id] = s;
    return s.init();
  },
  call(id, method, ...args) {
    return stampers[id][method](...args);
  },
  async refused(id, method, ...args) {
    try { await stampers[id][method](...args); return null; } catch (e) { return String(e.message ?? e); }
  },
  // A plain iframe, as a page that does not use the stamper would embed the frame.
  embed(id, url) {
    return new Promise((resolve) => {
      const f = document.createElement('iframe');
      f.id = id;
      f.src = url;
      f.addEventListener('load', () => resolve(true));
      document.getElementById('frames').appendChild(f);
    });
  },
  canReadFrame(id) {
    try { return document.getElementById(id).contentDocument !== null; } catch { return false; }
  },
};
`;
const PARENT_HTML = `<!doctype html><html><head><meta charset="utf-8"><title>parent</title>
<style>body{margin:0;font-family:sans-serif} iframe{display:block;width:100%;height:260px;border:0}</style></head>
<body><div id="frames"></div><script src="/parent.js"></script></body></html>`;

let sigil: SigilInstance;
let api: ReturnType<typeof sdkServerClient>;
let org: string;
let userId: string;
let frames: { export: string; import: string; exportAndSign: string; auth: string };
let parentServer: Server;
let allowedOrigin: string;
let foreignOrigin: string;
let browser: Browser;
let page: Page;
let inbox: Inbox;
const consoleLines: string[] = [];

beforeAll(async () => {
  const port = await freePort();
  // One server, two origins: the operator allows http://localhost:<port>; http://127.0.0.1:<port>
  // is a different origin nobody allowed. The frames are on a third (their own port).
  allowedOrigin = `http://localhost:${port}`;
  foreignOrigin = `http://127.0.0.1:${port}`;
  const bundled = await build({
    stdin: { contents: PARENT_SCRIPT, resolveDir: ROOT, loader: 'js' },
    bundle: true,
    format: 'iife',
    platform: 'browser',
    write: false,
    logLevel: 'error',
    define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' },
  });
  const parentJs = bundled.outputFiles[0].text;
  parentServer = createServer((req, res) => {
    if (req.url === '/parent.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(parentJs);
    else res.writeHead(200, { 'content-type': 'text/html' }).end(PARENT_HTML);
  });
  await new Promise<void>((r) => parentServer.listen(port, '127.0.0.1', r));
  inbox = await startInbox();
  sigil = await startSigil({ SIGIL_WEBAUTHN_ORIGINS: allowedOrigin, SIGIL_WEBAUTHN_RP_ID: 'localhost', ...smtpEnv(inbox) });
  api = sdkServerClient(sigil);
  org = sigil.root.organizationId;
  userId = sigil.root.userId;
  const wellKnown = (await (await fetch(`${sigil.url}/.well-known/sigil.json`)).json()) as { frames: typeof frames };
  frames = wellKnown.frames;
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('console', (m) => consoleLines.push(m.text()));
  await page.goto(allowedOrigin + '/');
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await sigil?.stop();
  await new Promise((r) => parentServer?.close(r));
  await inbox?.close();
});

const open = (id: string, url: string) => page.evaluate(([i, u]) => (window as any).frameTest.open(i, u), [id, url]) as Promise<string>;
const call = <T = unknown>(id: string, method: string, ...args: unknown[]) =>
  page.evaluate(([i, m, a]) => (window as any).frameTest.call(i, m, ...(a as unknown[])), [id, method, args] as const) as Promise<T>;
const refused = (id: string, method: string, ...args: unknown[]) =>
  page.evaluate(([i, m, a]) => (window as any).frameTest.refused(i, m, ...(a as unknown[])), [id, method, args] as const) as Promise<string | null>;

function frameOf(p: Page, id: string): Promise<Frame> {
  return p.locator(`iframe#${id}`).elementHandle().then(async (h) => {
    const f = await h!.contentFrame();
    if (!f) throw new Error(`iframe ${id} has no frame`);
    return f;
  });
}

/** The text the export frame shows, read from the frame's own page (the parent cannot read it). */
async function shownSecret(id: string): Promise<string> {
  const f = await frameOf(page, id);
  return ((await f.locator('#secret').textContent()) ?? '').trim();
}

describe('export frame', () => {
  it('shows the exported mnemonic in the frame only, and it derives the wallet addresses', async () => {
    const { walletId, addresses } = await api.createWallet({ walletName: 'frame-export', accounts: [ETH, { ...ETH, path: "m/44'/60'/0'/0/3" }] });
    const publicKey = await open('export-wallet', frames.export);
    expect(publicKey).toMatch(/^04[0-9a-f]{128}$/);
    const { exportBundle } = await api.exportWallet({ walletId, targetPublicKey: publicKey });
    expect(await call('export-wallet', 'injectWalletExportBundle', exportBundle, org)).toBe(true);
    const mnemonic = await shownSecret('export-wallet');
    expect(mnemonic.split(' ')).toHaveLength(12);
    expect(mnemonicToAccount(mnemonic).address).toBe(addresses[0]);
    expect(mnemonicToAccount(mnemonic, { addressIndex: 3 }).address).toBe(addresses[1]);
    // Cross-origin: the parent page cannot reach into the frame's document.
    expect(await page.evaluate(() => (window as any).frameTest.canReadFrame('export-wallet'))).toBe(false);
    await photograph('export-wallet', 'frames-export');
    // The styles @turnkey/react-wallet-kit applies are taken; a style that would load something is not.
    expect(await call('export-wallet', 'applySettings', { styles: { fontSize: '16px', backgroundColor: '#e5e7eb', color: '#828282' } })).toBe(true);
    expect(await refused('export-wallet', 'applySettings', { styles: { backgroundColor: 'url(https://evil.example/x.png)' } })).toMatch(/cannot be set/);
    expect(await refused('export-wallet', 'applySettings', { styles: { position: 'fixed' } })).toMatch(/cannot be set/);
    // The embedded key was used once: the same bundle cannot be opened again.
    expect(await refused('export-wallet', 'injectWalletExportBundle', exportBundle, org)).toMatch(/no embedded key/);
    await call('export-wallet', 'clear');
  });

  it('shows exported keys in hex, Solana, Bitcoin WIF and Sui formats', async () => {
    const { addresses } = await api.createWallet({ walletName: 'frame-key-export', accounts: [ETH, SOL] });
    const exportAs = async (id: string, address: string, keyFormat: string) => {
      const publicKey = await open(id, frames.export);
      const { exportBundle } = await api.exportWalletAccount({ address, targetPublicKey: publicKey });
      expect(await call(id, 'injectKeyExportBundle', exportBundle, org, keyFormat, address)).toBe(true);
      const shown = await shownSecret(id);
      await call(id, 'clear');
      return shown;
    };
    const hexKey = await exportAs('export-hex', addresses[0], 'HEXADECIMAL');
    expect(privateKeyToAccount(hexKey as Hex).address).toBe(addresses[0]);
    const solKey = await exportAs('export-sol', addresses[1], 'SOLANA');
    expect(Keypair.fromSecretKey(bs58.decode(solKey)).publicKey.toBase58()).toBe(addresses[1]);

    const wif = await exportAs('export-wif', addresses[0], 'BITCOIN_MAINNET_WIF');
    // WIF: base58check of version ‖ key ‖ 0x01 (compressed).
    const wifBytes = bs58check.decode(wif);
    expect([wifBytes[0], wifBytes.length, wifBytes[33]]).toEqual([0x80, 34, 0x01]);
    expect(Buffer.from(wifBytes.subarray(1, 33)).toString('hex')).toBe(hexKey.slice(2));
    const wifTest = bs58check.decode(await exportAs('export-wif-test', addresses[0], 'BITCOIN_TESTNET_WIF'));
    expect(wifTest[0]).toBe(0xef);
    expect(Buffer.from(wifTest.subarray(1, 33)).toString('hex')).toBe(hexKey.slice(2));
    const sui = await exportAs('export-sui', addresses[1], 'SUI_BECH32');
    const parsed = decodeSuiPrivateKey(sui);
    expect(parsed.schema).toBe('ED25519');
    expect(Buffer.from(parsed.secretKey).toString('hex')).toBe(Buffer.from(bs58.decode(solKey).subarray(0, 32)).toString('hex'));
  });

  it('ATTACK: refuses a bundle signed by a key other than the deployment signer, and shows nothing', async () => {
    const { walletId } = await api.createWallet({ walletName: 'frame-forged', accounts: [ETH] });
    const publicKey = await open('export-forged', frames.export);
    const { exportBundle } = await api.exportWallet({ walletId, targetPublicKey: publicKey });
    const genuine = JSON.parse(exportBundle) as { version: string; data: string; dataSignature: string; enclaveQuorumPublic: string };
    const foreign = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const foreignPublic = uncompressedHex(foreign.publicKey.export({ format: 'jwk' }) as { x: string; y: string });
    const signature = nodeSign('sha256', Buffer.from(genuine.data, 'hex'), foreign.privateKey).toString('hex');
    // The foreign signer names itself, as a bundle from another deployment (or Turnkey) would.
    const foreignBundle = JSON.stringify({ ...genuine, dataSignature: signature, enclaveQuorumPublic: foreignPublic });
    expect(await refused('export-forged', 'injectWalletExportBundle', foreignBundle, org)).toMatch(/not signed by this deployment's signer key/);
    // A foreign signature under the deployment's name.
    const impostor = JSON.stringify({ ...genuine, dataSignature: signature });
    expect(await refused('export-forged', 'injectWalletExportBundle', impostor, org)).toMatch(/signature does not verify/);
    // Another organization's id.
    expect(await refused('export-forged', 'injectWalletExportBundle', exportBundle, '00000000-0000-4000-8000-000000000000')).toMatch(/another organization/);
    expect(await shownSecret('export-forged')).toBe('');
    // The genuine bundle still opens in the same frame.
    expect(await call('export-forged', 'injectWalletExportBundle', exportBundle, org)).toBe(true);
    expect((await shownSecret('export-forged')).split(' ')).toHaveLength(12);
    await call('export-forged', 'clear');
  });
});

describe('import frame', () => {
  it('seals a typed mnemonic to the import bundle; the imported wallet signs through @turnkey/sdk-server', async () => {
    const mnemonic = generateMnemonic(wordlist);
    expect(await open('import', frames.import)).toBe('');
    const { importBundle } = await api.initImportWallet({ userId });
    expect(await call('import', 'injectImportBundle', importBundle, org, userId)).toBe(true);
    const f = await frameOf(page, 'import');
    await f.locator('#plaintext').fill(mnemonic);
    await photograph('import', 'frames-import');
    const encryptedBundle = await call<string>('import', 'extractWalletEncryptedBundle');
    // Only ciphertext reached the parent, and the field was emptied.
    expect(encryptedBundle).not.toContain(mnemonic.split(' ')[0] + ' ');
    expect(Object.keys(JSON.parse(encryptedBundle)).sort()).toEqual(['ciphertext', 'encappedPublic']);
    expect(await f.locator('#plaintext').inputValue()).toBe('');
    const { addresses } = await api.importWallet({ userId, walletName: 'frame-imported', encryptedBundle, accounts: [ETH] });
    expect(addresses[0]).toBe(mnemonicToAccount(mnemonic).address);
    const hash = keccak256(toHex('signed by an imported wallet'));
    const sig = await api.signRawPayload({ signWith: addresses[0], payload: hash, encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' });
    const recovered = await recoverAddress({ hash, signature: { r: `0x${sig.r}`, s: `0x${sig.s}`, yParity: Number.parseInt(sig.v, 16) } });
    expect(recovered).toBe(addresses[0]);
    await call('import', 'clear');
  });

  it('seals Solana and hex private keys; an import bundle for another user or signed by another key is refused', async () => {
    const { importBundle } = await api.initImportPrivateKey({ userId });
    await open('import-key', frames.import);
    expect(await refused('import-key', 'injectImportBundle', importBundle, org, 'another-user')).toMatch(/another user/);
    const data = JSON.parse(importBundle) as { data: string };
    const foreign = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const forged = JSON.stringify({ ...JSON.parse(importBundle), dataSignature: nodeSign('sha256', Buffer.from(data.data, 'hex'), foreign.privateKey).toString('hex') });
    expect(await refused('import-key', 'injectImportBundle', forged, org, userId)).toMatch(/signature does not verify/);
    expect(await call('import-key', 'injectImportBundle', importBundle, org, userId)).toBe(true);
    const solana = Keypair.generate();
    const f = await frameOf(page, 'import-key');
    await f.locator('#plaintext').fill(bs58.encode(solana.secretKey));
    const encryptedBundle = await call<string>('import-key', 'extractKeyEncryptedBundle', 'SOLANA');
    const imported = await api.importPrivateKey({ userId, privateKeyName: 'frame-imported-sol', encryptedBundle, curve: 'CURVE_ED25519', addressFormats: ['ADDRESS_FORMAT_SOLANA'] });
    expect(imported.addresses?.[0]?.address).toBe(solana.publicKey.toBase58());
    // One import bundle seals one secret.
    await f.locator('#plaintext').fill(bs58.encode(solana.secretKey));
    expect(await refused('import-key', 'extractKeyEncryptedBundle', 'SOLANA')).toMatch(/no import bundle/);
    // A hex Ethereum key through a fresh import bundle.
    const ethKey = toHex(nacl.randomBytes(32));
    const next = await api.initImportPrivateKey({ userId });
    expect(await call('import-key', 'injectImportBundle', next.importBundle, org, userId)).toBe(true);
    await f.locator('#plaintext').fill(ethKey);
    const ethBundle = await call<string>('import-key', 'extractKeyEncryptedBundle', 'HEXADECIMAL');
    const ethImported = await api.importPrivateKey({ userId, privateKeyName: 'frame-imported-eth', encryptedBundle: ethBundle, curve: 'CURVE_SECP256K1', addressFormats: ['ADDRESS_FORMAT_ETHEREUM'] });
    expect(ethImported.addresses?.[0]?.address).toBe(privateKeyToAccount(ethKey).address);
    await call('import-key', 'clear');
  });
});

describe('export-and-sign frame', () => {
  it('signs a Solana transaction and an Ethereum message and transaction with keys that stay in the frame', async () => {
    const { addresses } = await api.createWallet({ walletName: 'frame-sign', accounts: [ETH, SOL] });
    const [ethAddress, solAddress] = addresses;
    const publicKey = await open('eas', frames.exportAndSign);
    for (const [address, format] of [
      [solAddress, 'SOLANA'],
      [ethAddress, 'HEXADECIMAL'],
    ] as const) {
      const { exportBundle } = await api.exportWalletAccount({ address, targetPublicKey: publicKey });
      expect(await call('eas', 'injectKeyExportBundle', exportBundle, org, format, address)).toBe(true);
    }
    // Solana: a transfer paid by the exported account, checked with @solana/web3.js.
    const tx = new Transaction({ feePayer: new PublicKey(solAddress), recentBlockhash: bs58.encode(nacl.randomBytes(32)) }).add(
      SystemProgram.transfer({ fromPubkey: new PublicKey(solAddress), toPubkey: Keypair.generate().publicKey, lamports: 1234 }),
    );
    const unsigned = tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('hex');
    const signedHex = await call<string>('eas', 'signTransaction', { transaction: unsigned, type: 'SOLANA' }, solAddress);
    const signed = Transaction.from(Buffer.from(signedHex, 'hex'));
    expect(signed.verifySignatures()).toBe(true);
    expect(signed.signatures[0].publicKey.toBase58()).toBe(solAddress);
    // Solana message.
    const solSig = await call<string>('eas', 'signMessage', { message: 'hello solana', type: 'SOLANA' }, solAddress);
    expect(nacl.sign.detached.verify(new TextEncoder().encode('hello solana'), Buffer.from(solSig, 'hex'), new PublicKey(solAddress).toBytes())).toBe(true);
    // Ethereum message (EIP-191) and an EIP-1559 transaction, checked with viem.
    const ethSig = await call<Hex>('eas', 'signMessage', { message: 'hello ethereum', type: 'ETHEREUM' }, ethAddress);
    expect(await verifyMessage({ address: ethAddress as Hex, message: 'hello ethereum', signature: ethSig })).toBe(true);
    const unsignedEth = serializeTransaction({ chainId: 31337, type: 'eip1559', nonce: 0, to: '0x000000000000000000000000000000000000dEaD', value: 1n, gas: 21000n, maxFeePerGas: 2n, maxPriorityFeePerGas: 1n });
    const signedEth = await call<Hex>('eas', 'signTransaction', { transaction: unsignedEth, type: 'ETHEREUM' }, ethAddress);
    expect(await recoverTransactionAddress({ serializedTransaction: signedEth as any })).toBe(ethAddress);
    expect(parseTransaction(signedEth).to?.toLowerCase()).toBe('0x000000000000000000000000000000000000dead');
    // Clearing a key: it no longer signs.
    expect(await call('eas', 'clearEmbeddedPrivateKey', solAddress)).toBe(true);
    expect(await refused('eas', 'signMessage', { message: 'again', type: 'SOLANA' }, solAddress)).toMatch(/no key for address/);
    await call('eas', 'clear');
  });
});

describe('auth frame', () => {
  it('opens a read-write session credential and stamps a request Sigil accepts', async () => {
    const publicKey = await open('auth', frames.auth);
    const { credentialBundle } = await api.createReadWriteSession({ targetPublicKey: publicKey, expirationSeconds: '600' });
    expect(await call('auth', 'injectCredentialBundle', credentialBundle)).toBe(true);
    const body = JSON.stringify({ organizationId: org });
    const stamp = await call<{ stampHeaderName: string; stampHeaderValue: string }>('auth', 'stamp', body);
    expect(stamp.stampHeaderName).toBe('X-Stamp');
    const res = await rawPost(`${sigil.url}/public/v1/query/whoami`, body, { headers: { 'X-Stamp': stamp.stampHeaderValue } });
    expect(res.status).toBe(200);
    expect(res.body.userId).toBe(userId);
    // A different body under the same stamp is refused: the frame signed exactly what it was given.
    const other = await rawPost(`${sigil.url}/public/v1/query/whoami`, JSON.stringify({ organizationId: org, x: 1 }), { headers: { 'X-Stamp': stamp.stampHeaderValue } });
    expect(other.status).toBe(401);
    await call('auth', 'clear');
  });

  it('@turnkey/sdk-browser: the iframe client logs a user in by email auth through the auth frame', async () => {
    const email = 'frames-email@example.com';
    const { userIds } = await api.createUsers({ users: [{ userName: email, userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }] });
    const publicKey = (await page.evaluate(([u, o, f]) => (window as any).frameTest.sdkBrowserOpen(u, o, f), [sigil.url, org, frames.auth])) as string;
    const sent = inbox.count(email);
    await api.emailAuth({ email, targetPublicKey: publicKey, emailCustomization: { appName: 'Frames' } });
    const mail = await inbox.next(email, sent);
    const whoami = (await page.evaluate(([b, o]) => (window as any).frameTest.sdkBrowserLogin(b, o), [bundleIn(parse(mail.raw).text), org])) as { userId: string; organizationId: string };
    expect(whoami).toMatchObject({ userId: userIds[0], organizationId: org });
  });
});

describe('embedding', () => {
  it('each frame answers with frame-ancestors limited to the allowed origins', async () => {
    for (const url of Object.values(frames)) {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain(`frame-ancestors ${allowedOrigin}`);
      expect(new URL(url).origin).not.toBe(allowedOrigin);
    }
  });

  it('a deployment whose frames would share an origin with an allowed app does not start', async () => {
    const d = freshDeploymentEnv();
    try {
      initDeployment(d.dataDir, d.env);
      const env = { ...d.env, SIGIL_WEBAUTHN_ORIGINS: 'https://app.example.com', SIGIL_FRAMES_URL: 'https://app.example.com' };
      const r = runSigil(['serve', '--data-dir', d.dataDir, '--port', '0', '--auth-proxy-port', '0'], env);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain("the frames' origin https://app.example.com is also an allowed app origin");
    } finally {
      rmSync(d.dataDir, { recursive: true, force: true });
      if (d.databaseUrl) await dropSchema(d.databaseUrl);
    }
  });

  it('ATTACK: a page on an origin the operator did not allow cannot embed the frames', async () => {
    const foreign = await browser.newPage();
    try {
      await foreign.goto(foreignOrigin + '/');
      for (const [name, url] of Object.entries(frames)) {
        await foreign.evaluate(([id, u]) => (window as any).frameTest.embed(id, u), [`plain-${name}`, url]);
        const f = await frameOf(foreign, `plain-${name}`);
        // Chromium replaces a frame that CSP forbids with its error page: none of Sigil's page is there.
        expect(await f.locator('#sigil-frame-settings').count()).toBe(0);
      }
      // The allowed origin, embedding the same way, gets the page.
      await page.evaluate(([id, u]) => (window as any).frameTest.embed(id, u), ['plain-allowed', frames.export]);
      expect(await (await frameOf(page, 'plain-allowed')).locator('#sigil-frame-settings').count()).toBe(1);
    } finally {
      await foreign.close();
    }
  });

  it('ATTACK: with CSP out of the way, the frame still opens no channel to a foreign origin', async () => {
    // A proxy that drops the header, played by Playwright's request interception: the frame's own
    // check of the channel's origin must hold.
    const context = await browser.newContext();
    await context.route(`${new URL(frames.export).origin}/**`, async (route) => {
      const response = await route.fetch();
      const headers = { ...response.headers() };
      delete headers['content-security-policy'];
      await route.fulfill({ response, headers });
    });
    const foreign = await context.newPage();
    const lines: string[] = [];
    foreign.on('console', (m) => lines.push(m.text()));
    try {
      await foreign.goto(foreignOrigin + '/');
      let answered = false;
      foreign
        .evaluate(([u]) => (window as any).frameTest.open('sneaky', u), [frames.export])
        .then(() => (answered = true))
        .catch(() => undefined);
      // The page loads this time, and refuses the channel.
      await expect.poll(() => lines.some((l) => l.includes(`refused a channel from ${foreignOrigin}`)), { timeout: 20_000 }).toBe(true);
      const f = await frameOf(foreign, 'sneaky');
      expect(await f.locator('#sigil-frame-settings').count()).toBe(1);
      expect(answered).toBe(false);
    } finally {
      await context.close();
    }
  });
});

function uncompressedHex(jwk: { x: string; y: string }): string {
  return '04' + Buffer.from(jwk.x, 'base64url').toString('hex') + Buffer.from(jwk.y, 'base64url').toString('hex');
}

/** The frame `id` photographed at desktop and phone width into test-results/screenshots (the README's come from here). */
async function photograph(id: string, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.locator(`iframe#${id}`).screenshot({ path: join(SHOTS, `${name}-${width}.png`) });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}
