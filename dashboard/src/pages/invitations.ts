// Invitations page (docs/sessions-and-logins.md "Invitations", "Email events"): invite a team member by
// email (create_invitations: name, email, user tags, access type; the sender is the signed-in user),
// revoke a pending invitation by id (delete_invitation), and look up what delivery did with the
// emails to an address (list_email_events: Send, Delivery, Bounce with the server's answer). The API
// has no query listing invitations, so the page shows the ids of the invitations made here.
import { resultOf, type Json } from '../api.js';
import type { PageContext } from './context.js';
import { empty, field, h, heading, loading, mono, notice, onSubmit, replace, select } from '../dom.js';

function inviteForm(ctx: PageContext, userTags: Json[]): HTMLElement {
  const nameInput = h('input', { type: 'text', name: 'receiverUserName', autocomplete: 'off', required: true });
  const emailInput = h('input', { type: 'email', name: 'receiverUserEmail', autocomplete: 'off', required: true });
  const access = select('accessType', [
    ['ACCESS_TYPE_WEB', 'Web (dashboard)'],
    ['ACCESS_TYPE_API', 'API'],
    ['ACCESS_TYPE_ALL', 'Web and API'],
  ]);
  const tagSelect = h('select', { name: 'receiverUserTags', multiple: true }, ...userTags.map((t) => h('option', { value: t.tagId }, t.tagName)));
  const tags = userTags.length ? field('Tags', tagSelect, 'The new user gets the chosen tags (Ctrl or Cmd to choose several).') : null;
  const button = h('button', { type: 'submit' }, 'Send invitation');
  const out = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { className: 'card', 'aria-labelledby': 'invite-title' },
    h('h2', { id: 'invite-title' }, 'Invite someone'),
    h('p', { className: 'hint' }, 'They get an email with a link that works once, for 72 hours. Opening it, they create a passkey and join as a user with these tags.'),
    field('Name', nameInput),
    field('Email', emailInput),
    field('Access', access),
    tags,
    button,
    out,
  );
  onSubmit(form, button, out, 'Could not send the invitation', async () => {
    const invitation = {
      receiverUserName: nameInput.value.trim(),
      receiverUserEmail: emailInput.value.trim(),
      receiverUserTags: [...tagSelect.selectedOptions].map((o) => o.value),
      accessType: access.value,
      senderUserId: ctx.api.session.userId,
    };
    const activity = await ctx.api.submit('create_invitations', 'ACTIVITY_TYPE_CREATE_INVITATIONS', { invitations: [invitation] });
    const result = resultOf(activity, 'createInvitationsResult');
    if (!result) return replace(out, notice(`The invitation waits for approval (activity ${activity.id}).`));
    replace(out, h('div', { className: 'notice', role: 'status' }, `Invitation sent to ${invitation.receiverUserEmail}. Invitation ID: `, mono(result.invitationIds[0])));
    form.reset();
  });
  return form;
}

function revokeForm(ctx: PageContext): HTMLElement {
  const idInput = h('input', { type: 'text', name: 'invitationId', autocomplete: 'off', spellcheck: 'false', required: true });
  const button = h('button', { type: 'submit', className: 'secondary' }, 'Revoke invitation');
  const out = h('div', { 'aria-live': 'polite' });
  const form = h('form', { className: 'card', 'aria-labelledby': 'revoke-title' }, h('h2', { id: 'revoke-title' }, 'Revoke an invitation'), field('Invitation ID', idInput), button, out);
  onSubmit(form, button, out, 'Could not revoke the invitation', async () => {
    const activity = await ctx.api.submit('delete_invitation', 'ACTIVITY_TYPE_DELETE_INVITATION', { invitationId: idInput.value.trim() });
    replace(out, notice(resultOf(activity, 'deleteInvitationResult') ? 'Invitation revoked: its link no longer works.' : `The revocation waits for approval (activity ${activity.id}).`));
  });
  return form;
}

function eventsLookup(ctx: PageContext): HTMLElement {
  const emailInput = h('input', { type: 'email', name: 'email', autocomplete: 'off', required: true });
  const button = h('button', { type: 'submit', className: 'secondary' }, 'Show email events');
  const out = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { className: 'card', 'aria-labelledby': 'events-title' },
    h('h2', { id: 'events-title' }, 'Email delivery'),
    h('p', { className: 'hint' }, 'What Sigil did with the emails to an address, newest first. Never their content.'),
    field('Recipient email', emailInput),
    button,
    out,
  );
  onSubmit(form, button, out, 'Could not list email events', async () => {
    replace(out, loading());
    const { emailEvents } = await ctx.api.query<Json>('list_email_events', { email: emailInput.value.trim(), paginationOptions: { limit: '20' } });
    if (!emailEvents.length) return replace(out, empty('No email events for this address.'));
    const rows = (emailEvents as Json[]).map((ev) =>
      h(
        'tr',
        { 'data-event-type': ev.eventType },
        h('td', {}, new Date(Number(ev.timestamp)).toLocaleString()),
        h('td', {}, ev.eventType),
        h('td', {}, ev.messageKind ?? ''),
        h('td', {}, ev.details?.deliverySmtpResponse ?? ev.details?.diagnosticCode ?? ''),
      ),
    );
    replace(
      out,
      h(
        'table',
        { className: 'events' },
        h('thead', {}, h('tr', {}, h('th', {}, 'When'), h('th', {}, 'Event'), h('th', {}, 'Message'), h('th', {}, 'Server answer'))),
        h('tbody', {}, ...rows),
      ),
    );
  });
  return form;
}

export async function invitationsPage(ctx: PageContext): Promise<void> {
  const body = h('div', {}, loading());
  ctx.main.append(heading('Invitations'), body);
  const { userTags } = await ctx.api.query<Json>('list_user_tags');
  replace(body, inviteForm(ctx, userTags ?? []), revokeForm(ctx), eventsLookup(ctx));
}
