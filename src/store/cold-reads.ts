// The cold path's read (docs/design.md "The cold path (one sub-organization per end user)"): a
// request from an organization this process has not cached would otherwise load what
// authentication, policy and signing need one statement at a time (the organization, the stamp's
// API key and owner here and in the parent, IP allowlists, policies, velocity controls, the root
// quorum, MFA policies, webhook endpoints, the caller's user record, the account the request signs
// with and the organization's wrapped data key: about eighteen statements). On PostgreSQL they are
// one LATERAL branch per cold request of the statement every request already makes (the hot reads,
// src/store/hot-reads.ts), returned with the organization's (and its parent's) cache generation,
// read in one snapshot; on SQLite, where a statement costs microseconds and no round
// trip but the query builder's per-call work costs more than the statement, it is a set of
// statements prepared once and run in one read transaction. src/store/read-cache.ts keeps the
// values under the same keys the cached repositories (cached-repositories.ts) read, and only while
// the generation they were read at is the one the request observed, so nothing is served that the
// hot path would not have served. The cache stays bounded whatever the number of organizations.
import type { RawDb, Statement } from './raw.js';
import { statement } from './raw.js';
import type { OrganizationKeyRow } from './repositories/organization-keys.js';
import type { WalletAccountRow } from './repositories/wallets.js';
import type { OrganizationRow } from './repositories/organizations.js';
import type { ApiKeyRow } from './repositories/api-keys.js';
import { OWNER_COLUMNS, splitOwner, type OwnerColumns, type UserRecordRows, type UserRow } from './repositories/users.js';

/** What one cold read found: the organization and, per organization, cache values by key at a generation. */
export interface ColdReadResult {
  organization: OrganizationRow | undefined;
  /** For the organization and its parent: the generation read with the values, and the values. */
  seeds: { organizationId: string; generation: number; values: [string, unknown][] }[];
}

// The owner as the stamp lookup selects it (OWNER_COLUMNS), in that order.
const OWNER = `json_build_object(${OWNER_COLUMNS.map((c) => {
  const column = c.slice('users.'.length, c.indexOf(' '));
  return `'${column}', u.${column}`;
}).join(', ')})`;

// Each branch answers one value as JSON text, lists aggregated in the order the repository reads
// them, so the result is the repository's own answer. It runs once per cold request of a batch, as a
// LATERAL subquery of the hot reads' statement (src/store/hot-reads.ts) over `c`: c.corg the
// organization, c.ckey the stamp's public key ('' for a passkey stamp: no API key has it), c.caddr the
// address the activity signs with ('' when it names none: no account has it). The names are unlike
// any table alias below: a bare name (`row_to_json(k)`) resolves to an outer column of that name
// before it means the alias's whole row.
export const POSTGRES_COLD_LATERAL = `WITH o AS (SELECT * FROM organizations WHERE id = c.corg)
   SELECT 'organization' AS k, row_to_json(o)::text AS v FROM o
   UNION ALL SELECT 'generation', COALESCE((SELECT generation FROM cache_generations WHERE organization_id = c.corg), 0)::text
   UNION ALL SELECT 'parent-generation', COALESCE(g.generation, 0)::text
     FROM o LEFT JOIN cache_generations g ON g.organization_id = o.parent_organization_id WHERE o.parent_organization_id IS NOT NULL
   UNION ALL SELECT 'api-keys', COALESCE(json_agg(json_build_object('key', row_to_json(k), 'user', ${OWNER})), '[]')::text
     FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.public_key = c.ckey AND k.organization_id = c.corg
   UNION ALL SELECT 'parent-api-keys', COALESCE(json_agg(json_build_object('key', row_to_json(k), 'user', ${OWNER})), '[]')::text
     FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.public_key = c.ckey AND k.organization_id = (SELECT parent_organization_id FROM o)
   UNION ALL SELECT 'user-rows', COALESCE(json_agg(json_build_object(
       'user', row_to_json(u),
       'apiKeys', (SELECT COALESCE(json_agg(x ORDER BY x.created_at, x.id), '[]') FROM api_keys x WHERE x.organization_id = c.corg AND x.user_id = u.id),
       'authenticators', (SELECT COALESCE(json_agg(x ORDER BY x.created_at, x.id), '[]') FROM authenticators x WHERE x.organization_id = c.corg AND x.user_id = u.id),
       'tagIds', (SELECT COALESCE(json_agg(a.tag_id ORDER BY t.created_at, t.id), '[]') FROM user_tag_assignments a JOIN user_tags t ON t.id = a.tag_id WHERE a.user_id = u.id),
       'oauthProviders', (SELECT COALESCE(json_agg(x ORDER BY x.created_at, x.id), '[]') FROM oauth_providers x WHERE x.organization_id = c.corg AND x.user_id = u.id))), '[]')::text
     FROM users u WHERE u.organization_id = c.corg AND u.id IN (SELECT user_id FROM api_keys WHERE public_key = c.ckey AND organization_id = c.corg)
   UNION ALL SELECT 'ip-allowlists', COALESCE(json_agg(a), '[]')::text FROM ip_allowlists a WHERE organization_id = c.corg AND public_key IN ('', c.ckey)
   UNION ALL SELECT 'policies', COALESCE(json_agg(p ORDER BY p.created_at, p.id), '[]')::text FROM policies p WHERE organization_id = c.corg
   UNION ALL SELECT 'velocity-controls', COALESCE(json_agg(v ORDER BY v.created_at, v.id), '[]')::text FROM velocity_controls v WHERE organization_id = c.corg
   UNION ALL SELECT 'root-quorum', COALESCE(json_agg(q.user_id ORDER BY q.user_id), '[]')::text FROM root_quorum_members q WHERE organization_id = c.corg
   UNION ALL SELECT 'mfa-policies', COALESCE(json_agg(m ORDER BY m.user_id, m.order_index), '[]')::text FROM mfa_policies m WHERE organization_id = c.corg
   UNION ALL SELECT 'webhook-endpoints', COALESCE(json_agg(json_build_object('id', w.id, 'organization_id', w.organization_id, 'subscriptions', w.subscriptions) ORDER BY w.created_at, w.id), '[]')::text
     FROM webhook_endpoints w WHERE organization_id = c.corg AND is_active = 1
   UNION ALL SELECT 'accounts', COALESCE(json_agg(x ORDER BY x.created_at, x.id), '[]')::text FROM wallet_accounts x WHERE organization_id = c.corg AND address = c.caddr
   UNION ALL SELECT 'organization-key', row_to_json(x)::text FROM organization_keys x WHERE organization_id = c.corg`;

/** One cold request of a PostgreSQL batch as POSTGRES_COLD_LATERAL reads it (`k`: its place in the batch). */
export const postgresColdParameter = (k: number, request: ColdReadRequest) => ({ ck: k, corg: request.organizationId, ckey: request.publicKey ?? '', caddr: request.address ?? '' });

/** What a cold read is asked for: the organization, the stamp's API key (if one), the address it signs with (if any). */
export interface ColdReadRequest {
  organizationId: string;
  publicKey?: string;
  address?: string;
}

export interface ColdReads {
  /** What the request needs; undefined where not worth reading ahead. */
  read(request: ColdReadRequest): Promise<ColdReadResult | undefined>;
}

/** The values one cold read found, by the names the statements give them (already parsed). */
interface Found {
  organization?: OrganizationRow;
  generation: number;
  parentGeneration?: number;
  apiKeys: { key: ApiKeyRow; user: UserRow }[];
  parentApiKeys: { key: ApiKeyRow; user: UserRow }[];
  userRows: UserRecordRows[];
  ipAllowlists: unknown[];
  policies: unknown[];
  velocityControls: unknown[];
  rootQuorum: string[];
  mfaPolicies: unknown[];
  webhookEndpoints: unknown[];
  accounts: WalletAccountRow[];
  organizationKey?: OrganizationKeyRow;
}

/** The cache keys and values of what was found, as the cached repositories read them. */
function seedsOf(request: ColdReadRequest, found: Found): ColdReadResult {
  const { organizationId, publicKey, address } = request;
  const organization = found.organization;
  if (!organization) return { organization: undefined, seeds: [] };
  const values: [string, unknown][] = [
    ['organization', organization],
    ['policies', found.policies],
    ['velocity-controls', found.velocityControls],
    ['root-quorum', found.rootQuorum],
    ['mfa-policies', found.mfaPolicies],
    ['webhook-endpoints', found.webhookEndpoints],
  ];
  // A data key, once stored, never changes until its organization is deleted; none is not kept
  // (the first seal stores one without a generation change).
  if (found.organizationKey) values.push(['organization-key', found.organizationKey]);
  if (address !== undefined) values.push([`accounts-by-address:${address}`, found.accounts]);
  const seeds: ColdReadResult['seeds'] = [{ organizationId, generation: found.generation, values }];
  if (publicKey !== undefined) {
    values.push([`api-key:${publicKey}`, found.apiKeys]);
    values.push([`ip-allowlists:${publicKey}`, found.ipAllowlists]);
    // The caller's user record, which its vote shows (src/domain/identity/users.ts userRecordOf).
    for (const rows of found.userRows) values.push([`user-rows:${rows.user.id}`, rows]);
    const parent = organization.parent_organization_id;
    if (parent && found.parentGeneration !== undefined) seeds.push({ organizationId: parent, generation: found.parentGeneration, values: [[`api-key:${publicKey}`, found.parentApiKeys]] });
  }
  return { organization, seeds };
}

/** What POSTGRES_COLD_LATERAL answered for one request, by value name (JSON text), as the cache keeps it. */
export function postgresColdResult(request: ColdReadRequest, by: Map<string, string>): ColdReadResult {
  const organizationText = by.get('organization');
  if (organizationText === undefined) return { organization: undefined, seeds: [] };
  const json = <T>(k: string) => JSON.parse(by.get(k)!) as T;
  const keyText = by.get('organization-key');
  const parentGeneration = by.get('parent-generation');
  return seedsOf(request, {
    organization: JSON.parse(organizationText) as OrganizationRow,
    generation: Number(by.get('generation')),
    parentGeneration: parentGeneration === undefined ? undefined : Number(parentGeneration),
    apiKeys: json('api-keys'),
    parentApiKeys: json('parent-api-keys'),
    userRows: json('user-rows'),
    ipAllowlists: json('ip-allowlists'),
    policies: json('policies'),
    velocityControls: json('velocity-controls'),
    rootQuorum: json('root-quorum'),
    mfaPolicies: json('mfa-policies'),
    webhookEndpoints: json('webhook-endpoints'),
    accounts: json('accounts'),
    organizationKey: keyText === undefined ? undefined : (JSON.parse(keyText) as OrganizationKeyRow),
  });
}

// SQLite: the statements the repositories' reads compile to, prepared once each (src/store/raw.ts),
// with the repositories' column lists and orders, so each answer is the repository's own.
const OWNER_SELECT = OWNER_COLUMNS.join(', ');
const SQLITE = {
  organization: statement('sigil_cold_organization', 'SELECT * FROM organizations WHERE id = $1'),
  generation: statement('sigil_cold_generation', 'SELECT generation FROM cache_generations WHERE organization_id = $1'),
  apiKeys: statement('sigil_cold_api_keys', `SELECT api_keys.*, ${OWNER_SELECT} FROM api_keys INNER JOIN users ON users.id = api_keys.user_id WHERE api_keys.public_key = $1 AND api_keys.organization_id = $2`),
  ipAllowlists: statement('sigil_cold_ip_allowlists', "SELECT * FROM ip_allowlists WHERE organization_id = $1 AND public_key IN ('', $2)"),
  policies: statement('sigil_cold_policies', 'SELECT * FROM policies WHERE organization_id = $1 ORDER BY created_at, id'),
  velocityControls: statement('sigil_cold_velocity_controls', 'SELECT * FROM velocity_controls WHERE organization_id = $1 ORDER BY created_at, id'),
  rootQuorum: statement('sigil_cold_root_quorum', 'SELECT user_id FROM root_quorum_members WHERE organization_id = $1 ORDER BY user_id'),
  mfaPolicies: statement('sigil_cold_mfa_policies', 'SELECT * FROM mfa_policies WHERE organization_id = $1 ORDER BY user_id, order_index'),
  webhookEndpoints: statement('sigil_cold_webhook_endpoints', 'SELECT id, organization_id, subscriptions FROM webhook_endpoints WHERE organization_id = $1 AND is_active = 1 ORDER BY created_at, id'),
  user: statement('sigil_cold_user', 'SELECT * FROM users WHERE organization_id = $1 AND id = $2'),
  userApiKeys: statement('sigil_cold_user_api_keys', 'SELECT * FROM api_keys WHERE organization_id = $1 AND user_id = $2 ORDER BY created_at, id'),
  userAuthenticators: statement('sigil_cold_user_authenticators', 'SELECT * FROM authenticators WHERE organization_id = $1 AND user_id = $2 ORDER BY created_at, id'),
  userTags: statement(
    'sigil_cold_user_tags',
    'SELECT user_tag_assignments.tag_id FROM user_tag_assignments INNER JOIN user_tags ON user_tags.id = user_tag_assignments.tag_id WHERE user_tag_assignments.user_id = $1 ORDER BY user_tags.created_at, user_tags.id',
  ),
  userOauthProviders: statement('sigil_cold_user_oauth_providers', 'SELECT * FROM oauth_providers WHERE organization_id = $1 AND user_id = $2 ORDER BY created_at, id'),
  accounts: statement('sigil_cold_accounts', 'SELECT * FROM wallet_accounts WHERE organization_id = $1 AND address = $2 ORDER BY created_at, id'),
  organizationKey: statement('sigil_cold_organization_key', 'SELECT * FROM organization_keys WHERE organization_id = $1'),
} satisfies Record<string, Statement>;

/** SQLite: the cold read, in process, before the request's generation read (src/store/hot-reads.ts). */
export function sqliteColdReads(raw: RawDb): ColdReads {
  return {
    async read(request) {
      const { organizationId, publicKey, address } = request;
      // One read transaction: the values and their generations come from one snapshot.
      const found = raw.readTogether!((q) => {
        const [organization] = q<OrganizationRow>(SQLITE.organization, [organizationId]);
        if (!organization) return undefined;
        const generationOf = (id: string) => Number(q<{ generation: number }>(SQLITE.generation, [id])[0]?.generation ?? 0);
        const keysIn = (id: string) =>
          publicKey === undefined
            ? []
            : q<ApiKeyRow & OwnerColumns>(SQLITE.apiKeys, [publicKey, id]).map((row) => {
                const { rest: key, user } = splitOwner(row);
                return { key: key as ApiKeyRow, user };
              });
        const parent = organization.parent_organization_id;
        const apiKeys = keysIn(organizationId);
        const userRows: UserRecordRows[] = [];
        for (const userId of new Set(apiKeys.map((k) => k.key.user_id))) {
          const [user] = q<UserRow>(SQLITE.user, [organizationId, userId]);
          if (!user) continue;
          userRows.push({
            user,
            apiKeys: q<ApiKeyRow>(SQLITE.userApiKeys, [organizationId, userId]),
            authenticators: q(SQLITE.userAuthenticators, [organizationId, userId]),
            tagIds: q<{ tag_id: string }>(SQLITE.userTags, [userId]).map((t) => t.tag_id),
            oauthProviders: q(SQLITE.userOauthProviders, [organizationId, userId]),
          } as UserRecordRows);
        }
        return {
          organization,
          generation: generationOf(organizationId),
          parentGeneration: parent ? generationOf(parent) : undefined,
          apiKeys,
          parentApiKeys: parent ? keysIn(parent) : [],
          userRows,
          ipAllowlists: publicKey === undefined ? [] : q(SQLITE.ipAllowlists, [organizationId, publicKey]),
          policies: q(SQLITE.policies, [organizationId]),
          velocityControls: q(SQLITE.velocityControls, [organizationId]),
          rootQuorum: q<{ user_id: string }>(SQLITE.rootQuorum, [organizationId]).map((r) => r.user_id),
          mfaPolicies: q(SQLITE.mfaPolicies, [organizationId]),
          webhookEndpoints: q(SQLITE.webhookEndpoints, [organizationId]),
          accounts: address === undefined ? [] : q<WalletAccountRow>(SQLITE.accounts, [organizationId, address]),
          organizationKey: q<OrganizationKeyRow>(SQLITE.organizationKey, [organizationId])[0],
        } satisfies Found;
      });
      return found ? seedsOf(request, found) : { organization: undefined, seeds: [] };
    },
  };
}
