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
      .select([
        'users.id as u_id',
        'users.organization_id as u_organization_id',
        'users.user_name as u_user_name',
        'users.user_email as u_user_email',
        'users.user_phone_number as u_user_phone_number',
        'users.email_verified_at as u_email_verified_at',
        'users.phone_number_verified_at as u_phone_number_verified_at',
        'users.created_at as u_created_at',
        'users.updated_at as u_updated_at',
      ])
      .where('api_keys.public_key', '=', publicKey)
      .where('api_keys.organization_id', 'in', organizationIds)
      .execute();
    return rows.map(({ u_id, u_organization_id, u_user_name, u_user_email, u_user_phone_number, u_email_verified_at, u_phone_number_verified_at, u_created_at, u_updated_at, ...key }) => ({
      key,
      user: {
        id: u_id,
        organization_id: u_organization_id,
        user_name: u_user_name,
        user_email: u_user_email,
        user_phone_number: u_user_phone_number,
        email_verified_at: u_email_verified_at,
        phone_number_verified_at: u_phone_number_verified_at,
        created_at: u_created_at,
        updated_at: u_updated_at,
      },
    }));
  }
}
