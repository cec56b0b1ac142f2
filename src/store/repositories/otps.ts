// One-time codes (migration 008). SQL for the `otps` table. Every state change is a single
// conditional UPDATE, so concurrent verifications can never spend more attempts, or a code or a
// verification token more often, than the rules allow.
import type { Kysely, Selectable } from 'kysely';
import type { Database, OtpTable } from '../schema.js';

export type OtpRow = Selectable<OtpTable>;

export class OtpsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: OtpRow): Promise<void> {
    await this.db.insertInto('otps').values(row).execute();
  }

  async get(organizationId: string, id: string): Promise<OtpRow | undefined> {
    return this.db.selectFrom('otps').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('otps').where('id', '=', id).execute();
  }

  /** Codes of a contact still usable at `now`: unused, unexpired, attempts left. */
  async countActive(organizationId: string, contact: string, now: number, maxAttempts: number): Promise<number> {
    const r = await this.db
      .selectFrom('otps')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('organization_id', '=', organizationId)
      .where('contact', '=', contact)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .where('attempts', '<', maxAttempts)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Codes initiated for a user identifier since `since`. */
  async countSince(organizationId: string, userIdentifier: string, since: number): Promise<number> {
    const r = await this.db
      .selectFrom('otps')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('organization_id', '=', organizationId)
      .where('user_identifier', '=', userIdentifier)
      .where('created_at', '>=', since)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Spends one attempt of a live code; false when none is left, it expired or it was used. */
  async takeAttempt(id: string, now: number, maxAttempts: number): Promise<boolean> {
    const res = await this.db
      .updateTable('otps')
      .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
      .where('id', '=', id)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .where('attempts', '<', maxAttempts)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Marks a code verified and records the token it produced; false when it already was used. */
  async markVerified(id: string, now: number, tokenId: string, tokenExpiresAt: number): Promise<boolean> {
    const res = await this.db
      .updateTable('otps')
      .set({ used_at: now, verification_token_id: tokenId, token_expires_at: tokenExpiresAt })
      .where('id', '=', id)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async findByToken(tokenId: string): Promise<OtpRow | undefined> {
    return this.db.selectFrom('otps').selectAll().where('verification_token_id', '=', tokenId).executeTakeFirst();
  }

  /**
   * Spends a verification token; false when the use is no longer available. `login` needs the
   * token not yet used to log in (a key-bound token's signup may have come first); `signup` and
   * `whole` need it entirely unused, and `whole` leaves nothing for later.
   */
  async spendToken(tokenId: string, now: number, use: 'login' | 'signup' | 'whole'): Promise<boolean> {
    let q = this.db
      .updateTable('otps')
      .set(use === 'login' ? { token_used_at: now } : use === 'signup' ? { token_signup_used_at: now } : { token_used_at: now, token_signup_used_at: now })
      .where('verification_token_id', '=', tokenId)
      .where('token_used_at', 'is', null);
    if (use !== 'login') q = q.where('token_signup_used_at', 'is', null);
    const res = await q.executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }
}
