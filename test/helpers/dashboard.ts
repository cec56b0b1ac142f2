// A dashboard under test in one call (test/e2e/dashboard-mfa.test.ts): a real `sigil serve` whose
// WebAuthn origin is the page's, and Debian's Chromium with a DevTools virtual authenticator, from
// the shared helpers of test/helpers/browser.ts.
import type { Browser, Page } from 'playwright-core';
import { addVirtualAuthenticator, launchChromium, newPage, serveForBrowser, type DashboardSigil } from './browser.js';

export { go, type DashboardSigil } from './browser.js';

export async function startDashboard(): Promise<{ sigil: DashboardSigil; browser: Browser; page: Page; origin: string; consoleErrors: string[] }> {
  const { sigil, origin } = await serveForBrowser();
  let browser: Browser | undefined;
  try {
    browser = await launchChromium();
    const consoleErrors: string[] = [];
    const page = await newPage(browser, consoleErrors);
    await addVirtualAuthenticator(page);
    return { sigil, browser, page, origin, consoleErrors };
  } catch (err) {
    // The caller never receives the server to stop it (no Chromium, say): stop it here.
    await browser?.close();
    await sigil.stop();
    throw err;
  }
}
