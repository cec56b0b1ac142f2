// Users page: every user (list_users) with API keys, passkeys and tags (names from list_user_tags).
// The signed-in user can add a passkey of this browser to itself: navigator.credentials.create, then
// create_authenticators V2 with the attestation (docs/reference/organizations.md "Users and
// credentials").
import { resultOf, type Json } from '../api.js';
import type { PageContext } from './context.js';
import { busy, empty, errorBox, field, h, heading, loading, message, mono, pretty, replace, time } from '../dom.js';
import { registerPasskey } from '../stamp.js';

const CREDENTIAL_TYPES: Record<string, string> = {
  CREDENTIAL_TYPE_API_KEY_P256: 'P-256',
  CREDENTIAL_TYPE_API_KEY_SECP256K1: 'secp256k1 wallet',
  CREDENTIAL_TYPE_API_KEY_ED25519: 'Ed25519 wallet',
  CREDENTIAL_TYPE_LOGIN: 'session',
  CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256: 'session',
};

function addPasskeyForm(ctx: PageContext, user: Json): HTMLElement {
  const nameInput = h('input', { type: 'text', name: 'authenticatorName', value: 'Dashboard passkey', required: true });
  const button = h('button', { type: 'submit' }, 'Add passkey');
  const out = h('div', { 'aria-live': 'polite' });
  const form = h('form', { className: 'inline-form', 'aria-label': 'Add a passkey' }, field('Passkey name', nameInput), button, out);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void busy(button, async () => {
      replace(out);
      try {
        const params = await registerPasskey({ userId: user.userId, userName: user.userName }, nameInput.value.trim() || 'Passkey');
        const activity = await ctx.api.submit('create_authenticators', 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2', { userId: user.userId, authenticators: [params] });
        if (!resultOf(activity, 'createAuthenticatorsResult')) {
          ctx.flash(`The passkey waits for approval (${pretty(activity.status, 'ACTIVITY_STATUS_')}).`);
        } else ctx.flash('Passkey added. You can now sign in with it.');
        ctx.refresh();
      } catch (err) {
        replace(out, errorBox(`Could not add the passkey: ${message(err)}`));
      }
    });
  });
  return form;
}

function credentialList(title: string, items: HTMLElement[], none: string): HTMLElement {
  return h('div', { className: 'sub' }, h('h3', {}, title), items.length ? h('ul', { className: 'plain' }, ...items) : h('p', { className: 'hint' }, none));
}

export async function usersPage(ctx: PageContext): Promise<void> {
  const body = h('div', {}, loading());
  ctx.main.append(heading('Users'), body);
  const [{ users }, { userTags }] = await Promise.all([ctx.api.query<Json>('list_users'), ctx.api.query<Json>('list_user_tags')]);
  const tagNames = new Map<string, string>((userTags ?? []).map((t: Json) => [t.tagId, t.tagName]));
  if (!users.length) return replace(body, empty('No users.'));
  const list = h('ul', { className: 'cards' });
  for (const u of users as Json[]) {
    const me = u.userId === ctx.api.session.userId;
    const keys = (u.apiKeys ?? []).map((k: Json) =>
      h(
        'li',
        {},
        h('strong', {}, k.apiKeyName),
        ' ',
        h('span', { className: 'tag' }, CREDENTIAL_TYPES[k.credential?.type] ?? pretty(String(k.credential?.type ?? ''), 'CREDENTIAL_TYPE_')),
        k.expirationSeconds ? h('span', { className: 'hint' }, ` expires after ${k.expirationSeconds} s`) : null,
        h('br'),
        mono(k.credential?.publicKey ?? ''),
      ),
    );
    const passkeys = (u.authenticators ?? []).map((a: Json) =>
      h('li', {}, h('strong', {}, a.authenticatorName), h('span', { className: 'hint' }, ` added ${time(a.createdAt)}`), h('br'), 'credential ', mono(a.credentialId)),
    );
    const tags = (u.userTags ?? []).map((id: string) => h('span', { className: 'tag' }, tagNames.get(id) ?? id));
    list.append(
      h(
        'li',
        { className: 'card user-card', 'data-user-id': u.userId },
        h('h2', {}, u.userName, me ? h('span', { className: 'tag you' }, 'you') : null),
        h('p', {}, u.userEmail ? `${u.userEmail} · ` : '', mono(u.userId)),
        tags.length ? h('p', { className: 'tags', 'aria-label': 'Tags' }, ...tags) : null,
        credentialList('API keys', keys, 'No API keys.'),
        credentialList('Passkeys', passkeys, 'No passkeys.'),
        me ? addPasskeyForm(ctx, u) : null,
      ),
    );
  }
  replace(body, list);
}
