// API keys (credentials of type CREDENTIAL_TYPE_API_KEY_*). SQL for the `api_keys` table.
import type { Kysely, Selectable } from 'kysely';
import { UserOwnedRepo } from './org-scoped.js';
import type { ApiKeyTable, Database } from '../schema.js';
import { OWNER_COLUMNS, splitOwner, type UserRow } from './users.js';

export type ApiKeyRow = Selectable<ApiKeyTable>;

export class ApiKeysRepo extends UserOwnedRepo<'api_keys'> {
  constructor(db: Kysely<Database>) {
    super(db, 'api_keys');
  }

  async insert(rows: ApiKeyRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.insertInto('api_keys').values(rows).execute();
  }

  /** The key with this public key in one of the given organizations (the stamp lookup). */
  async findByPublicKey(organizationIds: string[], publicKey: string): Promise<ApiKeyRow[]> {
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('public_key', '=', publicKey)
      .where('organization_id', 'in', organizationIds)
      .execute();
  }

  /** The stamp lookup with the key's owner in one query: keys with this public key in the organizations. */
  async findWithOwner(organizationIds: string[], publicKey: string): Promise<{ key: ApiKeyRow; user: UserRow }[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .innerJoin('users', 'users.id', 'api_keys.user_id')
      .selectAll('api_keys')
      .select(OWNER_COLUMNS)
      .where('api_keys.public_key', '=', publicKey)
      .where('api_keys.organization_id', 'in', organizationIds)
      .execute();
    return rows.map((row) => {
      const { rest: key, user } = splitOwner(row);
      return { key, user };
    });
  }
}
