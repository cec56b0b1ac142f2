// Private keys, their addresses and tags. SQL for `private_keys`, `private_key_addresses`,
// `private_key_tags` and `private_key_tag_assignments`.
import type { Kysely, Selectable } from 'kysely';
import { OrganizationScopedRepo } from './org-scoped.js';
import type { Database, PrivateKeyAddressTable, PrivateKeyTable, PrivateKeyTagTable } from '../schema.js';

export type PrivateKeyRow = Selectable<PrivateKeyTable>;
export type PrivateKeyAddressRow = Selectable<PrivateKeyAddressTable>;
export type PrivateKeyTagRow = Selectable<PrivateKeyTagTable>;

export class PrivateKeysRepo extends OrganizationScopedRepo<'private_keys'> {
  constructor(db: Kysely<Database>) {
    super(db, 'private_keys');
  }

  async insert(row: PrivateKeyRow, addresses: PrivateKeyAddressRow[]): Promise<void> {
    await this.db.insertInto('private_keys').values(row).execute();
    if (addresses.length > 0) await this.db.insertInto('private_key_addresses').values(addresses).execute();
  }

  async findByName(organizationId: string, name: string): Promise<PrivateKeyRow | undefined> {
    return this.db
      .selectFrom('private_keys')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('name', '=', name)
      .executeTakeFirst();
  }

  /** Keys with an address equal to `address` in the organization, oldest first. */
  async findByAddress(organizationId: string, address: string): Promise<PrivateKeyRow[]> {
    return this.db
      .selectFrom('private_keys')
      .innerJoin('private_key_addresses', 'private_key_addresses.private_key_id', 'private_keys.id')
      .selectAll('private_keys')
      .where('private_key_addresses.organization_id', '=', organizationId)
      .where('private_key_addresses.address', '=', address)
      .orderBy('private_keys.created_at')
      .orderBy('private_keys.id')
      .execute();
  }

  async addresses(keyIds: string[]): Promise<PrivateKeyAddressRow[]> {
    if (keyIds.length === 0) return [];
    return this.db
      .selectFrom('private_key_addresses')
      .selectAll()
      .where('private_key_id', 'in', keyIds)
      .orderBy('private_key_id')
      .orderBy('position')
      .execute();
  }

  async markExported(organizationId: string, id: string, now: number): Promise<void> {
    await this.db
      .updateTable('private_keys')
      .set({ exported: 1, updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .execute();
  }

  async delete(organizationId: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.deleteFrom('private_key_tag_assignments').where('private_key_id', 'in', ids).execute();
    await this.db.deleteFrom('private_key_addresses').where('private_key_id', 'in', ids).execute();
    await this.db.deleteFrom('private_keys').where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
  }

  // Tags

  async tagIdsOf(keyIds: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>(keyIds.map((k) => [k, []]));
    if (keyIds.length === 0) return out;
    const rows = await this.db
      .selectFrom('private_key_tag_assignments')
      .innerJoin('private_key_tags', 'private_key_tags.id', 'private_key_tag_assignments.tag_id')
      .select(['private_key_tag_assignments.private_key_id', 'private_key_tag_assignments.tag_id'])
      .where('private_key_tag_assignments.private_key_id', 'in', keyIds)
      .orderBy('private_key_tags.created_at')
      .orderBy('private_key_tags.id')
      .execute();
    for (const r of rows) out.get(r.private_key_id)?.push(r.tag_id);
    return out;
  }

  async insertTag(row: PrivateKeyTagRow): Promise<void> {
    await this.db.insertInto('private_key_tags').values(row).execute();
  }

  async tag(organizationId: string, tagId: string): Promise<PrivateKeyTagRow | undefined> {
    return this.db
      .selectFrom('private_key_tags')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', tagId)
      .executeTakeFirst();
  }

  async tags(organizationId: string, tagIds?: string[]): Promise<PrivateKeyTagRow[]> {
    let q = this.db.selectFrom('private_key_tags').selectAll().where('organization_id', '=', organizationId);
    if (tagIds) {
      if (tagIds.length === 0) return [];
      q = q.where('id', 'in', tagIds);
    }
    return q.orderBy('created_at').orderBy('id').execute();
  }

  async tagByName(organizationId: string, name: string): Promise<PrivateKeyTagRow | undefined> {
    return this.db
      .selectFrom('private_key_tags')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('name', '=', name)
      .executeTakeFirst();
  }

  async renameTag(organizationId: string, tagId: string, name: string, now: number): Promise<void> {
    await this.db
      .updateTable('private_key_tags')
      .set({ name, updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', '=', tagId)
      .execute();
  }

  async assign(organizationId: string, tagId: string, keyIds: string[]): Promise<void> {
    if (keyIds.length === 0) return;
    const existing = await this.db
      .selectFrom('private_key_tag_assignments')
      .select('private_key_id')
      .where('tag_id', '=', tagId)
      .where('private_key_id', 'in', keyIds)
      .execute();
    const have = new Set(existing.map((r) => r.private_key_id));
    const fresh = [...new Set(keyIds)].filter((k) => !have.has(k));
    if (fresh.length === 0) return;
    await this.db
      .insertInto('private_key_tag_assignments')
      .values(fresh.map((private_key_id) => ({ tag_id: tagId, private_key_id, organization_id: organizationId })))
      .execute();
  }

  async unassign(tagId: string, keyIds: string[]): Promise<void> {
    if (keyIds.length === 0) return;
    await this.db.deleteFrom('private_key_tag_assignments').where('tag_id', '=', tagId).where('private_key_id', 'in', keyIds).execute();
  }

  /** Keys that carry any of the tags. */
  async keysWithTags(tagIds: string[]): Promise<string[]> {
    if (tagIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('private_key_tag_assignments')
      .select('private_key_id')
      .distinct()
      .where('tag_id', 'in', tagIds)
      .execute();
    return rows.map((r) => r.private_key_id);
  }

  async deleteTags(organizationId: string, tagIds: string[]): Promise<void> {
    if (tagIds.length === 0) return;
    await this.db.deleteFrom('private_key_tag_assignments').where('tag_id', 'in', tagIds).execute();
    await this.db.deleteFrom('private_key_tags').where('organization_id', '=', organizationId).where('id', 'in', tagIds).execute();
  }
}
