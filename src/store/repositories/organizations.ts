// Organizations and their root quorum. SQL for the `organizations` and `root_quorum_members` tables.
import { CompiledQuery, SqliteAdapter, sql, type Kysely, type Selectable } from 'kysely';
import type { Database, OrganizationTable } from '../schema.js';
import { applyPage } from './pagination.js';

export type OrganizationRow = Selectable<OrganizationTable>;

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
   * on SQLite), on statistics refreshed first: how the bench and the tests show that a lookup is one
   * index read.
   */
  async childrenPlan(parentId: string, filter: ChildFilter, limit = 10): Promise<string> {
    const q = this.childrenQuery(parentId, filter);
    if (!q) return '';
    const compiled = applyPage(q, 'organizations', { limit, order: 'asc' }, {}).query.compile();
    const sqlite = this.db.getExecutor().adapter instanceof SqliteAdapter;
    await sql.raw(sqlite ? 'ANALYZE' : 'ANALYZE organizations, users, api_keys, authenticators, oauth_providers, wallet_accounts').execute(this.db);
    const { rows } = await this.db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(`${sqlite ? 'EXPLAIN QUERY PLAN' : 'EXPLAIN'} ${compiled.sql}`, [...compiled.parameters]));
    return rows.map((r) => String(sqlite ? r.detail : r['QUERY PLAN'])).join('\n');
  }

  private childrenQuery(parentId: string, filter: ChildFilter) {
    const q = this.db.selectFrom('organizations').select(['organizations.id', 'organizations.created_at']).where('parent_organization_id', '=', parentId);
    const v = filter.value ?? '';
    switch (filter.type) {
      case undefined:
      case '':
        return q;
      case 'NAME':
        return q.where('organizations.name', '=', v);
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
        return q.where('organizations.id', 'in', users);
      }
      case 'OIDC_TOKEN': {
        const id = filter.identity;
        if (!id) return undefined;
        return q.where(
          'organizations.id',
          'in',
          this.db
            .selectFrom('oauth_providers')
            .select('oauth_providers.organization_id')
            .where('oauth_providers.issuer', '=', id.issuer)
            .where('oauth_providers.subject', '=', id.subject)
            .where('oauth_providers.audience', '=', id.audience),
        );
      }
      case 'PUBLIC_KEY':
        return q.where('organizations.id', 'in', this.db.selectFrom('api_keys').select('api_keys.organization_id').where('api_keys.public_key', '=', v.toLowerCase()));
      case 'WALLET_ACCOUNT_ADDRESS':
        return q.where('organizations.id', 'in', this.db.selectFrom('wallet_accounts').select('wallet_accounts.organization_id').where('wallet_accounts.address', '=', v));
      case 'CREDENTIAL_ID':
        return q.where('organizations.id', 'in', this.db.selectFrom('authenticators').select('authenticators.organization_id').where('authenticators.credential_id', '=', v));
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
    if (userIds.length > 0) {
      await this.db
        .insertInto('root_quorum_members')
        .values(userIds.map((user_id) => ({ organization_id: id, user_id })))
        .execute();
    }
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
