// Resource quotas (docs/reference/api.md "Limits", from the reference
// service's docs/reference/api.md "Limits"; docs/reference/organizations.md "Users and credentials" for the per-user credential limits and the
// eviction of expiring keys). Every documented limit is declared here once; the create paths call
// `reserve` (per organization) or, for API keys per user, `enforceApiKeyLimits` (identity/api-keys.ts,
// beside the expiry it evicts by) before they write.
//
//  - A refusal is 429 / gRPC 8 with turnkeyErrorCode RATE_LIMIT_EXCEEDED (of the reference's codes
//    the one for a ResourceExhausted that is not about signing) and the documented message where one
//    exists (`user has exceeded maximum long-lived api keys`, `… short-lived api keys`,
//    `… authenticators`). The reference documents no message for the organization limits; ours
//    follow the same shape: `organization has exceeded maximum users: …`.
//  - Counts are kept per organization by triggers (migration 017) and read inside the activity's
//    transaction with the counter's row locked (QuotasRepo.lockCount), so two concurrent creates on
//    PostgreSQL cannot both pass on the same count, and nothing counts every row of a table; the
//    refused activity's transaction rolls back and nothing is written.
//  - "Tags 100 / 10" is applied to user tags and private key tags separately (each kind up to the
//    limit), the reading that never refuses what the reference service would accept.
//  - Expiring API keys beyond 10 are not refused: making room deletes expired keys first, then the
//    oldest (never the key the request is stamped with), as docs/reference/api.md "Limits" describes
//    (docs/reference/policies.md chooses this over the 429 docs/reference/api.md "Errors" still lists; that 429 is kept for
//    the one case eviction cannot help: more than 10 expiring keys in one request).
import { SigilError } from '../../errors/errors.js';
import type { OrganizationRow, QuotaTable, Repositories } from '../../store/index.js';
// api-keys.ts calls back into this module from insertApiKeys; only functions cross, so the cycle is harmless.

export interface OrganizationQuota {
  table: QuotaTable;
  /** Plural noun for messages. */
  noun: string;
  /** Limit for a top-level organization and for a sub-organization. */
  parent: number;
  subOrganization: number;
}

/** Per-organization limits (docs/reference/api.md "Limits": "imposed globally and cannot be increased"). */
export const ORGANIZATION_QUOTAS = {
  users: { table: 'users', noun: 'users', parent: 100, subOrganization: 100 },
  policies: { table: 'policies', noun: 'policies', parent: 100, subOrganization: 100 },
  wallets: { table: 'wallets', noun: 'wallets', parent: 100, subOrganization: 100 },
  privateKeys: { table: 'private_keys', noun: 'private keys', parent: 1000, subOrganization: 1000 },
  userTags: { table: 'user_tags', noun: 'user tags', parent: 100, subOrganization: 10 },
  privateKeyTags: { table: 'private_key_tags', noun: 'private key tags', parent: 100, subOrganization: 10 },
  // Not in docs/reference/api.md "Limits" (secrets came later); as many as private keys, the material they sit beside.
  secrets: { table: 'secrets', noun: 'secrets', parent: 1000, subOrganization: 1000 },
} as const satisfies Record<string, OrganizationQuota>;

export type OrganizationQuotaName = keyof typeof ORGANIZATION_QUOTAS;

/** Per-user credential limits (docs/reference/api.md "Limits"; docs/reference/sessions.md). */
export const MAX_LONG_LIVED_API_KEYS_PER_USER = 10;
export const MAX_EXPIRING_API_KEYS_PER_USER = 10;
export const MAX_AUTHENTICATORS_PER_USER = 10;
export const MAX_OAUTH_PROVIDERS_PER_USER = 10;

export const LONG_LIVED_API_KEYS_MESSAGE = 'user has exceeded maximum long-lived api keys';
export const SHORT_LIVED_API_KEYS_MESSAGE = 'user has exceeded maximum short-lived api keys';

/**
 * Operator overrides (SIGIL_QUOTAS), set once at start-up by the composition root: a self-hosted
 * deployment may need more than the reference service's fixed limits (a custody desk with thousands
 * of wallets). An override applies to organizations and sub-organizations alike.
 */
let overrides: Partial<Record<OrganizationQuotaName, number>> = {};

export function configureQuotas(limits: Partial<Record<OrganizationQuotaName, number>>): void {
  for (const name of Object.keys(limits)) {
    if (!(name in ORGANIZATION_QUOTAS)) throw new Error(`unknown quota ${name}: one of ${Object.keys(ORGANIZATION_QUOTAS).join(', ')}`);
  }
  overrides = { ...limits };
}

function limitOf(quota: OrganizationQuota, organization: OrganizationRow, name: OrganizationQuotaName): number {
  return overrides[name] ?? (organization.parent_organization_id ? quota.subOrganization : quota.parent);
}

/**
 * Refuses the activity when `adding` more of `name` would take the organization over its limit.
 * Must run inside the activity's transaction, before the rows are written; the organization's row
 * stays locked until commit so a concurrent create counts after this one's rows exist.
 */
export async function reserve(
  repos: Repositories,
  organization: OrganizationRow,
  name: OrganizationQuotaName,
  adding: number,
  opts: {
    /**
     * The organization was created by this transaction (create_sub_organization): it holds nothing
     * yet and no other transaction can see it, so there is no count to read or lock. Skipping the
     * counter's row lock also spares it a row version written at 0 and again at 1 (small rows).
     */
    newOrganization?: boolean;
  } = {},
): Promise<void> {
  if (adding <= 0) return;
  const quota = ORGANIZATION_QUOTAS[name];
  const limit = limitOf(quota, organization, name);
  const has = opts.newOrganization ? 0 : await repos.quotas.lockCount(quota.table, organization.id);
  if (has + adding > limit) {
    const holder = organization.parent_organization_id ? 'a sub-organization' : 'an organization';
    throw new SigilError(
      'RATE_LIMIT_EXCEEDED',
      `organization has exceeded maximum ${quota.noun}: ${holder} holds at most ${limit} ${quota.noun} (has ${has}, adding ${adding})`,
    );
  }
}
