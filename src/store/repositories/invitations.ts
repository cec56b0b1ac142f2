// Invitations (migration 022): SQL for the `invitations` table. Status
// changes are compare-and-set on `status = INVITATION_STATUS_CREATED`, so of an accept and a revoke
// racing (or two accepts of one token) exactly one wins, on both stores.
import type { Kysely, Selectable } from 'kysely';
import type { Database, InvitationTable } from '../schema.js';

export type InvitationRow = Selectable<InvitationTable>;

const PENDING = 'INVITATION_STATUS_CREATED';

export class InvitationsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(rows: InvitationRow[]): Promise<void> {
    if (rows.length > 0) await this.db.insertInto('invitations').values(rows).execute();
  }

  async get(organizationId: string, id: string): Promise<InvitationRow | undefined> {
    return this.db.selectFrom('invitations').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  async byTokenHash(tokenHash: string): Promise<InvitationRow | undefined> {
    return this.db.selectFrom('invitations').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  }

  /** Pending invitations of the organization to `email` (lower-cased), not yet expired at `now`. */
  async countPending(organizationId: string, now: number, email?: string): Promise<number> {
    let q = this.db
      .selectFrom('invitations')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('organization_id', '=', organizationId)
      .where('status', '=', PENDING)
      .where('expires_at', '>', now);
    if (email !== undefined) q = q.where((eb) => eb(eb.fn('lower', ['receiver_email']), '=', email));
    const row = await q.executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Moves a pending invitation to `status`; false when it was no longer pending. */
  async settle(id: string, status: string, now: number, acceptedUserId: string | null = null): Promise<boolean> {
    const r = await this.db
      .updateTable('invitations')
      .set({ status, updated_at: now, accepted_user_id: acceptedUserId })
      .where('id', '=', id)
      .where('status', '=', PENDING)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Withdraws invitations whose email could not be sent (the activity that made them failed). */
  async delete(ids: string[]): Promise<void> {
    if (ids.length > 0) await this.db.deleteFrom('invitations').where('id', 'in', ids).execute();
  }
}
