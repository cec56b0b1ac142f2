// The MFA flow end to end with a passkey from the dashboard (docs/mfa.md "MFA policies";
// docs/operator-guide.md "Dashboard"), in Debian's Chromium with a DevTools virtual authenticator
// against a real `sigil serve`: the root user signs in with an API key, adds a passkey, signs out and
// back in with it; an MFA policy asks for a passkey on signing; a sign_raw_payload stamped with the
// root's API key (@turnkey/http) waits in ACTIVITY_STATUS_AUTHENTICATORS_NEEDED and shows on the Pending
// page as such; the signed-in user approves it there, the approval stamped by the passkey, and the API
// then reads it completed with a signature and its MFA satisfied by that passkey. Photographed into
// test-results/screenshots/.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { TurnkeyClient } from '@turnkey/http';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { ROOT } from '../helpers/sigil.js';
import { go, startDashboard, type DashboardSigil } from '../helpers/dashboard.js';

const SHOTS = join(ROOT, 'test-results', 'screenshots');
const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } as const;

let sigil: DashboardSigil;
let browser: Browser;
let page: Page;
let origin: string;
let consoleErrors: string[];
let client: TurnkeyClient;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  ({ sigil, browser, page, origin, consoleErrors } = await startDashboard());
  client = new TurnkeyClient({ baseUrl: sigil.url }, new ApiKeyStamper({ apiPublicKey: sigil.root.apiPublicKey, apiPrivateKey: sigil.root.apiPrivateKey }));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await sigil?.stop();
});

const now = () => String(Date.now());

describe('MFA in the dashboard', () => {
  it('an activity waiting for its submitter\'s passkey is approved from the Pending page with the passkey, and runs', async () => {
    const org = sigil.root.organizationId;
    // Sign in with the API key, add a passkey, sign back in with it (the dashboard's passkey session).
    await page.goto(`${origin}/?organizationId=${org}`);
    await page.getByLabel('Public key (compressed hex)').fill(sigil.root.apiPublicKey);
    await page.getByLabel('Private key (hex)').fill(sigil.root.apiPrivateKey);
    await page.getByRole('button', { name: 'Sign in with API key' }).click();
    await page.getByRole('heading', { name: 'Organization', level: 1 }).waitFor();
    await go(page, '#/users', 'Users');
    await page.getByRole('button', { name: 'Add passkey' }).click();
    await expect.poll(() => page.locator('#flash').textContent()).toContain('Passkey added');
    const { authenticators } = await client.getAuthenticators({ organizationId: org, userId: sigil.root.userId });
    expect(authenticators).toHaveLength(1);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in with passkey' }).click();
    await page.getByRole('heading', { name: 'Organization', level: 1 }).waitFor();
    expect(await page.locator('#who').textContent()).toContain('passkey');

    // Signing needs a passkey; the same user signs with their API key.
    const wallet = await client.createWallet({ type: 'ACTIVITY_TYPE_CREATE_WALLET', timestampMs: now(), organizationId: org, parameters: { walletName: 'Treasury', accounts: [ETH] } });
    const address = wallet.activity.result.createWalletResult!.addresses[0];
    const created = await client.createMfaPolicy({
      type: 'ACTIVITY_TYPE_CREATE_MFA_POLICY',
      timestampMs: now(),
      organizationId: org,
      parameters: { userId: sigil.root.userId, mfaPolicyName: 'signing needs a passkey', condition: "activity.action == 'SIGN'", requiredAuthenticationMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_PASSKEY' }] }], order: 0 },
    });
    const mfaPolicyId = created.activity.result.createMfaPolicyResult!.mfaPolicyId;
    const submitted = await client.signRawPayload({
      type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
      timestampMs: now(),
      organizationId: org,
      parameters: { signWith: address, payload: '0x' + '42'.repeat(32), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' },
    });
    expect(submitted.activity.status).toBe('ACTIVITY_STATUS_AUTHENTICATORS_NEEDED');

    await go(page, '#/pending', 'Pending');
    const card = page.locator(`.pending-card[data-activity-id="${submitted.activity.id}"]`);
    await card.waitFor();
    expect(await card.locator('.badge').textContent()).toBe('Authenticators needed');
    expect(await card.textContent()).toContain('Submitted by Root user');
    await page.screenshot({ path: join(SHOTS, 'pending-mfa-1280.png'), fullPage: true });
    await card.getByRole('button', { name: /^Approve/ }).click();
    await expect.poll(() => page.locator('#flash').textContent()).toContain('the activity is now completed');
    await page.locator('.empty').waitFor();

    const done = (await client.getActivity({ organizationId: org, activityId: submitted.activity.id })).activity;
    expect(done.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(done.result.signRawPayloadResult!.r).toMatch(/^[0-9a-f]{64}$/);
    const { mfaStatuses } = await client.getMfaStatus({ organizationId: org, activityId: submitted.activity.id });
    expect(mfaStatuses).toEqual([
      {
        mfaPolicyId,
        userId: sigil.root.userId,
        satisfied: true,
        satisfiedMethods: [{ type: 'AUTHENTICATION_TYPE_PASSKEY', id: authenticators[0].authenticatorId }],
        requiredMethods: [{ any: [{ type: 'AUTHENTICATION_TYPE_PASSKEY' }] }],
      },
    ]);
    // The approval itself was stamped by the passkey (X-Stamp-Webauthn).
    const { activities } = await client.getActivities({ organizationId: org, filterByType: ['ACTIVITY_TYPE_APPROVE_ACTIVITY'] });
    expect(activities).toHaveLength(1);
    expect(activities[0].votes[0].scheme).toBe('SIGNATURE_SCHEME_TK_API_WEBAUTHN');
    expect(consoleErrors).toEqual([]);
  });
});
