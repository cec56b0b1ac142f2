// Migration 002: HD wallets and their accounts, private keys with their addresses and tags (the
// wallets issue). Key material is stored only as barrier ciphertext.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('wallets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('mnemonic', 'text', (c) => c.notNull())
    .addColumn('exported', 'integer', (c) => c.notNull())
    .addColumn('imported', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('wallets_org_name', ['organization_id', 'name'])
    .execute();
  await db.schema.createIndex('wallets_org_created').on('wallets').columns(['organization_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('wallet_accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('wallet_id', 'text', (c) => c.notNull().references('wallets.id'))
    .addColumn('curve', 'text', (c) => c.notNull())
    .addColumn('path_format', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('path_key', 'text', (c) => c.notNull())
    .addColumn('address_format', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('exported', 'integer', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    // A path is used once per wallet (docs/reference/addresses.md); names are unique in the organization.
    .addUniqueConstraint('wallet_accounts_wallet_path', ['wallet_id', 'path_key'])
    .addUniqueConstraint('wallet_accounts_org_name', ['organization_id', 'name'])
    .execute();
  await db.schema.createIndex('wallet_accounts_org_address').on('wallet_accounts').columns(['organization_id', 'address']).execute();
  await db.schema
    .createIndex('wallet_accounts_org_created')
    .on('wallet_accounts')
    .columns(['organization_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('wallet_accounts_wallet_created')
    .on('wallet_accounts')
    .columns(['wallet_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('private_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('curve', 'text', (c) => c.notNull())
    .addColumn('public_key', 'text', (c) => c.notNull())
    .addColumn('private_key', 'text', (c) => c.notNull())
    .addColumn('exported', 'integer', (c) => c.notNull())
    .addColumn('imported', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('private_keys_org_name', ['organization_id', 'name'])
    .execute();
  await db.schema.createIndex('private_keys_org_created').on('private_keys').columns(['organization_id', 'created_at', 'id']).execute();

  await db.schema
    .createTable('private_key_addresses')
    .addColumn('private_key_id', 'text', (c) => c.notNull().references('private_keys.id'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('address_format', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('private_key_addresses_pk', ['private_key_id', 'address_format'])
    .execute();
  await db.schema
    .createIndex('private_key_addresses_org_address')
    .on('private_key_addresses')
    .columns(['organization_id', 'address'])
    .execute();

  await db.schema
    .createTable('private_key_tags')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('private_key_tags_org_name', ['organization_id', 'name'])
    .execute();

  await db.schema
    .createTable('private_key_tag_assignments')
    .addColumn('tag_id', 'text', (c) => c.notNull().references('private_key_tags.id'))
    .addColumn('private_key_id', 'text', (c) => c.notNull().references('private_keys.id'))
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('private_key_tag_assignments_pk', ['tag_id', 'private_key_id'])
    .execute();
  await db.schema
    .createIndex('private_key_tag_assignments_key')
    .on('private_key_tag_assignments')
    .column('private_key_id')
    .execute();
}
