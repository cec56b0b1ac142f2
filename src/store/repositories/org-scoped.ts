// The reads every organization-owned table shares: one row by id, several by ids, all in creation
// order, and a count; each repository of such a table extends this instead of repeating them.
import type { Kysely, Selectable } from 'kysely';
import type { Database } from '../schema.js';
import { applyPage, type Page } from './pagination.js';

/** Tables whose rows belong to an organization and are listed in (created_at, id) order. */
export type OrganizationTable = {
  [K in keyof Database]: Database[K] extends { id: string; organization_id: string; created_at: number } ? K : never;
}[keyof Database];

export class OrganizationScopedRepo<T extends OrganizationTable> {
  constructor(
    protected readonly db: Kysely<Database>,
    private readonly table: T,
  ) {}

  // Kysely cannot type a query over a table chosen by a type parameter; the casts stay here.
  private from(): any {
    return (this.db as Kysely<any>).selectFrom(this.table).selectAll();
  }

  async get(organizationId: string, id: string): Promise<Selectable<Database[T]> | undefined> {
    return this.from().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  async getMany(organizationId: string, ids: string[]): Promise<Selectable<Database[T]>[]> {
    if (ids.length === 0) return [];
    return this.from().where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
  }

  async list(organizationId: string): Promise<Selectable<Database[T]>[]> {
    return this.from().where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
  }

  /** One page of the organization's rows in the page's order; cursors are row ids. */
  async page(organizationId: string, page: Page): Promise<Selectable<Database[T]>[]> {
    const position = async (id: string) => (await this.get(organizationId, id)) as { created_at: number; id: string } | undefined;
    const cursor = { after: page.after ? await position(page.after) : undefined, before: page.before ? await position(page.before) : undefined };
    const { query, reversed } = applyPage<any, any, any>(this.from().where('organization_id', '=', organizationId), this.table, page, cursor);
    const rows = (await query.execute()) as Selectable<Database[T]>[];
    return reversed ? rows.reverse() : rows;
  }

  async count(organizationId: string): Promise<number> {
    const db: any = this.db;
    const row = await db
      .selectFrom(this.table)
      .select((eb: any) => eb.fn.countAll().as('n'))
      .where('organization_id', '=', organizationId)
      .executeTakeFirstOrThrow();
    return Number((row as { n: unknown }).n);
  }
}

/** Organization tables whose rows also belong to one user: the credential tables. */
export type UserOwnedTable = {
  [K in OrganizationTable]: Database[K] extends { user_id: string } ? K : never;
}[OrganizationTable];

/** Adds what every per-user credential table shares: listing by owners, counting and deleting a user's rows. */
export class UserOwnedRepo<T extends UserOwnedTable> extends OrganizationScopedRepo<T> {
  constructor(
    db: Kysely<Database>,
    private readonly ownedTable: T,
  ) {
    super(db, ownedTable);
  }

  private get any(): any {
    return this.db;
  }

  async listForUsers(organizationId: string, userIds: string[]): Promise<Selectable<Database[T]>[]> {
    if (userIds.length === 0) return [];
    return this.any
      .selectFrom(this.ownedTable)
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('user_id', 'in', userIds)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }

  async countForUser(organizationId: string, userId: string): Promise<number> {
    const row = await this.any
      .selectFrom(this.ownedTable)
      .select((eb: any) => eb.fn.countAll().as('n'))
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Deletes the given rows of one user; returns how many there were. */
  async delete(organizationId: string, userId: string, ids: string[]): Promise<number> {
    if (ids.length === 0) return 0;
    const res = await this.any
      .deleteFrom(this.ownedTable)
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .where('id', 'in', ids)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
