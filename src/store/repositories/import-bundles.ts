// Import bundles issued to users. SQL for the `import_bundles` table.
import type { Kysely, Selectable } from 'kysely';
import type { Database, ImportBundleTable } from '../schema.js';

export type ImportBundleRow = Selectable<ImportBundleTable>;

export class ImportBundlesRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: ImportBundleRow): Promise<void> {
    await this.db.insertInto('import_bundles').values(row).execute();
  }

  /** The user's most recent bundles of a kind, newest first, used or not. */
  async recent(organizationId: string, userId: string, kind: string, limit: number): Promise<ImportBundleRow[]> {
    return this.db
      .selectFrom('import_bundles')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .where('kind', '=', kind)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }

  /** The user's bundle of a kind whose target is this public key (uncompressed lowercase hex). */
  async byTarget(organizationId: string, userId: string, kind: string, targetPublicKey: string): Promise<ImportBundleRow | undefined> {
    return this.db
      .selectFrom('import_bundles')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('target_public_key', '=', targetPublicKey)
      .where('user_id', '=', userId)
      .where('kind', '=', kind)
      .executeTakeFirst();
  }

  /** Marks a bundle used; false when it already was (a concurrent import won). */
  async markUsed(id: string, now: number): Promise<boolean> {
    const res = await this.db
      .updateTable('import_bundles')
      .set({ used_at: now })
      .where('id', '=', id)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }
}
