// The dashboard (docs/operator-guide.md "Dashboard") in a real headless Chromium (Debian's
// /usr/bin/chromium driven by playwright-core) against a real `sigil serve`: the root user signs in with
// an imported API key (a non-extractable CryptoKey in IndexedDB; the private key never leaves the page),
// adds a passkey of Chromium's DevTools virtual authenticator (create_authenticators), signs out and
// back in with that passkey (stamp_login under X-Stamp-Webauthn, docs/reference/api.md "Stamps"),
// creates a wallet and sees its address, creates a policy with a syntax error (the server's message
// shows inline and nothing changes), fixes it, and approves a second user's sign_raw_payload that the
// policy holds for two approvals: the vote is cast by the passkey, and @turnkey/sdk-server then reads
// the activity COMPLETED with a signature. The velocity controls page draws each control's usage per
// group (the record's `usage`, docs/velocity-controls.md "Velocity controls") as a bar whose value and
// text are the API's aggregate against the threshold, marking the groups at and over the limit. Every
// page is photographed at 1280 px and 390 px into test-results/screenshots/. Also: the static handler's
// CSP, content types and path refusals, and email-code sign-in through the auth proxy (otp_init →
// otp_verify → stamp_login X-Stamp-Attested).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { generateP256KeyPair } from '@turnkey/crypto';
import { runSigil } from '../helpers/sigil.js';
import { dbSnapshot } from '../helpers/db-snapshot.js';
import { waitingSdkServerClient } from '../helpers/clients.js';
import { addVirtualAuthenticator, go as goTo, launchChromium, newPage, serveForBrowser, shoot as shootPage, type DashboardSigil } from '../helpers/browser.js';
const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } as const;

let sigil: DashboardSigil;
let browser: Browser;
let page: Page;
let origin: string;
/** Every request body the page sent, to prove the private key never left it. */
const sentBodies: string[] = [];
const consoleErrors: string[] = [];

const api = (key?: { apiPublicKey: string; apiPrivateKey: string }) => waitingSdkServerClient(sigil, key);

/** Photographs the current page at desktop and phone width. */
const shoot = (name: string) => shootPage(page, name);
const go = (hash: string, title: string | RegExp) => goTo(page, hash, title);

beforeAll(async () => {
  ({ sigil, origin } = await serveForBrowser({
    // The webhooks page's receiver on loopback, retried quickly (docs/webhooks.md "Webhooks").
    SIGIL_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    SIGIL_WEBHOOK_RETRY_BASE_MS: '100',
    SIGIL_WEBHOOK_RETRY_MAX_MS: '400',
    SIGIL_WEBHOOK_POLL_MS: '50',
    SIGIL_WEBHOOK_FAILING_AFTER: '2',
  }));
  browser = await launchChromium();
  page = await newPage(browser, consoleErrors);
  page.on('request', (r) => {
    const body = r.postData();
    if (body) sentBodies.push(body);
    sentBodies.push(JSON.stringify(r.headers()));
  });
  await addVirtualAuthenticator(page);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await sigil?.stop();
});

describe('dashboard static files', () => {
  it('serves the page and modules with a strict CSP, correct types, and refuses paths outside the build', async () => {
    const index = await fetch(`${sigil.url}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = index.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(index.headers.get('x-content-type-options')).toBe('nosniff');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    expect(html).toContain('<script type="module" src="/dashboard/app.js"></script>');
    expect(html).not.toMatch(/<script>|<script type="module">[^<]/); // no inline script

    const js = await fetch(`${sigil.url}/dashboard/app.js`);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const etag = js.headers.get('etag')!;
    expect((await fetch(`${sigil.url}/dashboard/app.js`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await fetch(`${sigil.url}/dashboard/styles.css`)).headers.get('content-type')).toBe('text/css; charset=utf-8');

    for (const path of ['/dashboard/%2e%2e/package.json', '/dashboard/..%2f..%2fpackage.json', '/dashboard/pages/../../../package.json', '/dashboard/nope.js', '/dashboard/']) {
      const res = await fetch(`${sigil.url}${path}`);
      expect(res.status, path).toBe(404);
      expect((await res.json()).code).toBe(5);
    }
    // The API is unchanged beside it.
    expect((await fetch(`${sigil.url}/.well-known/sigil.json`)).status).toBe(200);
  });
});

describe('dashboard in Chromium', () => {
  let address: string;

  it('signs in with an imported API key that stays in the browser, non-extractable', async () => {
    await page.goto(`${origin}/?organizationId=${sigil.root.organizationId}`);
    await page.getByRole('heading', { name: 'Sign in to Sigil' }).waitFor();
    // Keyboard: the first Tab reaches the skip link.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await shoot('sign-in');

    // A key pair that does not belong together is refused in the page, before any request.
    await page.getByLabel('Public key (compressed hex)').fill(generateP256KeyPair().publicKey);
    await page.getByLabel('Private key (hex)').fill(sigil.root.apiPrivateKey);
    await page.getByRole('button', { name: 'Sign in with API key' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('does not belong to the public key');

    await page.getByLabel('Public key (compressed hex)').fill(sigil.root.apiPublicKey);
    await page.getByLabel('Private key (hex)').fill(sigil.root.apiPrivateKey);
    await page.getByRole('button', { name: 'Sign in with API key' }).click();
    await page.getByRole('heading', { name: 'Organization', level: 1 }).waitFor();
    await page.getByRole('heading', { name: 'Root organization' }).waitFor();
    expect(await page.locator('#who').textContent()).toContain('Root user');
    expect(await page.locator('main').textContent()).toContain('1 of 1 root users must approve');

    const stored = await page.evaluate(
      () =>
        new Promise<{ type: string; extractable: boolean; usages: string[] }>((resolve, reject) => {
          const req = indexedDB.open('sigil-dashboard');
          req.onsuccess = () => {
            const get = req.result.transaction('session').objectStore('session').get('current');
            get.onsuccess = () => {
              const k = get.result.privateKey as CryptoKey;
              resolve({ type: k.type, extractable: k.extractable, usages: k.usages });
            };
            get.onerror = () => reject(get.error);
          };
          req.onerror = () => reject(req.error);
        }),
    );
    expect(stored).toEqual({ type: 'private', extractable: false, usages: ['sign'] });
    await shoot('organization');
  });

  it('adds a passkey for the signed-in user, signs out, and signs in with the passkey', async () => {
    await go('#/users', 'Users');
    await shoot('users');
    await page.getByRole('button', { name: 'Add passkey' }).click();
    await expect.poll(() => page.locator('#flash').textContent()).toContain('Passkey added');
    const { authenticators } = await api().getAuthenticators({ userId: sigil.root.userId });
    expect(authenticators).toHaveLength(1);
    expect(authenticators[0].authenticatorName).toBe('Dashboard passkey');
    expect(await page.locator('.user-card').textContent()).toContain(authenticators[0].credentialId);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Sigil' }).waitFor();
    // The organization id was remembered (localStorage), not the key.
    expect(await page.getByLabel('Organization ID').inputValue()).toBe(sigil.root.organizationId);
    await page.getByRole('button', { name: 'Sign in with passkey' }).click();
    await page.getByRole('heading', { name: 'Organization', level: 1 }).waitFor();
    expect(await page.locator('#who').textContent()).toContain('passkey');

    // The login was stamped by the passkey (X-Stamp-Webauthn): its vote records the WebAuthn scheme.
    const { activities } = await api().getActivities({ filterByType: ['ACTIVITY_TYPE_STAMP_LOGIN'] });
    expect(activities[0].status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(activities[0].votes[0].scheme).toBe('SIGNATURE_SCHEME_TK_API_WEBAUTHN');
  });

  it('creates a wallet and shows its address', async () => {
    await go('#/wallets', 'Wallets');
    await page.locator('.empty').waitFor();
    await shoot('wallets-empty');
    await page.getByLabel('Wallet name').fill('Treasury');
    await page.getByLabel('First account').selectOption('ethereum');
    await page.getByRole('button', { name: 'Create wallet' }).click();
    await expect.poll(() => page.locator('#flash').textContent()).toMatch(/Wallet "Treasury" created: 0x[0-9a-fA-F]{40}/);
    const { wallets } = await api().getWallets({});
    expect(wallets.map((w) => w.walletName)).toEqual(['Treasury']);
    const { accounts } = await api().getWalletAccounts({ walletId: wallets[0].walletId });
    address = accounts[0].address;
    expect(await page.locator('.wallet-card').textContent()).toContain(address);
    expect(await page.locator('#flash').textContent()).toContain(address);
    await shoot('wallets');
  });

  it('shows the server\'s parse error for a bad policy inline, changing nothing, then creates and edits the fixed one', async () => {
    await go('#/policies', 'Policies');
    await shoot('policies-empty');
    const form = page.locator('form.policy-form');
    await form.getByLabel('Name').fill('two approvals for raw signing');
    await form.getByLabel('Condition').fill('activity.type ==');
    await form.getByLabel('Consensus').fill('approvers.count() >= 2');
    await form.getByLabel('Notes').fill('two-person rule');
    const before = await dbSnapshot(sigil);
    await form.getByRole('button', { name: 'Create policy' }).click();
    const alert = form.getByRole('alert');
    await alert.waitFor();
    const shown = (await alert.textContent())!;
    expect(shown).toMatch(/^invalid policy condition: 1:\d+: /);
    expect(await form.getByLabel('Condition').getAttribute('aria-invalid')).toBe('true');
    expect(await dbSnapshot(sigil)).toEqual(before);
    // The very message the API gives an SDK client.
    await expect(api().createPolicy({ policyName: 'x', effect: 'EFFECT_ALLOW', condition: 'activity.type ==', notes: '' })).rejects.toThrow(shown);
    await shoot('policies-error');

    await form.getByLabel('Condition').fill("activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2'");
    await form.getByRole('button', { name: 'Create policy' }).click();
    await expect.poll(() => page.locator('#flash').textContent()).toContain('Policy "two approvals for raw signing" created');
    const card = page.locator('.policy-card');
    expect(await card.textContent()).toContain('approvers.count() >= 2');

    // Edit: a bad consensus is refused inline too; the fix is saved.
    await card.getByRole('button', { name: 'Edit' }).click();
    await card.getByLabel('Consensus').fill('approvers.count() >=');
    await card.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => card.getByRole('alert').textContent()).toMatch(/consensus/);
    await card.getByLabel('Consensus').fill('approvers.count() >= 2');
    await card.getByLabel('Notes').fill('two people sign raw payloads');
    await card.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.locator('#flash').textContent()).toContain('saved');
    const { policies } = await api().getPolicies({});
    expect(policies).toHaveLength(1);
    expect(policies[0]).toMatchObject({ condition: "activity.type == 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2'", consensus: 'approvers.count() >= 2', notes: 'two people sign raw payloads' });
    await shoot('policies');
  });

  it("approves a second user's pending signature from the page; the API then shows it completed with a signature", async () => {
    await go('#/pending', 'Pending');
    await page.locator('.empty').waitFor();
    await shoot('pending-empty');

    const k = generateP256KeyPair();
    const bobKey = { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
    await api().createUsers({
      users: [{ userName: 'bob', apiKeys: [{ apiKeyName: 'bob key', publicKey: bobKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] }],
    });
    const submitted = await api(bobKey).signRawPayload({ signWith: address, payload: '0x' + '42'.repeat(32), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' });
    expect(submitted.activity.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');

    await page.reload();
    const card = page.locator(`.pending-card[data-activity-id="${submitted.activity.id}"]`);
    await card.waitFor();
    expect(await card.textContent()).toContain('Submitted by bob');
    await shoot('pending');
    await card.getByRole('button', { name: /^Approve/ }).click();
    await expect.poll(() => page.locator('#flash').textContent()).toContain('the activity is now completed');
    await page.locator('.empty').waitFor();

    const done = (await api().getActivity({ activityId: submitted.activity.id })).activity as any;
    expect(done.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(done.result.signRawPayloadResult.r).toMatch(/^[0-9a-f]{64}$/);
    expect(done.result.signRawPayloadResult.s).toMatch(/^[0-9a-f]{64}$/);
    // bob's vote, then the root user's, cast by the passkey itself.
    expect(done.votes.map((v: any) => [v.user.userName, v.selection])).toEqual([
      ['bob', 'VOTE_SELECTION_APPROVED'],
      ['Root user', 'VOTE_SELECTION_APPROVED'],
    ]);
    expect(done.votes[1].scheme).toBe('SIGNATURE_SCHEME_TK_API_WEBAUTHN');

    // Activities list, filtered, and the detail page with votes and policy evaluations.
    await go('#/activities', 'Activities');
    await page.getByLabel('Type').fill('SIGN_RAW_PAYLOAD_V2');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.locator('table.activities tbody tr').count()).toBe(1);
    await shoot('activities');
    await page.getByRole('link', { name: 'Sign raw payload v2' }).click();
    await page.getByRole('heading', { name: 'Votes' }).waitFor();
    await shoot('activity-detail');
    const detail = (await page.locator('main').textContent())!;
    expect(detail).toContain(submitted.activity.id);
    expect(detail).toContain(done.result.signRawPayloadResult.r);
    expect(detail).toContain('two approvals for raw signing');
    expect(detail).toContain("After bob's vote");
    expect(detail).toContain('Requires consensus');
    expect(detail).toContain('Passkey');

    await go('#/private-keys', 'Private keys');
    await shoot('private-keys');
  });

  it('rejects from the page too', async () => {
    const bob = (await api().getUsers({})).users.find((u) => u.userName === 'bob')!;
    const k = generateP256KeyPair();
    await api().createApiKeys({ userId: bob.userId, apiKeys: [{ apiKeyName: 'bob second key', publicKey: k.publicKey, curveType: 'API_KEY_CURVE_P256' }] });
    const submitted = await api({ apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey }).signRawPayload({
      signWith: address,
      payload: '0x' + '43'.repeat(32),
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    });
    await go('#/pending', 'Pending');
    const card = page.locator(`.pending-card[data-activity-id="${submitted.activity.id}"]`);
    await card.getByRole('button', { name: /^Reject/ }).click();
    await expect.poll(() => page.locator('#flash').textContent()).toContain('the activity is now rejected');
    expect((await api().getActivity({ activityId: submitted.activity.id })).activity.status).toBe('ACTIVITY_STATUS_REJECTED');
  });

  it('shows each velocity control\'s aggregate per group against its threshold as a bar, marking the limit reached and passed', async () => {
    await go('#/velocity-controls', 'Velocity controls');
    await page.locator('.empty').waitFor();
    await shoot('velocity-controls-empty');

    const http = new TurnkeyClient({ baseUrl: sigil.url }, new ApiKeyStamper({ apiPublicKey: sigil.root.apiPublicKey, apiPrivateKey: sigil.root.apiPrivateKey }));
    const organizationId = sigil.root.organizationId;
    const control = async (identifier: string, name: string, threshold: string, groupBy: string) =>
      (
        await http.createVelocityControl({
          type: 'ACTIVITY_TYPE_CREATE_VELOCITY_CONTROL',
          timestampMs: String(Date.now()),
          organizationId,
          parameters: {
            name,
            identifier,
            dataSource: { activityExecution: { filter: { activity: [{ activityType: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2' }] } } },
            aggregation: {
              method: 'VELOCITY_CONTROL_AGGREGATION_METHOD_COUNT',
              operator: 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL',
              threshold,
              window: { rolling: { duration: '86400' } },
              groupBy: { [groupBy]: {} },
            },
          } as any,
        })
      ).activity.result.createVelocityControlResult!.velocityControlId;
    const perWallet = await control('wallet_signatures', 'four signatures a day per wallet', '4', 'wallet');
    const perUser = await control('user_signatures', 'three signatures a day per user', '3', 'user');
    const perOrg = await control('org_signatures', 'ten signatures a day', '10', 'organization');
    await api().createPolicy({ policyName: 'four a day per wallet', effect: 'EFFECT_DENY', condition: "activity.kind == 'SIGN_RAW_PAYLOAD' && !controls.wallet_signatures", notes: '' });
    // The root quorum bypasses policies, not the arithmetic: all four count, so the user control is passed.
    const { wallets } = await api().getWallets({});
    const walletId = wallets.find((w) => w.walletName === 'Treasury')!.walletId;
    for (let i = 0; i < 4; i++) {
      const res = await api().signRawPayload({ signWith: address, payload: '0x' + String(i).padStart(64, '7'), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' });
      expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    }
    const usage = Object.fromEntries(((await http.listVelocityControls({ organizationId })).velocityControls as any[]).map((c) => [c.velocityControlId, c.usage[0]]));
    expect(usage[perWallet]).toEqual({ groupBy: 'wallet', groupId: walletId, aggregate: '4', threshold: '4', remaining: '0' });
    expect(usage[perUser]).toEqual({ groupBy: 'user', groupId: sigil.root.userId, aggregate: '4', threshold: '3', remaining: '0' });
    expect(usage[perOrg]).toEqual({ groupBy: 'organization', groupId: organizationId, aggregate: '4', threshold: '10', remaining: '6' });

    await page.reload();
    const cards = page.locator('.velocity-card');
    await expect.poll(() => cards.count()).toBe(3);
    const expected: [string, string, RegExp, string, string][] = [
      [perWallet, walletId, /Treasury/, '4 of 4 (100%, at the limit)', 'usage usage-at'],
      [perUser, sigil.root.userId, /Root user/, '4 of 3 (133%, over the limit)', 'usage usage-over'],
      [perOrg, organizationId, /Organization/, '4 of 10 (40%, 6 left)', 'usage'],
    ];
    for (const [id, groupId, name, text, className] of expected) {
      const card = page.locator(`.velocity-card[data-velocity-control-id="${id}"]`);
      const row = card.locator(`.usage[data-group-id="${groupId}"]`);
      expect(await row.getAttribute('class')).toBe(className);
      expect(await row.locator('.usage-text').textContent()).toBe(text);
      // The bar: a meter named by its group, valued at the API's aggregate out of the threshold.
      const bar = card.getByRole('meter', { name });
      expect(await bar.getAttribute('value')).toBe(usage[id].aggregate);
      expect(await bar.getAttribute('max')).toBe(usage[id].threshold);
      expect(await bar.getAttribute('aria-valuetext')).toBe(text);
      // A meter draws at most its max: past the threshold the bar is full, and the words say by how much.
      expect(await bar.evaluate((m) => (m as HTMLMeterElement).value)).toBe(Math.min(Number(usage[id].aggregate), Number(usage[id].threshold)));
    }
    const wallet = (await page.locator(`.velocity-card[data-velocity-control-id="${perWallet}"]`).textContent())!;
    expect(wallet).toContain('controls.wallet_signatures');
    expect(wallet).toContain('Activity executions: Sign raw payload v2');
    expect(wallet).toContain('Count less than or equal 4');
    expect(wallet).toContain('rolling 1 day');
    await shoot('velocity-controls');
  });

  it('shows each webhook endpoint healthy or failing, with its last error and its deliveries', async () => {
    await go('#/webhooks', 'Webhooks');
    await page.locator('.empty').waitFor();
    // A receiver on loopback: /ok accepts every delivery, /down answers 500 to each.
    const receiver = createHttpServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.statusCode = req.url === '/ok' ? 200 : 500;
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as AddressInfo).port;
    try {
      const http = new TurnkeyClient({ baseUrl: sigil.url }, new ApiKeyStamper({ apiPublicKey: sigil.root.apiPublicKey, apiPrivateKey: sigil.root.apiPrivateKey }));
      const organizationId = sigil.root.organizationId;
      const create = async (name: string, path: string) =>
        (
          await http.createWebhookEndpoint({
            type: 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT',
            timestampMs: String(Date.now()),
            organizationId,
            parameters: { name, url: `http://127.0.0.1:${port}${path}`, subscriptions: [{ eventType: 'ACTIVITY_UPDATES', filtersJson: '{"filterByType":["ACTIVITY_TYPE_CREATE_WALLET"]}' }] },
          })
        ).activity.result.createWebhookEndpointResult!.endpointId;
      const ok = await create('accepting receiver', '/ok');
      const down = await create('refusing receiver', '/down');
      await api().createWallet({ walletName: 'webhook trigger', accounts: [] });
      const status = async (id: string) => ((await http.listWebhookEndpoints({ organizationId })).webhookEndpoints as any[]).find((e) => e.endpointId === id).deliveryStatus;
      await expect.poll(async () => (await status(down)).status, { timeout: 60_000 }).toBe('FAILING');
      await expect.poll(async () => (await status(ok)).deliveredDeliveries, { timeout: 60_000 }).toBe(1);

      await page.reload();
      await expect.poll(() => page.locator('.webhook-card').count()).toBe(2);
      const failing = page.locator(`.webhook-card[data-endpoint-id="${down}"]`);
      const healthy = page.locator(`.webhook-card[data-endpoint-id="${ok}"]`);
      expect(await failing.locator('.webhook-status').textContent()).toBe('Failing');
      expect(await failing.locator('.webhook-error').textContent()).toBe('the endpoint answered HTTP 500');
      expect(await failing.locator('.webhook-counts').textContent()).toBe('0 delivered, 1 pending, 0 given up');
      expect(await failing.textContent()).toContain(`http://127.0.0.1:${port}/down`);
      expect(await failing.textContent()).toContain('ACTIVITY_UPDATES, filtered by {"filterByType":["ACTIVITY_TYPE_CREATE_WALLET"]}');
      expect(await healthy.locator('.webhook-status').textContent()).toBe('Healthy');
      expect(await healthy.locator('.webhook-counts').textContent()).toBe('1 delivered, 0 pending, 0 given up');
      expect(await healthy.locator('.webhook-error').count()).toBe(0);
      // Each delivery one by one: the accepted one delivered, the refused one pending with its error.
      expect(await healthy.locator('.webhook-delivery-state').allTextContents()).toEqual(['Delivered']);
      expect(await failing.locator('.webhook-delivery-state').allTextContents()).toEqual(['Pending']);
      expect(await failing.locator('.webhook-delivery').textContent()).toContain('the endpoint answered HTTP 500');
      const [recent] = (await status(ok)).recentDeliveries;
      expect(recent).toMatchObject({ eventType: 'ACTIVITY_UPDATES', state: 'DELIVERED', attempts: 1 });
      expect(await healthy.locator('.webhook-delivery').textContent()).toContain(recent.subject);
      await shoot('webhooks');
      for (const endpointId of [ok, down]) {
        await http.deleteWebhookEndpoint({ type: 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT', timestampMs: String(Date.now()), organizationId, parameters: { endpointId } });
      }
    } finally {
      receiver.closeAllConnections();
      await new Promise((r) => receiver.close(r));
    }
  });

  it('signs in with an email code through the auth proxy (otp_init, otp_verify, stamp_login with X-Stamp-Attested)', async () => {
    // As with the auth proxy's own signup, the user lives in a sub-organization of the proxy's organization.
    const sub = await api().createSubOrganization({
      subOrganizationName: 'carol org',
      rootUsers: [{ userName: 'carol', userEmail: 'carol@example.com', apiKeys: [], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
    });
    const made = runSigil(['proxy-config', 'create', '--data-dir', sigil.dataDir, '--methods', 'email', '--json'], sigil.env);
    expect(made.stderr).toBe('');
    const { configId } = JSON.parse(made.stdout);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Sigil' }).waitFor();
    await page.getByLabel('Auth proxy address').fill(sigil.authProxyUrl.replace('127.0.0.1', 'localhost'));
    await page.getByLabel('Auth proxy config ID').fill(configId);
    await page.getByRole('textbox', { name: 'Email', exact: true }).fill('carol@example.com');
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('Code from the email').waitFor();
    // No mail server configured: Sigil writes messages to <data-dir>/outbox.jsonl.
    const outbox = readFileSync(join(sigil.dataDir, 'outbox.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const mail = outbox.filter((m) => JSON.stringify(m).includes('carol@example.com')).at(-1);
    const code = /verification code is:\s+([0-9A-Z]{6,9})\s/.exec(mail.text)![1];
    await page.getByLabel('Code from the email').fill(code);
    await page.getByRole('button', { name: 'Verify code and sign in' }).click();
    await page.getByRole('heading', { name: 'Organization', level: 1 }).waitFor();
    expect(await page.locator('#who').textContent()).toContain('carol');
    expect(await page.locator('#who').textContent()).toContain('email code');
    // The login found carol's sub-organization from the verification token; the pages now show it.
    await expect.poll(() => page.locator('main').textContent()).toContain('carol org');
    const { activities } = await api().getActivities({ organizationId: sub.subOrganizationId, filterByType: ['ACTIVITY_TYPE_STAMP_LOGIN'] });
    expect(activities[0].status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(activities[0].votes[0].userId).toBe(sub.rootUserIds![0]);
    await shoot('organization-email-code');
  });

  it('never sent a private key and logged no page errors (no CSP violations)', () => {
    const all = sentBodies.join('\n');
    expect(all).not.toContain(sigil.root.apiPrivateKey);
    expect(consoleErrors.filter((e) => !/Failed to load resource/.test(e))).toEqual([]);
  });
});
