// Activities and their votes. SQL for the `activities` and `votes` tables. The unique
// (timestamp_ms, fingerprint, organization_id) constraint is what makes submissions idempotent across
// processes (migration 025: the fingerprint fixes the body, and so its timestampMs).
import { SqliteAdapter, type Kysely, type Selectable } from 'kysely';
import type { ActivityTable, Database, VoteTable } from '../schema.js';
import { applyPage, type Page } from './pagination.js';

export type ActivityRow = Selectable<ActivityTable>;
export type VoteRow = Selectable<VoteTable>;

export class ActivitiesRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: ActivityRow): Promise<void> {
    await this.db.insertInto('activities').values(row).execute();
  }

  async get(organizationId: string, id: string): Promise<ActivityRow | undefined> {
    return this.db
      .selectFrom('activities')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /**
   * Inside a vote's transaction: the activity, locked until the commit (PostgreSQL `FOR UPDATE`;
   * SQLite's write transactions are serial already), so two final approvals arriving at once in
   * two processes decide one after the other and the activity runs once.
   */
  async lockForVote(organizationId: string, id: string): Promise<ActivityRow | undefined> {
    const q = this.db.selectFrom('activities').selectAll().where('organization_id', '=', organizationId).where('id', '=', id);
    return (this.db.getExecutor().adapter instanceof SqliteAdapter ? q : q.forUpdate()).executeTakeFirst();
  }

  /** Every activity's columns the audit cross-check compares (sigil audit verify). */
  async listAll(): Promise<Pick<ActivityRow, 'id' | 'status' | 'intent' | 'result' | 'failure' | 'created_at'>[]> {
    return this.db.selectFrom('activities').select(['id', 'status', 'intent', 'result', 'failure', 'created_at']).execute();
  }

  async listAllVotes(): Promise<VoteRow[]> {
    return this.db.selectFrom('votes').selectAll().execute();
  }

  /** The activity a submission's body names: its fingerprint, and the timestampMs that body carries. */
  async findByFingerprint(organizationId: string, fingerprint: string, timestampMs: number): Promise<ActivityRow | undefined> {
    return this.db
      .selectFrom('activities')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('timestamp_ms', '=', timestampMs)
      .where('fingerprint', '=', fingerprint)
      .executeTakeFirst();
  }

  /**
   * The activity an approval or rejection names by fingerprint alone: one that waits, or waited, for
   * approval (the partial index of migration 025). One that never waited is not found.
   */
  async findVoteTarget(organizationId: string, fingerprint: string): Promise<ActivityRow | undefined> {
    return this.db
      .selectFrom('activities')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('fingerprint', '=', fingerprint)
      .where('pending_parameters', 'is not', null)
      .executeTakeFirst();
  }

  async finish(
    id: string,
    update: { status: string; result?: string | null; failure?: string | null; appProofs?: string | null },
    now: number,
  ): Promise<void> {
    await this.db
      .updateTable('activities')
      .set({
        status: update.status,
        result: update.result ?? null,
        failure: update.failure ?? null,
        app_proofs: update.appProofs ?? null,
        pending_parameters: null,
        updated_at: now,
      })
      .where('id', '=', id)
      .execute();
  }

  /**
   * Moves a waiting activity to a final status, only if it is still waiting: two processes
   * counting the deciding vote at once cannot both run it. Its sealed parameters are discarded;
   * the '' left in their place keeps it where approvals look (findVoteTarget), to be told it is done.
   */
  async finishWaiting(
    id: string,
    waitingStatus: string,
    update: { status: string; result?: string | null; failure?: string | null },
    now: number,
  ): Promise<boolean> {
    const res = await this.db
      .updateTable('activities')
      .set({ status: update.status, result: update.result ?? null, failure: update.failure ?? null, pending_parameters: '', updated_at: now })
      .where('id', '=', id)
      .where('status', '=', waitingStatus)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async list(
    organizationId: string,
    page: Page,
    filters: { statuses?: string[]; types?: string[] },
  ): Promise<ActivityRow[]> {
    let q = this.db.selectFrom('activities').selectAll().where('organization_id', '=', organizationId);
    if (filters.statuses && filters.statuses.length > 0) q = q.where('status', 'in', filters.statuses);
    if (filters.types && filters.types.length > 0) q = q.where('type', 'in', filters.types);
    const cursor = {
      before: page.before ? await this.position(organizationId, page.before) : undefined,
      after: page.after ? await this.position(organizationId, page.after) : undefined,
    };
    const { query, reversed } = applyPage(q, 'activities', page, cursor);
    const rows = await query.execute();
    return reversed ? rows.reverse() : rows;
  }

  /** Position of a cursor object; an unknown cursor is reported by the caller. */
  async position(organizationId: string, id: string): Promise<{ created_at: number; id: string } | undefined> {
    return this.db
      .selectFrom('activities')
      .select(['created_at', 'id'])
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
  }

  /**
   * Moves a waiting activity to another waiting status, its sealed parameters kept (an activity whose
   * MFA is now met that still needs approvals: AUTHENTICATORS_NEEDED → CONSENSUS_NEEDED).
   */
  async moveWaiting(id: string, from: string, to: string, now: number): Promise<boolean> {
    const res = await this.db.updateTable('activities').set({ status: to, updated_at: now }).where('id', '=', id).where('status', '=', from).executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async insertVote(row: VoteRow): Promise<void> {
    await this.db.insertInto('votes').values(row).execute();
  }

  async votes(activityIds: string[]): Promise<VoteRow[]> {
    if (activityIds.length === 0) return [];
    return this.db
      .selectFrom('votes')
      .selectAll()
      .where('activity_id', 'in', activityIds)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  }
}
