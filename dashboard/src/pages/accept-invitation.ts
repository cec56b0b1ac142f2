// Accepting an invitation (docs/sessions-and-logins.md "Invitations"): the page an invitation email
// links to, `#/accept-invitation?token=…`. The token sits in the URL fragment, which the browser never
// sends to a server or in a Referer; the page posts it to Sigil's unstamped invitation routes
// (src/http/invitations.ts): get_invitation shows who is invited where, then a passkey is created
// in this browser (navigator.credentials.create, ./stamp.ts registerPasskey) and accept_invitation
// creates the user with it. The token is then dropped from the address bar, the organization id is
// remembered for the sign-in page, and the invitee signs in with the new passkey.
import { post, type Json } from '../api.js';
import { errorBox, facts, field, h, heading, loading, message, mono, notice, onSubmit, replace } from '../dom.js';
import { registerPasskey } from '../stamp.js';
import { remember } from './signin.js';

/** The token of `#/accept-invitation?token=…`, if the address has one. */
function tokenOfHash(): string | undefined {
  const query = location.hash.split('?')[1] ?? '';
  return new URLSearchParams(query).get('token') ?? undefined;
}

export async function acceptInvitationPage(main: HTMLElement, accepted: (text: string) => void): Promise<void> {
  const body = h('div', {}, loading());
  main.append(heading('Accept invitation'), body);
  const token = tokenOfHash();
  if (!token) return replace(body, errorBox('This link has no invitation token. Open the link from the invitation email again.'));
  let invitation: Json;
  try {
    invitation = await post('/sigil/v1/get_invitation', JSON.stringify({ token }), {});
  } catch (err) {
    return replace(body, errorBox(`This invitation cannot be accepted: ${message(err)}`));
  }
  const inv = invitation.invitation as Json;
  const nameInput = h('input', { type: 'text', name: 'authenticatorName', autocomplete: 'off', value: 'My passkey', required: true });
  const button = h('button', { type: 'submit' }, 'Create passkey and accept');
  const status = h('div', { className: 'status-area', 'aria-live': 'polite' });
  const form = h(
    'form',
    { className: 'card', 'aria-labelledby': 'accept-title' },
    h('h2', { id: 'accept-title' }, `Join ${invitation.organizationName || invitation.organizationId}`),
    facts([
      ['Name', inv.receiverUserName],
      ['Email', inv.receiverEmail],
      ['Organization', mono(invitation.organizationId)],
    ]),
    h('p', { className: 'hint' }, 'Your browser creates a passkey for this organization. It is the way you sign in; no password or API key is involved.'),
    field('Passkey name', nameInput),
    button,
  );
  onSubmit(form, button, status, 'Could not accept the invitation', async () => {
    const authenticator = await registerPasskey({ userId: inv.invitationId, userName: inv.receiverEmail }, nameInput.value.trim() || 'Passkey');
    const result = await post('/sigil/v1/accept_invitation', JSON.stringify({ token, authenticator }), {});
    remember({ organizationId: result.organizationId });
    replace(status, notice('Invitation accepted.'));
    accepted(`Welcome, ${inv.receiverUserName}. Your passkey is registered: sign in with it below.`);
  });
  replace(body, status, form);
}
