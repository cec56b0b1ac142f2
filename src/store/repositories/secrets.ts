// Secrets an organization imported (issue 19 "Secrets"). SQL for the `secrets` table (migration 021).
// Values are barrier ciphertext; nothing here opens them.
import type { Kysely, Selectable } from 'kysely';
import type { Database, SecretTable } from '../schema.js';
import { applyPage, type Page } from './pagination.js';
import { isUniqueViolation } from '../db.js';

export type SecretRow = Selectable<SecretTable>;

/** An insert that clashed with the unique (organization, name) constraint: a concurrent import won. */
export class SecretNameTaken extends Error {
  constructor() {
    super('secret name taken');
  }
}

export class SecretsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: SecretRow): Promise<void> {
    try {
      await this.db.insertInto('secrets').values(row).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new SecretNameTaken();
      throw err;
    }
  }

  /** The organization's secrets with these ids (in no particular order; missing ones are absent). */
  async getMany(organizationId: string, ids: readonly string[]): Promise<SecretRow[]> {
    if (ids.length === 0) return [];
    return this.db.selectFrom('secrets').selectAll().where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
  }

  /** Which of these names the organization's secrets already carry. */
  async namesTaken(organizationId: string, names: readonly string[]): Promise<string[]> {
    if (names.length === 0) return [];
    const rows = await this.db.selectFrom('secrets').select('name').where('organization_id', '=', organizationId).where('name', 'in', names).execute();
    return rows.map((r) => r.name!);
  }

  /** One page of the organization's secrets, newest first; cursors are secret ids. */
  async page(organizationId: string, page: Page): Promise<SecretRow[]> {
    const position = async (id: string) =>
      this.db.selectFrom('secrets').select(['created_at', 'id']).where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
    const cursor = { after: page.after ? await position(page.after) : undefined, before: page.before ? await position(page.before) : undefined };
    const q = this.db.selectFrom('secrets').selectAll().where('organization_id', '=', organizationId);
    const { query, reversed } = applyPage(q, 'secrets', page, cursor);
    const rows = await query.execute();
    return reversed ? rows.reverse() : rows;
  }

  /** Deletes the organization's secrets with these ids; how many went. */
  async deleteMany(organizationId: string, ids: readonly string[]): Promise<number> {
    const res = await this.db.deleteFrom('secrets').where('organization_id', '=', organizationId).where('id', 'in', ids).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
