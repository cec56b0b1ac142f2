// The cold path's read (docs/design.md "The cold path (one sub-organization per end user)"): a
// request from an organization this
// process has not cached would otherwise load what authentication and policy need one statement at
// a time (the organization, the stamp's API key and owner here and in the parent, IP allowlists,
// policies, velocity controls, the root quorum, MFA policies, webhook endpoints, the caller's user
// record: about fifteen round trips on PostgreSQL). This is one prepared statement that returns them all with the organization's
// (and its parent's) cache generation, read in one snapshot; src/store/read-cache.ts keeps them under
// the same keys the cached repositories (cached-repositories.ts) read, and only while the
// generation they were read at is the one the request observed, so nothing is served that the hot
// path would not have served. The cache stays bounded whatever the number of organizations.
//
// SQLite reads in-process, where a statement costs microseconds and no round trip: the repositories'
// own reads stay as they are there.
import type { RawDb } from './raw.js';
import { statement } from './raw.js';
import type { OrganizationRow } from './repositories/organizations.js';
import type { ApiKeyRow } from './repositories/api-keys.js';
import { OWNER_COLUMNS, type UserRecordRows, type UserRow } from './repositories/users.js';

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
// them, so the result is the repository's own answer. $1 the organization, $2 the stamp's public key
// ('' for a passkey stamp: no API key has it).
const POSTGRES_COLD = statement(
  'sigil_cold_reads',
  `WITH o AS (SELECT * FROM organizations WHERE id = $1)
   SELECT 'organization' AS k, row_to_json(o)::text AS v FROM o
   UNION ALL SELECT 'generation', COALESCE((SELECT generation FROM cache_generations WHERE organization_id = $1), 0)::text
   UNION ALL SELECT 'parent-generation', COALESCE(g.generation, 0)::text
     FROM o LEFT JOIN cache_generations g ON g.organization_id = o.parent_organization_id WHERE o.parent_organization_id IS NOT NULL
   UNION ALL SELECT 'api-keys', COALESCE(json_agg(json_build_object('key', row_to_json(k), 'user', ${OWNER})), '[]')::text
     FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.public_key = $2 AND k.organization_id = $1
   UNION ALL SELECT 'parent-api-keys', COALESCE(json_agg(json_build_object('key', row_to_json(k), 'user', ${OWNER})), '[]')::text
     FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.public_key = $2 AND k.organization_id = (SELECT parent_organization_id FROM o)
   UNION ALL SELECT 'user-rows', COALESCE(json_agg(json_build_object(
       'user', row_to_json(u),
       'apiKeys', (SELECT COALESCE(json_agg(x ORDER BY x.created_at, x.id), '[]') FROM api_keys x WHERE x.organization_id = $1 AND x.user_id = u.id),
       'authenticators', (SELECT COALESCE(json_agg(x ORDER BY x.created_at, x.id), '[]') FROM authenticators x WHERE x.organization_id = $1 AND x.user_id = u.id),
       'tagIds', (SELECT COALESCE(json_agg(a.tag_id ORDER BY t.created_at, t.id), '[]') FROM user_tag_assignments a JOIN user_tags t ON t.id = a.tag_id WHERE a.user_id = u.id),
       'oauthProviders', (SELECT COALESCE(json_agg(x ORDER BY x.created_at, x.id), '[]') FROM oauth_providers x WHERE x.organization_id = $1 AND x.user_id = u.id))), '[]')::text
     FROM users u WHERE u.organization_id = $1 AND u.id IN (SELECT user_id FROM api_keys WHERE public_key = $2 AND organization_id = $1)
   UNION ALL SELECT 'ip-allowlists', COALESCE(json_agg(a), '[]')::text FROM ip_allowlists a WHERE organization_id = $1 AND public_key IN ('', $2)
   UNION ALL SELECT 'policies', COALESCE(json_agg(p ORDER BY p.created_at, p.id), '[]')::text FROM policies p WHERE organization_id = $1
   UNION ALL SELECT 'velocity-controls', COALESCE(json_agg(c ORDER BY c.created_at, c.id), '[]')::text FROM velocity_controls c WHERE organization_id = $1
   UNION ALL SELECT 'root-quorum', COALESCE(json_agg(q.user_id ORDER BY q.user_id), '[]')::text FROM root_quorum_members q WHERE organization_id = $1
   UNION ALL SELECT 'mfa-policies', COALESCE(json_agg(m ORDER BY m.user_id, m.order_index), '[]')::text FROM mfa_policies m WHERE organization_id = $1
   UNION ALL SELECT 'webhook-endpoints', COALESCE(json_agg(json_build_object('id', w.id, 'organization_id', w.organization_id, 'subscriptions', w.subscriptions) ORDER BY w.created_at, w.id), '[]')::text
     FROM webhook_endpoints w WHERE organization_id = $1 AND is_active = 1`,
);

interface Row {
  k: string;
  v: string;
}

export interface ColdReads {
  /** What a request from `organizationId` stamped with `publicKey` (if an API key) needs; undefined where not worth a statement. */
  read(organizationId: string, publicKey: string | undefined): Promise<ColdReadResult | undefined>;
}

function postgresColdReads(raw: RawDb): ColdReads {
  return {
    async read(organizationId, publicKey) {
      const rows = await raw.query<Row>(POSTGRES_COLD, [organizationId, publicKey ?? '']);
      const by = new Map(rows.map((r) => [r.k, r.v]));
      const organizationText = by.get('organization');
      if (organizationText === undefined) return { organization: undefined, seeds: [] };
      const organization = JSON.parse(organizationText) as OrganizationRow;
      const json = (k: string) => JSON.parse(by.get(k)!) as unknown;
      const values: [string, unknown][] = [
        ['organization', organization],
        ['policies', json('policies')],
        ['velocity-controls', json('velocity-controls')],
        ['root-quorum', json('root-quorum')],
        ['mfa-policies', json('mfa-policies')],
        ['webhook-endpoints', json('webhook-endpoints')],
      ];
      const seeds: ColdReadResult['seeds'] = [{ organizationId, generation: Number(by.get('generation')), values }];
      if (publicKey !== undefined) {
        values.push([`api-key:${publicKey}`, json('api-keys') as { key: ApiKeyRow; user: UserRow }[]]);
        values.push([`ip-allowlists:${publicKey}`, json('ip-allowlists')]);
        // The caller's user record, which its vote shows (src/domain/identity/users.ts userRecordOf).
        for (const rows of json('user-rows') as UserRecordRows[]) values.push([`user-rows:${rows.user.id}`, rows]);
        const parent = organization.parent_organization_id;
        if (parent) seeds.push({ organizationId: parent, generation: Number(by.get('parent-generation')), values: [[`api-key:${publicKey}`, json('parent-api-keys')]] });
      }
      return { organization, seeds };
    },
  };
}

export function coldReads(raw: RawDb): ColdReads {
  return raw.dialect === 'postgres' ? postgresColdReads(raw) : { read: async () => undefined };
}
