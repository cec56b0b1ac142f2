// Onboarding by invitation in the dashboard (docs/sessions-and-logins.md "Invitations", "Email events")
// in a real headless Chromium (Debian's /usr/bin/chromium driven by playwright-core) with the DevTools
// virtual authenticator, against a real `sigil serve` mailing through a real SMTP server on loopback.
// The root user, signed in with its API key, invites Nina from the Invitations page with a tag; the
// emailed link (to the dashboard origin, the default SIGIL_DASHBOARD_URL) opens, in Nina's own
// browser context, the accept page, which shows the invitation, creates a passkey and accepts; the
// token leaves the address bar; Nina signs in on the sign-in page with that passkey (stamp_login
// under X-Stamp-Webauthn) and @turnkey/http shows her user with the tag and the passkey. Opening the
// link again says it was already accepted. The root user sees the email's Send and Delivery events on
// the page, and revokes Omar's invitation there, after which Omar's link says it was revoked. No
// token is in a log line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { SHOTS, launchChromium, pageWithPasskeys, serveForBrowser, type DashboardSigil } from '../helpers/browser.js';
import { parse, smtpEnv, startInbox, type Inbox } from '../helpers/mail.js';

let sigil: DashboardSigil;
let origin: string;
let mail: Inbox;
let browser: Browser;
let admin: Page;

beforeAll(async () => {
  mail = await startInbox();
  ({ sigil, origin } = await serveForBrowser(smtpEnv(mail)));
  browser = await launchChromium();
  admin = await pageWithPasskeys(browser);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await sigil?.stop();
  await mail?.close();
});

/** The accept link and its token in the latest invitation mail to `to`. */
async function linkSentTo(to: string, already: number) {
  const text = parse((await mail.next(to, already)).raw).text;
  const m = /(http\S+\/#\/accept-invitation\?token=([A-Za-z0-9_-]+))/.exec(text);
  if (!m) throw new Error(`no accept link in:\n${text}`);
  return { url: m[1], token: m[2] };
}

async function invite(name: string, email: string, tag?: string) {
  await admin.getByLabel('Name', { exact: true }).fill(name);
  await admin.getByLabel('Email', { exact: true }).fill(email);
  if (tag) await admin.getByLabel('Tags').selectOption({ label: tag });
  await admin.getByRole('button', { name: 'Send invitation' }).click();
  await expect.poll(() => admin.getByRole('form', { name: 'Invite someone' }).getByRole('status').textContent()).toContain(`Invitation sent to ${email}`);
  return (await admin.getByRole('form', { name: 'Invite someone' }).getByRole('status').locator('code').textContent())!;
}

describe('onboarding by invitation in the dashboard', () => {
  it('an invitation sent from the Invitations page is accepted with a new passkey, which then signs in', async () => {
    const client = new TurnkeyClient({ baseUrl: sigil.url }, new ApiKeyStamper({ apiPublicKey: sigil.root.apiPublicKey, apiPrivateKey: sigil.root.apiPrivateKey }));
    const organizationId = sigil.root.organizationId;
    const tag = await client.createUserTag({ type: 'ACTIVITY_TYPE_CREATE_USER_TAG', timestampMs: String(Date.now()), organizationId, parameters: { userTagName: 'treasury', userIds: [] } });
    const tagId = tag.activity.result.createUserTagResult!.userTagId;

    // The root user signs in with its API key and invites Nina and Omar.
    await admin.goto(`${origin}/?organizationId=${organizationId}`);
    await admin.getByRole('heading', { name: 'Sign in to Sigil' }).waitFor();
    await admin.getByLabel('Public key (compressed hex)').fill(sigil.root.apiPublicKey);
    await admin.getByLabel('Private key (hex)').fill(sigil.root.apiPrivateKey);
    await admin.getByRole('button', { name: 'Sign in with API key' }).click();
    await admin.getByRole('heading', { name: 'Organization', level: 1 }).waitFor();
    await admin.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Invitations' }).click();
    await admin.locator('#page-title', { hasText: 'Invitations' }).waitFor();
    await admin.locator('.loading').waitFor({ state: 'detached' });
    const ninaInvitation = await invite('Nina', 'nina@example.com', 'treasury');
    const nina = await linkSentTo('nina@example.com', 0);
    expect(nina.url.startsWith(`${origin}/#/accept-invitation?token=`)).toBe(true);
    const omarInvitation = await invite('Omar', 'omar@example.com');
    const omar = await linkSentTo('omar@example.com', 0);
    await admin.screenshot({ path: join(SHOTS, 'invitations-1280.png'), fullPage: true });

    // Nina, in a browser of her own, opens the link and accepts with a new passkey.
    const page = await pageWithPasskeys(browser);
    await page.goto(nina.url);
    await page.getByRole('heading', { name: 'Accept invitation' }).waitFor();
    await page.getByRole('heading', { name: /^Join / }).waitFor();
    expect(await page.locator('main').textContent()).toContain('nina@example.com');
    await page.screenshot({ path: join(SHOTS, 'accept-invitation-1280.png'), fullPage: true });
    await page.getByLabel('Passkey name').fill('Nina laptop');
    await page.getByRole('button', { name: 'Create passkey and accept' }).click();

    // Accepted: the sign-in page, the organization remembered, the token gone from the address.
    await page.getByRole('heading', { name: 'Sign in to Sigil' }).waitFor();
    expect(await page.locator('#flash').textContent()).toContain('Welcome, Nina');
    expect(page.url()).not.toContain(nina.token);
    expect(await page.getByLabel('Organization ID').inputValue()).toBe(organizationId);
    await page.getByRole('button', { name: 'Sign in with passkey' }).click();
    await page.getByRole('heading', { name: 'Organization', level: 1 }).waitFor();
    expect(await page.locator('#who').textContent()).toContain('Nina');
    expect(await page.locator('#who').textContent()).toContain('passkey');

    const { users } = await client.getUsers({ organizationId });
    const user = users.find((u) => u.userEmail === 'nina@example.com')!;
    expect(user).toMatchObject({ userName: 'Nina', userTags: [tagId] });
    expect(user.authenticators.map((a) => a.authenticatorName)).toEqual(['Nina laptop']);
    // Her only API key is the session key the dashboard registered at sign-in.
    expect(user.apiKeys.map((k) => k.credential.type)).toEqual(['CREDENTIAL_TYPE_LOGIN']);

    // The link works once.
    await page.goto(nina.url);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('invitation already accepted');

    // The root user sees what delivery did with Nina's email, and revokes Omar's invitation.
    await admin.getByLabel('Recipient email').fill('nina@example.com');
    await admin.getByRole('button', { name: 'Show email events' }).click();
    await admin.locator('tr[data-event-type="Delivery"]').waitFor();
    expect(await admin.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-event-type')))).toEqual(['Delivery', 'Send']);
    expect(await admin.locator('tr[data-event-type="Delivery"]').textContent()).toMatch(/INVITATION.*250 /);
    await admin.getByLabel('Invitation ID').fill(omarInvitation);
    await admin.getByRole('button', { name: 'Revoke invitation' }).click();
    await expect.poll(() => admin.getByRole('form', { name: 'Revoke an invitation' }).getByRole('status').textContent()).toContain('Invitation revoked');
    const omarPage = await pageWithPasskeys(browser);
    await omarPage.goto(omar.url);
    await expect.poll(() => omarPage.getByRole('alert').textContent()).toContain('invitation revoked');

    expect(ninaInvitation).not.toBe(omarInvitation);
    expect(sigil.stderr()).not.toContain(nina.token);
    expect(sigil.stderr()).not.toContain(omar.token);
  });
});
