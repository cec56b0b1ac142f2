// Session profiles (swagger v1CreateSessionProfileIntent, v1SessionProfile,
// v1GetSessionProfile(s)Request; docs/reference/sessions.md "Session profiles"): a named `scope` in
// the policy language and an optional lifetime that a login activity may name (`sessionProfileId`)
// so the session it opens is limited to what the scope allows and lasts no longer than the profile.
//
// Rules (docs/sessions-and-logins.md "Session profiles"):
//  - Immutable: created once, never updated or deleted through the API. An organization sees its
//    own profiles and its parent's; a sub-organization's users log in with either.
//  - `scope` is compiled as a policy condition when the profile is created (a scope that cannot be
//    evaluated is refused), and evaluated by the pipeline's authorization step on every activity a
//    session made with the profile submits (src/activity/authorize.ts checkSessionScope).
//  - Lifetime of a session: the intent's expirationSeconds and the profile's, the shorter when
//    both are given, whichever is given when one is, 900 s when neither is.
import { badRequestDetail, invalid, notFound } from '../../errors/errors.js';
import { compilePolicyExpression, type CompiledPolicyExpression } from '../../policy/index.js';
import { isUniqueViolation, type OrganizationRow, type Repositories, type SessionProfileRow } from '../../store/index.js';
import { parseExpirationSeconds } from './api-keys.js';
import { checkName } from './contacts.js';
import type { ActivityContext, CallerCredential } from '../context.js';
import { timestamp } from '../records.js';

export interface CreateSessionProfileParams {
  sessionProfileName: string;
  scope: string;
  expirationSeconds?: string;
  notes?: string;
}

/** The v1SessionProfile record. */
export function sessionProfileRecord(row: SessionProfileRow) {
  return {
    sessionProfileId: row.id,
    sessionProfileName: row.name,
    scope: row.scope,
    ...(row.expiration_seconds !== null ? { expirationSeconds: row.expiration_seconds } : {}),
    ...(row.notes !== null ? { notes: row.notes } : {}),
    createdAt: timestamp(row.created_at),
    updatedAt: timestamp(row.updated_at),
  };
}

/** The scope as the engine evaluates it: a policy condition (velocity controls are a policy's, not a scope's). */
function compileScope(source: string): { ok: true; scope: CompiledPolicyExpression } | { ok: false; message: string } {
  const r = compilePolicyExpression(source, 'condition', { controls: new Set() });
  return r.ok ? { ok: true, scope: r.expression } : { ok: false, message: r.error.message };
}

export async function createSessionProfile(ctx: ActivityContext, p: CreateSessionProfileParams): Promise<{ sessionProfileId: string }> {
  const orgId = ctx.organization.id;
  checkName(p.sessionProfileName, 'sessionProfileName');
  const compiled = compileScope(p.scope);
  if (!compiled.ok) {
    throw invalid(`invalid session profile scope: ${compiled.message}`, [badRequestDetail([{ field: 'scope', description: compiled.message }])]);
  }
  const seconds = parseExpirationSeconds(p.expirationSeconds, 'session profile expiration');
  const nameTaken = () => invalid(`session profile name must be unique: a session profile named ${JSON.stringify(p.sessionProfileName)} already exists in this organization`);
  if (await ctx.repos.sessionProfiles.findByName(orgId, p.sessionProfileName)) throw nameTaken();
  const id = ctx.newId();
  try {
    await ctx.repos.sessionProfiles.insert({
      id,
      organization_id: orgId,
      name: p.sessionProfileName,
      scope: p.scope,
      expiration_seconds: seconds === null ? null : String(seconds),
      notes: p.notes ?? null,
      created_at: ctx.now,
      updated_at: ctx.now,
    });
  } catch (err) {
    // A concurrent creation took the name between the check and the insert.
    if (isUniqueViolation(err)) throw nameTaken();
    throw err;
  }
  return { sessionProfileId: id };
}

/** The organizations whose profiles `org` sees and uses: itself and its parent. */
function visibleFrom(org: Pick<OrganizationRow, 'id' | 'parent_organization_id'>): string[] {
  return org.parent_organization_id ? [org.id, org.parent_organization_id] : [org.id];
}

export async function requireSessionProfile(
  repos: Repositories,
  org: Pick<OrganizationRow, 'id' | 'parent_organization_id'>,
  id: string,
  field = 'sessionProfileId',
): Promise<SessionProfileRow> {
  const row = await repos.sessionProfiles.get(visibleFrom(org), id);
  if (!row) {
    const where = org.parent_organization_id ? `organization ${org.id} or its parent` : `organization ${org.id}`;
    throw notFound(`session profile not found: ${field} ${id} is not a session profile of ${where}`);
  }
  return row;
}

/** get_session_profiles: the organization's profiles, then its parent's, each oldest first. */
export async function listSessionProfiles(repos: Repositories, org: OrganizationRow): Promise<SessionProfileRow[]> {
  const rows = await repos.sessionProfiles.list(visibleFrom(org));
  return [...rows.filter((r) => r.organization_id === org.id), ...rows.filter((r) => r.organization_id !== org.id)];
}

/** What a login takes from the profile it names. */
export interface LoginProfile {
  id: string;
  scope: string;
  /** The profile's lifetime in seconds; null: the intent's (or the default) decides. */
  seconds: number | null;
}

/** The profile a login names, looked up from the organization of the user logging in. */
export async function loginProfile(repos: Repositories, userOrganizationId: string, id: string): Promise<LoginProfile> {
  const org = await repos.organizations.get(userOrganizationId);
  if (!org) throw notFound(`organization not found: ${userOrganizationId}`);
  const row = await requireSessionProfile(repos, org, id);
  return { id: row.id, scope: row.scope, seconds: row.expiration_seconds === null ? null : Number(row.expiration_seconds) };
}

/** A session's lifetime: the shorter of the intent's and the profile's, whichever is given, else `fallback`. */
export function sessionSeconds(intent: number | null, profile: number | null, fallback: number): number {
  if (intent !== null && profile !== null) return Math.min(intent, profile);
  return intent ?? profile ?? fallback;
}

// Profiles are immutable, so a compiled scope is valid for the life of the process.
const SCOPE_CACHE_LIMIT = 10_000;
const scopeCache = new Map<string, CompiledPolicyExpression>();

/** The scope a credential is limited to: that of the profile its login key was created with, if any. */
export async function sessionScope(
  repos: Repositories,
  credential: CallerCredential,
): Promise<{ profileId: string; scope: CompiledPolicyExpression | undefined } | undefined> {
  if (credential.kind !== 'api_key' || credential.apiKey.session_profile_id === null) return undefined;
  const profileId = credential.apiKey.session_profile_id;
  const cached = scopeCache.get(profileId);
  if (cached) return { profileId, scope: cached };
  const org = await repos.organizations.get(credential.apiKey.organization_id);
  const row = org ? await repos.sessionProfiles.get(visibleFrom(org), profileId) : undefined;
  // A profile that is gone, or a scope a later Sigil no longer compiles, allows nothing.
  const compiled = row ? compileScope(row.scope) : undefined;
  if (!compiled?.ok) return { profileId, scope: undefined };
  if (scopeCache.size >= SCOPE_CACHE_LIMIT) scopeCache.delete(scopeCache.keys().next().value as string);
  scopeCache.set(profileId, compiled.scope);
  return { profileId, scope: compiled.scope };
}
