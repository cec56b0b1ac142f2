// Sessions (docs/reference/sessions.md "Sessions"; swagger v1CreateReadWriteSessionIntentV2/ResultV2,
// v1CreateReadOnlySessionResult, v1StampLoginIntent/Result; docs/reference/bundles.md credential
// bundle, docs/reference/auth-proxy.md session JWT, docs/reference/sessions.md "The session JWT" and 12).
//
//  - A read-write session is an expiring P-256 API key of the user. create_read_write_session makes
//    the key here and hands its private half over sealed in a credential bundle; stamp_login
//    registers the client's own public key and answers a session JWT signed by the deployment
//    signer. The key's credential_type records which flow made it, so `invalidateExisting` removes
//    only earlier keys of the same kind.
//  - A read-only session is a signed token for the X-Session header: queries only, one hour, bound
//    to the user and the credential that created it (deleting either ends it).
//  - A user holds at most 10 expiring keys: making room deletes expired ones first, then the oldest
//    (never the key the request is stamped with), as docs/reference/sessions.md describes
//    (insertApiKeys → src/domain/governance/quotas.ts).
import { makeCredentialBundle } from '../../crypto/bundles.js';
import { compressPublicKeyHex, generateP256KeyPair, isValidPublicKey } from '../../crypto/p256.js';
import { signSessionJwt, verifySessionJwt } from '../../crypto/session-jwt.js';
import { SigilError, invalid, notFound } from '../../errors/errors.js';
import type { ApiKeyRow, OrganizationRow, Repositories } from '../../store/index.js';
import { buildApiKeyRows, insertApiKeys, isExpired, parseExpirationSeconds } from './api-keys.js';
import { WEBAUTHN_VOTE_SCHEME, credentialPublicKey, type ActivityContext, type Caller } from '../context.js';
import { requireUser } from '../lookup.js';
import { loginProfile, sessionSeconds, type LoginProfile } from './session-profiles.js';

export const DEFAULT_SESSION_SECONDS = 900;
export const READ_ONLY_SESSION_SECONDS = 3600;

export const SESSION_TYPE_READ_WRITE = 'SESSION_TYPE_READ_WRITE';
export const SESSION_TYPE_READ_ONLY = 'SESSION_TYPE_READ_ONLY';
/** credential_type of keys made by create_read_write_session and by stamp_login (swagger v1CredentialType). */
export const READ_WRITE_SESSION_CREDENTIAL = 'CREDENTIAL_TYPE_READ_WRITE_SESSION_KEY_P256';
export const LOGIN_CREDENTIAL = 'CREDENTIAL_TYPE_LOGIN';

/** A P-256 public key as stamps carry it: compressed lowercase hex (an uncompressed one is compressed). */
export function sessionPublicKey(value: string, field: string): string {
  const hex = value.toLowerCase().replace(/^0x/, '');
  if (!/^[0-9a-f]+$/.test(hex) || (hex.length !== 66 && hex.length !== 130) || !isValidPublicKey(hex)) {
    throw invalid(`invalid ${field}: it must be a P-256 public key in hex, compressed (33 bytes) or uncompressed (65 bytes)`);
  }
  return compressPublicKeyHex(hex);
}

/** Registers an expiring session key on a user of the organization. */
export async function addSessionKey(
  ctx: ActivityContext,
  p: {
    userId: string;
    publicKey: string;
    apiKeyName: string;
    expirationSeconds?: string;
    credentialType: string;
    invalidateExisting?: boolean;
    /** The session profile the key is limited by (its scope), which also caps its lifetime. */
    profile?: LoginProfile;
  },
  /** The user's organization when it is a sub-organization of the target (OTP login, docs/reference/policies.md). */
  orgId = ctx.organization.id,
): Promise<ApiKeyRow> {
  const seconds = sessionSeconds(parseExpirationSeconds(p.expirationSeconds), p.profile?.seconds ?? null, DEFAULT_SESSION_SECONDS);
  const [row] = buildApiKeyRows(
    orgId,
    p.userId,
    [{ apiKeyName: p.apiKeyName, publicKey: p.publicKey, curveType: 'API_KEY_CURVE_P256', expirationSeconds: String(seconds) }],
    ctx.now,
    ctx.newId,
  );
  row.credential_type = p.credentialType;
  row.session_profile_id = p.profile?.id ?? null;
  if (p.invalidateExisting) {
    const existing = await ctx.repos.apiKeys.listForUsers(orgId, [p.userId]);
    const earlier = existing.filter((k) => k.credential_type === p.credentialType).map((k) => k.id);
    await ctx.repos.apiKeys.delete(orgId, p.userId, earlier);
  }
  const current = ctx.caller.credential.kind === 'api_key' ? ctx.caller.credential.apiKey.id : undefined;
  await insertApiKeys(ctx.repos, orgId, [row], { keepKeyId: current });
  return row;
}

/**
 * The session profile a new session of `user` is made with: the one the intent names, or, when a
 * session made with a profile opens another session for its own user (a refresh by stamp_login, a
 * create_read_write_session), that profile, so a limited session can never open an unlimited one.
 * Such a session naming another profile is refused.
 */
async function sessionProfileFor(ctx: ActivityContext, user: { id: string; organization_id: string }, requested: string | undefined): Promise<LoginProfile | undefined> {
  const { credential } = ctx.caller;
  const inherited = credential.kind === 'api_key' && ctx.caller.user.id === user.id ? credential.apiKey.session_profile_id : null;
  if (requested && inherited && requested !== inherited) {
    throw invalid(`sessionProfileId ${requested} is not the session profile of the session making this request (${inherited}): a session made with a profile can only open sessions with that profile`);
  }
  const id = requested || inherited;
  return id ? loginProfile(ctx.repos, user.organization_id, id) : undefined;
}

const stampTime = (ms: number) => new Date(ms).toISOString();

/**
 * A key made here for a user (create_read_write_session, otp_auth, oauth): a new expiring P-256 API
 * key of `user` whose private half leaves only sealed to `target` in a credential bundle
 * (docs/reference/bundles.md); the plaintext is wiped once sealed.
 */
export async function issueKeyBundle(
  ctx: ActivityContext,
  user: { id: string; organization_id: string },
  target: string,
  p: { apiKeyName: string; expirationSeconds?: string; credentialType: string; invalidateExisting?: boolean; profile?: LoginProfile },
): Promise<{ apiKeyId: string; credentialBundle: string }> {
  const pair = generateP256KeyPair();
  try {
    const row = await addSessionKey(ctx, { userId: user.id, publicKey: Buffer.from(pair.publicKey).toString('hex'), ...p }, user.organization_id);
    return { apiKeyId: row.id, credentialBundle: makeCredentialBundle({ plaintext: pair.privateKey, targetPublicKey: target }) };
  } finally {
    pair.privateKey.fill(0);
  }
}

export interface ReadWriteSessionParams {
  targetPublicKey: string;
  userId?: string;
  /** V1 (v1CreateReadWriteSessionIntent): the user with this email instead of a userId. */
  email?: string;
  apiKeyName?: string;
  expirationSeconds?: string;
  invalidateExisting?: boolean;
}

/** The one user of the organization with `email` (create_read_write_session V1). */
async function userWithEmail(ctx: ActivityContext, email: string) {
  const users = await ctx.repos.users.findByContact([ctx.organization.id], 'email', email);
  if (users.length === 0) throw notFound(`no user with email ${email} in organization ${ctx.organization.id}`);
  if (users.length > 1) throw invalid(`more than one user has email ${email}: name the user by userId (ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2)`);
  return users[0];
}

/** create_read_write_session (V2; V1 by email): a server-made session key, returned sealed to targetPublicKey. */
export async function createReadWriteSession(ctx: ActivityContext, p: ReadWriteSessionParams) {
  const user = p.email !== undefined ? await userWithEmail(ctx, p.email) : await requireUser(ctx.repos, ctx.organization.id, p.userId || ctx.caller.user.id);
  const userId = user.id;
  const target = sessionPublicKey(p.targetPublicKey, 'targetPublicKey');
  const { apiKeyId, credentialBundle } = await issueKeyBundle(ctx, user, target, {
    apiKeyName: p.apiKeyName ?? `Read Write Session - ${stampTime(ctx.now)}`,
    expirationSeconds: p.expirationSeconds,
    credentialType: READ_WRITE_SESSION_CREDENTIAL,
    invalidateExisting: p.invalidateExisting,
    profile: await sessionProfileFor(ctx, user, undefined),
  });
  return { organizationId: ctx.organization.id, organizationName: ctx.organization.name, userId, username: user.user_name, apiKeyId, credentialBundle };
}

/**
 * A login (stamp_login, otp_login, oauth_login): `publicKey` becomes an expiring login key
 * (CREDENTIAL_TYPE_LOGIN) of `user` in the user's organization, and the answer is the session JWT
 * for it, claims in Turnkey's order (docs/reference/auth-proxy.md; exp in seconds). A session made with a
 * session profile records it on the key (which the pipeline then holds to the profile's scope) and
 * carries `session_profile_id` and `scope` in its JWT, as @turnkey/core's parseSession reads them.
 */
export async function openLoginSession(
  ctx: ActivityContext,
  user: { id: string; organization_id: string },
  p: { publicKey: string; apiKeyName: string; expirationSeconds?: string; invalidateExisting?: boolean; sessionProfileId?: string },
): Promise<{ session: string }> {
  const publicKey = sessionPublicKey(p.publicKey, 'publicKey');
  const profile = await sessionProfileFor(ctx, user, p.sessionProfileId);
  const row = await addSessionKey(
    ctx,
    {
      userId: user.id,
      publicKey,
      apiKeyName: p.apiKeyName,
      expirationSeconds: p.expirationSeconds,
      credentialType: LOGIN_CREDENTIAL,
      invalidateExisting: p.invalidateExisting,
      profile,
    },
    user.organization_id,
  );
  const session = signSessionJwt(
    {
      exp: Math.floor(row.expires_at! / 1000),
      public_key: row.public_key,
      session_type: SESSION_TYPE_READ_WRITE,
      user_id: user.id,
      organization_id: user.organization_id,
      ...(profile ? { session_profile_id: profile.id, scope: profile.scope } : {}),
    },
    ctx.services.signer,
  );
  return { session };
}

/** stamp_login: the client's key becomes the caller's expiring login key; the answer is a session JWT. */
export function stampLogin(
  ctx: ActivityContext,
  p: { publicKey: string; expirationSeconds?: string; invalidateExisting?: boolean; sessionProfileId?: string },
) {
  return openLoginSession(ctx, ctx.caller.user, { ...p, apiKeyName: `Login Session - ${stampTime(ctx.now)}` });
}

/** create_read_only_session: a signed X-Session token for queries, valid one hour (or less, see below). */
export async function createReadOnlySession(ctx: ActivityContext) {
  const { caller } = ctx;
  let expiresAt = ctx.now + READ_ONLY_SESSION_SECONDS * 1000;
  // A session never outlives the expiring key that created it.
  if (caller.credential.kind === 'api_key' && caller.credential.apiKey.expires_at !== null) {
    expiresAt = Math.min(expiresAt, caller.credential.apiKey.expires_at);
  }
  const exp = Math.floor(expiresAt / 1000);
  const session = signSessionJwt(
    {
      exp,
      public_key: credentialPublicKey(caller.credential),
      session_type: SESSION_TYPE_READ_ONLY,
      user_id: caller.user.id,
      organization_id: ctx.organization.id,
    },
    ctx.services.signer,
  );
  return {
    organizationId: ctx.organization.id,
    organizationName: ctx.organization.name,
    userId: caller.user.id,
    username: caller.user.user_name,
    session,
    sessionExpiry: String(exp),
  };
}

const sessionRefused = (message: string) => new SigilError('UNAUTHENTICATED', message);

/**
 * The caller an X-Session token stands for: its signature, type and expiry hold, it was issued for
 * the target organization or the target's parent, and its user and creating credential still exist.
 * The caller acts with that credential, for queries only (the pipeline refuses submissions).
 */
export async function readOnlySessionCaller(
  repos: Repositories,
  token: string,
  signerPublicKey: Uint8Array,
  org: OrganizationRow,
  now: number,
): Promise<Caller> {
  const claims = verifySessionJwt(token, signerPublicKey);
  if (!claims) throw sessionRefused('invalid read-only session: the X-Session value is malformed or its signature does not verify');
  if (claims.session_type !== SESSION_TYPE_READ_ONLY) {
    throw sessionRefused('invalid read-only session: X-Session takes a session from create_read_only_session; a read-write session authenticates by stamping with its key');
  }
  const { exp, user_id: userId, organization_id: sessionOrg, public_key: publicKey } = claims;
  if (typeof exp !== 'number' || typeof userId !== 'string' || typeof sessionOrg !== 'string' || typeof publicKey !== 'string') {
    throw sessionRefused('invalid read-only session: required claims are missing');
  }
  if (exp * 1000 <= now) throw sessionRefused(`expired read-only session: it ended at ${stampTime(exp * 1000)}; create a new one`);
  if (sessionOrg !== org.id && sessionOrg !== org.parent_organization_id) {
    throw sessionRefused(`read-only session of organization ${sessionOrg} cannot read organization ${org.id}: it is neither that organization nor its parent`);
  }
  const revoked = () => sessionRefused('revoked read-only session: the user or the credential that created it no longer exists');
  const keys = (await repos.apiKeys.findWithOwner([sessionOrg], publicKey)).filter((f) => f.user.id === userId);
  if (keys.length > 0) {
    const { key, user } = keys[0];
    if (isExpired(key, now)) throw revoked();
    return { organizationId: sessionOrg, user, credential: { kind: 'api_key', apiKey: key, scheme: SESSION_TYPE_READ_ONLY, signature: '' } };
  }
  const passkeys = (await repos.authenticators.findByPublicKeyWithOwner(sessionOrg, publicKey)).filter((f) => f.user.id === userId);
  if (passkeys.length > 0) {
    const { authenticator, user } = passkeys[0];
    return { organizationId: sessionOrg, user, credential: { kind: 'webauthn', authenticator, scheme: WEBAUTHN_VOTE_SCHEME, signature: '' } };
  }
  throw revoked();
}

