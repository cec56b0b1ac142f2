// The repositories a request reads through (docs/design.md "The hot path"): the same repositories, with the reads of the
// hot path — the organization, the stamp's API key and owner, IP allowlists, the root quorum,
// policies, signing keys, users — answered from the in-process read cache (src/store/read-cache.ts)
// for the organizations whose generations the request read. Every other method, and every write,
// is the plain repository's. Cached rows are frozen and shared: callers must not change them.
import type { CacheView } from './read-cache.js';
import type { Repositories } from './repositories/index.js';

/** A copy of `repo` whose `overrides` replace methods of the same name (the rest are the repo's own). */
function over<R extends object>(repo: R, overrides: Partial<R>): R {
  return Object.assign(Object.create(repo) as R, overrides);
}

export function cachedRepositories(base: Repositories, view: CacheView): Repositories {
  const { organizations, organizationKeys, apiKeys, ipAllowlists, policies, wallets, privateKeys, users, contractInterfaces, velocityControls, mfaPolicies, webhooks } = base;
  return {
    ...base,
    memo: (organizationId, key, load) => view.memo(organizationId, key, load),
    organizations: over(organizations, {
      get: (id: string) => view.memo(id, 'organization', () => organizations.get(id)),
      rootQuorumUserIds: (id: string) => view.memo(id, 'root-quorum', () => organizations.rootQuorumUserIds(id)),
    }),
    // An organization's wrapped data key never changes once stored (it is destroyed with the
    // organization): the one kept is served; none is looked up again, since the first seal stores one.
    organizationKeys: over(organizationKeys, {
      get: async (id: string) => (await view.memo(id, 'organization-key', () => organizationKeys.get(id))) ?? organizationKeys.get(id),
    }),
    apiKeys: over(apiKeys, {
      // Looked up per organization so each answer is kept under the organization it belongs to.
      findWithOwner: async (organizationIds: string[], publicKey: string) =>
        (await Promise.all(organizationIds.map((id) => view.memo(id, `api-key:${publicKey}`, () => apiKeys.findWithOwner([id], publicKey))))).flat(),
    }),
    ipAllowlists: over(ipAllowlists, {
      forCredential: (organizationId: string, publicKey: string | undefined) =>
        view.memo(organizationId, `ip-allowlists:${publicKey ?? ''}`, () => ipAllowlists.forCredential(organizationId, publicKey)),
    }),
    policies: over(policies, {
      list: (organizationId: string) => view.memo(organizationId, 'policies', () => policies.list(organizationId)),
    }),
    contractInterfaces: over(contractInterfaces, {
      list: (organizationId: string) => view.memo(organizationId, 'contract-interfaces', () => contractInterfaces.list(organizationId)),
    }),
    // Every activity of an organization with controls counts toward them (migration 018's trigger
    // bumps the generation), so the hot path reads the list from memory: none costs no query.
    velocityControls: over(velocityControls, {
      list: (organizationId: string) => view.memo(organizationId, 'velocity-controls', () => velocityControls.list(organizationId)),
    }),
    // Every activity of an organization is checked against its users' MFA policies (migration 019's
    // trigger bumps the generation), so the list is read from memory: none costs no query.
    mfaPolicies: over(mfaPolicies, {
      list: (organizationId: string) => view.memo(organizationId, 'mfa-policies', () => mfaPolicies.list(organizationId)),
    }),
    // Every activity of an organization, or of its sub-organizations, may have an event for these
    // endpoints (migration 023's trigger bumps the generation when one changes), so the request path
    // reads them from memory: an organization without endpoints pays no query for its events.
    webhooks: over(webhooks, {
      activeEndpoints: (organizationId: string) => view.memo(organizationId, 'webhook-endpoints', () => webhooks.activeEndpoints(organizationId)),
    }),
    wallets: over(wallets, {
      get: (organizationId: string, id: string) => view.memo(organizationId, `wallet:${id}`, () => wallets.get(organizationId, id)),
      accountsByAddress: (organizationId: string, address: string) =>
        view.memo(organizationId, `accounts-by-address:${address}`, () => wallets.accountsByAddress(organizationId, address)),
    }),
    privateKeys: over(privateKeys, {
      get: (organizationId: string, id: string) => view.memo(organizationId, `private-key:${id}`, () => privateKeys.get(organizationId, id)),
      findByAddress: (organizationId: string, address: string) =>
        view.memo(organizationId, `private-keys-by-address:${address}`, () => privateKeys.findByAddress(organizationId, address)),
    }),
    users: over(users, {
      get: (organizationId: string, id: string) => view.memo(organizationId, `user:${id}`, () => users.get(organizationId, id)),
      recordRows: (organizationId: string, id: string) => view.memo(organizationId, `user-rows:${id}`, () => users.recordRows(organizationId, id)),
    }),
  };
}
