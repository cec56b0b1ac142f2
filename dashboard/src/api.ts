// The dashboard's client of the public API: POST /public/v1/query/<op> and /public/v1/submit/<op>
// on the page's own origin, with the body shapes of @turnkey/sdk-server (docs/reference/api.md
// "Transport": queries are flat `{...input, organizationId}`; activities `{parameters, organizationId,
// timestampMs, type}`) and errors read as `{code, message, details}` (docs/reference/api.md "Errors").
// Auth proxy calls (docs/reference/auth-proxy.md "Endpoints": POST <authProxyUrl>/v1/<op> with
// X-Auth-Proxy-Config-ID and no stamp) live here too.
import type { StoredSession } from './keystore.js';
import { apiKeyStamp, webauthnStamp, type Stamp } from './stamp.js';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly httpStatus: number,
    readonly code?: number,
  ) {
    super(message);
  }

  /** The SDKs' signal for an ended session (docs/reference/api.md "Errors"). */
  get sessionEnded(): boolean {
    return this.httpStatus === 401 && /expired api key|could not find public key/.test(this.message);
  }
}

export type Json = Record<string, any>;

export async function post(url: string, body: string, headers: Record<string, string>): Promise<Json> {
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', body, headers: { 'Content-Type': 'application/json', ...headers }, redirect: 'error', credentials: 'omit' });
  } catch {
    throw new ApiError(`Could not reach ${new URL(url, location.href).origin}. Check that Sigil is running and the address is right.`, 0);
  }
  const text = await res.text();
  let json: Json | undefined;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  if (!res.ok) {
    const message = json && typeof json.message === 'string' ? json.message : `${res.status} ${res.statusText}`;
    throw new ApiError(message, res.status, typeof json?.code === 'number' ? json.code : undefined);
  }
  if (!json) throw new ApiError('The server answered something that is not JSON.', res.status);
  return json;
}

/** One stamped request to the public API with a stamp made over exactly `body`. */
export async function stampedRequest(path: string, body: string, stamp: (body: string) => Promise<Stamp>): Promise<Json> {
  const s = await stamp(body);
  return post(path, body, { [s.header]: s.value });
}

export interface Activity {
  id: string;
  organizationId: string;
  status: string;
  type: string;
  intent: Json;
  result: Json;
  votes: Json[];
  fingerprint: string;
  canApprove: boolean;
  canReject: boolean;
  createdAt: { seconds: string; nanos: string };
  updatedAt: { seconds: string; nanos: string };
  failure?: { code: number; message: string };
}

export class Api {
  constructor(readonly session: StoredSession) {}

  get organizationId(): string {
    return this.session.organizationId;
  }

  #stamp = (body: string) => apiKeyStamp(this.session.publicKey, this.session.privateKey, body);

  async query<T = Json>(operation: string, input: Json = {}): Promise<T> {
    const body = JSON.stringify({ ...input, organizationId: input.organizationId ?? this.organizationId });
    return (await stampedRequest(`/public/v1/query/${operation}`, body, this.#stamp)) as T;
  }

  /**
   * Submits an activity and answers it. `withPasskey` stamps with the signed-in passkey instead of
   * the session key (votes are cast by the passkey itself when one signed in).
   */
  async submit(operation: string, type: string, parameters: Json, opts: { withPasskey?: boolean } = {}): Promise<Activity> {
    const body = JSON.stringify({ parameters, organizationId: this.organizationId, timestampMs: String(Date.now()), type });
    const stamp = opts.withPasskey && this.session.credentialId ? (b: string) => webauthnStamp(b, this.session.credentialId) : this.#stamp;
    const res = await stampedRequest(`/public/v1/submit/${operation}`, body, stamp);
    const activity = res.activity as Activity;
    if (activity.status === 'ACTIVITY_STATUS_FAILED') {
      throw new ApiError(activity.failure?.message ?? `activity ${activity.id} failed`, 200, activity.failure?.code);
    }
    return activity;
  }
}

/** The result member of a completed activity (`result.<member>`), or undefined while it waits. */
export function resultOf(activity: Activity, member: string): Json | undefined {
  return activity.status === 'ACTIVITY_STATUS_COMPLETED' ? activity.result?.[member] : undefined;
}

/** POST <authProxyUrl>/v1/<operation> (docs/reference/auth-proxy.md "Endpoints"). */
export function authProxy(authProxyUrl: string, configId: string, operation: string, body: Json): Promise<Json> {
  return post(`${authProxyUrl.replace(/\/+$/, '')}/v1/${operation}`, JSON.stringify(body), { 'X-Auth-Proxy-Config-ID': configId });
}
