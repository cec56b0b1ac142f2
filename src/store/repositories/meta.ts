// Deployment-wide key/value facts: the root organization id, the wrapped data key, the deployment
// signer key ciphertext. SQL for the `meta` table.
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

export class MetaRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async get(key: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('meta').select('value').where('key', '=', key).executeTakeFirst();
    return row?.value;
  }

  /** Inserts a fact; a second insert of the same key fails, which is how double init is refused. */
  async insert(key: string, value: string): Promise<void> {
    await this.db.insertInto('meta').values({ key, value }).execute();
  }

  /** Compare-and-set: replaces the value only if it is still `expected`; false when it was not. */
  async replace(key: string, expected: string, value: string): Promise<boolean> {
    const r = await this.db.updateTable('meta').set({ value }).where('key', '=', key).where('value', '=', expected).executeTakeFirst();
    return r.numUpdatedRows === 1n;
  }
}
