// HD wallets and wallet accounts. SQL for the `wallets` and `wallet_accounts` tables.
import { SqliteAdapter, sql, type Kysely, type Selectable } from 'kysely';
import { violatedUnique } from '../db.js';
import { OrganizationScopedRepo } from './org-scoped.js';
import type { Database, WalletAccountTable, WalletTable } from '../schema.js';
import { applyPage, type Page } from './pagination.js';

export type WalletRow = Selectable<WalletTable>;
export type WalletAccountRow = Selectable<WalletAccountTable>;

/** A wallet or account name already used in the organization (a unique constraint said so). */
export class NameTaken extends Error {
  constructor(readonly what: 'wallet' | 'account') {
    super(`${what} name taken`);
  }
}

export class WalletsRepo extends OrganizationScopedRepo<'wallets'> {
  constructor(db: Kysely<Database>) {
    super(db, 'wallets');
  }

  async insert(row: WalletRow): Promise<void> {
    await this.db.insertInto('wallets').values(row).execute();
  }

  async findByName(organizationId: string, name: string): Promise<WalletRow | undefined> {
    return this.db
      .selectFrom('wallets')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('name', '=', name)
      .executeTakeFirst();
  }

  async update(organizationId: string, walletId: string, changes: { name?: string; exported?: number }, now: number) {
    await this.db
      .updateTable('wallets')
      .set({ ...changes, updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', walletId)
      .execute();
  }

  async delete(organizationId: string, walletIds: string[]): Promise<void> {
    if (walletIds.length === 0) return;
    await this.db.deleteFrom('wallet_accounts').where('organization_id', '=', organizationId).where('wallet_id', 'in', walletIds).execute();
    await this.db.deleteFrom('wallets').where('organization_id', '=', organizationId).where('id', 'in', walletIds).execute();
  }

  /**
   * A new wallet and its accounts, in as few statements as the dialect allows (one on PostgreSQL).
   * The unique constraints decide name clashes (no read first): a clash throws NameTaken.
   */
  async insertWithAccounts(wallet: WalletRow, accounts: WalletAccountRow[]): Promise<void> {
    try {
      if (this.db.getExecutor().adapter instanceof SqliteAdapter) {
        await this.insert(wallet);
        await this.insertAccounts(accounts);
        return;
      }
      await sql`WITH w AS (INSERT INTO wallets SELECT * FROM json_populate_record(NULL::wallets, ${JSON.stringify(wallet)}::json))
        INSERT INTO wallet_accounts SELECT * FROM json_populate_recordset(NULL::wallet_accounts, ${JSON.stringify(accounts)}::json)`.execute(this.db);
    } catch (err) {
      const which = violatedUnique(err);
      if (which === undefined) throw err;
      throw new NameTaken(/wallet_accounts/.test(which) ? 'account' : 'wallet');
    }
  }

  async insertAccounts(rows: WalletAccountRow[]): Promise<void> {
    // Chunked so very large account batches stay under SQLite's bound-parameter limit.
    for (let i = 0; i < rows.length; i += 50) {
      await this.db.insertInto('wallet_accounts').values(rows.slice(i, i + 50)).execute();
    }
  }

  async accountsOfWallet(walletId: string): Promise<WalletAccountRow[]> {
    return this.db.selectFrom('wallet_accounts').selectAll().where('wallet_id', '=', walletId).orderBy('created_at').orderBy('id').execute();
  }

  async accountByPathKey(walletId: string, pathKeys: string[]): Promise<WalletAccountRow[]> {
    if (pathKeys.length === 0) return [];
    return this.db.selectFrom('wallet_accounts').selectAll().where('wallet_id', '=', walletId).where('path_key', 'in', pathKeys).execute();
  }

  async accountsByName(organizationId: string, names: string[]): Promise<WalletAccountRow[]> {
    if (names.length === 0) return [];
    return this.db
      .selectFrom('wallet_accounts')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('name', 'in', names)
      .execute();
  }

  async account(organizationId: string, accountId: string): Promise<WalletAccountRow | undefined> {
    return this.db
      .selectFrom('wallet_accounts')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', accountId)
      .executeTakeFirst();
  }

  async accountsById(organizationId: string, accountIds: string[]): Promise<WalletAccountRow[]> {
    if (accountIds.length === 0) return [];
    return this.db
      .selectFrom('wallet_accounts')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', 'in', accountIds)
      .execute();
  }

  /** Accounts with this address in the organization, oldest first. */
  async accountsByAddress(organizationId: string, address: string): Promise<WalletAccountRow[]> {
    return this.db
      .selectFrom('wallet_accounts')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('address', '=', address)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async listAccounts(organizationId: string, walletId: string | undefined, page: Page): Promise<WalletAccountRow[]> {
    let q = this.db.selectFrom('wallet_accounts').selectAll().where('organization_id', '=', organizationId);
    if (walletId) q = q.where('wallet_id', '=', walletId);
    const cursor = {
      before: page.before ? await this.accountPosition(organizationId, page.before) : undefined,
      after: page.after ? await this.accountPosition(organizationId, page.after) : undefined,
    };
    const { query, reversed } = applyPage(q, 'wallet_accounts', page, cursor);
    const rows = await query.execute();
    return reversed ? rows.reverse() : rows;
  }

  async accountPosition(organizationId: string, id: string): Promise<{ created_at: number; id: string } | undefined> {
    return this.db
      .selectFrom('wallet_accounts')
      .select(['created_at', 'id'])
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  async markAccountExported(organizationId: string, accountId: string, now: number): Promise<void> {
    await this.db
      .updateTable('wallet_accounts')
      .set({ exported: 1, updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', accountId)
      .execute();
  }

  async deleteAccounts(organizationId: string, accountIds: string[]): Promise<void> {
    if (accountIds.length === 0) return;
    await this.db.deleteFrom('wallet_accounts').where('organization_id', '=', organizationId).where('id', 'in', accountIds).execute();
  }
}
