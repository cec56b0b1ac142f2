// Secrets an organization imported. SQL for the `secrets` table (migration 021).
// Values are barrier ciphertext; nothing here opens them.
import type { Kysely, Selectable } from 'kysely';
import type { Database, SecretTable } from '../schema.js';
import { OrganizationScopedRepo } from './org-scoped.js';
import { isUniqueViolation } from '../db.js';

export type SecretRow = Selectable<SecretTable>;

/** An insert that clashed with the unique (organization, name) constraint: a concurrent import won. */
export class SecretNameTaken extends Error {
  constructor() {
    super('secret name taken');
  }
}

export class SecretsRepo extends OrganizationScopedRepo<'secrets'> {
  constructor(db: Kysely<Database>) {
    super(db, 'secrets');
  }

  async insert(row: SecretRow): Promise<void> {
    try {
      await this.db.insertInto('secrets').values(row).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new SecretNameTaken();
      throw err;
    }
  }

  /** Which of these names the organization's secrets already carry. */
  async namesTaken(organizationId: string, names: readonly string[]): Promise<string[]> {
    if (names.length === 0) return [];
    const rows = await this.db.selectFrom('secrets').select('name').where('organization_id', '=', organizationId).where('name', 'in', names).execute();
    return rows.map((r) => r.name!);
  }

  /** Deletes the organization's secrets with these ids; how many went. */
  async deleteMany(organizationId: string, ids: readonly string[]): Promise<number> {
    const res = await this.db.deleteFrom('secrets').where('organization_id', '=', organizationId).where('id', 'in', ids).executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
