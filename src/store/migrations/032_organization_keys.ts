// Migration 032: per-organization data keys (docs/operator-guide.md "Custody", per-organization keys).
// `organization_keys` holds each organization's data key, wrapped by the deployment's data key and
// named by a random key id that the organization's ciphertexts carry. The migration is lazy: an
// organization gets its key the first time one of its secrets is sealed, and secrets sealed before
// this migration keep their `v1` form under the deployment key and open as before, so an existing
// deployment starts at once and its wallets keep signing; a serving process then re-seals them under
// their organization's key in the background (src/domain/keys/reseal.ts), after which every secret is
// shredded with its organization.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('organization_keys')
    .addColumn('organization_id', 'text', (c) => c.primaryKey())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('wrapped_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
}
