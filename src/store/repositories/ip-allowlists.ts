// IP allowlists of organizations and of single API keys (docs/reference/organizations.md). SQL for the
// `ip_allowlists` table. The organization-level list is stored with public_key ''.
import type { Kysely, Selectable } from 'kysely';
import type { Database, IpAllowlistTable } from '../schema.js';

export type IpAllowlistRow = Selectable<IpAllowlistTable>;

export class IpAllowlistsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** Replaces the allowlist (organization-level when public_key is ''). */
  async upsert(row: IpAllowlistRow): Promise<void> {
    await this.db
      .insertInto('ip_allowlists')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['organization_id', 'public_key']).doUpdateSet({
          enabled: row.enabled,
          on_evaluation_error: row.on_evaluation_error,
          rules: row.rules,
          updated_at: row.updated_at,
        }),
      )
      .execute();
  }

  async get(organizationId: string, publicKey: string): Promise<IpAllowlistRow | undefined> {
    return this.db
      .selectFrom('ip_allowlists')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('public_key', '=', publicKey)
      .executeTakeFirst();
  }

  /** The organization-level list and the key's own list, in one query (the per-request check). */
  async forCredential(organizationId: string, publicKey: string | undefined): Promise<IpAllowlistRow[]> {
    const keys = publicKey ? ['', publicKey] : [''];
    return this.db
      .selectFrom('ip_allowlists')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('public_key', 'in', keys)
      .execute();
  }

  async delete(organizationId: string, publicKey: string): Promise<number> {
    const res = await this.db
      .deleteFrom('ip_allowlists')
      .where('organization_id', '=', organizationId)
      .where('public_key', '=', publicKey)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
