// Auth proxy configurations (migration 014; docs/reference/auth-proxy.md): looked up by id on every
// auth proxy request, created and listed by the operator CLI.
import type { Kysely, Selectable } from 'kysely';
import type { AuthProxyConfigTable, Database } from '../schema.js';

export type AuthProxyConfigRow = Selectable<AuthProxyConfigTable>;

export class AuthProxyConfigsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: AuthProxyConfigRow): Promise<void> {
    await this.db.insertInto('auth_proxy_configs').values(row).execute();
  }

  async get(id: string): Promise<AuthProxyConfigRow | undefined> {
    return this.db.selectFrom('auth_proxy_configs').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async list(organizationId?: string): Promise<AuthProxyConfigRow[]> {
    let q = this.db.selectFrom('auth_proxy_configs').selectAll();
    if (organizationId !== undefined) q = q.where('organization_id', '=', organizationId);
    return q.orderBy('created_at').orderBy('id').execute();
  }

  async update(id: string, changes: Partial<Pick<AuthProxyConfigRow, 'settings' | 'enabled'>>, now: number): Promise<boolean> {
    const res = await this.db.updateTable('auth_proxy_configs').set({ ...changes, updated_at: now }).where('id', '=', id).executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }
}
