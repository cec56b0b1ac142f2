// Organizations and their root quorum. SQL for the `organizations` and `root_quorum_members` tables.
import { CompiledQuery, SqliteAdapter, sql, type Kysely, type Selectable } from 'kysely';
import type { Database, OrganizationTable } from '../schema.js';
import { applyPage } from './pagination.js';
import type { UserRow } from './users.js';
import type { ApiKeyRow } from './api-keys.js';
import type { AuthenticatorRow } from './authenticators.js';
import type { OauthProviderRow } from './oauth-providers.js';
import type { OrganizationKeyRow } from './organization-keys.js';

export type OrganizationRow = Selectable<OrganizationTable>;

/** A new organization with its users, their credentials, its root quorum and its data key (create_sub_organization). */
export interface NewOrganizationRows {
  organization: OrganizationRow;
  users: UserRow[];
  apiKeys: ApiKeyRow[];
  authenticators: AuthenticatorRow[];
  oauthProviders: OauthProviderRow[];
  /** The root quorum's user ids; the organization's row states its threshold. */
  rootQuorum: string[];
  key: OrganizationKeyRow;
}

/** A list_suborgs filter: its type and value as the request gives them. */
export interface ChildFilter {
  type?: string;
  value?: string;
  /** For OIDC_TOKEN: the (issuer, audience, subject) the domain read from the token. */
  identity?: { issuer: string; audience: string; subject: string };
  /** EMAIL / PHONE_NUMBER only: the user's contact must have been verified (list_verified_suborgs). */
  verified?: boolean;
  /** EMAIL / PHONE_NUMBER only: the contact must be verified or vouched for by the parent (migration 026). */
  trusted?: boolean;
}

export class OrganizationsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: OrganizationRow): Promise<void> {
    await this.db.insertInto('organizations').values(row).execute();
  }

  async get(id: string): Promise<OrganizationRow | undefined> {
    return this.db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /**
   * Inside a transaction: holds the organization's row until commit, so that writers which count
   * before they add (quotas, src/domain/governance/quotas.ts) take turns per organization instead of both
   * passing on the same count. PostgreSQL: SELECT ... FOR NO KEY UPDATE, the row lock that does not
   * conflict with the KEY SHARE lock every insert of a row referencing the organization takes (a
   * transaction that has recorded its activity holds one; FOR UPDATE would deadlock two of them).
   * SQLite has no row locks and needs none: a write transaction holds the database's single writer
   * lock (an activity has written its own row before it executes), and one process runs its
   * transactions one at a time.
   */
  async lockForUpdate(id: string): Promise<void> {
    if (this.db.getExecutor().adapter instanceof SqliteAdapter) return;
    await this.db.selectFrom('organizations').select('id').where('id', '=', id).forNoKeyUpdate().execute();
  }

  /**
   * Sub-organizations of `parentId` matching a filter, in creation order (list_suborgs,
   * list_verified_suborgs, the auth proxy's account lookup). Each filter starts from an index on the
   * value it names (migration 030) and reaches the organization by primary key, so its cost does not
   * grow with the number of sub-organizations.
   */
  async children(parentId: string, filter: ChildFilter, page: { limit: number; after?: string; before?: string }): Promise<string[]> {
    const q = this.childrenQuery(parentId, filter);
    if (!q) return [];
    const position = async (id: string) =>
      this.db.selectFrom('organizations').select(['created_at', 'id']).where('id', '=', id).where('parent_organization_id', '=', parentId).executeTakeFirst();
    const cursor = { after: page.after ? await position(page.after) : undefined, before: page.before ? await position(page.before) : undefined };
    const { query, reversed } = applyPage(q, 'organizations', { limit: page.limit, order: 'asc' }, cursor);
    const rows = await query.execute();
    return (reversed ? rows.reverse() : rows).map((r) => r.id);
  }

  /**
   * The database's plan for the first page of `children` (EXPLAIN on PostgreSQL, EXPLAIN QUERY PLAN
   * on SQLite): how the bench and the tests show that a lookup is one index read. Statistics are
   * refreshed first unless `analyze` is false, which shows the plan on whatever statistics the
   * database holds (stale ones on a table that grows fast), the case the lookups must survive.
   */
  async childrenPlan(parentId: string, filter: ChildFilter, limit = 10, analyze = true): Promise<string> {
    const q = this.childrenQuery(parentId, filter);
    if (!q) return '';
    const compiled = applyPage(q, 'organizations', { limit, order: 'asc' }, {}).query.compile();
    const sqlite = this.db.getExecutor().adapter instanceof SqliteAdapter;
    if (analyze) await sql.raw(sqlite ? 'ANALYZE' : 'ANALYZE organizations, users, api_keys, authenticators, oauth_providers, wallet_accounts').execute(this.db);
    const { rows } = await this.db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(`${sqlite ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN'} ${compiled.sql}`, [...compiled.parameters]));
    return rows.map((r) => String(sqlite ? r.detail : r['QUERY PLAN'])).join('\n');
  }

  /**
   * The statement behind `children`. Unfiltered, it walks the parent's index in creation order. With a
   * filter, the plan must start from the index on the value whatever the statistics say: on a table
   * that grows fast (a signup burst) the planner, on statistics that lag, otherwise prefers walking
   * every child of the parent in order and probing each one, a cost that grows with the number of
   * sub-organizations. So the parent test is written so that no index serves it (`parent || ''`,
   * applied to the few rows found) and the organizations are reached by primary key only: on
   * PostgreSQL through `id = any(array(subquery))`, which the planner cannot flatten into a join and
   * runs once, leaving an index scan of the primary key; on SQLite through `id IN (subquery)`, which
   * it answers by looking each id up.
   */
  private childrenQuery(parentId: string, filter: ChildFilter) {
    const base = this.db.selectFrom('organizations').select(['organizations.id', 'organizations.created_at']);
    const v = filter.value ?? '';
    if (filter.type === undefined || filter.type === '') return base.where('parent_organization_id', '=', parentId);
    const q = base.where((eb) => eb(sql<string>`${sql.ref('organizations.parent_organization_id')} || ''`, '=', parentId));
    if (filter.type === 'NAME') return q.where('organizations.name', '=', v);
    const ids = this.childIds(filter, v);
    if (!ids) return undefined;
    if (this.db.getExecutor().adapter instanceof SqliteAdapter) return q.where('organizations.id', 'in', ids);
    return q.where((eb) => eb(sql.ref('organizations.id'), '=', sql<string>`any(array(${ids}))`));
  }

  /** The organization ids a filter names, read from the index on its value (migration 030). */
  private childIds(filter: ChildFilter, v: string) {
    switch (filter.type) {
      case 'USERNAME':
      case 'EMAIL':
      case 'PHONE_NUMBER': {
        const column = filter.type === 'USERNAME' ? 'users.user_name' : filter.type === 'EMAIL' ? 'users.user_email' : 'users.user_phone_number';
        const verifiedColumn = filter.type === 'EMAIL' ? 'users.email_verified_at' : 'users.phone_number_verified_at';
        let users = this.db.selectFrom('users').select('users.organization_id').where(column, '=', v);
        if (filter.verified) users = users.where(verifiedColumn, 'is not', null);
        else if (filter.trusted && filter.type !== 'USERNAME') {
          const vouchedColumn = filter.type === 'EMAIL' ? 'users.email_vouched_at' : 'users.phone_number_vouched_at';
          users = users.where((u) => u.or([u(verifiedColumn, 'is not', null), u(vouchedColumn, 'is not', null)]));
        }
        return users;
      }
      case 'OIDC_TOKEN': {
        const id = filter.identity;
        if (!id) return undefined;
        return this.db
          .selectFrom('oauth_providers')
          .select('oauth_providers.organization_id')
          .where('oauth_providers.issuer', '=', id.issuer)
          .where('oauth_providers.subject', '=', id.subject)
          .where('oauth_providers.audience', '=', id.audience);
      }
      case 'PUBLIC_KEY':
        return this.db.selectFrom('api_keys').select('api_keys.organization_id').where('api_keys.public_key', '=', v.toLowerCase());
      case 'WALLET_ACCOUNT_ADDRESS':
        return this.db.selectFrom('wallet_accounts').select('wallet_accounts.organization_id').where('wallet_accounts.address', '=', v);
      case 'CREDENTIAL_ID':
        return this.db.selectFrom('authenticators').select('authenticators.organization_id').where('authenticators.credential_id', '=', v);
      default:
        return undefined;
    }
  }

  /** Removes an organization and everything in it (delete_sub_organization). */
  async deleteWithContents(id: string): Promise<void> {
    const activityIds = this.db.selectFrom('activities').select('id').where('organization_id', '=', id);
    await this.db.deleteFrom('votes').where('activity_id', 'in', activityIds).execute();
    for (const table of [
      'policy_evaluations',
      'activity_mfa',
      'activities',
      'user_tag_assignments',
      'private_key_tag_assignments',
      'private_key_addresses',
      'api_keys',
      'authenticators',
      'oauth_providers',
      'oauth2_credentials',
      'otps',
      'ip_allowlists',
      'root_quorum_members',
      'user_tags',
      'private_key_tags',
      'wallet_accounts',
      'import_bundles',
      'policies',
      'smart_contract_interfaces',
      'velocity_controls',
      'session_profiles',
      'secrets',
      'mfa_policies',
      'organization_features',
    ] as const) {
      await this.db.deleteFrom(table).where('organization_id', '=', id).execute();
    }
    await this.db.deleteFrom('private_keys').where('organization_id', '=', id).execute();
    await this.db.deleteFrom('wallets').where('organization_id', '=', id).execute();
    await this.db.deleteFrom('users').where('organization_id', '=', id).execute();
    await this.db.deleteFrom('organizations').where('id', '=', id).execute();
  }

  /** Organization features, by name (get_organization_configs, set/remove_organization_feature). */
  async features(id: string): Promise<{ name: string; value: string }[]> {
    return this.db.selectFrom('organization_features').select(['name', 'value']).where('organization_id', '=', id).orderBy('name').execute();
  }

  async setFeature(id: string, name: string, value: string, now: number): Promise<void> {
    await this.db.deleteFrom('organization_features').where('organization_id', '=', id).where('name', '=', name).execute();
    await this.db.insertInto('organization_features').values({ organization_id: id, name, value, updated_at: now }).execute();
  }

  async removeFeature(id: string, name: string): Promise<boolean> {
    const res = await this.db.deleteFrom('organization_features').where('organization_id', '=', id).where('name', '=', name).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  async rename(id: string, name: string, now: number): Promise<void> {
    await this.db.updateTable('organizations').set({ name, updated_at: now }).where('id', '=', id).execute();
  }

  async setRootQuorum(id: string, threshold: number, userIds: string[], now: number): Promise<void> {
    // A row that already says so is left alone: a new sub-organization is inserted with its quorum's
    // threshold and time, and on PostgreSQL an update that changes nothing still leaves a dead row
    // version per organization (small rows).
    await this.db
      .updateTable('organizations')
      .set({ root_quorum_threshold: threshold, updated_at: now })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('root_quorum_threshold', '<>', threshold), eb('updated_at', '<>', now)]))
      .execute();
    await this.db.deleteFrom('root_quorum_members').where('organization_id', '=', id).execute();
    await this.insertRootQuorumMembers(id, userIds);
  }

  /**
   * Inserts a new organization with its contents. On PostgreSQL one statement, one round trip
   * (data-modifying CTEs over json_populate_record(set), as a grouped commit inserts its records):
   * a signup's writes join a shared commit, where every round trip lengthens the commit of all of
   * them. Foreign keys are checked at the end of the statement, so the rows may refer to each other.
   */
  async insertWithContents(rows: NewOrganizationRows): Promise<void> {
    if (this.db.getExecutor().adapter instanceof SqliteAdapter) {
      await this.insert(rows.organization);
      for (const u of rows.users) await this.db.insertInto('users').values(u).execute();
      if (rows.apiKeys.length > 0) await this.db.insertInto('api_keys').values(rows.apiKeys).execute();
      if (rows.authenticators.length > 0) await this.db.insertInto('authenticators').values(rows.authenticators).execute();
      if (rows.oauthProviders.length > 0) await this.db.insertInto('oauth_providers').values(rows.oauthProviders).execute();
      await this.insertRootQuorumMembers(rows.organization.id, rows.rootQuorum);
      await this.db.insertInto('organization_keys').values(rows.key).execute();
      return;
    }
    const json = (v: unknown) => JSON.stringify(v);
    const quorum = rows.rootQuorum.map((user_id) => ({ organization_id: rows.organization.id, user_id }));
    await sql`WITH o AS (INSERT INTO organizations SELECT * FROM json_populate_record(NULL::organizations, ${json(rows.organization)}::json)),
        u AS (INSERT INTO users SELECT * FROM json_populate_recordset(NULL::users, ${json(rows.users)}::json)),
        k AS (INSERT INTO api_keys SELECT * FROM json_populate_recordset(NULL::api_keys, ${json(rows.apiKeys)}::json)),
        a AS (INSERT INTO authenticators SELECT * FROM json_populate_recordset(NULL::authenticators, ${json(rows.authenticators)}::json)),
        p AS (INSERT INTO oauth_providers SELECT * FROM json_populate_recordset(NULL::oauth_providers, ${json(rows.oauthProviders)}::json)),
        q AS (INSERT INTO root_quorum_members SELECT * FROM json_populate_recordset(NULL::root_quorum_members, ${json(quorum)}::json))
      INSERT INTO organization_keys SELECT * FROM json_populate_record(NULL::organization_keys, ${json(rows.key)}::json)`.execute(this.db);
  }

  /** The root quorum of an organization inserted in the same transaction, whose row already states its threshold. */
  async insertRootQuorumMembers(id: string, userIds: string[]): Promise<void> {
    if (userIds.length === 0) return;
    await this.db
      .insertInto('root_quorum_members')
      .values(userIds.map((user_id) => ({ organization_id: id, user_id })))
      .execute();
  }

  async rootQuorumUserIds(id: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('root_quorum_members')
      .select('user_id')
      .where('organization_id', '=', id)
      .orderBy('user_id')
      .execute();
    return rows.map((r) => r.user_id);
  }

  async isRootQuorumMember(id: string, userId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('root_quorum_members')
      .select('user_id')
      .where('organization_id', '=', id)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row !== undefined;
  }
}
