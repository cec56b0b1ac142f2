// Keyset pagination shared by every list query: objects are ordered by (created_at, id), which is
// stable and total even when two objects share a millisecond. A cursor is an object id (the swagger
// `v1Pagination` before/after); the repository looks up that object's position and continues from it,
// so pages stay correct while rows are inserted or deleted between requests and across processes.
import type { SelectQueryBuilder } from 'kysely';

export interface Page {
  limit: number;
  before?: string;
  after?: string;
  /** 'asc' lists oldest first (users, keys, accounts); 'desc' newest first (activities). */
  order: 'asc' | 'desc';
}

export interface CursorPosition {
  created_at: number;
  id: string;
}

/**
 * Applies a page to a query over a table with `created_at` and `id`. "after X" means the objects
 * that come after X in list order, "before X" the ones that come before it; a "before" page is
 * fetched in reverse and flipped so results are always returned in list order.
 */
export function applyPage<DB, TB extends keyof DB, O>(
  q: SelectQueryBuilder<DB, TB, O>,
  table: string,
  page: Page,
  cursor: { before?: CursorPosition; after?: CursorPosition },
): { query: SelectQueryBuilder<DB, TB, O>; reversed: boolean } {
  const asc = page.order === 'asc';
  const createdAt = `${table}.created_at` as never;
  const id = `${table}.id` as never;
  let query = q;
  let reversed = false;
  if (cursor.after) {
    const c = cursor.after;
    query = query.where((eb: any) =>
      eb.or([
        eb(createdAt, asc ? '>' : '<', c.created_at),
        eb.and([eb(createdAt, '=', c.created_at), eb(id, asc ? '>' : '<', c.id)]),
      ]),
    );
  }
  if (cursor.before) {
    const c = cursor.before;
    query = query.where((eb: any) =>
      eb.or([
        eb(createdAt, asc ? '<' : '>', c.created_at),
        eb.and([eb(createdAt, '=', c.created_at), eb(id, asc ? '<' : '>', c.id)]),
      ]),
    );
    // Without an "after" bound, the page next to the cursor is the one nearest to it: walk backwards.
    if (!cursor.after) reversed = true;
  }
  const dir = (asc ? !reversed : reversed) ? 'asc' : 'desc';
  query = query.orderBy(createdAt, dir).orderBy(id, dir).limit(page.limit);
  return { query, reversed };
}
