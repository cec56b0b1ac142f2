// Boot proofs of serving processes. SQL for the `boot_proofs` table.
import type { Kysely, Selectable } from 'kysely';
import type { BootProofTable, Database } from '../schema.js';

export type BootProofRow = Selectable<BootProofTable>;

export class BootProofsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: BootProofRow): Promise<void> {
    await this.db.insertInto('boot_proofs').values(row).execute();
  }

  async get(ephemeralPublicKey: string): Promise<BootProofRow | undefined> {
    return this.db.selectFrom('boot_proofs').selectAll().where('ephemeral_public_key', '=', ephemeralPublicKey).executeTakeFirst();
  }

  async latest(): Promise<BootProofRow | undefined> {
    return this.db.selectFrom('boot_proofs').selectAll().orderBy('created_at', 'desc').limit(1).executeTakeFirst();
  }
}
