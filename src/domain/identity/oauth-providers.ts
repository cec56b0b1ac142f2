// OAuth providers: the OIDC identities a user may log in with (docs/reference/sessions.md "Login activities";
// swagger v1CreateOauthProvidersIntentV2, v1OauthProviderParamsV2, v1OidcClaims,
// v1DeleteOauthProvidersIntent, v1GetOauthProvidersRequest, v1OauthProvider).
// An identity is (issuer, audience, subject), taken from `oidcClaims` or read from the payload of
// `oidcToken`. Registration does not verify the token's signature, nonce or expiry: it only names the
// identity (the reference service checks the nonce at login only), and the token is not kept.
// Logging in with a provider is where a token will be verified. One identity at most once per
// organization; at most 10 providers per user.
import { SigilError, invalid } from '../../errors/errors.js';
import { isUniqueViolation, type OauthProviderRow, type Repositories } from '../../store/index.js';
import { checkName } from './contacts.js';
import type { ActivityContext, OperationContext } from '../context.js';
import { requireAll } from '../lookup.js';
import { timestamp, type TimestampObject } from '../records.js';
import { requireUser } from '../lookup.js';
import { MAX_OAUTH_PROVIDERS_PER_USER } from '../governance/quotas.js';


export interface OauthProviderParams {
  providerName: string;
  oidcToken?: string;
  oidcClaims?: { iss: string; sub: string; aud: string };
}

export interface OauthProviderRecord {
  providerId: string;
  providerName: string;
  issuer: string;
  audience: string;
  subject: string;
  createdAt: TimestampObject;
  updatedAt: TimestampObject;
}

interface Identity {
  issuer: string;
  audience: string;
  subject: string;
}

const badToken = (field: string, why: string) => invalid(`invalid oidc token: ${field}.oidcToken ${why}`);

/** (iss, aud, sub) from a JWT's payload, read without trusting it. */
function identityFromToken(token: string, field: string): Identity {
  const parts = token.trim().split('.');
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]+={0,2}$/.test(p))) {
    throw badToken(field, 'is not a JWT (three base64url parts separated by dots)');
  }
  let claims: Record<string, unknown>;
  try {
    claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  } catch {
    throw badToken(field, 'has a payload that is not base64url-encoded JSON');
  }
  if (claims === null || typeof claims !== 'object') throw badToken(field, 'has a payload that is not a JSON object');
  const { iss, sub } = claims;
  let { aud } = claims;
  if (Array.isArray(aud) && aud.length === 1) aud = aud[0];
  if (typeof iss !== 'string' || iss === '') throw badToken(field, 'has no iss claim');
  if (typeof sub !== 'string' || sub === '') throw badToken(field, 'has no sub claim');
  if (typeof aud !== 'string' || aud === '') throw badToken(field, 'must have an aud claim naming exactly one audience');
  return { issuer: iss, audience: aud, subject: sub };
}

function identityOf(p: OauthProviderParams, field: string): Identity {
  const fromToken = p.oidcToken !== undefined && p.oidcToken !== '' ? identityFromToken(p.oidcToken, field) : undefined;
  let fromClaims: Identity | undefined;
  if (p.oidcClaims) {
    const { iss, sub, aud } = p.oidcClaims;
    for (const [k, v] of Object.entries({ iss, sub, aud })) {
      if (typeof v !== 'string' || v === '') throw invalid(`${field}.oidcClaims.${k} must not be empty`);
    }
    fromClaims = { issuer: iss, audience: aud, subject: sub };
  }
  if (fromToken && fromClaims) {
    if (fromToken.issuer !== fromClaims.issuer || fromToken.audience !== fromClaims.audience || fromToken.subject !== fromClaims.subject) {
      throw invalid(`${field}: oidcClaims do not match the iss, aud and sub of oidcToken`);
    }
    return fromClaims;
  }
  const identity = fromClaims ?? fromToken;
  if (!identity) throw invalid(`${field}: give oidcToken or oidcClaims {iss, sub, aud} to name the identity`);
  return identity;
}

export const sameIdentity = (a: Identity, b: Identity) => a.issuer === b.issuer && a.audience === b.audience && a.subject === b.subject;

export const oauthProviderExists = (i: Identity) =>
  new SigilError(
    'CONFLICT',
    `oauth provider already exists: an OAuth provider with issuer ${JSON.stringify(i.issuer)}, audience ${JSON.stringify(i.audience)} and subject ${JSON.stringify(i.subject)} is registered in this organization`,
  );

/**
 * Validates providers for a user and registers them; all or nothing (the caller's transaction).
 * `field` prefixes error messages, e.g. `oauthProviders` or `users[0].oauthProviders`.
 */
export async function registerOauthProviders(
  ctx: Pick<ActivityContext, 'repos' | 'now' | 'newId'>,
  organizationId: string,
  userId: string,
  params: OauthProviderParams[],
  field = 'oauthProviders',
): Promise<string[]> {
  if (params.length === 0) return [];
  const rows = oauthProviderRows(ctx, organizationId, userId, params, field);
  // Counted under the organization's row lock, so concurrent registrations cannot both fit.
  await ctx.repos.organizations.lockForUpdate(organizationId);
  checkOauthProviderCount((await ctx.repos.oauthProviders.listForUsers(organizationId, [userId])).length, rows.length);
  const clash = await ctx.repos.oauthProviders.findIdentities(organizationId, rows);
  if (clash.length > 0) throw oauthProviderExists(clash[0]);
  try {
    await ctx.repos.oauthProviders.insert(rows);
  } catch (err) {
    // A concurrent registration of the same identity won.
    if (isUniqueViolation(err)) throw oauthProviderExists(rows[0]);
    throw err;
  }
  return rows.map((r) => r.id);
}

/** The rows of a user's new providers, each checked; reads nothing, so it may run before any transaction. */
export function oauthProviderRows(
  ctx: Pick<ActivityContext, 'now' | 'newId'>,
  organizationId: string,
  userId: string,
  params: OauthProviderParams[],
  field = 'oauthProviders',
): OauthProviderRow[] {
  const rows: OauthProviderRow[] = [];
  for (const [i, p] of params.entries()) {
    const at = `${field}[${i}]`;
    checkName(p.providerName, `${at}.providerName`);
    const identity = identityOf(p, at);
    if (rows.some((r) => sameIdentity(r, identity))) throw invalid(`${at}: the same identity is listed twice`);
    rows.push({
      id: ctx.newId(),
      organization_id: organizationId,
      user_id: userId,
      provider_name: p.providerName,
      ...identity,
      created_at: ctx.now,
      updated_at: ctx.now,
    });
  }
  return rows;
}

/** More than a user may hold (docs/reference/api.md "Limits"): `held` held, `adding` more. */
export function checkOauthProviderCount(held: number, adding: number): void {
  if (held + adding > MAX_OAUTH_PROVIDERS_PER_USER) {
    throw new SigilError(
      'RATE_LIMIT_EXCEEDED',
      `user has exceeded maximum oauth providers: a user holds at most ${MAX_OAUTH_PROVIDERS_PER_USER} (it has ${held}, ${adding} more requested)`,
    );
  }
}

export function oauthProviderRecord(row: OauthProviderRow): OauthProviderRecord {
  return {
    providerId: row.id,
    providerName: row.provider_name,
    issuer: row.issuer,
    audience: row.audience,
    subject: row.subject,
    createdAt: timestamp(row.created_at),
    updatedAt: timestamp(row.updated_at),
  };
}

/** Providers per user, for the `oauthProviders` field of user records. */
export async function oauthProvidersByUser(repos: Repositories, organizationId: string, userIds: string[]): Promise<Map<string, OauthProviderRecord[]>> {
  const out = new Map<string, OauthProviderRecord[]>(userIds.map((id) => [id, []]));
  for (const row of await repos.oauthProviders.listForUsers(organizationId, userIds)) out.get(row.user_id)?.push(oauthProviderRecord(row));
  return out;
}

export async function createOauthProviders(ctx: ActivityContext, p: { userId: string; oauthProviders: OauthProviderParams[] }) {
  if (p.oauthProviders.length === 0) throw invalid('oauthProviders must list at least one provider');
  await requireUser(ctx.repos, ctx.organization.id, p.userId);
  return { providerIds: await registerOauthProviders(ctx, ctx.organization.id, p.userId, p.oauthProviders) };
}

/** The `iss` values of Google id_tokens (https://developers.google.com/identity/openid-connect/openid-connect#validatinganidtoken). */
const GOOGLE_ISSUERS = ['https://accounts.google.com', 'accounts.google.com'];

/**
 * When a parent organization's credential adds OAuth providers to a sub-organization's user
 * (social linking, @turnkey/sdk-server's createOauthProviders server action): allowed only as that
 * action documents it, when every provider is a Google id_token (verified here: trusted issuer,
 * signature, expiry) whose `email_verified` email is the user's email. The parent then proves what
 * an email login would prove, and can attach no identity the user does not hold.
 */
export async function checkParentSocialLinking(ctx: OperationContext, p: { userId: string; oauthProviders: OauthProviderParams[] }): Promise<void> {
  const refused = (why: string) =>
    new SigilError('REQUEST_NOT_AUTHORIZED', `request not authorized: a parent organization adds OAuth providers to a sub-organization's user only from a Google id_token that verifies the user's email: ${why}`);
  const user = await requireUser(ctx.repos, ctx.organization.id, p.userId);
  if (!user.user_email) throw refused(`user ${user.id} has no email`);
  for (const [i, provider] of (p.oauthProviders ?? []).entries()) {
    if (typeof provider.oidcToken !== 'string' || provider.oidcToken === '' || provider.oidcClaims !== undefined) {
      throw refused(`oauthProviders[${i}] must carry an oidcToken and no oidcClaims`);
    }
    const { issuer, claims } = await ctx.services.oidc.verify(provider.oidcToken, {});
    if (!GOOGLE_ISSUERS.includes(issuer)) throw refused(`oauthProviders[${i}] was issued by ${issuer}, not Google`);
    if (claims.email_verified !== true && claims.email_verified !== 'true') throw refused(`oauthProviders[${i}] does not say its email is verified`);
    if (typeof claims.email !== 'string' || claims.email.toLowerCase() !== user.user_email.toLowerCase()) {
      throw refused(`the email of oauthProviders[${i}] is not the user's email`);
    }
  }
}

export async function deleteOauthProviders(ctx: ActivityContext, p: { userId: string; providerIds: string[] }) {
  if (p.providerIds.length === 0) throw invalid('providerIds must list at least one provider');
  const orgId = ctx.organization.id;
  await requireUser(ctx.repos, orgId, p.userId);
  const owned = await ctx.repos.oauthProviders.listForUsers(orgId, [p.userId]);
  const { ids } = await requireAll(
    p.providerIds,
    async (unique) => owned.filter((r) => unique.includes(r.id)),
    `oauth provider not found for user ${p.userId}`,
  );
  await ctx.repos.oauthProviders.delete(orgId, p.userId, ids);
  return { providerIds: ids };
}

/** get_oauth_providers: the user's providers, or every provider of the organization without userId. */
export async function listOauthProviders(ctx: OperationContext, userId: string | undefined) {
  const orgId = ctx.organization.id;
  if (userId) await requireUser(ctx.repos, orgId, userId);
  const rows = userId ? await ctx.repos.oauthProviders.listForUsers(orgId, [userId]) : await ctx.repos.oauthProviders.list(orgId);
  return { oauthProviders: rows.map(oauthProviderRecord) };
}
