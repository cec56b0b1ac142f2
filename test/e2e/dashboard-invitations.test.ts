// Accepting an invitation in the dashboard (issue 19; README "Invitations") in a real headless
// Chromium (Debian's /usr/bin/chromium driven by playwright-core) with the DevTools virtual
// authenticator, against a real `sigil serve` mailing through a real SMTP server on loopback: the
// root user invites Nina with @turnkey/http; the emailed link (to the dashboard origin, the default
// SIGIL_DASHBOARD_URL) opens the accept page, which shows the invitation, creates a passkey and
// accepts; the token leaves the address bar; Nina then signs in on the sign-in page with that
// passkey (stamp_login under X-Stamp-Webauthn) and the API shows her user with the invited tags and
// the passkey. Opening the link again says it was already accepted. The token is in no log line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { dropSchema, freshDeploymentEnv, initDeployment, ROOT, serve, type RootCredentials } from '../helpers/sigil.js';
import { parse, smtpEnv, startInbox, type Inbox } from '../helpers/mail.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join(ROOT, 'test-results', 'screenshots');

let sigil: { url: string; root: RootCredentials; stderr: () => string; stop(): Promise<void> };
let mail: Inbox;
let browser: Browser;
let page: Page;
let origin: string;

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

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: the dashboard tests need Debian's chromium. Install it with: apt-get install chromium`);
  mkdirSync(SHOTS, { recursive: true });
  mail = await startInbox();
  // WebAuthn needs the exact origin up front, so the port is chosen before the server starts.
  const port = await freePort();
  origin = `http://localhost:${port}`;
  const { dataDir, databaseUrl, env } = freshDeploymentEnv();
  Object.assign(env, { SIGIL_WEBAUTHN_RP_ID: 'localhost', SIGIL_WEBAUTHN_ORIGINS: origin, ...smtpEnv(mail) });
  const root = initDeployment(dataDir, env);
  const s = serve(dataDir, env, ['--port', String(port)]);
  const { url } = await s.ready;
  sigil = {
    url,
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
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run', '--disable-component-update', '--disable-sync'],
  });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await sigil?.stop();
  await mail?.close();
});

describe('accepting an invitation in the dashboard', () => {
  it('the emailed link registers a passkey and creates the user, who then signs in with it', async () => {
    const client = new TurnkeyClient({ baseUrl: sigil.url }, new ApiKeyStamper({ apiPublicKey: sigil.root.apiPublicKey, apiPrivateKey: sigil.root.apiPrivateKey }));
    const organizationId = sigil.root.organizationId;
    const tag = await client.createUserTag({ type: 'ACTIVITY_TYPE_CREATE_USER_TAG', timestampMs: String(Date.now()), organizationId, parameters: { userTagName: 'treasury', userIds: [] } });
    const tagId = tag.activity.result.createUserTagResult!.userTagId;
    const created = await client.createInvitations({
      type: 'ACTIVITY_TYPE_CREATE_INVITATIONS',
      timestampMs: String(Date.now()),
      organizationId,
      parameters: { invitations: [{ receiverUserName: 'Nina', receiverUserEmail: 'nina@example.com', receiverUserTags: [tagId], accessType: 'ACCESS_TYPE_ALL', senderUserId: sigil.root.userId }] },
    });
    const [invitationId] = created.activity.result.createInvitationsResult!.invitationIds;
    const text = parse((await mail.next('nina@example.com', 0)).raw).text;
    const link = /(http\S+\/#\/accept-invitation\?token=([A-Za-z0-9_-]+))/.exec(text);
    expect(link).not.toBeNull();
    const [, url, token] = link!;
    expect(url.startsWith(`${origin}/#/accept-invitation?token=`)).toBe(true);

    await page.goto(url);
    await page.getByRole('heading', { name: 'Accept invitation' }).waitFor();
    await page.getByRole('heading', { name: /^Join / }).waitFor();
    expect(await page.locator('main').textContent()).toContain('nina@example.com');
    await page.screenshot({ path: join(SHOTS, 'accept-invitation-1280.png'), fullPage: true });
    await page.getByLabel('Passkey name').fill('Nina laptop');
    await page.getByRole('button', { name: 'Create passkey and accept' }).click();

    // Accepted: the sign-in page, with the organization remembered and the token gone from the address.
    await page.getByRole('heading', { name: 'Sign in to Sigil' }).waitFor();
    expect(await page.locator('#flash').textContent()).toContain('Welcome, Nina');
    expect(page.url()).not.toContain(token);
    expect(await page.getByLabel('Organization ID').inputValue()).toBe(organizationId);
    await page.getByRole('button', { name: 'Sign in with passkey' }).click();
    await page.getByRole('heading', { name: 'Organization', level: 1 }).waitFor();
    expect(await page.locator('#who').textContent()).toContain('Nina');
    expect(await page.locator('#who').textContent()).toContain('passkey');

    const { users } = await client.getUsers({ organizationId });
    const nina = users.find((u) => u.userEmail === 'nina@example.com')!;
    expect(nina).toMatchObject({ userName: 'Nina', userTags: [tagId] });
    // Her only API key is the session key the dashboard registered at sign-in.
    expect(nina.apiKeys.map((k) => k.credential.type)).toEqual(['CREDENTIAL_TYPE_LOGIN']);
    expect(nina.authenticators.map((a) => a.authenticatorName)).toEqual(['Nina laptop']);

    // The link works once.
    await page.goto(url);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('invitation already accepted');
    expect(invitationId).toBeTruthy();
    expect(sigil.stderr()).not.toContain(token);
  });
});
