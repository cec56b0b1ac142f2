// The browser kits' test bench (test/e2e/wallet-kit.test.ts; docs/embedded-wallets.md "Embedded wallets:
// the browser kits"): the React app of test/helpers/wallet-kit-app/ bundled by esbuild and served from
// an origin of its own (http://localhost:<port>, while Sigil answers on 127.0.0.1: the app never shares
// an origin with the API or the frames); a Sigil whose WebAuthn origin is the app's, with an auth proxy
// configuration made by `sigil proxy-config create` as an operator would; a Google-style OIDC
// provider on loopback (Google's issuer name, keys and sign-in page of its own) that the test routes
// the kit's sign-in popup to; and the app's backend routes (`/api/...`) a test supplies. The kit's
// frame URLs come from the deployment's `/.well-known/sigil.json` `frames`, or a test sets them with
// `app.configure({ ...config, exportIframeUrl, importIframeUrl })` before it opens a page.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { build } from 'esbuild';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import type { BrowserContext } from 'playwright-core';
import { freePort } from './browser.js';
import { dropSchema, freshDeploymentEnv, initDeployment, ROOT, runSigil, serve, type SigilInstance } from './sigil.js';

const APP_DIR = join(ROOT, 'test', 'helpers', 'wallet-kit-app');
const KIT_DIR = join(ROOT, 'node_modules', '@turnkey', 'react-wallet-kit');

let bundled: Promise<{ js: string; sdkBrowserJs: string; css: string }> | undefined;

/**
 * The app bundled once per test process: React 19, the kit and its dependencies, for the browser;
 * and the page of @turnkey/sdk-browser.
 */
export function bundleKitApp(): Promise<{ js: string; sdkBrowserJs: string; css: string }> {
  bundled ??= build({
    entryPoints: [join(APP_DIR, 'app.tsx'), join(APP_DIR, 'sdk-browser.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    jsx: 'automatic',
    // What a bundler for the web sets for these packages (Vite and Next do the same).
    define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' },
    outdir: join(APP_DIR, 'out'),
    minify: true,
    logLevel: 'silent',
  }).then((r) => ({
    js: r.outputFiles.find((f) => f.path.endsWith('/app.js'))!.text,
    sdkBrowserJs: r.outputFiles.find((f) => f.path.endsWith('/sdk-browser.js'))!.text,
    // The kit's stylesheet, as its README asks an app to import it.
    css: readFileSync(join(KIT_DIR, 'dist', 'styles.css'), 'utf8'),
  }));
  return bundled;
}

export interface KitConfig {
  apiBaseUrl: string;
  authProxyUrl: string;
  authProxyConfigId: string;
  organizationId: string;
  exportIframeUrl?: string;
  importIframeUrl?: string;
  /** Sigil's export-and-sign frame, which the app embeds with @turnkey/iframe-stamper (no kit setting). */
  exportAndSignIframeUrl?: string;
}

/** A route of the app's own backend: the JSON body in, a JSON answer out. */
export type BackendRoute = (body: any) => Promise<unknown>;

export interface KitApp {
  origin: string;
  /** The page the kit's OAuth popups return to (the configuration's redirect URL). */
  oauthRedirectUrl: string;
  /** Sets the provider settings the page hands the kit (before a page loads it). */
  configure(config: KitConfig): void;
  backend: Map<string, BackendRoute>;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  let raw = '';
  for await (const chunk of req) raw += chunk;
  return raw;
}

/** Serves the app on `http://localhost:<port>`. */
export async function serveKitApp(port: number): Promise<KitApp> {
  const { js, sdkBrowserJs, css } = await bundleKitApp();
  const origin = `http://localhost:${port}`;
  let config: KitConfig | undefined;
  const backend = new Map<string, BackendRoute>();
  const send = (res: ServerResponse, status: number, type: string, body: string) => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
    res.end(body);
  };
  const server: Server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', origin).pathname;
    try {
      // `/`: the wallet kit app; `/sdk-browser`: the page of @turnkey/sdk-browser.
      if ((path === '/' || path === '/sdk-browser') && config) {
        const settings = JSON.stringify(config).replace(/</g, '\\u003c');
        const script = path === '/' ? '/app.js' : '/sdk-browser.js';
        return send(
          res,
          200,
          'text/html; charset=utf-8',
          `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
            `<title>Sigil wallet kit app</title><link rel="stylesheet" href="/styles.css"></head>` +
            `<body><div id="root"></div><script>window.SIGIL_KIT = ${settings};</script><script type="module" src="${script}"></script></body></html>`,
        );
      }
      if (path === '/app.js') return send(res, 200, 'text/javascript; charset=utf-8', js);
      if (path === '/sdk-browser.js') return send(res, 200, 'text/javascript; charset=utf-8', sdkBrowserJs);
      if (path === '/styles.css') return send(res, 200, 'text/css; charset=utf-8', css);
      if (path === '/oauth-callback') return send(res, 200, 'text/html; charset=utf-8', '<!doctype html><title>Signing in</title>');
      const route = req.method === 'POST' ? backend.get(path) : undefined;
      if (route) return send(res, 200, 'application/json', JSON.stringify(await route(JSON.parse(await readBody(req)))));
      send(res, 404, 'text/plain', 'not found');
    } catch (err) {
      send(res, 500, 'application/json', JSON.stringify({ error: (err as Error).message }));
    }
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    origin,
    oauthRedirectUrl: `${origin}/oauth-callback`,
    configure: (c) => (config = c),
    backend,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Google's issuer name: the kit and @turnkey/core treat tokens of this issuer as Google's. */
export const GOOGLE_ISSUER = 'https://accounts.google.com';

export interface OidcProvider {
  /** The JWKS URL Sigil is configured with for GOOGLE_ISSUER (SIGIL_OIDC_ISSUERS). */
  jwksUrl: string;
  /** Who signs in at the provider's next authorization request. */
  signInAs(sub: string, email: string): void;
  /** Sends the kit's requests to Google's sign-in page in `context` to this provider instead. */
  route(context: BrowserContext): Promise<void>;
  close(): Promise<void>;
}

/**
 * A Google-style OIDC provider on loopback: an authorization endpoint of the implicit id_token flow
 * Google serves the kit (response_type=id_token, the nonce from the request, the answer in the
 * redirect's fragment), and the JWKS its tokens verify with.
 */
export async function startOidcProvider(): Promise<OidcProvider> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'loopback-1', alg: 'RS256', use: 'sig' };
  let who: { sub: string; email: string } | undefined;
  const sign = (key: CryptoKey, claims: Record<string, unknown>, aud: string) =>
    new SignJWT({ email_verified: true, ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: jwk.kid!, typ: 'JWT' })
      .setIssuer(GOOGLE_ISSUER)
      .setAudience(aud)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(key);
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/jwks') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ keys: [jwk] }));
    }
    if (url.pathname === '/o/oauth2/v2/auth' && who) {
      const q = url.searchParams;
      if (q.get('response_type') !== 'id_token' || !q.get('nonce') || !q.get('redirect_uri') || !q.get('client_id')) {
        res.writeHead(400).end('bad authorization request');
        return;
      }
      const idToken = await sign(privateKey, { sub: who.sub, email: who.email, nonce: q.get('nonce') }, q.get('client_id')!);
      const fragment = new URLSearchParams({ id_token: idToken, ...(q.get('state') ? { state: q.get('state')! } : {}) });
      res.writeHead(302, { location: `${q.get('redirect_uri')}#${fragment}` });
      return res.end();
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    jwksUrl: `${base}/jwks`,
    signInAs: (sub, email) => (who = { sub, email }),
    async route(context) {
      // The browser's way to Google's sign-in page leads here (as a hosts entry would), so the kit's
      // popup, its URL and its parameters are the kit's own.
      await context.route(`${GOOGLE_ISSUER}/**`, (r) => {
        const u = new URL(r.request().url());
        return r.fulfill({ status: 302, headers: { location: `${base}${u.pathname}${u.search}` } });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A hex sha256, as the kit makes OAuth nonces from session public keys. */
export const sha256hex = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

export interface KitDeployment {
  sigil: SigilInstance;
  app: KitApp;
  oidc: OidcProvider;
  configId: string;
  config: KitConfig;
  stop(): Promise<void>;
}

export const GOOGLE_CLIENT_ID = 'sigil-kit-test.apps.googleusercontent.com';

/**
 * Sigil for the app: passkeys bound to the app's origin, the loopback provider trusted as Google,
 * and an auth proxy configuration allowing the app's origin with passkey, email and Google login.
 */
export async function startKitDeployment(extraEnv: Record<string, string> = {}): Promise<KitDeployment> {
  const port = await freePort();
  const app = await serveKitApp(port);
  const oidc = await startOidcProvider();
  const { dataDir, databaseUrl, env } = freshDeploymentEnv();
  Object.assign(env, {
    SIGIL_WEBAUTHN_RP_ID: 'localhost',
    SIGIL_WEBAUTHN_ORIGINS: app.origin,
    SIGIL_OIDC_ISSUERS: `${GOOGLE_ISSUER}=${oidc.jwksUrl}`,
    ...extraEnv,
  });
  const root = initDeployment(dataDir, env);
  const s = serve(dataDir, env);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    if (s.child.exitCode === null) {
      const exited = new Promise((r) => s.child.once('exit', r));
      s.child.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
    if (databaseUrl) await dropSchema(databaseUrl);
    await app.close();
    await oidc.close();
  };
  try {
    const { url, authProxyUrl } = await s.ready;
    const sigil: SigilInstance = { url, authProxyUrl, dataDir, databaseUrl, env, root, process: s.child, stderr: s.stderr, stop };
    const r = runSigil(
      [
        'proxy-config', 'create', '--data-dir', dataDir, '--json',
        '--allowed-origins', app.origin,
        '--methods', 'passkey,email,google',
        '--session-seconds', '1800',
        '--otp-length', '6',
        '--otp-alphanumeric', 'false',
        '--app-name', 'Kit Test',
        '--oauth-client-id', `google=${GOOGLE_CLIENT_ID}`,
        '--oauth-redirect-url', app.oauthRedirectUrl,
      ],
      env,
    );
    if (r.status !== 0) throw new Error(`proxy-config create failed: ${r.stderr}`);
    const configId = JSON.parse(r.stdout).configId as string;
    // Sigil's own export and import frames, where the deployment lists them: the kit then
    // loads them instead of Turnkey's hosted ones.
    const wellKnown = (await (await fetch(`${url}/.well-known/sigil.json`)).json()) as { frames?: { export?: string; import?: string; exportAndSign?: string } };
    const config: KitConfig = {
      apiBaseUrl: url,
      authProxyUrl,
      authProxyConfigId: configId,
      organizationId: root.organizationId,
      ...(wellKnown.frames?.export ? { exportIframeUrl: wellKnown.frames.export } : {}),
      ...(wellKnown.frames?.import ? { importIframeUrl: wellKnown.frames.import } : {}),
      ...(wellKnown.frames?.exportAndSign ? { exportAndSignIframeUrl: wellKnown.frames.exportAndSign } : {}),
    };
    app.configure(config);
    return { sigil, app, oidc, configId, config, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
