// Approve and Reject buttons for an activity waiting for consensus (docs/reference/activities.md
// "Votes"): a vote is approve_activity / reject_activity {fingerprint}, stamped with the signed-in
// credential (the passkey itself when one signed in). After the vote the activity is read again, so the
// page can say whether that vote decided it.
import type { Activity, Json } from '../api.js';
import type { PageContext } from './context.js';
import { busy, errorBox, h, message, pretty, replace } from '../dom.js';
import type { DecodedPanel } from './decoded.js';

/**
 * `decoded`: the decoded view of what the activity signs (./decoded.ts); the approve button then
 * names it ("Approve: send 1.5 ETH to 0x…") and an approval is cast only after the page's own
 * integrity check of what is shown passes again.
 */
export function voteButtons(ctx: PageContext, activity: Activity, done: (text: string) => void, decoded?: DecodedPanel): HTMLElement {
  const out = h('div', { 'aria-live': 'polite' });
  const label = pretty(activity.type, 'ACTIVITY_TYPE_');
  const cast = (selection: 'approve' | 'reject', button: HTMLButtonElement) =>
    busy(button, async () => {
      replace(out);
      if (selection === 'approve' && decoded && !(await decoded.verify())) {
        replace(out, errorBox('Not approved: the integrity check of what is shown failed.'));
        return;
      }
      try {
        await ctx.api.submit(`${selection}_activity`, selection === 'approve' ? 'ACTIVITY_TYPE_APPROVE_ACTIVITY' : 'ACTIVITY_TYPE_REJECT_ACTIVITY', { fingerprint: activity.fingerprint }, { withPasskey: true });
        const after = (await ctx.api.query<Json>('get_activity', { activityId: activity.id })).activity as Activity;
        done(`${selection === 'approve' ? 'Approved' : 'Rejected'} ${label}: the activity is now ${pretty(after.status, 'ACTIVITY_STATUS_').toLowerCase()}.`);
      } catch (err) {
        replace(out, errorBox(`Could not ${selection}: ${message(err)}`));
      }
    });
  const approve = h('button', { type: 'button', className: 'approve', 'aria-label': decoded?.summary ? `Approve: ${decoded.summary}` : `Approve ${label} ${activity.id}`, disabled: !activity.canApprove });
  approve.textContent = decoded?.summary ? `Approve: ${decoded.summary}` : 'Approve';
  approve.addEventListener('click', () => void cast('approve', approve));
  const reject = h('button', { type: 'button', className: 'danger', 'aria-label': `Reject ${label} ${activity.id}`, disabled: !activity.canReject });
  reject.textContent = 'Reject';
  reject.addEventListener('click', () => void cast('reject', reject));
  const note = !activity.canApprove && !activity.canReject ? h('p', { className: 'hint' }, 'You have voted on this activity, or cannot vote on it.') : null;
  return h('div', { className: 'vote' }, h('div', { className: 'actions' }, approve, reject), note, out);
}
