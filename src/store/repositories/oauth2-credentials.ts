// OAuth 2.0 credentials of an organization (docs/reference/organizations.md "Smart contract interfaces and OAuth 2.0 credentials"). SQL for
// the `oauth2_credentials` table; the client secret column holds barrier ciphertext only.
import type { Kysely, Selectable } from 'kysely';
import { OrganizationScopedRepo } from './org-scoped.js';
import type { Database, Oauth2CredentialTable } from '../schema.js';

export type Oauth2CredentialRow = Selectable<Oauth2CredentialTable>;

export class Oauth2CredentialsRepo extends OrganizationScopedRepo<'oauth2_credentials'> {
  constructor(db: Kysely<Database>) {
    super(db, 'oauth2_credentials');
  }

  async insert(row: Oauth2CredentialRow): Promise<void> {
    await this.db.insertInto('oauth2_credentials').values(row).execute();
  }

  /** Replaces provider, client id and sealed secret; false when the row is not there. */
  async update(
    organizationId: string,
    id: string,
    changes: Pick<Oauth2CredentialRow, 'provider' | 'client_id' | 'client_secret' | 'updated_at'>,
  ): Promise<boolean> {
    const res = await this.db
      .updateTable('oauth2_credentials')
      .set(changes)
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    const res = await this.db.deleteFrom('oauth2_credentials').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** The organization's credential for this provider application, if any (duplicate checks). */
  async findByClient(organizationId: string, provider: string, clientId: string): Promise<Oauth2CredentialRow | undefined> {
    return this.db
      .selectFrom('oauth2_credentials')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('provider', '=', provider)
      .where('client_id', '=', clientId)
      .executeTakeFirst();
  }
}
