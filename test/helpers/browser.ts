// A real browser for dashboard tests (DESIGN.md stack: Debian's /usr/bin/chromium driven by
// playwright-core, with the DevTools virtual authenticator for real passkeys), and a `sigil serve`
// on a port chosen up front, since WebAuthn needs the page's exact origin in the configuration
// before the server starts.
import { existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { dropSchema, freshDeploymentEnv, initDeployment, serve, type RootCredentials } from './sigil.js';

export const CHROMIUM = '/usr/bin/chromium';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface DashboardSigil {
  url: string;
  /** The dashboard's origin as the browser uses it (http://localhost:<port>), the one WebAuthn origin. */
  origin: string;
  root: RootCredentials;
  stderr(): string;
  stop(): Promise<void>;
}

/** A fresh deployment served on http://localhost:<free port> with that origin as its WebAuthn origin. */
export async function serveForBrowser(extraEnv: Record<string, string> = {}): Promise<DashboardSigil> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const { dataDir, databaseUrl, env } = freshDeploymentEnv();
  Object.assign(env, { SIGIL_WEBAUTHN_RP_ID: 'localhost', SIGIL_WEBAUTHN_ORIGINS: origin, ...extraEnv });
  const root = initDeployment(dataDir, env);
  const s = serve(dataDir, env, ['--port', String(port)]);
  const { url } = await s.ready;
  return {
    url,
    origin,
    root,
    stderr: s.stderr,
    stop: async () => {
      if (s.child.exitCode === null) {
        const exited = new Promise((r) => s.child.once('exit', r));
        s.child.kill('SIGTERM');
        await exited;
      }
      rmSync(dataDir, { recursive: true, force: true });
      if (databaseUrl) await dropSchema(databaseUrl);
    },
  };
}

/** Headless Chromium; a missing browser is a failure that says what to do, never a skip. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: the dashboard tests need Debian's chromium. Install it with: apt-get install chromium`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
  });
}

/** A page of its own browser context (own storage) with a virtual platform authenticator attached. */
export async function pageWithPasskeys(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  });
  return page;
}
