// MFA policies (swagger v1CreateMfaPolicyIntent, v1UpdateMfaPolicyIntent,
// v1DeleteMfaPolicyIntent, v1MfaPolicy, v1MfaStatus; docs/reference/sessions.md "MFA" and Appendix B.1):
// a user's policies, each a condition in the policy language and ordered steps of authentication
// methods (every step must be met, each by one method of its `any` list); and the rules the pipeline
// applies with them: the first of the acting user's policies (by `order`) whose condition holds for
// an activity names what the activity must carry; the stamps that carried it are its submission's
// and its submitter's approve_activity stamps, one method per step.
//
// Decisions (docs/mfa.md "MFA policies"):
// - Methods a stamp can present: AUTHENTICATION_TYPE_PASSKEY (X-Stamp-Webauthn; `id` pins an
//   authenticator id), AUTHENTICATION_TYPE_API_KEY (an API key's stamp; `id` pins an API key id) and
//   AUTHENTICATION_TYPE_SESSION (a session key's stamp: login, read-write, OTP, OAuth or email-auth
//   credentials; `id` names the session profile the session was made with, or the default session id
//   for a session made without one). EMAIL_OTP, SMS_OTP and OAUTH are refused when a policy is written: Sigil accepts an
//   attested stamp only for logins, so such a step could never be met and the activity would wait
//   forever.
// - `order` is unique among a user's policies, so "the first matching" is always one policy.
// - A condition that fails to evaluate counts as matching: MFA errs towards asking for more.
import { badRequestDetail, invalid, notFound } from '../../errors/errors.js';
import { compilePolicyExpression, evaluatePolicyExpression, type CompiledPolicyExpression, type PolicyContext } from '../../policy/index.js';
import { isUniqueViolation, type MfaPolicyRow, type Repositories } from '../../store/index.js';
import { checkName } from './contacts.js';
import type { ActivityContext, CallerCredential } from '../context.js';
import { timestamp } from '../records.js';
import { requireUser } from '../lookup.js';
import { listSessionProfiles } from './session-profiles.js';

export interface AuthenticationMethod {
  type: string;
  id?: string;
}

export interface RequiredStep {
  any: AuthenticationMethod[];
}

/** What a stamp presented: its method, and the credential's public key (one credential meets one step). */
export interface PresentedMethod extends AuthenticationMethod {
  publicKey: string;
  /**
   * The credential was created after the activity it would approve was submitted: it meets no step
   * (a credential the waiting activity's submitter could make with the credential that submitted it
   * must not stand in for the method that activity waits for).
   */
  createdAfterSubmission?: true;
}

export interface CreateMfaPolicyParams {
  userId: string;
  mfaPolicyName: string;
  condition: string;
  requiredAuthenticationMethods: RequiredStep[];
  order: number | string;
  notes?: string;
}

export interface UpdateMfaPolicyParams {
  userId: string;
  mfaPolicyId: string;
  mfaPolicyName?: string;
  condition?: string;
  requiredAuthenticationMethods?: RequiredStep[];
  order?: number | string;
  notes?: string;
}

/** The default read-write session id MFA policies pin sessions with (docs/reference/activities.md "MFA policies"). */
export const DEFAULT_SESSION_ID = '00000000-0000-0000-0000-000000000000';

const PRESENTABLE = ['AUTHENTICATION_TYPE_PASSKEY', 'AUTHENTICATION_TYPE_API_KEY', 'AUTHENTICATION_TYPE_SESSION'];
const MAX_STEPS = 10;
const MAX_METHODS = 10;

/** API key credential types that are manual API keys; every other P-256 credential of a user is a session key. */
const API_KEY_TYPES = new Set(['CREDENTIAL_TYPE_API_KEY_P256', 'CREDENTIAL_TYPE_API_KEY_SECP256K1', 'CREDENTIAL_TYPE_API_KEY_ED25519']);

/**
 * The method a stamp's credential presents (undefined: an attested stamp, which presents none here).
 * `submittedAt`: when the activity it would count toward was submitted.
 */
export function presentedMethod(credential: CallerCredential, submittedAt?: number): PresentedMethod | undefined {
  const method = presentedMethodOf(credential);
  const createdAt = credential.kind === 'webauthn' ? credential.authenticator.created_at : credential.kind === 'api_key' ? credential.apiKey.created_at : undefined;
  if (method && submittedAt !== undefined && createdAt !== undefined && createdAt > submittedAt) return { ...method, createdAfterSubmission: true };
  return method;
}

function presentedMethodOf(credential: CallerCredential): PresentedMethod | undefined {
  switch (credential.kind) {
    case 'webauthn':
      return { type: 'AUTHENTICATION_TYPE_PASSKEY', id: credential.authenticator.id, publicKey: credential.authenticator.credential_public_key };
    case 'api_key':
      return API_KEY_TYPES.has(credential.apiKey.credential_type)
        ? { type: 'AUTHENTICATION_TYPE_API_KEY', id: credential.apiKey.id, publicKey: credential.apiKey.public_key }
        : { type: 'AUTHENTICATION_TYPE_SESSION', id: credential.apiKey.session_profile_id ?? DEFAULT_SESSION_ID, publicKey: credential.apiKey.public_key };
    case 'attested':
      return undefined;
  }
}

const methodMeets = (required: AuthenticationMethod, presented: PresentedMethod) =>
  !presented.createdAfterSubmission && required.type === presented.type && (!required.id || required.id === presented.id);

/**
 * Marks the MFA contexts of an activity that adds a credential to a user (src/pipeline/authorize.ts
 * mfaContexts, from the declaration's `addsCredential`): the method the new credential would present
 * and the user it is for. A symbol, so no policy condition can see or forge it.
 */
export const ADDS_CREDENTIAL = Symbol('adds credential');
export interface AddedCredential {
  method: string;
  userId: string;
}

/** Whether a new credential presenting `method` could meet a step of the policy (a pinned passkey or API key id names an existing one). */
function newCredentialMeets(row: MfaPolicyRow, method: string): boolean {
  const steps = JSON.parse(row.required_methods) as RequiredStep[];
  return steps.some((s) => s.any.some((m) => m.type === method && (method === 'AUTHENTICATION_TYPE_SESSION' || !m.id)));
}

/**
 * Which presented method meets which step: one credential per step, every step if possible (a small
 * bipartite matching by backtracking; policies hold at most 10 steps). `assigned[i]` is step i's.
 */
export function assignMethods(steps: RequiredStep[], presented: PresentedMethod[]): (PresentedMethod | undefined)[] {
  const distinct = presented.filter((p, i) => presented.findIndex((q) => q.publicKey === p.publicKey) === i);
  let best: (PresentedMethod | undefined)[] = steps.map(() => undefined);
  let bestCount = -1;
  const current: (PresentedMethod | undefined)[] = [];
  const used = new Set<string>();
  const walk = (i: number, count: number) => {
    // No better assignment ahead: too few steps or too few unused credentials left.
    if (count + Math.min(steps.length - i, distinct.length - used.size) <= bestCount) return;
    if (i === steps.length) {
      best = [...current];
      bestCount = count;
      return;
    }
    for (const p of distinct) {
      if (used.has(p.publicKey) || !steps[i].any.some((m) => methodMeets(m, p))) continue;
      used.add(p.publicKey);
      current.push(p);
      walk(i + 1, count + 1);
      current.pop();
      used.delete(p.publicKey);
    }
    current.push(undefined);
    walk(i + 1, count);
    current.pop();
  };
  walk(0, 0);
  return best;
}

/** v1AuthenticationMethod as get_mfa_status shows a presented one. */
export const shownMethod = (p: PresentedMethod): AuthenticationMethod => ({ type: p.type, ...(p.id ? { id: p.id } : {}) });

function checkOrder(order: number | string, field: string): number {
  const n = typeof order === 'string' && /^\d+$/.test(order) ? Number(order) : order;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw invalid(`${field} must be an integer from 0`, [badRequestDetail([{ field, description: 'must be an integer from 0' }])]);
  }
  return n;
}

function checkCondition(source: string, field: string): string {
  // No velocity controls: an MFA condition is judged without their measurements.
  const r = compilePolicyExpression(source, 'condition', { controls: new Set() });
  if (!r.ok) throw invalid(`${r.error.message} (${field})`, [badRequestDetail([{ field, description: r.error.message }])]);
  return source;
}

/** The steps, each method checked against the user's credentials where it pins one. */
async function checkSteps(repos: Repositories, organizationId: string, userId: string, steps: RequiredStep[], field: string): Promise<RequiredStep[]> {
  if (steps.length === 0) throw invalid(`${field} must list at least one step`);
  if (steps.length > MAX_STEPS) throw invalid(`${field} lists ${steps.length} steps; at most ${MAX_STEPS}`);
  const org = await repos.organizations.get(organizationId);
  const [keys, authenticators, sessionProfiles] = await Promise.all([
    repos.apiKeys.listForUsers(organizationId, [userId]),
    repos.authenticators.listForUsers(organizationId, [userId]),
    org ? listSessionProfiles(repos, org) : [],
  ]);
  return steps.map((step, i) => {
    const at = `${field}[${i}].any`;
    if (step.any.length === 0) throw invalid(`${at} must list at least one authentication method`);
    if (step.any.length > MAX_METHODS) throw invalid(`${at} lists ${step.any.length} methods; at most ${MAX_METHODS}`);
    return {
      any: step.any.map((m, j) => {
        const where = `${at}[${j}]`;
        if (!PRESENTABLE.includes(m.type)) {
          throw invalid(
            `${where}.type: ${m.type} cannot be required by Sigil's MFA policies: an approval can present only ${PRESENTABLE.join(', ')} (an OTP or OAuth attested stamp can only log in)`,
            [badRequestDetail([{ field: `${where}.type`, description: `must be one of ${PRESENTABLE.join(', ')}` }])],
          );
        }
        if (m.id === undefined || m.id === '') return { type: m.type };
        const pinned =
          m.type === 'AUTHENTICATION_TYPE_PASSKEY'
            ? authenticators.some((a) => a.id === m.id)
            : m.type === 'AUTHENTICATION_TYPE_API_KEY'
              ? keys.some((k) => k.id === m.id && API_KEY_TYPES.has(k.credential_type))
              : m.id === DEFAULT_SESSION_ID || sessionProfiles.some((p) => p.id === m.id);
        if (!pinned) {
          const what =
            m.type === 'AUTHENTICATION_TYPE_SESSION'
              ? `the default session id ${DEFAULT_SESSION_ID} or a session profile of the user's organization or its parent`
              : `a ${m.type === 'AUTHENTICATION_TYPE_PASSKEY' ? 'passkey (authenticator)' : 'API key'} of user ${userId}`;
          throw invalid(`${where}.id: ${m.id} is not ${what}`, [badRequestDetail([{ field: `${where}.id`, description: `must name ${what}` }])]);
        }
        return { type: m.type, id: m.id };
      }),
    };
  });
}

function orderTaken(userId: string, order: number) {
  return invalid(`MFA policy order must be unique per user: user ${userId} already has an MFA policy with order ${order}`);
}

export function mfaPolicyRecord(row: MfaPolicyRow) {
  return {
    mfaPolicyId: row.id,
    mfaPolicyName: row.name,
    condition: row.condition,
    requiredAuthenticationMethods: JSON.parse(row.required_methods) as RequiredStep[],
    order: Number(row.order_index),
    notes: row.notes,
    createdAt: timestamp(row.created_at),
    updatedAt: timestamp(row.updated_at),
  };
}

/** The MFA policy `mfaPolicyId` of user `userId`, or NOT_FOUND. */
export async function requireMfaPolicy(repos: Repositories, organizationId: string, userId: string, mfaPolicyId: string): Promise<MfaPolicyRow> {
  await requireUser(repos, organizationId, userId);
  const row = await repos.mfaPolicies.get(organizationId, mfaPolicyId);
  if (!row || row.user_id !== userId) throw notFound(`MFA policy not found: ${mfaPolicyId} is not an MFA policy of user ${userId}`);
  return row;
}

/** A user's MFA policies, by order. */
export async function mfaPoliciesOf(repos: Repositories, organizationId: string, userId: string): Promise<MfaPolicyRow[]> {
  return (await repos.mfaPolicies.list(organizationId)).filter((r) => r.user_id === userId).sort((a, b) => Number(a.order_index) - Number(b.order_index));
}

export async function createMfaPolicy(ctx: ActivityContext, p: CreateMfaPolicyParams): Promise<{ mfaPolicyId: string }> {
  const orgId = ctx.organization.id;
  await requireUser(ctx.repos, orgId, p.userId);
  const row: MfaPolicyRow = {
    id: ctx.newId(),
    organization_id: orgId,
    user_id: p.userId,
    name: checkName(p.mfaPolicyName, 'mfaPolicyName'),
    condition: checkCondition(p.condition, 'condition'),
    required_methods: JSON.stringify(await checkSteps(ctx.repos, orgId, p.userId, p.requiredAuthenticationMethods, 'requiredAuthenticationMethods')),
    order_index: checkOrder(p.order, 'order'),
    notes: p.notes ?? '',
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  try {
    await ctx.repos.mfaPolicies.insert(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw orderTaken(p.userId, row.order_index);
    throw err;
  }
  return { mfaPolicyId: row.id };
}

export async function updateMfaPolicy(ctx: ActivityContext, p: UpdateMfaPolicyParams): Promise<{ mfaPolicyId: string }> {
  const orgId = ctx.organization.id;
  const current = await requireMfaPolicy(ctx.repos, orgId, p.userId, p.mfaPolicyId);
  const changes: Parameters<Repositories['mfaPolicies']['update']>[2] = {};
  if (p.mfaPolicyName !== undefined) changes.name = checkName(p.mfaPolicyName, 'mfaPolicyName');
  if (p.condition !== undefined) changes.condition = checkCondition(p.condition, 'condition');
  if (p.requiredAuthenticationMethods !== undefined) {
    changes.required_methods = JSON.stringify(await checkSteps(ctx.repos, orgId, p.userId, p.requiredAuthenticationMethods, 'requiredAuthenticationMethods'));
  }
  if (p.order !== undefined) changes.order_index = checkOrder(p.order, 'order');
  if (p.notes !== undefined) changes.notes = p.notes;
  try {
    await ctx.repos.mfaPolicies.update(orgId, current.id, changes, ctx.now);
  } catch (err) {
    if (isUniqueViolation(err)) throw orderTaken(p.userId, changes.order_index!);
    throw err;
  }
  return { mfaPolicyId: current.id };
}

export async function deleteMfaPolicy(ctx: ActivityContext, p: { userId: string; mfaPolicyId: string }): Promise<{ mfaPolicyId: string }> {
  const row = await requireMfaPolicy(ctx.repos, ctx.organization.id, p.userId, p.mfaPolicyId);
  await ctx.repos.mfaPolicies.delete(ctx.organization.id, row.id);
  return { mfaPolicyId: row.id };
}

/** Compiled conditions by policy id, recompiled when the stored source changes. */
const compiledConditions = new Map<string, { source: string; compiled: CompiledPolicyExpression | undefined }>();

function conditionOf(row: MfaPolicyRow): CompiledPolicyExpression | undefined {
  const hit = compiledConditions.get(row.id);
  if (hit && hit.source === row.condition) return hit.compiled;
  const r = compilePolicyExpression(row.condition, 'condition', { controls: new Set() });
  const compiled = r.ok ? r.expression : undefined;
  if (compiledConditions.size > 10_000) compiledConditions.clear();
  compiledConditions.set(row.id, { source: row.condition, compiled });
  return compiled;
}

/**
 * The first of `userId`'s MFA policies, by order, whose condition holds for the activity (for any
 * of its contexts: a batch matches when one element does). A condition that fails to compile or to
 * evaluate counts as matching. An activity that adds to the user a credential that could meet a
 * step of their policies matches them all whatever their conditions: it must meet
 * their steps together, so it waits for methods the user already had: otherwise the
 * credential that submitted a waiting activity could make the passkey, API key or session that
 * approves it.
 */
export async function matchingMfaPolicy(
  repos: Repositories,
  organizationId: string,
  userId: string,
  /** Built only when the user has an MFA policy (they may read wallets and keys). */
  contextsOf: () => Promise<PolicyContext[]>,
): Promise<MfaPolicyRow | undefined> {
  const policies = await mfaPoliciesOf(repos, organizationId, userId);
  if (policies.length === 0) return undefined;
  const contexts = await contextsOf();
  const added = contexts
    .map((c) => (c as { [ADDS_CREDENTIAL]?: AddedCredential })[ADDS_CREDENTIAL])
    .find((a): a is AddedCredential => a !== undefined && a.userId === userId);
  // Before any condition: the activity must meet every policy the new credential could help meet,
  // so their steps are required together, recorded under the first of them. A step several policies
  // name is asked once (as often as the policy naming it most asks for it: one credential per step).
  const guarding = added ? policies.filter((row) => newCredentialMeets(row, added.method)) : [];
  if (guarding.length > 0) {
    const most = new Map<string, number>();
    for (const row of guarding) {
      const counts = new Map<string, number>();
      for (const step of JSON.parse(row.required_methods) as RequiredStep[]) counts.set(JSON.stringify(step), (counts.get(JSON.stringify(step)) ?? 0) + 1);
      for (const [key, n] of counts) most.set(key, Math.max(n, most.get(key) ?? 0));
    }
    const steps = [...most].flatMap(([key, n]) => Array.from({ length: n }, () => JSON.parse(key) as RequiredStep));
    return { ...guarding[0], required_methods: JSON.stringify(steps) };
  }
  for (const row of policies) {
    const condition = conditionOf(row);
    if (!condition) return row;
    if (contexts.some((c) => {
      const r = evaluatePolicyExpression(condition, c);
      return r.ok ? r.value : true;
    })) return row;
  }
  return undefined;
}
