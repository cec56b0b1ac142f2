// Pending page: the activities in ACTIVITY_STATUS_CONSENSUS_NEEDED (list_activities filterByStatus)
// that the signed-in user can still vote on (`canApprove`), each with what it signs decoded and
// checked in the browser (./decoded.ts), who submitted it, and Approve / Reject (./vote.ts).
import type { Activity, Api, Json } from '../api.js';
import type { PageContext } from './context.js';
import { badge, empty, h, heading, json, loading, mono, pretty, replace, time } from '../dom.js';
import { submitter } from './activities.js';
import { decodedPanel } from './decoded.js';
import { voteButtons } from './vote.js';

export async function pendingPage(ctx: PageContext): Promise<void> {
  const body = h('div', {}, loading());
  ctx.main.append(heading('Pending approvals'), body);
  const activities = await votableActivities(ctx.api);
  if (!activities.length) return replace(body, empty('Nothing is waiting for your approval.', 'Activities that a policy holds for more votes, or for your MFA methods, and that you have not voted on, appear here.'));
  const list = h('ul', { className: 'cards' });
  const checks: Promise<boolean>[] = [];
  for (const a of activities) {
    const intent = Object.values(a.intent ?? {})[0];
    const decoded = decodedPanel(a);
    if (decoded) checks.push(decoded.verify());
    list.append(
      h(
        'li',
        { className: 'card pending-card', 'data-activity-id': a.id },
        h('h2', {}, h('a', { href: `#/activities/${encodeURIComponent(a.id)}` }, pretty(a.type, 'ACTIVITY_TYPE_')), ' ', badge(a.status)),
        h('p', {}, `Submitted by ${submitter(a) || 'unknown'} · ${time(a.createdAt)} · ${a.votes?.length ?? 0} vote(s)`),
        h('p', { className: 'hint' }, 'Fingerprint ', mono(a.fingerprint)),
        decoded ? decoded.element : h('details', {}, h('summary', {}, 'What it asks for'), json(intent)),
        voteButtons(
          ctx,
          a,
          (text) => {
            ctx.flash(text);
            ctx.refresh();
          },
          decoded,
        ),
      ),
    );
  }
  replace(body, list);
  await Promise.all(checks);
}

/** What the signed-in user can still vote on: waiting activities whose record says `canApprove`. */
export async function votableActivities(api: Api): Promise<Activity[]> {
  // Also those waiting for their submitter's MFA methods (docs/mfa.md "MFA policies"): the submitter's
  // passkey vote meets a PASSKEY step.
  const waiting = ['ACTIVITY_STATUS_CONSENSUS_NEEDED', 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'];
  const { activities } = await api.query<Json>('list_activities', { filterByStatus: waiting, paginationOptions: { limit: '100' } });
  return (activities as Activity[]).filter((a) => a.canApprove);
}
