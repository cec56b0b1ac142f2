// Organizations' wrapped data keys (migration 032; docs/operator-guide.md "Custody", per-organization keys). SQL for
// the `organization_keys` table. Destroying a key must leave no copy in the database file: on SQLite
// the delete runs with `secure_delete` on, so the freed cell is zeroed instead of lingering in a page
// that `sigil backup` copies whole.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { isSqlite } from '../migrations/trigger-helpers.js';

export interface OrganizationKeyRow {
  organization_id: string;
  key_id: string;
  wrapped_key: string;
  created_at: number;
}

export class OrganizationKeysRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async get(organizationId: string): Promise<OrganizationKeyRow | undefined> {
    return this.db.selectFrom('organization_keys').selectAll().where('organization_id', '=', organizationId).executeTakeFirst();
  }

  /** Stores a key unless the organization has one already (two first seals racing); the stored one wins. */
  async insertIfAbsent(row: OrganizationKeyRow): Promise<OrganizationKeyRow> {
    await this.db.insertInto('organization_keys').values(row).onConflict((oc) => oc.column('organization_id').doNothing()).execute();
    return (await this.get(row.organization_id))!;
  }

  /** Destroys the organization's key; returns the key id it had. */
  async destroy(organizationId: string): Promise<string | undefined> {
    const row = await this.get(organizationId);
    if (!row) return undefined;
    const sqlite = isSqlite(this.db as Kysely<unknown>);
    if (sqlite) await sql`PRAGMA secure_delete = ON`.execute(this.db);
    try {
      await this.db.deleteFrom('organization_keys').where('organization_id', '=', organizationId).execute();
    } finally {
      if (sqlite) await sql`PRAGMA secure_delete = OFF`.execute(this.db);
    }
    return row.key_id;
  }
}
