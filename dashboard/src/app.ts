// The dashboard's entry point (docs/operator-guide.md "Dashboard"): restores the signed-in credential
// from IndexedDB, draws the navigation and routes `#/<page>` hashes to the pages in ./pages. Every page
// reads and writes through the public API with stamped requests (./api.ts), like any other client.
import { Api, ApiError } from './api.js';
import { h, message, replace } from './dom.js';
import { clearSession, loadSession, type StoredSession } from './keystore.js';
import { acceptInvitationPage } from './pages/accept-invitation.js';
import { activitiesPage, activityPage } from './pages/activities.js';
import { invitationsPage } from './pages/invitations.js';
import { organizationPage } from './pages/organization.js';
import { pendingPage, votableActivities } from './pages/pending.js';
import { policiesPage } from './pages/policies.js';
import { privateKeysPage } from './pages/private-keys.js';
import { signInPage } from './pages/signin.js';
import { usersPage } from './pages/users.js';
import { velocityControlsPage } from './pages/velocity-controls.js';
import { webhooksPage } from './pages/webhooks.js';
import { walletsPage } from './pages/wallets.js';
import type { PageContext } from './pages/context.js';

type Page = (ctx: PageContext, arg?: string) => Promise<void>;

const PAGES: { path: string; label: string; page: Page }[] = [
  { path: 'organization', label: 'Organization', page: organizationPage },
  { path: 'users', label: 'Users', page: usersPage },
  { path: 'invitations', label: 'Invitations', page: invitationsPage },
  { path: 'wallets', label: 'Wallets', page: walletsPage },
  { path: 'private-keys', label: 'Private keys', page: privateKeysPage },
  { path: 'policies', label: 'Policies', page: policiesPage },
  { path: 'velocity-controls', label: 'Velocity controls', page: velocityControlsPage },
  { path: 'webhooks', label: 'Webhooks', page: webhooksPage },
  { path: 'activities', label: 'Activities', page: activitiesPage },
  { path: 'pending', label: 'Pending', page: pendingPage },
];

const main = document.getElementById('main') as HTMLElement;
const nav = document.getElementById('nav') as HTMLElement;
const who = document.getElementById('who') as HTMLElement;

let session: StoredSession | undefined;
let pendingFlash: { text: string; kind: 'notice' | 'error' } | undefined;
let drawing = 0;

function flashElement(): HTMLElement | null {
  if (!pendingFlash) return null;
  const { text, kind } = pendingFlash;
  pendingFlash = undefined;
  return h('div', { className: kind === 'error' ? 'error' : 'notice', role: kind === 'error' ? 'alert' : 'status', id: 'flash' }, text);
}

function drawChrome(current: string): void {
  if (!session) {
    replace(nav);
    replace(who);
    document.body.classList.add('signed-out');
    return;
  }
  document.body.classList.remove('signed-out');
  const list = h('ul', {});
  for (const p of PAGES) {
    const count = p.path === 'pending' ? h('span', { className: 'nav-count', id: 'pending-count', hidden: true }) : null;
    list.append(h('li', {}, h('a', { href: `#/${p.path}`, 'aria-current': p.path === current ? 'page' : undefined }, p.label, count)));
  }
  replace(nav, list);
  const signOutButton = h('button', { type: 'button', className: 'secondary', onclick: () => void signOut() }, 'Sign out');
  const method = session.method === 'api-key' ? 'API key' : session.method === 'passkey' ? 'passkey' : 'email code';
  replace(who, h('span', { className: 'who-name' }, session.username || session.userId), h('span', { className: 'who-method' }, ` · ${method}`), signOutButton);
}

async function signOut(reason?: string): Promise<void> {
  await clearSession();
  session = undefined;
  if (reason) pendingFlash = { text: reason, kind: 'error' };
  // Changing the hash draws through the hashchange listener; draw directly only when it does not change.
  if (location.hash === '#/sign-in') void draw();
  else location.hash = '#/sign-in';
}

function route(): { path: string; arg?: string } {
  const hash = location.hash.startsWith('#/') ? location.hash.slice(2) : '';
  const [path, ...rest] = hash.split('/');
  return { path: path || '', arg: rest.length ? decodeURIComponent(rest.join('/')) : undefined };
}

async function draw(focus = false): Promise<void> {
  const mine = ++drawing;
  const { path, arg } = route();
  if (session?.expiresAt && session.expiresAt <= Date.now()) {
    await clearSession();
    session = undefined;
    pendingFlash = { text: 'Your session ended. Sign in again.', kind: 'error' };
  }
  // An invitation link (docs/sessions-and-logins.md "Invitations") is opened by someone with no
  // credential yet: it is served signed in or not, and ends on the sign-in page, the token replaced in
  // the history.
  if (path.split('?')[0] === 'accept-invitation') {
    drawChrome('');
    replace(main);
    await acceptInvitationPage(main, (text) => {
      pendingFlash = { text, kind: 'notice' };
      location.replace('#/sign-in');
    });
    return;
  }
  if (!session) {
    drawChrome('');
    if (path !== 'sign-in') history.replaceState(null, '', '#/sign-in');
    const flash = flashElement();
    replace(main);
    if (flash) main.append(flash);
    await signInPage(main, (s) => {
      session = s;
      location.hash = '#/organization';
    });
    return;
  }
  const entry = PAGES.find((p) => p.path === path);
  if (!entry) {
    location.replace('#/organization');
    return;
  }
  drawChrome(path);
  const flash = flashElement();
  const container = h('div', {});
  const ctx: PageContext = {
    api: new Api(session),
    main: container,
    flash: (text, kind = 'notice') => (pendingFlash = { text, kind }),
    navigate: (hash) => {
      if (location.hash === hash) void draw();
      else location.hash = hash;
    },
    refresh: () => void draw(),
    signOut,
  };
  replace(main, flash, container);
  void showPendingCount(ctx.api);
  try {
    await (path === 'activities' && arg ? activityPage(ctx, arg) : entry.page(ctx));
  } catch (err) {
    if (mine !== drawing) return;
    if (err instanceof ApiError && err.sessionEnded) return signOut('Your session ended. Sign in again.');
    container.append(h('div', { className: 'error', role: 'alert' }, `Could not load this page: ${message(err)}`));
  }
  if (focus && mine === drawing) document.getElementById('page-title')?.focus();
}

/** The number of activities the signed-in user can still vote on, beside "Pending" in the navigation. */
async function showPendingCount(api: Api): Promise<void> {
  const n = (await votableActivities(api).catch(() => undefined))?.length;
  const el = document.getElementById('pending-count');
  if (!el || n === undefined) return;
  el.textContent = ` ${n}`;
  el.setAttribute('aria-label', `${n} waiting for your vote`);
  el.hidden = n === 0;
}

window.addEventListener('hashchange', () => {
  // Only "#/..." are routes; other fragments (the skip link's #main) are ordinary in-page links.
  if (location.hash.startsWith('#/') || location.hash === '') void draw(true);
});

session = await loadSession().catch(() => undefined);
await draw();
