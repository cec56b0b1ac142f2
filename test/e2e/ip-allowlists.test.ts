// IP allowlists through @turnkey/sdk-server (docs/reference/organizations.md "IP allowlists"): an
// enabled organization list that leaves out 127.0.0.1 refuses requests with a clear 403 naming the
// address, a rule for 127.0.0.1/32 lets them in, an API key's own list overrides the organization's,
// removal restores access; a change that would lock out its own request is refused; sub-organization
// users are not evaluated; X-Forwarded-For counts only from SIGIL_TRUSTED_PROXIES. The root key always
// keeps an allowed path, so the suite never locks itself out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateP256KeyPair } from '@turnkey/crypto';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { activityBody, rawPost, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { dbSnapshot } from '../helpers/db-snapshot.js';

let sigil: SigilInstance;
let api: ReturnType<typeof sdkServerClient>;
let org: string;
let root: KeyPair;
/** A second API key of the root user: the one that gets locked out. */
let second: KeyPair;

function newKey(): KeyPair {
  const k = generateP256KeyPair();
  return { apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey };
}

beforeAll(async () => {
  sigil = await startSigil();
  api = sdkServerClient(sigil);
  org = sigil.root.organizationId;
  root = sigil.root;
  second = newKey();
  await api.createApiKeys({ userId: sigil.root.userId, apiKeys: [{ apiKeyName: 'second', publicKey: second.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }] });
});
afterAll(async () => {
  await sigil?.stop();
});

const whoami = (key: KeyPair, opts: { url?: string; organizationId?: string; headers?: Record<string, string> } = {}) =>
  rawPost(`${opts.url ?? sigil.url}/public/v1/query/whoami`, { organizationId: opts.organizationId ?? org }, { key, headers: opts.headers });

function expectDenied(res: { status: number; body: any }, address: string, scope: RegExp) {
  expect(res.status).toBe(403);
  expect(res.body).toEqual({
    code: 7,
    message: expect.stringMatching(new RegExp(`^request denied by IP allowlist: IP address ${address.replace(/\./g, '\\.')} is not allowed by the IP allowlist of ${scope.source}`)),
    details: [{ '@type': 'type.googleapis.com/errors.v1.TurnkeyErrorDetail', turnkeyErrorCode: 'FORBIDDEN' }],
  });
}

describe('IP allowlists', () => {
  it('allows everything while no list exists, and shows an empty disabled list', async () => {
    expect(await api.getIpAllowlist({})).toMatchObject({ allowlist: { organizationId: org, rules: [], enabled: false, onEvaluationError: 'DENY' } });
    expect((await whoami(second)).status).toBe(200);
  });

  it('refuses a list that would lock out the request setting it, changing nothing', async () => {
    const before = await dbSnapshot(sigil);
    await expect(api.setIpAllowlist({ enabled: true, rules: [{ cidr: '10.0.0.0/24' }] })).rejects.toThrow(
      /after this change the request making it would be denied \(IP address 127\.0\.0\.1 is not allowed by the IP allowlist of organization/,
    );
    expect(await dbSnapshot(sigil)).toEqual(before);
  });

  it('enforces the organization list, lets a key list override it, and restores access on removal', async () => {
    // The root key gets its own list first (inert until the organization list is enabled).
    await api.setIpAllowlist({ publicKey: root.apiPublicKey, rules: [{ cidr: '127.0.0.1/32', label: 'test runner' }] });
    const set = await api.setIpAllowlist({
      enabled: true,
      rules: [
        { cidr: '10.1.2.3/24', label: 'office' },
        { cidr: '2001:DB8:0:0::1/48', label: 'v6 office' },
        { cidr: '10.1.2.0/24', label: 'duplicate' },
      ],
    });
    expect(set.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    expect(set.activity.type).toBe('ACTIVITY_TYPE_SET_IP_ALLOWLIST');
    const { allowlist } = await api.getIpAllowlist({});
    expect(allowlist).toMatchObject({ organizationId: org, enabled: true, onEvaluationError: 'DENY' });
    expect(allowlist.rules.map((r) => [r.cidr, r.label])).toEqual([
      ['10.1.2.0/24', 'office'],
      ['2001:db8::/48', 'v6 office'],
    ]);
    expect(allowlist.rules[0].createdAt).toMatch(/^\d{13}$/);

    // The second key is refused by the organization list, through the SDK and on the wire; the root key's own list lets it in.
    expectDenied(await whoami(second), '127.0.0.1', new RegExp(`organization ${org}`));
    await expect(sdkServerClient(sigil, second).getWhoami({})).rejects.toThrow(/Turnkey error 7: request denied by IP allowlist: IP address 127\.0\.0\.1 is not allowed/);
    const before = await dbSnapshot(sigil);
    const submit = await rawPost(
      `${sigil.url}/public/v1/submit/create_user_tag`,
      activityBody(org, 'ACTIVITY_TYPE_CREATE_USER_TAG', { userTagName: 'blocked', userIds: [] }),
      { key: second },
    );
    expectDenied(submit, '127.0.0.1', new RegExp(`organization ${org}`));
    expect(await dbSnapshot(sigil)).toEqual(before);
    expect((await whoami(root)).status).toBe(200);

    // Including 127.0.0.1/32 in the organization list lets the second key in.
    await api.setIpAllowlist({ enabled: true, rules: [{ cidr: '10.1.2.0/24', label: 'office' }, { cidr: '127.0.0.1' }] });
    expect((await api.getIpAllowlist({})).allowlist.rules.map((r) => r.cidr)).toEqual(['10.1.2.0/24', '127.0.0.1/32']);
    expect((await api.getIpAllowlist({})).allowlist.rules[0].createdAt).toBe(allowlist.rules[0].createdAt);
    expect((await whoami(second)).status).toBe(200);

    // A key's own list overrides the organization list for that key.
    await api.setIpAllowlist({ publicKey: second.apiPublicKey, rules: [{ cidr: '192.0.2.0/24' }] });
    expect((await api.getIpAllowlist({ publicKey: second.apiPublicKey })).allowlist).toEqual({
      organizationId: org,
      publicKey: second.apiPublicKey,
      rules: [{ cidr: '192.0.2.0/24', label: '', createdAt: expect.stringMatching(/^\d{13}$/) }],
      onEvaluationError: 'DENY',
    });
    expectDenied(await whoami(second), '127.0.0.1', new RegExp(`API key ${second.apiPublicKey}`));

    // Removing the key's list puts the key back under the organization list.
    const removed = await api.removeIpAllowlist({ publicKey: second.apiPublicKey });
    expect(removed.activity.type).toBe('ACTIVITY_TYPE_REMOVE_IP_ALLOWLIST');
    expect((await api.getIpAllowlist({ publicKey: second.apiPublicKey })).allowlist.rules).toEqual([]);
    expect((await whoami(second)).status).toBe(200);

    // Back to a list without 127.0.0.1: refused again; disabling the list lets everything in.
    await api.setIpAllowlist({ enabled: true, rules: [{ cidr: '10.1.2.0/24' }] });
    expectDenied(await whoami(second), '127.0.0.1', /organization/);
    await api.setIpAllowlist({ enabled: false, rules: [{ cidr: '10.1.2.0/24' }] });
    expect((await whoami(second)).status).toBe(200);
    await api.setIpAllowlist({ enabled: true, rules: [{ cidr: '10.1.2.0/24' }] });
    expectDenied(await whoami(second), '127.0.0.1', /organization/);

    // Removing the organization list restores access from everywhere.
    await api.removeIpAllowlist({});
    expect((await api.getIpAllowlist({})).allowlist).toMatchObject({ rules: [], enabled: false });
    expect((await whoami(second)).status).toBe(200);
    // The root key's own list is inert without an organization list; removing it is fine too.
    await api.removeIpAllowlist({ publicKey: root.apiPublicKey });
  });

  it('restricts parent credentials in sub-organizations but never the sub-organization’s own users', async () => {
    const subKey = newKey();
    const sub = await api.createSubOrganization({
      subOrganizationName: 'allowlist sub',
      rootUsers: [{ userName: 'end user', apiKeys: [{ apiKeyName: 'k', publicKey: subKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
    });
    const subId = sub.subOrganizationId;
    await api.setIpAllowlist({ publicKey: root.apiPublicKey, rules: [{ cidr: '127.0.0.0/24' }] });
    await api.setIpAllowlist({ enabled: true, rules: [{ cidr: '198.51.100.0/24' }] });
    try {
      expect((await whoami(subKey, { organizationId: subId })).status).toBe(200);
      expectDenied(await whoami(second, { organizationId: subId }), '127.0.0.1', new RegExp(`organization ${org}`));
      expect((await whoami(root, { organizationId: subId })).status).toBe(200);
      await expect(sdkServerClient(sigil, subKey, subId).setIpAllowlist({ enabled: true, rules: [] })).rejects.toThrow(
        /IP allowlists are set on the top-level organization only/,
      );
    } finally {
      await api.removeIpAllowlist({});
      await api.removeIpAllowlist({ publicKey: root.apiPublicKey });
    }
    expect((await whoami(second, { organizationId: subId })).status).toBe(200);
  });

  it('refuses bad input with clear errors, changing nothing', async () => {
    const before = await dbSnapshot(sigil);
    await expect(api.setIpAllowlist({ enabled: true, rules: [{ cidr: '127.0.0.1/32' }, { cidr: '10.0.0.256/24' }] })).rejects.toThrow(
      /invalid CIDR at rules\[1\]: "10\.0\.0\.256\/24" is not an IPv4 or IPv6 CIDR block/,
    );
    await expect(api.setIpAllowlist({ enabled: true, rules: [{ cidr: '127.0.0.0/8' }] })).rejects.toThrow(/rules\[0\].*too broad; the broadest block allowed is \/20 for IPv4 and \/48 for IPv6/);
    await expect(api.setIpAllowlist({ enabled: true, rules: [{ cidr: '2001:db8::/32' }] })).rejects.toThrow(/too broad/);
    const eleven = Array.from({ length: 11 }, (_, i) => ({ cidr: `10.0.${i}.0/24` }));
    await expect(api.setIpAllowlist({ enabled: true, rules: [{ cidr: '127.0.0.1/32' }, ...eleven.slice(0, 10)] })).rejects.toThrow(/at most 10 IPv4 CIDR blocks/);
    await expect(api.setIpAllowlist({ rules: [{ cidr: '127.0.0.1/32' }] })).rejects.toThrow(/enabled is required for the organization-level allowlist/);
    await expect(api.setIpAllowlist({ publicKey: second.apiPublicKey, enabled: true, rules: [] })).rejects.toThrow(/enabled applies to the organization-level allowlist only/);
    await expect(api.setIpAllowlist({ publicKey: newKey().apiPublicKey, rules: [] })).rejects.toThrow(/api key not found/);
    await expect(api.setIpAllowlist({ enabled: false, rules: [], onEvaluationError: 'MAYBE' })).rejects.toThrow(/invalid onEvaluationError "MAYBE": use ALLOW or DENY/);
    expect(await dbSnapshot(sigil)).toEqual(before);
  });

  it('believes X-Forwarded-For only from trusted proxies', async () => {
    await api.setIpAllowlist({ publicKey: root.apiPublicKey, rules: [{ cidr: '127.0.0.1/32' }] });
    await api.setIpAllowlist({ enabled: true, rules: [{ cidr: '203.0.113.0/24' }] });
    try {
      // Not configured: the header is ignored and the connecting address decides.
      expectDenied(await whoami(second, { headers: { 'X-Forwarded-For': '203.0.113.7' } }), '127.0.0.1', /organization/);
    } finally {
      await api.removeIpAllowlist({});
      await api.removeIpAllowlist({ publicKey: root.apiPublicKey });
    }

    const proxied = await startSigil({ SIGIL_TRUSTED_PROXIES: '127.0.0.1' });
    const creds = proxied.root;
    const url = proxied.url;
    try {
      const papi = sdkServerClient(proxied);
      const other = newKey();
      await papi.createApiKeys({ userId: creds.userId, apiKeys: [{ apiKeyName: 'other', publicKey: other.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }] });
      await papi.setIpAllowlist({ publicKey: creds.apiPublicKey, rules: [{ cidr: '127.0.0.1/32' }] });
      await papi.setIpAllowlist({ enabled: true, rules: [{ cidr: '203.0.113.0/24' }] });
      const via = (xff: string) => whoami(other, { url, organizationId: creds.organizationId, headers: { 'X-Forwarded-For': xff } });
      expect((await via('203.0.113.7')).status).toBe(200);
      expectDenied(await via('198.51.100.1'), '198.51.100.1', new RegExp(`organization ${creds.organizationId}`));
      // Without the header the proxy's own address is the client.
      expectDenied(await whoami(other, { url, organizationId: creds.organizationId }), '127.0.0.1', /organization/);
      // An address that cannot be evaluated follows onEvaluationError (DENY unless set to ALLOW).
      const garbage = await via('not-an-address');
      expect(garbage.status).toBe(403);
      expect(garbage.body.message).toMatch(/client address "not-an-address" cannot be evaluated against the IP allowlist/);
      await papi.setIpAllowlist({ enabled: true, rules: [{ cidr: '203.0.113.0/24' }], onEvaluationError: 'ALLOW' });
      expect((await via('not-an-address')).status).toBe(200);
    } finally {
      await proxied.stop();
    }
  });
});
