// Auth proxy configurations (docs/reference/auth-proxy.md; docs/reference/auth-proxy.md:
// UpdateAuthProxyConfigIntent's fields). A configuration names the parent organization the proxy acts
// for and how: allowed origins, enabled login methods, OTP and session settings, wallet kit settings.
//
// The proxy acts with a credential of its own, like the reference service's proxy-scoped API key: on
// creation the organization gets a user "Auth Proxy <configId>" with a long-lived P-256 API key (its
// private key sealed by the barrier in the configuration row) and a policy that lets that user, and
// only it, run the login-flow activities (OTP create/verify, AUTH create, ORGANIZATION create for
// signup). Every proxy call is then an ordinary stamped request through the one pipeline: policies,
// activity records and the audit log see it like any other client.
import { generateP256KeyPair } from '../../crypto/p256.js';
import { invalid, notFound } from '../../errors/errors.js';
import type { AuthProxyConfigRow, OrganizationRow, Repositories } from '../../store/index.js';
import type { Barrier } from '../../barrier/barrier.js';
import { buildApiKeyRows, insertApiKeys } from './api-keys.js';
import { newId } from '../ids.js';
import { createPolicies } from '../governance/policies.js';
import { reserve } from '../governance/quotas.js';
import type { ActivityContext } from '../context.js';
import { AUTH_METHODS, OAUTH_METHODS, type AuthMethod } from './auth-methods.js';
import { openForOrganization, sealForOrganization } from '../keys/organization-keys.js';

export interface AuthProxySettings {
  /** Exact origins browsers may call from (CORS); `*` allows any. */
  allowedOrigins: string[];
  allowedAuthMethods: AuthMethod[];
  /** Lifetime of sessions the proxy's logins create (default 900). */
  sessionExpirationSeconds: number;
  otpLength: number;
  otpAlphanumeric: boolean;
  otpExpirationSeconds: number;
  verificationTokenExpirationSeconds: number;
  /** The name codes are sent under ("Your <appName> verification code"). */
  appName: string;
  /** `account` lookups by email or phone need a verification token for that contact. */
  verificationTokenRequiredForGetAccountPii: boolean;
  walletKit: { oauthClientIds: Partial<Record<AuthMethod, string>>; oauthRedirectUrl: string };
}

export const DEFAULT_SETTINGS: AuthProxySettings = {
  allowedOrigins: ['*'],
  allowedAuthMethods: ['email', 'sms', 'passkey', 'wallet'],
  sessionExpirationSeconds: 900,
  otpLength: 9,
  otpAlphanumeric: true,
  otpExpirationSeconds: 300,
  verificationTokenExpirationSeconds: 3600,
  appName: '',
  verificationTokenRequiredForGetAccountPii: false,
  walletKit: { oauthClientIds: {}, oauthRedirectUrl: '' },
};

function whole(value: unknown, field: string, min: number, max: number): number {
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) {
    throw invalid(`${field} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return value as number;
}

function origin(value: string, field: string): string {
  if (value === '*') return value;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw invalid(`${field}: ${JSON.stringify(value)} is not an origin such as https://app.example.com`);
  }
  // Origins are compared exactly, as browsers send them: scheme://host[:port], no path, no slash.
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.origin !== value.replace(/\/+$/, '') || /[*]/.test(value)) {
    throw invalid(`${field}: ${JSON.stringify(value)} is not an exact origin such as https://app.example.com (no path, no wildcard)`);
  }
  return u.origin;
}

/** Settings from operator input, every field checked; what is not given keeps its default. */
export function checkSettings(input: Partial<AuthProxySettings>, base: AuthProxySettings = DEFAULT_SETTINGS): AuthProxySettings {
  const s: AuthProxySettings = { ...base, ...input, walletKit: { ...base.walletKit, ...(input.walletKit ?? {}) } };
  if (!Array.isArray(s.allowedOrigins) || s.allowedOrigins.length === 0) throw invalid('allowedOrigins must list at least one origin (or *)');
  s.allowedOrigins = s.allowedOrigins.map((o, i) => origin(String(o).trim(), `allowedOrigins[${i}]`));
  if (!Array.isArray(s.allowedAuthMethods)) throw invalid('allowedAuthMethods must be a list');
  for (const [i, m] of s.allowedAuthMethods.entries()) {
    if (!AUTH_METHODS.includes(m)) throw invalid(`allowedAuthMethods[${i}]: ${JSON.stringify(m)} is not one of ${AUTH_METHODS.join(', ')}`);
  }
  s.allowedAuthMethods = [...new Set(s.allowedAuthMethods)];
  whole(s.sessionExpirationSeconds, 'sessionExpirationSeconds', 60, 30 * 24 * 3600);
  whole(s.otpLength, 'otpLength', 6, 9);
  whole(s.otpExpirationSeconds, 'otpExpirationSeconds', 1, 600);
  whole(s.verificationTokenExpirationSeconds, 'verificationTokenExpirationSeconds', 1, 86400);
  if (typeof s.otpAlphanumeric !== 'boolean') throw invalid('otpAlphanumeric must be true or false');
  if (typeof s.verificationTokenRequiredForGetAccountPii !== 'boolean') throw invalid('verificationTokenRequiredForGetAccountPii must be true or false');
  if (typeof s.appName !== 'string' || s.appName.length > 100) throw invalid('appName must be text of at most 100 characters');
  for (const [k, v] of Object.entries(s.walletKit.oauthClientIds)) {
    if (!OAUTH_METHODS.includes(k as AuthMethod)) throw invalid(`walletKit.oauthClientIds: ${JSON.stringify(k)} is not one of ${OAUTH_METHODS.join(', ')}`);
    if (typeof v !== 'string' || v === '') throw invalid(`walletKit.oauthClientIds.${k} must be a client id`);
  }
  if (s.walletKit.oauthRedirectUrl !== '') origin(new URL(s.walletKit.oauthRedirectUrl).origin, 'walletKit.oauthRedirectUrl');
  return s;
}

export const proxyKeyAt = (configId: string) => ({ table: 'auth_proxy_configs', rowId: configId, column: 'private_key' });

/** The activity types the proxy submits (src/http/auth-proxy.ts), and only those. */
export const PROXY_ACTIVITY_TYPES = [
  'ACTIVITY_TYPE_INIT_OTP_V3',
  'ACTIVITY_TYPE_VERIFY_OTP',
  'ACTIVITY_TYPE_VERIFY_OTP_V2',
  'ACTIVITY_TYPE_OTP_LOGIN',
  'ACTIVITY_TYPE_OTP_LOGIN_V2',
  'ACTIVITY_TYPE_OAUTH_LOGIN',
  'ACTIVITY_TYPE_OAUTH2_AUTHENTICATE',
  'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8',
];

/**
 * The policy that lets the proxy's user run the login flows. Its condition names the exact activity
 * types: a policy whose condition matched every AUTH/CREATE would leave other users' own logins
 * (stamp_login, self-service) waiting for the proxy user's approval, since an applicable ALLOW with an
 * unmet consensus asks for consensus (docs/reference/policies.md "Evaluation of one policy").
 */
function proxyPolicy(userId: string, configId: string) {
  return {
    policyName: `Auth Proxy ${configId}`,
    effect: 'EFFECT_ALLOW' as const,
    consensus: `approvers.any(user, user.id == '${userId}')`,
    condition: `activity.type in [${PROXY_ACTIVITY_TYPES.map((t) => `'${t}'`).join(', ')}]`,
    notes: 'Created with the auth proxy configuration; lets its proxy user run OTP, login and signup activities.',
  };
}

/**
 * Creates a configuration for `organization` (a parent organization) with its proxy user, API key
 * and policy, inside the caller's transaction. Answers the new row.
 */
export async function createAuthProxyConfig(
  repos: Repositories,
  barrier: Barrier,
  organization: OrganizationRow,
  settings: AuthProxySettings,
  now: number,
): Promise<AuthProxyConfigRow> {
  if (organization.parent_organization_id) {
    throw invalid('an auth proxy acts for a parent organization: give the id of an organization without a parent');
  }
  const id = newId();
  const userId = newId();
  // The proxy's user is a user of the organization like any other: it counts against the quota.
  await reserve(repos, organization, 'users', 1);
  await repos.users.insert({
    id: userId,
    organization_id: organization.id,
    user_name: `Auth Proxy ${id}`,
    user_email: null,
    user_phone_number: null,
    email_verified_at: null,
    phone_number_verified_at: null,
    email_vouched_at: null,
    phone_number_vouched_at: null,
    created_at: now,
    updated_at: now,
  });
  const pair = generateP256KeyPair();
  try {
    const keyRows = buildApiKeyRows(
      organization.id,
      userId,
      [{ apiKeyName: `Auth Proxy ${id}`, publicKey: Buffer.from(pair.publicKey).toString('hex'), curveType: 'API_KEY_CURVE_P256' }],
      now,
      newId,
    );
    await insertApiKeys(repos, organization.id, keyRows);
    // The policy is written through the domain like create_policies, so it is checked the same way.
    const ctx = { repos, organization, now, newId } as unknown as ActivityContext;
    await createPolicies(ctx, [proxyPolicy(userId, id)]);
    const row: AuthProxyConfigRow = {
      id,
      organization_id: organization.id,
      user_id: userId,
      api_key_id: keyRows[0].id,
      private_key: await sealForOrganization(barrier, repos, organization.id, now, pair.privateKey, proxyKeyAt(id)),
      settings: JSON.stringify(settings),
      enabled: 1,
      created_at: now,
      updated_at: now,
    };
    await repos.authProxyConfigs.insert(row);
    return row;
  } finally {
    pair.privateKey.fill(0);
  }
}

/** The proxy's signing key, sealed with its organization's key (the deployment's before migration 032). */
export async function proxyPrivateKey(barrier: Barrier, repos: Repositories, config: AuthProxyConfigRow): Promise<Buffer> {
  return openForOrganization(barrier, repos, config.organization_id, config.private_key, proxyKeyAt(config.id));
}

export async function requireAuthProxyConfig(repos: Repositories, id: string): Promise<AuthProxyConfigRow> {
  const row = /^[0-9a-f-]{36}$/i.test(id) ? await repos.authProxyConfigs.get(id.toLowerCase()) : undefined;
  if (!row) throw notFound(`auth proxy config ${JSON.stringify(id)} not found: send the id \`sigil proxy-config create\` printed in X-Auth-Proxy-Config-ID`);
  return row;
}

export function settingsOf(row: AuthProxyConfigRow): AuthProxySettings {
  return checkSettings(JSON.parse(row.settings) as Partial<AuthProxySettings>);
}
