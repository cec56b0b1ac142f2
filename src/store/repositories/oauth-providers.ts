// OAuth providers: the OIDC identities (issuer, audience, subject) users log in with
// (turnkey-semantics.md §6 "OAuth / OIDC"). SQL for the `oauth_providers` table.
import type { Kysely, Selectable } from 'kysely';
import type { Database, OauthProviderTable } from '../schema.js';

export type OauthProviderRow = Selectable<OauthProviderTable>;

export class OauthProvidersRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(rows: OauthProviderRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.insertInto('oauth_providers').values(rows).execute();
  }

  async listForUsers(organizationId: string, userIds: string[]): Promise<OauthProviderRow[]> {
    if (userIds.length === 0) return [];
    return this.db
      .selectFrom('oauth_providers')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('user_id', 'in', userIds)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async listForOrganization(organizationId: string): Promise<OauthProviderRow[]> {
    return this.db
      .selectFrom('oauth_providers')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  /** Providers of the organization with one of these identities (duplicate checks). */
  async findIdentities(organizationId: string, identities: { issuer: string; audience: string; subject: string }[]): Promise<OauthProviderRow[]> {
    if (identities.length === 0) return [];
    return this.db
      .selectFrom('oauth_providers')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where((eb) =>
        eb.or(identities.map((i) => eb.and([eb('issuer', '=', i.issuer), eb('audience', '=', i.audience), eb('subject', '=', i.subject)]))),
      )
      .execute();
  }

  async delete(organizationId: string, userId: string, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const res = await this.db
      .deleteFrom('oauth_providers')
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .where('id', 'in', ids)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
