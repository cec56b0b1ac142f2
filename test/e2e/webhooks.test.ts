// Webhooks (docs/webhooks.md "Webhooks") through the official clients: endpoints created, listed,
// updated and deleted with @turnkey/http's TurnkeyClient; a receiver on loopback (node:http) that checks
// every delivery with @turnkey/crypto's verifyTurnkeyWebhookSignature (Ed25519 via @noble/curves)
// against the key GET /.well-known/sigil.json publishes, and checks order and content; retries after
// failures; an endpoint shown failing and then healthy; the parent/sub-organization routing; filters;
// destinations refused (SSRF) and bad input refused with nothing changed; a SIGKILL between commit and
// delivery losing nothing; and, on PostgreSQL, two processes delivering each event exactly once.
//
// Retries are made fast for the test with SIGIL_WEBHOOK_RETRY_BASE_MS / _MAX_MS and
// SIGIL_WEBHOOK_POLL_MS (docs/webhooks.md "Webhooks"); the receiver's address is allowed with
// SIGIL_WEBHOOK_ALLOWED_HOSTS=127.0.0.1.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyTurnkeyWebhookSignature } from '@turnkey/crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { serve, serveAnother, startSigil, terminate, testDatabaseUrl, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, httpClient, newKey, rawPost } from '../helpers/clients.js';
import { dbSnapshot, expectRefusedUnchanged } from '../helpers/db-snapshot.js';

interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  payload: any;
}

/** A webhook receiver on loopback: records what it accepts; `answer` decides each status code. */
class Receiver {
  server!: Server;
  port = 0;
  readonly accepted: Delivery[] = [];
  /** Every request seen, accepted or not. */
  attempts = 0;
  answer: (path: string, payload: any) => number = () => 200;
  readonly badSignatures: string[] = [];

  constructor(private readonly key: () => { keyId: string; publicKey: string }) {}

  async listen(port = 0): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.attempts++;
        const raw = Buffer.concat(chunks);
        const k = this.key();
        const check = verifyTurnkeyWebhookSignature({ headers: req.headers as Record<string, string>, body: raw, verificationKeys: [{ keyId: k.keyId, publicKey: k.publicKey, algorithm: 'ed25519' }], maxTimestampAgeMs: 5 * 60_000 });
        // And once more with @noble/curves directly over the documented signed input.
        const h = req.headers as Record<string, string>;
        const input = Buffer.concat([Buffer.from(`v1.ed25519.${h['x-turnkey-signature-key-id']}.${h['x-turnkey-timestamp']}.${h['x-turnkey-event-id']}.`), raw]);
        const direct = ed25519.verify(Buffer.from(h['x-turnkey-signature'] ?? '', 'hex'), input, Buffer.from(k.publicKey, 'hex'));
        if (!check.ok || !direct) {
          this.badSignatures.push(JSON.stringify(check));
          res.statusCode = 401;
          res.end();
          return;
        }
        const payload = JSON.parse(raw.toString('utf8'));
        const status = this.answer(req.url ?? '', payload);
        if (status >= 200 && status < 300) this.accepted.push({ path: req.url ?? '', headers: req.headers, body: raw.toString('utf8'), payload });
        res.statusCode = status;
        res.end();
      });
    });
    await new Promise<void>((r) => this.server.listen(port, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  on(path: string): Delivery[] {
    return this.accepted.filter((d) => d.path === path);
  }

  forActivity(path: string, activityId: string): Delivery[] {
    return this.on(path).filter((d) => d.payload.id === activityId);
  }
}

/** Polls until `ready()` holds; the test's own timeout bounds the wait (no timed assertion). */
async function until(ready: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (;;) {
    if (await ready()) return;
    await new Promise((r) => setTimeout(r, 50));
    if (process.env.WEBHOOK_TEST_DEBUG) console.log('waiting for', what);
  }
}

const FAST_RETRIES = {
  SIGIL_WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
  SIGIL_WEBHOOK_RETRY_BASE_MS: '100',
  SIGIL_WEBHOOK_RETRY_MAX_MS: '400',
  SIGIL_WEBHOOK_POLL_MS: '50',
  SIGIL_WEBHOOK_FAILING_AFTER: '2',
  SIGIL_WEBHOOK_TIMEOUT_MS: '5000',
};

let sigil: SigilInstance;
let receiver: Receiver;
let signingKey: { keyId: string; publicKey: string; algorithm: string };

beforeAll(async () => {
  sigil = await startSigil(FAST_RETRIES, { process: true });
  const wellKnown = await (await fetch(`${sigil.url}/.well-known/sigil.json`)).json();
  signingKey = wellKnown.webhookVerificationKey;
  receiver = new Receiver(() => signingKey);
  await receiver.listen();
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await sigil?.stop();
});

const client = () => httpClient(sigil);
const orgId = () => sigil.root.organizationId;
const ts = () => String(Date.now());

async function createEndpoint(url: string, subscriptions: { eventType: string; filtersJson?: string }[], organizationId = orgId(), c = client()) {
  const res = await c.createWebhookEndpoint({ type: 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT', timestampMs: ts(), organizationId, parameters: { name: `hook ${url}`, url, subscriptions } });
  expect(res.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  return res.activity.result.createWebhookEndpointResult!.endpointId;
}

async function createWallet(name: string, c = client(), organizationId = orgId()) {
  const res = await c.createWallet({ type: 'ACTIVITY_TYPE_CREATE_WALLET', timestampMs: ts(), organizationId, parameters: { walletName: name, accounts: [] } });
  return res.activity;
}

describe('the hot path', () => {
  // PostgreSQL counts the request path's statements (the dispatcher has connections of its own). A
  // signature costs one statement to read and one grouped statement to write (docs/operator-guide.md
  // "Running on PostgreSQL / in production"), with or without endpoints: the endpoint lists come from
  // the read cache, and the events join the grouped statement that records the activity.
  it.runIf(testDatabaseUrl())('a signature costs no extra round trip, with or without an endpoint', async () => {
    const trips = async () => Number(/sigil_database_round_trips_total\{[^}]*\} (\d+)/.exec(await (await fetch(`${sigil.url}/metrics`)).text())![1]);
    const wallet = await client().createWallet({
      type: 'ACTIVITY_TYPE_CREATE_WALLET',
      timestampMs: ts(),
      organizationId: orgId(),
      parameters: { walletName: 'hot path', accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }] },
    });
    const address = wallet.activity.result.createWalletResult!.addresses[0];
    let n = 0;
    const sign = () =>
      client().signRawPayload({
        type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
        timestampMs: ts(),
        organizationId: orgId(),
        parameters: { signWith: address, payload: '0x' + (++n).toString(16).padStart(64, '0'), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' },
      });
    await sign();
    let before = await trips();
    for (let i = 0; i < 10; i++) await sign();
    expect((await trips()) - before).toBe(20);

    const endpointId = await createEndpoint(receiver.url('/hot'), [{ eventType: 'ACTIVITY_UPDATES', filtersJson: '{"filterByType":["ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2"]}' }]);
    await sign();
    before = await trips();
    const signed = [];
    for (let i = 0; i < 10; i++) signed.push((await sign()).activity.id);
    expect((await trips()) - before).toBe(20);
    await until(() => signed.every((id) => receiver.forActivity('/hot', id).length === 1), 'the signatures\' events');
    await client().deleteWebhookEndpoint({ type: 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT', timestampMs: ts(), organizationId: orgId(), parameters: { endpointId } });
  });
});

describe('webhook endpoints', () => {
  it('publishes its verification key at /.well-known/sigil.json and as a JWKS', async () => {
    expect(signingKey).toEqual({ keyId: expect.stringMatching(/^sigil-webhook-[0-9a-f]{16}$/), publicKey: expect.stringMatching(/^[0-9a-f]{64}$/), algorithm: 'ed25519' });
    const jwks = await (await fetch(`${sigil.url}/public/v1/discovery/webhooks/jwks`)).json();
    expect(jwks.keys).toEqual([expect.objectContaining({ kid: signingKey.keyId, kty: 'OKP', crv: 'Ed25519', x: Buffer.from(signingKey.publicKey, 'hex').toString('base64url') })]);
  });

  it('refuses private, link-local and plain-http destinations and bad input, changing nothing', async () => {
    const before = await dbSnapshot(sigil);
    const submit = (parameters: unknown) => rawPost(`${sigil.url}/public/v1/submit/create_webhook_endpoint`, activityBody(orgId(), 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT', parameters), { key: sigil.root });
    const sub = [{ eventType: 'ACTIVITY_UPDATES' }];
    const refused: [unknown, RegExp][] = [
      [{ name: 'a', url: 'http://10.1.2.3/hook', subscriptions: sub }, /10\.1\.2\.3, which is not a public address/],
      [{ name: 'a', url: 'http://169.254.169.254/latest/meta-data', subscriptions: sub }, /not a public address/],
      [{ name: 'a', url: `http://127.0.0.2:${receiver.port}/hook`, subscriptions: sub }, /127\.0\.0\.2, which is not a public address/],
      [{ name: 'a', url: 'https://[::1]/hook', subscriptions: sub }, /not a public address/],
      [{ name: 'a', url: 'https://[fe80::1]/hook', subscriptions: sub }, /not a public address/],
      [{ name: 'a', url: 'https://[::ffff:10.0.0.1]/hook', subscriptions: sub }, /not a public address/],
      [{ name: 'a', url: 'http://93.184.215.14/hook', subscriptions: sub }, /must use https/],
      [{ name: 'a', url: 'ftp://127.0.0.1/hook', subscriptions: sub }, /must use https/],
      [{ name: 'a', url: `http://user:pw@127.0.0.1:${receiver.port}/`, subscriptions: sub }, /user info/],
      [{ name: 'a', url: 'not a url', subscriptions: sub }, /not a valid URL/],
      [{ name: ' ', url: receiver.url('/x'), subscriptions: sub }, /name must not be empty/],
      [{ name: 'a', url: receiver.url('/x'), subscriptions: [] }, /at least one event type/],
      [{ name: 'a', url: receiver.url('/x') }, /at least one event type/],
      [{ name: 'a', url: receiver.url('/x'), subscriptions: [{ eventType: 'BALANCE_CONFIRMED_UPDATES' }] }, /not an event type this deployment delivers/],
      [{ name: 'a', url: receiver.url('/x'), subscriptions: [{ eventType: 'ACTIVITY_UPDATES' }, { eventType: 'ACTIVITY_UPDATES' }] }, /subscribed twice/],
      [{ name: 'a', url: receiver.url('/x'), subscriptions: [{ eventType: 'ACTIVITY_UPDATES', filtersJson: '{' }] }, /not valid JSON/],
      [{ name: 'a', url: receiver.url('/x'), subscriptions: [{ eventType: 'ACTIVITY_UPDATES', filtersJson: '{"colour":["red"]}' }] }, /unknown filter "colour"/],
      [{ name: 'a', url: receiver.url('/x'), subscriptions: [{ eventType: 'ACTIVITY_UPDATES', filtersJson: '{"filterByStatus":["DONE"]}' }] }, /"DONE" is not an activity status/],
      [{ name: 'a', url: receiver.url('/x'), subscriptions: [{ eventType: 'SEND_TRANSACTION_STATUS_UPDATES', filtersJson: '{"filterByType":["ACTIVITY_TYPE_CREATE_WALLET"]}' }] }, /takes no filters/],
      [{ name: 'a', subscriptions: sub }, /url/],
    ];
    for (const [parameters, message] of refused) {
      await expectRefusedUnchanged(sigil, before, await submit(parameters), 400, 3, expect.any(String) as unknown as string, message);
    }
    const update = await rawPost(
      `${sigil.url}/public/v1/submit/update_webhook_endpoint`,
      activityBody(orgId(), 'ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT', { endpointId: 'no-such-endpoint', name: 'x' }),
      { key: sigil.root },
    );
    await expectRefusedUnchanged(sigil, before, update, 404, 5, 'NOT_FOUND', /webhook endpoint no-such-endpoint not found/);
    expect((await client().listWebhookEndpoints({ organizationId: orgId() })).webhookEndpoints).toEqual([]);
  });

  it('creates, lists, updates and deletes an endpoint through @turnkey/http', async () => {
    const c = client();
    const id = await createEndpoint(receiver.url('/crud'), [{ eventType: 'ACTIVITY_UPDATES', filtersJson: '{"filterByType":["ACTIVITY_TYPE_CREATE_POLICY_V3"]}' }]);
    const listed = (await c.listWebhookEndpoints({ organizationId: orgId() })).webhookEndpoints;
    expect(listed).toEqual([
      expect.objectContaining({
        endpointId: id,
        organizationId: orgId(),
        url: receiver.url('/crud'),
        name: `hook ${receiver.url('/crud')}`,
        isActive: true,
        subscriptions: [{ eventType: 'ACTIVITY_UPDATES', filtersJson: '{"filterByType":["ACTIVITY_TYPE_CREATE_POLICY_V3"]}', isActive: true }],
        deliveryStatus: expect.objectContaining({ status: 'HEALTHY', consecutiveFailures: 0 }),
      }),
    ]);
    const updated = await c.updateWebhookEndpoint({ type: 'ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT', timestampMs: ts(), organizationId: orgId(), parameters: { endpointId: id, name: 'renamed', isActive: false } });
    expect(updated.activity.result.updateWebhookEndpointResult).toMatchObject({ endpointId: id, webhookEndpoint: { name: 'renamed', isActive: false } });
    const refused = await rawPost(
      `${sigil.url}/public/v1/submit/update_webhook_endpoint`,
      activityBody(orgId(), 'ACTIVITY_TYPE_UPDATE_WEBHOOK_ENDPOINT', { endpointId: id, url: 'https://192.168.1.10/hook' }),
      { key: sigil.root },
    );
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/not a public address/);
    expect((await c.listWebhookEndpoints({ organizationId: orgId() })).webhookEndpoints[0]).toMatchObject({ name: 'renamed', isActive: false, url: receiver.url('/crud') });
    const deleted = await c.deleteWebhookEndpoint({ type: 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT', timestampMs: ts(), organizationId: orgId(), parameters: { endpointId: id } });
    expect(deleted.activity.result.deleteWebhookEndpointResult).toEqual({ endpointId: id });
    expect((await c.listWebhookEndpoints({ organizationId: orgId() })).webhookEndpoints).toEqual([]);
  });
});

describe('ACTIVITY_UPDATES', () => {
  it('delivers every status change, signed, in order, as the activity record', async () => {
    const c = client();
    const endpointId = await createEndpoint(receiver.url('/all'), [{ eventType: 'ACTIVITY_UPDATES' }]);
    // Only rejections, through a filter.
    await createEndpoint(receiver.url('/rejected'), [{ eventType: 'ACTIVITY_UPDATES', filtersJson: '{"filterByStatus":["ACTIVITY_STATUS_REJECTED"]}' }]);

    // Two users whose joint approval creating a wallet needs.
    const alice = newKey();
    const bob = newKey();
    const users = await c.createUsers({
      type: 'ACTIVITY_TYPE_CREATE_USERS_V3',
      timestampMs: ts(),
      organizationId: orgId(),
      parameters: {
        users: [
          { userName: 'alice', apiKeys: [{ apiKeyName: 'a', publicKey: alice.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] },
          { userName: 'bob', apiKeys: [{ apiKeyName: 'b', publicKey: bob.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [], userTags: [] },
        ],
      },
    });
    const [aliceId, bobId] = users.activity.result.createUsersResult!.userIds;
    await c.createPolicy({
      type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
      timestampMs: ts(),
      organizationId: orgId(),
      parameters: {
        policyName: 'alice and bob create wallets together',
        effect: 'EFFECT_ALLOW',
        condition: "activity.type == 'ACTIVITY_TYPE_CREATE_WALLET'",
        consensus: `approvers.filter(u, u.id == '${aliceId}' || u.id == '${bobId}').count() >= 2`,
        notes: '',
      },
    });
    const asAlice = httpClient(sigil, alice);
    const asBob = httpClient(sigil, bob);

    // Approved: CONSENSUS_NEEDED, then COMPLETED.
    const approved = await createWallet('approved together', asAlice);
    expect(approved.status).toBe('ACTIVITY_STATUS_CONSENSUS_NEEDED');
    await asBob.approveActivity({ type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY', timestampMs: ts(), organizationId: orgId(), parameters: { fingerprint: approved.fingerprint } });
    // Rejected: CONSENSUS_NEEDED, then REJECTED.
    const rejected = await createWallet('rejected', asAlice);
    await asBob.rejectActivity({ type: 'ACTIVITY_TYPE_REJECT_ACTIVITY', timestampMs: ts(), organizationId: orgId(), parameters: { fingerprint: rejected.fingerprint } });
    // Failed: approved after the wallet name was taken, so its execution fails.
    const failing = await createWallet('taken meanwhile', asAlice);
    await createWallet('taken meanwhile');
    await asBob.approveActivity({ type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY', timestampMs: ts(), organizationId: orgId(), parameters: { fingerprint: failing.fingerprint } });

    const statuses = (id: string) => receiver.forActivity('/all', id).map((d) => d.payload.status);
    await until(() => statuses(approved.id).length === 2 && statuses(rejected.id).length === 2 && statuses(failing.id).length === 2, 'the status changes');
    expect(statuses(approved.id)).toEqual(['ACTIVITY_STATUS_CONSENSUS_NEEDED', 'ACTIVITY_STATUS_COMPLETED']);
    expect(statuses(rejected.id)).toEqual(['ACTIVITY_STATUS_CONSENSUS_NEEDED', 'ACTIVITY_STATUS_REJECTED']);
    expect(statuses(failing.id)).toEqual(['ACTIVITY_STATUS_CONSENSUS_NEEDED', 'ACTIVITY_STATUS_FAILED']);
    expect(receiver.badSignatures).toEqual([]);

    // The delivered record is the activity as get_activity shows it, with the contract's headers.
    const completed = receiver.forActivity('/all', approved.id)[1];
    const shown = (await c.getActivity({ organizationId: orgId(), activityId: approved.id })).activity;
    expect(completed.payload).toMatchObject({ id: shown.id, organizationId: orgId(), type: 'ACTIVITY_TYPE_CREATE_WALLET', status: 'ACTIVITY_STATUS_COMPLETED', fingerprint: shown.fingerprint, result: shown.result });
    expect(completed.payload.votes.map((v: any) => v.userId).sort()).toEqual([aliceId, bobId].sort());
    expect(completed.headers).toMatchObject({
      'x-turnkey-organization-id': orgId(),
      'x-turnkey-event-type': 'ACTIVITY_UPDATES',
      'x-turnkey-webhook-version': '1',
      'x-turnkey-signature-algorithm': 'ed25519',
      'x-turnkey-signature-version': 'v1',
      'x-turnkey-signature-key-id': signingKey.keyId,
      'content-type': 'application/json',
    });
    // Every event has its own id; the failure carries its reason.
    const ids = receiver.on('/all').map((d) => d.headers['x-turnkey-event-id']);
    expect(new Set(ids).size).toBe(ids.length);
    expect(receiver.forActivity('/all', failing.id)[1].payload.failure.message).toMatch(/taken meanwhile|already/);
    // Activities that finish at once (the votes, the plain create_wallet) arrive as COMPLETED.
    const direct = receiver.on('/all').filter((d) => d.payload.type === 'ACTIVITY_TYPE_APPROVE_ACTIVITY');
    expect(direct.map((d) => d.payload.status)).toEqual(['ACTIVITY_STATUS_COMPLETED', 'ACTIVITY_STATUS_COMPLETED']);

    // The filtered endpoint heard only of the rejection.
    await until(() => receiver.on('/rejected').length >= 1, 'the rejection');
    expect(receiver.on('/rejected').map((d) => [d.payload.id, d.payload.status])).toEqual([[rejected.id, 'ACTIVITY_STATUS_REJECTED']]);

    await c.deleteWebhookEndpoint({ type: 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT', timestampMs: ts(), organizationId: orgId(), parameters: { endpointId } });
  });

  it("sends a sub-organization's events to the parent's endpoints, and a parent's never to the sub-organization's", async () => {
    const c = client();
    const parentHook = await createEndpoint(receiver.url('/parent'), [{ eventType: 'ACTIVITY_UPDATES', filtersJson: '{"filterByType":["ACTIVITY_TYPE_CREATE_WALLET"]}' }]);
    const k = newKey();
    const sub = await c.createSubOrganization({
      type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V7',
      timestampMs: ts(),
      organizationId: orgId(),
      parameters: {
        subOrganizationName: 'webhook sub',
        rootUsers: [{ userName: 'end user', apiKeys: [{ apiKeyName: 'k', publicKey: k.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] }],
        rootQuorumThreshold: 1,
      },
    });
    const subId = sub.activity.result.createSubOrganizationResultV7!.subOrganizationId;
    const asSub = httpClient(sigil, k);
    // A sub-organization may not manage transaction status endpoints (the parent's are those).
    const denied = await rawPost(
      `${sigil.url}/public/v1/submit/create_webhook_endpoint`,
      activityBody(subId, 'ACTIVITY_TYPE_CREATE_WEBHOOK_ENDPOINT', { name: 'tx', url: receiver.url('/sub'), subscriptions: [{ eventType: 'SEND_TRANSACTION_STATUS_UPDATES' }] }),
      { key: k },
    );
    expect(denied.status).toBe(403);
    await createEndpoint(receiver.url('/sub'), [{ eventType: 'ACTIVITY_UPDATES', filtersJson: '{"filterByType":["ACTIVITY_TYPE_CREATE_WALLET"]}' }], subId, asSub);

    const inSub = await createWallet('sub wallet', asSub, subId);
    const inParent = await createWallet('parent wallet');
    await until(() => receiver.forActivity('/parent', inSub.id).length === 1 && receiver.forActivity('/parent', inParent.id).length === 1 && receiver.forActivity('/sub', inSub.id).length === 1, 'routing');
    const viaParent = receiver.forActivity('/parent', inSub.id)[0];
    expect(viaParent.headers['x-turnkey-organization-id']).toBe(orgId());
    expect(viaParent.payload.organizationId).toBe(subId);
    expect(receiver.forActivity('/sub', inSub.id)[0].headers['x-turnkey-organization-id']).toBe(subId);
    // A later event on /sub after the parent's wallet proves the parent's event was never routed there.
    const later = await createWallet('sub wallet 2', asSub, subId);
    await until(() => receiver.forActivity('/sub', later.id).length === 1, 'the later sub-organization event');
    expect(receiver.forActivity('/sub', inParent.id)).toEqual([]);
    await c.deleteWebhookEndpoint({ type: 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT', timestampMs: ts(), organizationId: orgId(), parameters: { endpointId: parentHook } });
  });

  it('retries a failing receiver with backoff, shows the endpoint failing, and delivers once it answers', async () => {
    const c = client();
    let healthy = false;
    const refusedFor = new Map<string, number>();
    receiver.answer = (path, payload) => {
      if (path !== '/flaky') return 200;
      if (!healthy) {
        refusedFor.set(payload.id, (refusedFor.get(payload.id) ?? 0) + 1);
        return 503;
      }
      return 200;
    };
    const endpointId = await createEndpoint(receiver.url('/flaky'), [{ eventType: 'ACTIVITY_UPDATES', filtersJson: '{"filterByType":["ACTIVITY_TYPE_CREATE_WALLET"]}' }]);
    const first = await createWallet('while failing 1');
    const second = await createWallet('while failing 2');
    const status = async () => (await c.listWebhookEndpoints({ organizationId: orgId() })).webhookEndpoints.find((e) => e.endpointId === endpointId) as any;
    await until(async () => (await status()).deliveryStatus.status === 'FAILING' && (refusedFor.get(first.id) ?? 0) >= 3, 'the endpoint to be marked failing');
    const failing = (await status()).deliveryStatus;
    expect(failing).toMatchObject({ status: 'FAILING', lastError: 'the endpoint answered HTTP 503', pendingDeliveries: 2 });
    expect(failing.consecutiveFailures).toBeGreaterThanOrEqual(2);
    const metrics = await (await fetch(`${sigil.url}/metrics`)).text();
    expect(Number(/^sigil_webhook_delivery_failures_total\{[^}]*\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(3);
    expect(metrics).toMatch(/^sigil_webhook_outbox_oldest_age_seconds\{[^}]*\} [0-9.]+$/m);

    healthy = true;
    await until(() => receiver.forActivity('/flaky', first.id).length === 1 && receiver.forActivity('/flaky', second.id).length === 1, 'delivery after recovery');
    await until(async () => (await status()).deliveryStatus.status === 'HEALTHY', 'the endpoint to be healthy again');
    expect((await status()).deliveryStatus).toMatchObject({ consecutiveFailures: 0, pendingDeliveries: 0, deliveredDeliveries: 2 });
    const after = await (await fetch(`${sigil.url}/metrics`)).text();
    expect(Number(/^sigil_webhook_deliveries_total\{[^}]*\} (\d+)$/m.exec(after)?.[1])).toBeGreaterThanOrEqual(2);
    receiver.answer = () => 200;
    await c.deleteWebhookEndpoint({ type: 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT', timestampMs: ts(), organizationId: orgId(), parameters: { endpointId } });
  });
});

describe.runIf(testDatabaseUrl())('two processes on one PostgreSQL', () => {
  it('deliver each event exactly once', async () => {
    const other = await serveAnother(sigil);
    try {
      const counters = async () => {
        let sum = 0;
        for (const s of [sigil, other]) sum += Number(/^sigil_webhook_deliveries_total\{[^}]*\} (\d+)$/m.exec(await (await fetch(`${s.url}/metrics`)).text())?.[1] ?? 0);
        return sum;
      };
      const endpointId = await createEndpoint(receiver.url('/once'), [{ eventType: 'ACTIVITY_UPDATES', filtersJson: '{"filterByType":["ACTIVITY_TYPE_CREATE_WALLET"]}' }]);
      const before = await counters();
      const N = 24;
      const activities = await Promise.all(Array.from({ length: N }, (_, i) => createWallet(`once ${i}`, httpClient(i % 2 ? other : sigil))));
      await until(async () => (await counters()) - before >= N, 'both processes to count the deliveries');
      expect((await counters()) - before).toBe(N);
      for (const a of activities) expect(receiver.forActivity('/once', a.id)).toHaveLength(1);
      expect(receiver.on('/once')).toHaveLength(N);
      await client().deleteWebhookEndpoint({ type: 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT', timestampMs: ts(), organizationId: orgId(), parameters: { endpointId } });
    } finally {
      await other.stop();
    }
  });
});

describe('durability', () => {
  it('loses nothing when the process is killed between commit and delivery', async () => {
    const down = new Receiver(() => signingKey);
    await down.listen();
    const port = down.port;
    const endpointId = await createEndpoint(down.url('/durable'), [{ eventType: 'ACTIVITY_UPDATES', filtersJson: '{"filterByType":["ACTIVITY_TYPE_CREATE_WALLET"]}' }]);
    await down.close();
    // Committed while the receiver is down: the attempts fail and the event waits in the outbox.
    const wallet = await createWallet('survives SIGKILL');
    const exited = new Promise((r) => sigil.process.once('exit', r));
    sigil.process.kill('SIGKILL');
    await exited;

    const restarted = serve(sigil.dataDir, sigil.env);
    const { url } = await restarted.ready;
    try {
      const back = new Receiver(() => signingKey);
      await back.listen(port);
      try {
        await until(() => back.forActivity('/durable', wallet.id).length >= 1, 'the event after the restart');
        expect(back.forActivity('/durable', wallet.id)[0].payload.status).toBe('ACTIVITY_STATUS_COMPLETED');
        expect(back.badSignatures).toEqual([]);
      } finally {
        await back.close();
      }
      const c = httpClient({ ...sigil, url });
      await c.deleteWebhookEndpoint({ type: 'ACTIVITY_TYPE_DELETE_WEBHOOK_ENDPOINT', timestampMs: ts(), organizationId: orgId(), parameters: { endpointId } });
    } finally {
      await terminate(restarted.child);
    }
  });
});
