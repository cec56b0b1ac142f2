// The OAuth 2.0 authorization-code exchange with an OAuth2-only provider, and the user lookup that
// follows it (docs/reference/organizations.md "Smart contract interfaces and OAuth 2.0 credentials": X needs the scopes tweet.read and
// user.read and answers GET /2/users/me; Discord needs identify and email and answers
// GET /api/users/@me). RFC 6749 §4.1.3 with PKCE (RFC 7636 §4.5): the code, its redirect_uri and the
// code_verifier go to the token endpoint as a form, the client authenticates with HTTP Basic
// (RFC 6749 §2.3.1, which both providers accept for confidential clients).
//
// Every call has a timeout and follows no redirect (the client secret must go to the configured
// endpoint only). A provider's refusal of the code (4xx, e.g. invalid_grant) is the caller's error
// (400); an unreachable or failing provider is 502. Provider text echoed in messages is cut short and
// stripped of control characters; the secret, the code and the tokens never appear in them.
import { SigilError, invalid } from '../../errors/errors.js';

export const OAUTH2_PROVIDERS = ['OAUTH2_PROVIDER_X', 'OAUTH2_PROVIDER_DISCORD'] as const;
export type Oauth2Provider = (typeof OAUTH2_PROVIDERS)[number];

export interface Oauth2Endpoints {
  tokenUrl: string;
  userinfoUrl: string;
}

/** How the provider is named in messages and in the `sub` of issued tokens (`x:<id>`, `discord:<id>`). */
export const PROVIDER_LABEL: Record<Oauth2Provider, { name: string; subjectPrefix: string }> = {
  OAUTH2_PROVIDER_X: { name: 'X', subjectPrefix: 'x' },
  OAUTH2_PROVIDER_DISCORD: { name: 'Discord', subjectPrefix: 'discord' },
};

export const OAUTH2_HTTP_TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BYTES = 256 * 1024;

export interface Oauth2User {
  id: string;
  /** Present when the provider gave one (Discord with the email scope). */
  email?: string;
  emailVerified?: boolean;
}

export interface ExchangeRequest {
  provider: Oauth2Provider;
  endpoints: Oauth2Endpoints;
  clientId: string;
  clientSecret: string;
  authCode: string;
  redirectUri: string;
  codeVerifier: string;
}

const unavailable = (message: string) => new SigilError('INTERNAL', message, { http: 502, grpc: 14 });

function printable(text: unknown, max = 200): string {
  return String(text).replace(/[\u0000-\u001f\u007f]+/g, ' ').trim().slice(0, max);
}

async function call(url: string, init: RequestInit, what: string): Promise<{ status: number; body: unknown }> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(OAUTH2_HTTP_TIMEOUT_MS) });
  } catch (err) {
    const timedOut = (err as Error).name === 'TimeoutError';
    throw unavailable(`${what} failed: the provider ${timedOut ? `did not answer within ${OAUTH2_HTTP_TIMEOUT_MS / 1000} s` : 'could not be reached'}`);
  }
  let text: string;
  try {
    text = await res.text();
  } catch {
    throw unavailable(`${what} failed: the provider's answer could not be read`);
  }
  if (text.length > MAX_RESPONSE_BYTES) throw unavailable(`${what} failed: the provider's answer is too large`);
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body };
}

/** `error: error_description` of an RFC 6749 §5.2 error answer, or the HTTP status when there is none. */
function providerError(status: number, body: unknown): string {
  const b = (body ?? {}) as { error?: unknown; error_description?: unknown; detail?: unknown; message?: unknown };
  const code = typeof b.error === 'string' ? printable(b.error, 64) : undefined;
  const description = [b.error_description, b.detail, b.message].find((v) => typeof v === 'string');
  if (code) return description ? `${code}: ${printable(description)}` : code;
  return description ? `HTTP ${status}: ${printable(description)}` : `HTTP ${status}`;
}

/** Exchanges the authorization code for an access token; returns the token. */
async function exchangeCode(r: ExchangeRequest): Promise<string> {
  const what = `oauth2 token exchange with ${PROVIDER_LABEL[r.provider].name}`;
  const basic = Buffer.from(`${encodeURIComponent(r.clientId)}:${encodeURIComponent(r.clientSecret)}`).toString('base64');
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code: r.authCode,
    redirect_uri: r.redirectUri,
    code_verifier: r.codeVerifier,
    client_id: r.clientId,
  });
  const { status, body } = await call(
    r.endpoints.tokenUrl,
    {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
    },
    what,
  );
  if (status >= 400 && status < 500) throw invalid(`${what} failed: the provider refused the authorization code (${providerError(status, body)})`);
  if (status !== 200) throw unavailable(`${what} failed: ${providerError(status, body)}`);
  const token = (body as { access_token?: unknown } | undefined)?.access_token;
  if (typeof token !== 'string' || token === '') throw unavailable(`${what} failed: the provider's answer has no access_token`);
  return token;
}

/** The provider's user for an access token: X answers {data:{id,…}}, Discord {id, email, verified,…}. */
async function fetchUser(r: ExchangeRequest, accessToken: string): Promise<Oauth2User> {
  const what = `reading the ${PROVIDER_LABEL[r.provider].name} user`;
  const { status, body } = await call(r.endpoints.userinfoUrl, { method: 'GET', headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' } }, what);
  if (status !== 200) throw unavailable(`${what} failed: ${providerError(status, body)} (does the authorization grant the required scopes?)`);
  const record = (r.provider === 'OAUTH2_PROVIDER_X' ? (body as { data?: unknown } | undefined)?.data : body) as
    | { id?: unknown; email?: unknown; verified?: unknown; confirmed_email?: unknown }
    | undefined;
  const id = record?.id;
  if ((typeof id !== 'string' && typeof id !== 'number') || String(id) === '') throw unavailable(`${what} failed: the provider's answer has no user id`);
  const email = typeof record?.email === 'string' ? record.email : typeof record?.confirmed_email === 'string' ? record.confirmed_email : undefined;
  return {
    id: String(id),
    ...(email ? { email, emailVerified: record?.verified === true || typeof record?.confirmed_email === 'string' } : {}),
  };
}

/** Code → access token → user. Returns the user and the access token (for `encrypted_bearer_token`). */
export async function exchangeAuthorizationCode(r: ExchangeRequest): Promise<{ user: Oauth2User; accessToken: string }> {
  const accessToken = await exchangeCode(r);
  return { user: await fetchUser(r, accessToken), accessToken };
}
