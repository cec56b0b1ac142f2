// Migration 030: lookups of an end user's sub-organization that stay one index read at a million
// sub-organizations (list_suborgs / list_verified_suborgs filters, docs/reference/organizations.md,
// and the auth proxy's `account`, which is list_suborgs).
//
// Before it, list_suborgs by email, phone number, user name or wallet address had no index on the
// value: the query walked the parent's children (organizations_parent) and probed each one's users or
// accounts, so its cost grew with the deployment (84 ms at p99 by email and 117 ms by wallet address
// with 3,000 end users on PostgreSQL). Each filter now starts from an index on the value it names and
// reaches the organization by primary key.
//  - users: email and phone number (partial: most end users have one of the two, and a row without
//    it needs no entry), user name;
//  - wallet_accounts: (address, organization_id) replaces (organization_id, address): the lookups by
//    address within one organization (signing, policies) still read one entry, and a lookup by address
//    alone can now use it; one index, not two.
//  - organizations: (parent_organization_id, created_at, id) replaces (parent_organization_id), so an
//    unfiltered page of sub-organizations reads its rows in order instead of sorting all of them;
//    name, for the NAME filter.
// API key public keys, authenticator credential ids and OIDC identities already had theirs.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE INDEX users_email ON users (user_email) WHERE user_email IS NOT NULL`.execute(db);
  await sql`CREATE INDEX users_phone_number ON users (user_phone_number) WHERE user_phone_number IS NOT NULL`.execute(db);
  await sql`CREATE INDEX users_name ON users (user_name)`.execute(db);
  await sql`DROP INDEX wallet_accounts_org_address`.execute(db);
  await sql`CREATE INDEX wallet_accounts_address ON wallet_accounts (address, organization_id)`.execute(db);
  await sql`DROP INDEX organizations_parent`.execute(db);
  await sql`CREATE INDEX organizations_parent_created ON organizations (parent_organization_id, created_at, id)`.execute(db);
  await sql`CREATE INDEX organizations_name ON organizations (name)`.execute(db);
}
