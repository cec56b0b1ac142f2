// Authenticators (passkeys; credentials of type CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR). SQL for the
// `authenticators` table (migration 006; docs/reference/organizations.md "Users and credentials").
import type { Kysely, Selectable } from 'kysely';
import { UserOwnedRepo } from './org-scoped.js';
import type { AuthenticatorTable, Database } from '../schema.js';
import { OWNER_COLUMNS, splitOwner, type UserRow } from './users.js';

export type AuthenticatorRow = Selectable<AuthenticatorTable>;

export class AuthenticatorsRepo extends UserOwnedRepo<'authenticators'> {
  constructor(db: Kysely<Database>) {
    super(db, 'authenticators');
  }

  async insert(rows: AuthenticatorRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.insertInto('authenticators').values(rows).execute();
  }

  /** Authenticators with this credential id in the given organizations (registration clash check). */
  async findByCredentialId(organizationIds: string[], credentialId: string): Promise<AuthenticatorRow[]> {
    if (organizationIds.length === 0) return [];
    return this.db
      .selectFrom('authenticators')
      .selectAll()
      .where('credential_id', '=', credentialId)
      .where('organization_id', 'in', organizationIds)
      .execute();
  }

  /** The stamp lookup: authenticators with this credential id in the organizations, with their owners. */
  async findWithOwner(organizationIds: string[], credentialId: string): Promise<{ authenticator: AuthenticatorRow; user: UserRow }[]> {
    if (organizationIds.length === 0) return [];
    const rows = await this.ownerQuery()
      .where('authenticators.credential_id', '=', credentialId)
      .where('authenticators.organization_id', 'in', organizationIds)
      .execute();
    return rows.map(ownedAuthenticator);
  }

  /** Authenticators whose API-visible public key is `publicKey` (resuming a waiting activity's submitter). */
  async findByPublicKeyWithOwner(organizationId: string, publicKey: string): Promise<{ authenticator: AuthenticatorRow; user: UserRow }[]> {
    const rows = await this.ownerQuery()
      .where('authenticators.organization_id', '=', organizationId)
      .where('authenticators.credential_public_key', '=', publicKey)
      .execute();
    return rows.map(ownedAuthenticator);
  }

  private ownerQuery() {
    return this.db
      .selectFrom('authenticators')
      .innerJoin('users', 'users.id', 'authenticators.user_id')
      .selectAll('authenticators')
      .select(OWNER_COLUMNS);
  }

  /**
   * Moves the signature counter from `from` to `to` only if nobody moved it meanwhile: a
   * compare-and-set, so two requests carrying the same counter cannot both pass (replay).
   * Returns false when the stored counter was no longer `from`.
   */
  async advanceSignCount(id: string, from: number, to: number): Promise<boolean> {
    const res = await this.db
      .updateTable('authenticators')
      .set({ sign_count: to })
      .where('id', '=', id)
      .where('sign_count', '=', from)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }
}

function ownedAuthenticator(row: AuthenticatorRow & Parameters<typeof splitOwner>[0]): { authenticator: AuthenticatorRow; user: UserRow } {
  const { rest: authenticator, user } = splitOwner(row);
  return { authenticator, user };
}
