// Pending page: activities in ACTIVITY_STATUS_CONSENSUS_NEEDED (list_activities filterByStatus), each
// with what it asks for, who submitted it, and Approve / Reject (./vote.ts).
import type { Activity, Json } from '../api.js';
import type { PageContext } from '../app.js';
import { badge, empty, h, heading, json, loading, mono, pretty, replace, time } from '../dom.js';
import { submitter } from './activities.js';
import { voteButtons } from './vote.js';

export async function pendingPage(ctx: PageContext): Promise<void> {
  const body = h('div', {}, loading());
  ctx.main.append(heading('Pending approvals'), body);
  // Also those waiting for their submitter's MFA methods (README "MFA policies"): the submitter's passkey vote meets a PASSKEY step.
  const waiting = ['ACTIVITY_STATUS_CONSENSUS_NEEDED', 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED'];
  const { activities } = await ctx.api.query<Json>('list_activities', { filterByStatus: waiting, paginationOptions: { limit: '100' } });
  if (!activities.length) return replace(body, empty('Nothing is waiting for approval.', 'Activities that a policy holds for more votes appear here.'));
  const list = h('ul', { className: 'cards' });
  for (const a of activities as Activity[]) {
    const intent = Object.values(a.intent ?? {})[0];
    list.append(
      h(
        'li',
        { className: 'card pending-card', 'data-activity-id': a.id },
        h('h2', {}, h('a', { href: `#/activities/${encodeURIComponent(a.id)}` }, pretty(a.type, 'ACTIVITY_TYPE_')), ' ', badge(a.status)),
        h('p', {}, `Submitted by ${submitter(a) || 'unknown'} · ${time(a.createdAt)} · ${a.votes?.length ?? 0} vote(s)`),
        h('p', { className: 'hint' }, 'Fingerprint ', mono(a.fingerprint)),
        h('details', {}, h('summary', {}, 'What it asks for'), json(intent)),
        voteButtons(ctx, a, (text) => {
          ctx.flash(text);
          ctx.refresh();
        }),
      ),
    );
  }
  replace(body, list);
}
