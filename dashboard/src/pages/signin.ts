// Sign-in (docs/operator-guide.md "Dashboard"): three ways, each ending in a P-256 key held in the
// browser as a non-extractable CryptoKey (IndexedDB), never sent anywhere:
//  - passkey: stamp_login stamped with X-Stamp-Webauthn (docs/reference/api.md "Stamps";
//    docs/reference/sessions.md "Login activities") registers a browser-made session key; votes are later cast by the passkey itself;
//  - API key: the pasted key pair is imported and checked with whoami;
//  - email code through the auth proxy (docs/reference/auth-proxy.md "Endpoints"): otp_init, then otp_verify {otpId, otpCode, publicKey}
//    binds the verification token to a browser-made session key, which logs in with stamp_login
//    under X-Stamp-Attested (docs/reference/api.md "Stamps").
// Non-secret inputs (organization id, auth proxy address and config id) may come from the query
// string (?organizationId=&authProxyUrl=&authProxyConfigId=) and are remembered in localStorage.
import { Api, authProxy, stampedRequest, type Json } from '../api.js';
import { busy, errorBox, field, h, message, notice, replace } from '../dom.js';
import { jwtClaims } from '../encoding.js';
import { saveSession, type StoredSession } from '../keystore.js';
import { generateSessionKey, importApiKey, type KeyPair } from '../p256.js';
import { attestedStamp, webauthnStamp, type Stamp } from '../stamp.js';

const REMEMBER = 'sigil.sign-in';
const SESSION_SECONDS = '3600';

function remembered(): Record<string, string> {
  const out: Record<string, string> = {};
  try {
    Object.assign(out, JSON.parse(localStorage.getItem(REMEMBER) ?? '{}'));
  } catch {
    /* ignore a damaged entry */
  }
  const q = new URLSearchParams(location.search);
  for (const k of ['organizationId', 'authProxyUrl', 'authProxyConfigId']) {
    const v = q.get(k);
    if (v) out[k] = v;
  }
  return out;
}

export function remember(values: Record<string, string>): void {
  localStorage.setItem(REMEMBER, JSON.stringify({ ...remembered(), ...values }));
}

/** stamp_login for `key`, stamped by `stamp`; answers the session JWT's claims. */
async function stampLogin(organizationId: string, key: KeyPair, stamp: (body: string) => Promise<Stamp>) {
  const body = JSON.stringify({
    parameters: { publicKey: key.publicKey, expirationSeconds: SESSION_SECONDS, invalidateExisting: false },
    organizationId,
    timestampMs: String(Date.now()),
    type: 'ACTIVITY_TYPE_STAMP_LOGIN',
  });
  const res = await stampedRequest('/public/v1/submit/stamp_login', body, stamp);
  const session = res.activity?.result?.stampLoginResult?.session;
  if (typeof session !== 'string') throw new Error(`sign-in did not complete (${res.activity?.status ?? 'no activity'})`);
  const claims = jwtClaims(session);
  return { organizationId: String(claims.organization_id), userId: String(claims.user_id), expiresAt: Number(claims.exp) * 1000 };
}

/** Completes a sign-in: whoami with the new key names the user, then the key is stored. */
async function finish(partial: Omit<StoredSession, 'organizationName' | 'username' | 'userId'> & { userId?: string }): Promise<StoredSession> {
  const probe: StoredSession = { ...partial, userId: partial.userId ?? '', organizationName: '', username: '' };
  const me = await new Api(probe).query<Json>('whoami');
  const session: StoredSession = { ...probe, userId: me.userId, username: me.username, organizationName: me.organizationName };
  await saveSession(session);
  return session;
}

export async function signInPage(main: HTMLElement, signedIn: (s: StoredSession) => void): Promise<void> {
  const saved = remembered();
  const orgInput = h('input', { type: 'text', name: 'organizationId', autocomplete: 'off', spellcheck: 'false', value: saved.organizationId ?? '', required: true });
  const status = h('div', { className: 'status-area', 'aria-live': 'polite' });
  const show = (el: HTMLElement | null) => replace(status, el);
  const org = () => {
    const v = orgInput.value.trim();
    if (!v) {
      orgInput.focus();
      throw new Error('Enter the organization ID first.');
    }
    remember({ organizationId: v });
    return v;
  };
  const attempt = (button: HTMLButtonElement, work: () => Promise<StoredSession>) =>
    busy(button, async () => {
      show(null);
      try {
        signedIn(await work());
      } catch (err) {
        show(errorBox(`Sign-in failed: ${message(err)}`));
      }
    });

  // Passkey
  const passkeyButton = h('button', { type: 'submit' }, 'Sign in with passkey');
  const passkeyForm = h(
    'form',
    { className: 'card', 'aria-labelledby': 'passkey-title' },
    h('h2', { id: 'passkey-title' }, 'Passkey'),
    h('p', { className: 'hint' }, 'Your browser asks for a passkey registered to a user of the organization. A session key made in this browser then signs requests; approvals ask for the passkey again.'),
    passkeyButton,
  );
  passkeyForm.addEventListener('submit', (e) => {
    e.preventDefault();
    void attempt(passkeyButton, async () => {
      const organizationId = org();
      const key = await generateSessionKey();
      let credentialId = '';
      const login = await stampLogin(organizationId, key, async (body) => {
        const s = await webauthnStamp(body);
        credentialId = s.credentialId;
        return s;
      });
      return finish({ method: 'passkey', organizationId: login.organizationId, userId: login.userId, publicKey: key.publicKey, privateKey: key.privateKey, expiresAt: login.expiresAt, credentialId });
    });
  });

  // API key
  const pubInput = h('input', { type: 'text', name: 'apiPublicKey', autocomplete: 'off', spellcheck: 'false', required: true });
  const privInput = h('input', { type: 'password', name: 'apiPrivateKey', autocomplete: 'off', spellcheck: 'false', required: true });
  const apiButton = h('button', { type: 'submit' }, 'Sign in with API key');
  const apiForm = h(
    'form',
    { className: 'card', 'aria-labelledby': 'apikey-title' },
    h('h2', { id: 'apikey-title' }, 'API key'),
    h('p', { className: 'hint' }, 'The key pair is imported into this browser (IndexedDB, not extractable). The private key is never sent.'),
    field('Public key (compressed hex)', pubInput),
    field('Private key (hex)', privInput),
    apiButton,
  );
  apiForm.addEventListener('submit', (e) => {
    e.preventDefault();
    void attempt(apiButton, async () => {
      const organizationId = org();
      const key = await importApiKey(pubInput.value.trim(), privInput.value.trim());
      privInput.value = '';
      return finish({ method: 'api-key', organizationId, publicKey: key.publicKey, privateKey: key.privateKey });
    });
  });

  // Email code through the auth proxy
  const proxyInput = h('input', { type: 'url', name: 'authProxyUrl', autocomplete: 'off', value: saved.authProxyUrl ?? '', placeholder: 'http://localhost:8081' });
  const configInput = h('input', { type: 'text', name: 'authProxyConfigId', autocomplete: 'off', spellcheck: 'false', value: saved.authProxyConfigId ?? '' });
  const emailInput = h('input', { type: 'email', name: 'email', autocomplete: 'email' });
  const sendButton = h('button', { type: 'submit' }, 'Send code');
  const codeInput = h('input', { type: 'text', name: 'otpCode', autocomplete: 'one-time-code', spellcheck: 'false' });
  const verifyButton = h('button', { type: 'button' }, 'Verify code and sign in');
  const codeStep = h('div', { className: 'code-step', hidden: true }, field('Code from the email', codeInput), verifyButton);
  let otp: { otpId: string; proxyOrganizationId: string; url: string; configId: string } | undefined;
  const otpForm = h(
    'form',
    { className: 'card', 'aria-labelledby': 'otp-title' },
    h('h2', { id: 'otp-title' }, 'Email code'),
    h('p', { className: 'hint' }, 'Through the auth proxy: create a configuration with "sigil proxy-config create".'),
    field('Auth proxy address', proxyInput),
    field('Auth proxy config ID', configInput),
    field('Email', emailInput),
    sendButton,
    codeStep,
  );
  otpForm.addEventListener('submit', (e) => {
    e.preventDefault();
    void busy(sendButton, async () => {
      show(null);
      try {
        const url = proxyInput.value.trim();
        const configId = configInput.value.trim();
        if (!url || !configId) throw new Error('Enter the auth proxy address and config ID.');
        if (!emailInput.value.trim()) throw new Error('Enter your email address.');
        remember({ authProxyUrl: url, authProxyConfigId: configId });
        const kit = await authProxy(url, configId, 'wallet_kit_config', {});
        const r = await authProxy(url, configId, 'otp_init', { otpType: 'OTP_TYPE_EMAIL', contact: emailInput.value.trim() });
        otp = { otpId: r.otpId, proxyOrganizationId: kit.organizationId, url, configId };
        codeStep.hidden = false;
        show(notice('A code was sent. Enter it below.'));
        codeInput.focus();
      } catch (err) {
        show(errorBox(`Could not send a code: ${message(err)}`));
      }
    });
  });
  verifyButton.addEventListener('click', () => {
    void attempt(verifyButton, async () => {
      if (!otp) throw new Error('Send a code first.');
      const code = codeInput.value.trim();
      if (!code) throw new Error('Enter the code from the email.');
      const key = await generateSessionKey();
      const { verificationToken } = await authProxy(otp.url, otp.configId, 'otp_verify', { otpId: otp.otpId, otpCode: code, publicKey: key.publicKey });
      const login = await stampLogin(otp.proxyOrganizationId, key, (body) => attestedStamp(verificationToken, key.publicKey, key.privateKey, body));
      return finish({ method: 'otp', organizationId: login.organizationId, userId: login.userId, publicKey: key.publicKey, privateKey: key.privateKey, expiresAt: login.expiresAt });
    });
  });

  main.append(
    h('div', { className: 'page-head' }, h('h1', { id: 'page-title', tabindex: '-1' }, 'Sign in to Sigil')),
    h('div', { className: 'card' }, field('Organization ID', orgInput, 'The organization to manage (printed by "sigil init"). Used by passkey and API key sign-in.')),
    status,
    h('div', { className: 'signin-grid' }, passkeyForm, apiForm, otpForm),
  );
}
