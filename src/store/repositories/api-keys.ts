// API keys (credentials of type CREDENTIAL_TYPE_API_KEY_*). SQL for the `api_keys` table.
import type { Kysely, Selectable } from 'kysely';
import type { ApiKeyTable, Database } from '../schema.js';

export type ApiKeyRow = Selectable<ApiKeyTable>;

export class ApiKeysRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(rows: ApiKeyRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.db.insertInto('api_keys').values(rows).execute();
  }

  async get(organizationId: string, apiKeyId: string): Promise<ApiKeyRow | undefined> {
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', apiKeyId)
      .executeTakeFirst();
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

  async listForUsers(organizationId: string, userIds: string[]): Promise<ApiKeyRow[]> {
    if (userIds.length === 0) return [];
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('user_id', 'in', userIds)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async listForOrganization(organizationId: string): Promise<ApiKeyRow[]> {
    return this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async delete(organizationId: string, userId: string, apiKeyIds: string[]): Promise<number> {
    if (apiKeyIds.length === 0) return 0;
    const res = await this.db
      .deleteFrom('api_keys')
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .where('id', 'in', apiKeyIds)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
