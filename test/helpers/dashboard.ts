// A dashboard under test: a real `sigil serve` whose WebAuthn origin is the page's, and Debian's
// Chromium (playwright-core) with a DevTools virtual authenticator, so passkeys are real. Used by
// test/e2e/dashboard-mfa.test.ts; the same set-up as test/e2e/dashboard.test.ts, shared from here.
import { existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { dropSchema, freshDeploymentEnv, initDeployment, serve, type SigilInstance } from './sigil.js';

export const CHROMIUM = '/usr/bin/chromium';

/** A Sigil the dashboard tests start themselves (their own port): SigilInstance's fields but the child process. */
export type DashboardSigil = Pick<SigilInstance, 'url' | 'authProxyUrl' | 'dataDir' | 'databaseUrl' | 'env' | 'root' | 'stop'>;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Starts Sigil on a port chosen up front (WebAuthn needs the exact origin) and Chromium with a virtual authenticator. */
export async function startDashboard(): Promise<{ sigil: DashboardSigil; browser: Browser; page: Page; origin: string; consoleErrors: string[] }> {
  // A browser test that silently skips proves nothing: a missing browser is a failure that says what to do.
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: the dashboard tests need Debian's chromium. Install it with: apt-get install chromium`);
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const { dataDir, databaseUrl, env } = freshDeploymentEnv();
  Object.assign(env, { SIGIL_WEBAUTHN_RP_ID: 'localhost', SIGIL_WEBAUTHN_ORIGINS: origin });
  const root = initDeployment(dataDir, env);
  const s = serve(dataDir, env, ['--port', String(port)]);
  const { url, authProxyUrl } = await s.ready;
  const sigil: DashboardSigil = {
    url,
    authProxyUrl,
    dataDir,
    databaseUrl,
    env,
    root,
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
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(e.message));
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  });
  return { sigil, browser, page, origin, consoleErrors };
}

/** Follows a main navigation link and waits for the new page's own heading, then for its data. */
export async function go(page: Page, hash: string, title: string | RegExp): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: title }).click();
  await page.waitForFunction((h) => location.hash === h, hash);
  await page.locator('#page-title', { hasText: title }).waitFor();
  await page.locator('.loading').waitFor({ state: 'detached' });
}
