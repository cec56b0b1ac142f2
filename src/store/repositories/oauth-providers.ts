// OAuth providers: the OIDC identities (issuer, audience, subject) users log in with
// (docs/reference/sessions.md "Login activities"). SQL for the `oauth_providers` table.
import type { Kysely, Selectable } from 'kysely';
import { UserOwnedRepo } from './org-scoped.js';
import type { Database, OauthProviderTable } from '../schema.js';

export type OauthProviderRow = Selectable<OauthProviderTable>;

export class OauthProvidersRepo extends UserOwnedRepo<'oauth_providers'> {
  constructor(db: Kysely<Database>) {
    super(db, 'oauth_providers');
  }

  async insert(rows: OauthProviderRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.insertInto('oauth_providers').values(rows).execute();
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
}
