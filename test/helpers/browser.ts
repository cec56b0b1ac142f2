// Helpers of the Chromium dashboard tests (test/e2e/dashboard*.test.ts): a free port chosen before
// the server starts (WebAuthn needs the exact origin up front), Debian's chromium launched headless
// by playwright-core, photographs at desktop and phone width, and navigation that waits for the new
// page's own heading.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { dropSchema, freshDeploymentEnv, initDeployment, ROOT, serve, type SigilInstance } from './sigil.js';

export const CHROMIUM = '/usr/bin/chromium';
export const SHOTS = join(ROOT, 'test-results', 'screenshots');

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

export type DashboardSigil = Omit<SigilInstance, 'process'>;

/**
 * `sigil serve` on `http://localhost:<port>` (a free port), with passkeys bound to that origin;
 * `extraEnv` adds settings (SMTP for the invitation tests, say).
 */
export async function serveForBrowser(extraEnv: Record<string, string> = {}): Promise<{ sigil: DashboardSigil; origin: string }> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const { dataDir, databaseUrl, env } = freshDeploymentEnv();
  Object.assign(env, { SIGIL_WEBAUTHN_RP_ID: 'localhost', SIGIL_WEBAUTHN_ORIGINS: origin, ...extraEnv });
  const root = initDeployment(dataDir, env);
  const s = serve(dataDir, env, ['--port', String(port)]);
  const { url, authProxyUrl } = await s.ready;
  const stop = async () => {
    if (s.child.exitCode === null) {
      const exited = new Promise((r) => s.child.once('exit', r));
      s.child.kill('SIGTERM');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
    if (databaseUrl) await dropSchema(databaseUrl);
  };
  return { sigil: { url, authProxyUrl, dataDir, databaseUrl, env, root, stop, stderr: s.stderr }, origin };
}

export async function launchChromium(): Promise<Browser> {
  // A browser test that silently skips proves nothing: a missing browser is a failure that says what to do.
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: the dashboard tests need Debian's chromium. Install it with: apt-get install chromium`);
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
  });
}

/** A 1280×900 page whose console errors and uncaught exceptions are collected into `errors`. */
export async function newPage(browser: Browser, errors: string[]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return page;
}

/** Gives `page`'s browser context a DevTools virtual platform authenticator: real passkeys, no prompt. */
export async function addVirtualAuthenticator(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  });
}

/** A page of a browser context of its own (own storage: another person) with a virtual authenticator. */
export async function pageWithPasskeys(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await addVirtualAuthenticator(page);
  return page;
}

/** Photographs the whole page, or one element (`locate`), at 1280 and 390 px into SHOTS. */
export async function shoot(page: Page, name: string, locate?: () => Locator) {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 });
    await page.waitForTimeout(100);
    const path = join(SHOTS, `${name}-${width}.png`);
    if (locate) await locate().screenshot({ path });
    else await page.screenshot({ path, fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

export async function go(page: Page, hash: string, title: string | RegExp) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: title }).click();
  await expect.poll(() => page.evaluate(() => location.hash)).toBe(hash);
  // The new page's own heading first: until it renders, the previous page (with no `.loading`) is
  // still there, and a busy machine makes that window wide enough to read the wrong page.
  await page.locator('#page-title', { hasText: title }).waitFor();
  await page.locator('.loading').waitFor({ state: 'detached' });
}
