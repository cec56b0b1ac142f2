// Reads activity records for get_activity, list_activities and submit responses, with their votes
// and the voters' user records.
import { SigilError } from '../errors/errors.js';
import type { ActivityRow, Repositories, VoteRow } from '../store/index.js';
import { renderActivity, renderActivityText, type UserRenderer, type Viewer } from './record.js';

/**
 * The decoded view of what an activity signs (docs/policies.md "Approving what you see"), supplied by the
 * composition root (src/domain/keys/decoded-approvals.ts); undefined for activities that sign nothing.
 */
export type ActivityDescriber = (row: ActivityRow, votes: VoteRow[]) => Promise<unknown>;

/**
 * Whether the viewer is included in the consensus of an activity waiting for it, as a vote would find
 * (src/activity/waiting.ts mayVote).
 */
export type VoteCheck = (row: ActivityRow, votes: VoteRow[], viewer: Viewer) => Promise<boolean>;

export class ActivityRecords {
  constructor(
    private readonly repos: Repositories,
    private readonly renderUsers: UserRenderer,
    private readonly describe?: ActivityDescriber,
    /**
     * Reads narrow `canApprove`/`canReject` of an activity waiting for consensus to viewers included
     * in it, so the dashboard's Pending page lists only what its user can vote on.
     */
    private readonly mayVote?: VoteCheck,
  ) {}

  /**
   * Reads (get_activity, list_activities) carry `decodedView` beside the record's own fields; submit
   * answers do not, so signing pays nothing for it.
   */
  private async withDecodedViews(rows: ActivityRow[], rendered: Record<string, unknown>[], viewer?: Viewer) {
    if (!this.describe && !this.mayVote) return rendered;
    const votes = await this.repos.activities.votes(rows.map((r) => r.id));
    return Promise.all(
      rendered.map(async (record, i) => {
        const own = votes.filter((v) => v.activity_id === rows[i].id);
        let out = record;
        if (viewer && this.mayVote && record.canApprove && rows[i].status === 'ACTIVITY_STATUS_CONSENSUS_NEEDED' && !(await this.mayVote(rows[i], own, viewer))) {
          const narrowed = { canApprove: false, canReject: false };
          const result = record.result as Record<string, unknown>;
          out = { ...record, ...narrowed, result: { ...result, activity: { ...(result.activity as object), ...narrowed } } };
        }
        const view = this.describe ? await this.describe(rows[i], own) : undefined;
        return view === undefined ? out : { ...out, decodedView: view };
      }),
    );
  }

  /** The voters' user records by user id, as they are now (each read through `repos`). */
  async voters(votes: VoteRow[], repos: Repositories = this.repos): Promise<Map<string, unknown>> {
    const byOrg = new Map<string, Set<string>>();
    for (const v of votes) {
      if (!byOrg.has(v.organization_id)) byOrg.set(v.organization_id, new Set());
      byOrg.get(v.organization_id)!.add(v.user_id);
    }
    const users = new Map<string, unknown>();
    for (const [org, ids] of byOrg) for (const [k, u] of await this.renderUsers(repos, org, [...ids])) users.set(k, u);
    return users;
  }

  /**
   * `repos`: the request's reads, through which voters' user records come from the read cache.
   * `asVoted`: voters rendered when they voted, shown as such (a just-submitted activity's answer
   * shows its voter as it was, also when the activity deleted it: delete_sub_organization deletes its
   * own voters); the other voters are rendered now.
   */
  async render(rows: ActivityRow[], viewer?: Viewer, knownVotes?: VoteRow[], repos: Repositories = this.repos, asVoted?: Map<string, unknown>) {
    // A just-recorded activity brings its votes along; no need to read them back.
    const votes = knownVotes ?? (await repos.activities.votes(rows.map((r) => r.id)));
    const users = new Map(asVoted ?? []);
    for (const [id, user] of await this.voters(votes.filter((v) => !users.has(v.user_id)), repos)) users.set(id, user);
    return rows.map((r) =>
      renderActivity(
        r,
        votes.filter((v) => v.activity_id === r.id),
        users,
        viewer,
      ),
    );
  }

  /**
   * A just-recorded activity as JSON text, exactly `JSON.stringify` of what `render` gives for it:
   * its votes are known, and its voters' records are serialized once while the read cache keeps them.
   */
  async renderText(row: ActivityRow, viewer: Viewer, votes: VoteRow[], repos: Repositories = this.repos, asVoted?: Map<string, unknown>): Promise<string> {
    const users = new Map(asVoted ?? []);
    for (const [id, user] of await this.voters(votes.filter((v) => !users.has(v.user_id)), repos)) users.set(id, user);
    return renderActivityText(row, votes, users, viewer);
  }

  async get(organizationId: string, activityId: string, viewer?: Viewer) {
    const row = await this.repos.activities.get(organizationId, activityId);
    if (!row) return undefined;
    return (await this.withDecodedViews([row], await this.render([row], viewer), viewer))[0];
  }

  async list(
    organizationId: string,
    opts: { limit: number; before?: string; after?: string; statuses?: string[]; types?: string[] },
    viewer?: Viewer,
  ) {
    for (const cursor of [opts.before, opts.after]) {
      if (cursor && !(await this.repos.activities.position(organizationId, cursor))) {
        throw new SigilError('REQUEST_INVALID', `pagination cursor ${cursor} is not an activity of this organization`);
      }
    }
    const rows = await this.repos.activities.list(
      organizationId,
      { limit: opts.limit, before: opts.before, after: opts.after, order: 'desc' },
      { statuses: opts.statuses, types: opts.types },
    );
    return this.withDecodedViews(rows, await this.render(rows, viewer), viewer);
  }
}
