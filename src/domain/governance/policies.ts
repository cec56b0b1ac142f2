// Policies (docs/reference/policies.md; swagger v1CreatePolicyIntentV3,
// v1UpdatePolicyIntentV2, v1Policy): create, update, delete and records, with every expression
// compiled when it is written so a policy that cannot be evaluated is never stored; and the
// compiled policies of an organization for the policy engine, cached across requests.
//
// Field rules:
// - `condition`, `consensus`: absent = no constraint (stored null, shown as '' as the reference
//   does). An empty or blank string is refused with the compiler's message
//   (`invalid policy consensus: 1:1: empty expression`), as the reference refuses an empty
//   consensus (docs/reference/api.md). The same holds on update: to lift a condition, write `true`.
// - `time`: absent or '' = no time window ("empty string = always active", docs/reference/api.md citing
//   docs/reference/policies.md "The language"); anything else must compile as a time expression.
// - `policyName` must be unique in the organization: `policy label must be unique` (InvalidArgument,
//   docs/reference/api.md "Queries"), REQUEST_INVALID here too.
import { badRequestDetail, invalid, notFound } from '../../errors/errors.js';
import { compilePolicyExpression, evaluatePolicyExpression, type CompiledPolicyExpression, type ExpressionKind } from '../../policy/index.js';
import { isUniqueViolation, type PolicyChanges, type PolicyRow, type Repositories } from '../../store/index.js';
import { checkName } from '../identity/contacts.js';
import type { ActivityContext } from '../context.js';
import { reserve } from './quotas.js';
import { requireAll } from '../lookup.js';
import { timestamp } from '../records.js';

export type Effect = 'EFFECT_ALLOW' | 'EFFECT_DENY';
const EFFECTS: readonly string[] = ['EFFECT_ALLOW', 'EFFECT_DENY'];

export interface CreatePolicyParams {
  policyName: string;
  effect: Effect;
  condition?: string;
  consensus?: string;
  notes: string;
  time?: string;
}

export interface UpdatePolicyParams {
  policyId: string;
  policyName?: string;
  policyEffect?: Effect;
  policyCondition?: string;
  policyConsensus?: string;
  policyNotes?: string;
  time?: string;
}

/** A policy ready for evaluation: what the policy engine reads. */
export interface CompiledPolicy {
  id: string;
  name: string;
  effect: Effect;
  condition?: CompiledPolicyExpression;
  consensus?: CompiledPolicyExpression;
  time?: CompiledPolicyExpression;
  /**
   * Set only if a stored expression no longer compiles (a later Sigil tightened the language). The
   * broken field is then replaced by one that fails closed: `false` for an ALLOW policy (it never
   * allows), `true` for a DENY policy (it always applies), so an engine unaware of this field is
   * still safe. Messages are for logs and evaluation records.
   */
  compileErrors?: string[];
  /** The velocity controls its fields read (`controls.<identifier>`): what the engine must measure. */
  controls: ReadonlySet<string>;
}

export function policyRecord(row: PolicyRow) {
  return {
    policyId: row.id,
    policyName: row.name,
    effect: row.effect,
    createdAt: timestamp(row.created_at),
    updatedAt: timestamp(row.updated_at),
    notes: row.notes,
    // The swagger lists consensus and condition as required; the reference shows '' when absent.
    consensus: row.consensus ?? '',
    condition: row.condition ?? '',
    time: row.time ?? '',
  };
}

export async function requirePolicy(repos: Repositories, organizationId: string, policyId: string): Promise<PolicyRow> {
  const row = await repos.policies.get(organizationId, policyId);
  if (!row) throw notFound(`policy not found: ${policyId}`);
  return row;
}

/**
 * Compiles `source` for `kind` or refuses the request with the compiler's message. `controls` are
 * the organization's velocity control identifiers: naming another as `controls.<x>` is refused.
 */
function checkExpression(source: string, kind: ExpressionKind, field: string, controls: ReadonlySet<string>): string {
  const r = compilePolicyExpression(source, kind, { controls });
  if (!r.ok) {
    const where = field === kind ? '' : ` (${field})`;
    throw invalid(`${r.error.message}${where}`, [badRequestDetail([{ field, description: r.error.message }])]);
  }
  return source;
}

/** condition / consensus: undefined = none; anything given must compile ('' does not). */
function expressionField(source: string | undefined, kind: 'condition' | 'consensus', field: string, controls: ReadonlySet<string>): string | null {
  return source === undefined ? null : checkExpression(source, kind, field, controls);
}

/** time: undefined or '' = always active. */
function timeField(source: string | undefined, field: string): string | null {
  return source === undefined || source === '' ? null : checkExpression(source, 'time', field, new Set());
}

function checkEffect(effect: unknown, field: string): Effect {
  if (typeof effect !== 'string' || !EFFECTS.includes(effect)) throw invalid(`${field} must be EFFECT_ALLOW or EFFECT_DENY`);
  return effect as Effect;
}

function labelNotUnique(names: string[]) {
  const which = names.length === 1 ? `a policy named ${JSON.stringify(names[0])}` : `a policy named one of ${names.map((n) => JSON.stringify(n)).join(', ')}`;
  return invalid(`policy label must be unique: ${which} already exists in this organization`);
}

/** The organization's velocity control identifiers, which its policies may read as `controls.<identifier>`. */
async function controlIdentifiers(repos: Repositories, organizationId: string): Promise<ReadonlySet<string>> {
  return new Set((await repos.velocityControls.list(organizationId)).map((c) => c.identifier));
}

/** create_policy and create_policies: every policy is checked before any is written. */
export async function createPolicies(ctx: ActivityContext, policies: CreatePolicyParams[], field = 'policies'): Promise<string[]> {
  if (policies.length === 0) throw invalid(`${field} must list at least one policy`);
  const orgId = ctx.organization.id;
  const single = field === '';
  const names = new Map<string, number>();
  const controls = await controlIdentifiers(ctx.repos, orgId);
  const rows: PolicyRow[] = policies.map((p, i) => {
    const at = (f: string) => (single ? f : `${field}[${i}].${f}`);
    checkName(p.policyName, at('policyName'));
    const earlier = names.get(p.policyName);
    if (earlier !== undefined) {
      throw invalid(`policy label must be unique: ${at('policyName')} ${JSON.stringify(p.policyName)} repeats ${field}[${earlier}].policyName`);
    }
    names.set(p.policyName, i);
    return {
      id: ctx.newId(),
      organization_id: orgId,
      name: p.policyName,
      effect: checkEffect(p.effect, at('effect')),
      condition: expressionField(p.condition, 'condition', at('condition'), controls),
      consensus: expressionField(p.consensus, 'consensus', at('consensus'), controls),
      time: timeField(p.time, at('time')),
      notes: p.notes,
      created_at: ctx.now,
      updated_at: ctx.now,
    };
  });
  const taken = await ctx.repos.policies.findByNames(orgId, [...names.keys()]);
  if (taken.length > 0) throw labelNotUnique([taken[0].name]);
  await reserve(ctx.repos, ctx.organization, 'policies', rows.length);
  // delete_velocity_control takes the same lock before it checks that no policy reads the control:
  // a control deleted while this waited for the lock is refused here, under it.
  const still = await controlIdentifiers(ctx.repos, orgId);
  if ([...controls].some((c) => !still.has(c))) {
    rows.forEach((row, i) => {
      const at = (f: string) => (single ? f : `${field}[${i}].${f}`);
      if (row.condition !== null) checkExpression(row.condition, 'condition', at('condition'), still);
      if (row.consensus !== null) checkExpression(row.consensus, 'consensus', at('consensus'), still);
    });
  }
  try {
    await ctx.repos.policies.insert(rows);
  } catch (err) {
    // A concurrent creation took the name between the check and the insert.
    if (isUniqueViolation(err)) throw labelNotUnique([...names.keys()]);
    throw err;
  }
  return rows.map((r) => r.id);
}

export async function createPolicy(ctx: ActivityContext, p: CreatePolicyParams): Promise<{ policyId: string }> {
  const [policyId] = await createPolicies(ctx, [p], '');
  return { policyId };
}

/** update_policy (V2): fields left out keep their values; what is given is checked like on create. */
export async function updatePolicy(ctx: ActivityContext, p: UpdatePolicyParams): Promise<{ policyId: string }> {
  const orgId = ctx.organization.id;
  const policy = await requirePolicy(ctx.repos, orgId, p.policyId);
  const changes: PolicyChanges = {};
  if (p.policyName !== undefined && p.policyName !== policy.name) {
    checkName(p.policyName, 'policyName');
    const [clash] = await ctx.repos.policies.findByNames(orgId, [p.policyName]);
    if (clash && clash.id !== policy.id) throw labelNotUnique([p.policyName]);
    changes.name = p.policyName;
  }
  if (p.policyEffect !== undefined) changes.effect = checkEffect(p.policyEffect, 'policyEffect');
  const controls = await controlIdentifiers(ctx.repos, orgId);
  if (p.policyCondition !== undefined) changes.condition = expressionField(p.policyCondition, 'condition', 'policyCondition', controls);
  if (p.policyConsensus !== undefined) changes.consensus = expressionField(p.policyConsensus, 'consensus', 'policyConsensus', controls);
  if (p.time !== undefined) changes.time = timeField(p.time, 'time');
  if (p.policyNotes !== undefined) changes.notes = p.policyNotes;
  try {
    await ctx.repos.policies.update(orgId, policy.id, changes, ctx.now);
  } catch (err) {
    if (isUniqueViolation(err)) throw labelNotUnique([p.policyName ?? policy.name]);
    throw err;
  }
  return { policyId: policy.id };
}

/** delete_policy / delete_policies: all named policies must exist; all or none are deleted. */
export async function deletePolicies(ctx: ActivityContext, policyIds: string[]): Promise<string[]> {
  if (policyIds.length === 0) throw invalid('policyIds must list at least one policy');
  const orgId = ctx.organization.id;
  const { ids } = await requireAll(policyIds, (u) => ctx.repos.policies.getMany(orgId, u), 'policy not found');
  await ctx.repos.policies.delete(orgId, ids);
  return ids;
}

// ------------------------------------------------------------------ compiled policies for the engine

/** Everything the compiled value depends on, so two updates in one millisecond cannot serve a stale one. */
interface CacheEntry extends Pick<PolicyRow, 'name' | 'effect' | 'condition' | 'consensus' | 'time'> {
  updatedAt: number;
  compiled: CompiledPolicy;
}

const CACHE_LIMIT = 10_000;
// Policy id → compiled form, least recently used first (Map iteration order). Process-wide: compiled
// expressions are immutable and hold no request data (src/policy/compile.ts).
const compiledCache = new Map<string, CacheEntry>();

function compileStored(row: PolicyRow): CompiledPolicy {
  const effect = row.effect as Effect;
  const out: CompiledPolicy = { id: row.id, name: row.name, effect, controls: new Set() };
  const errors: string[] = [];
  for (const kind of ['condition', 'consensus', 'time'] as const) {
    const source = row[kind];
    if (source === null) continue;
    const r = compilePolicyExpression(source, kind);
    if (r.ok) {
      out[kind] = r.expression;
      for (const c of r.expression.controls) (out.controls as Set<string>).add(c);
    } else {
      errors.push(r.error.message);
      const closed = compilePolicyExpression(effect === 'EFFECT_DENY' ? 'true' : 'false', kind);
      if (!closed.ok) throw new Error(`policy ${row.id}: cannot build a fail-closed ${kind}: ${closed.error.message}`);
      out[kind] = closed.expression;
    }
  }
  if (!EFFECTS.includes(row.effect)) {
    // Not reachable through the API; a row edited by hand must not turn into an allow.
    errors.push(`unknown effect ${row.effect}`);
    out.effect = 'EFFECT_DENY';
  }
  if (errors.length > 0) out.compileErrors = errors;
  // Shared by every request that reads this policy; nobody may change it in place.
  return Object.freeze(out);
}

/**
 * Every policy of the organization, compiled, oldest first. Unchanged policies come from a
 * process-level cache keyed by policy id and checked against updated_at and the stored text, so a
 * request recompiles only what changed since it was last seen.
 */
export async function loadCompiledPolicies(repos: Repositories, organizationId: string): Promise<CompiledPolicy[]> {
  const rows = await repos.policies.list(organizationId);
  return rows.map((row) => {
    const hit = compiledCache.get(row.id);
    // Compared field by field: this runs for every policy on every request, so no serialization.
    if (
      hit &&
      hit.updatedAt === row.updated_at &&
      hit.name === row.name &&
      hit.effect === row.effect &&
      hit.condition === row.condition &&
      hit.consensus === row.consensus &&
      hit.time === row.time
    ) {
      compiledCache.delete(row.id);
      compiledCache.set(row.id, hit);
      return hit.compiled;
    }
    const compiled = compileStored(row);
    compiledCache.delete(row.id);
    compiledCache.set(row.id, {
      updatedAt: row.updated_at,
      name: row.name,
      effect: row.effect,
      condition: row.condition,
      consensus: row.consensus,
      time: row.time,
      compiled,
    });
    if (compiledCache.size > CACHE_LIMIT) compiledCache.delete(compiledCache.keys().next().value as string);
    return compiled;
  });
}

/**
 * get_active_policies (@turnkey/http 6.6.0 v1GetActivePoliciesResponse): whether each policy of the
 * organization is inside its time window at `at`, the instant the policy engine would judge a
 * request arriving now by (its `time.now`). A policy without a time window is always active; one
 * whose time expression fails to evaluate (or no longer compiles) is reported inactive with the
 * reason, as the client's types describe. The rest of a policy (condition, consensus) depends on
 * the activity and is not judged here.
 */
export async function activePolicyStatuses(repos: Repositories, organizationId: string, at: number) {
  const rows = await repos.policies.list(organizationId);
  const compiled = new Map((await loadCompiledPolicies(repos, organizationId)).map((p) => [p.id, p]));
  const statuses = rows.map((row) => {
    const base = { organizationId, policyId: row.id };
    const policy = compiled.get(row.id);
    if (row.time === null) return { ...base, active: true };
    const timeExpr = row.time;
    const broken = policy?.compileErrors?.find((e) => e.startsWith('invalid policy time'));
    if (!policy?.time || broken) return { ...base, active: false, timeExpr, error: broken ?? 'the time expression could not be compiled' };
    const r = evaluatePolicyExpression(policy.time, { time: { now: new Date(at) } });
    return r.ok ? { ...base, active: r.value, timeExpr } : { ...base, active: false, timeExpr, error: r.error.message };
  });
  return { statuses, evaluatedAtMs: String(at) };
}

/** For tests and diagnostics: how many compiled policies the process holds. */
export function compiledPolicyCacheSize(): number {
  return compiledCache.size;
}
