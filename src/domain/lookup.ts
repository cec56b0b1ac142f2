// "Every id named must exist": the check most batch activities make before changing anything, with
// the missing ids in the error so the caller can see which ones.
import { notFound } from '../errors/errors.js';
import type { Repositories, UserRow } from '../store/index.js';

/** Deduplicates `ids`, fetches them with `fetch`, and throws NOT_FOUND naming the missing ones. */
export async function requireAll<T extends { id: string }>(
  ids: string[],
  fetch: (unique: string[]) => Promise<T[]>,
  what: string,
): Promise<{ ids: string[]; rows: T[] }> {
  const unique = [...new Set(ids)];
  const rows = await fetch(unique);
  if (rows.length !== unique.length) {
    const have = new Set(rows.map((r) => r.id));
    throw notFound(`${what}: ${unique.filter((id) => !have.has(id)).join(', ')}`);
  }
  return { ids: unique, rows };
}

/** The user `userId` of the organization, or NOT_FOUND naming both. */
export async function requireUser(repos: Repositories, organizationId: string, userId: string): Promise<UserRow> {
  const user = await repos.users.get(organizationId, userId);
  if (!user) throw notFound(`user not found: ${userId} is not a user of organization ${organizationId}`);
  return user;
}
