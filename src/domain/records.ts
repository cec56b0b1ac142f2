// Shapes shared by the records Sigil returns: the timestamp object `{seconds, nanos}` with both
// values as strings (docs/reference/activities.md "The record", docs/reference/activities.md "The record").
import { invalid } from '../errors/errors.js';

export interface TimestampObject {
  seconds: string;
  nanos: string;
}

export function timestamp(ms: number): TimestampObject {
  return { seconds: String(Math.floor(ms / 1000)), nanos: String((ms % 1000) * 1_000_000) };
}

/** Default and bounds of `paginationOptions.limit` (docs/reference/api.md "Queries"). */
export function pageLimit(limit: string | undefined): number {
  if (limit === undefined || limit === '') return 10;
  const n = Number(limit);
  if (!Number.isInteger(n) || n < 1 || n > 100) {
    throw invalid(`paginationOptions.limit must be an integer from 1 to 100, got "${limit}"`);
  }
  return n;
}

/** `paginationOptions` as every list request carries it (v1Pagination). */
export interface PaginationOptions {
  limit?: string;
  before?: string;
  after?: string;
}

/**
 * Refuses a `before`/`after` cursor that names no record of this list in this organization (a
 * cursor is a record's id), so a stale or foreign cursor is a clear 400, not an empty page.
 */
export async function requireCursors(page: PaginationOptions, exists: (id: string) => Promise<unknown>, what: string): Promise<void> {
  for (const cursor of [page.before, page.after]) {
    if (cursor && !(await exists(cursor))) throw invalid(`pagination cursor ${cursor} is not ${what} of this organization`);
  }
}
