// IP allowlists (docs/reference/organizations.md remove_ip_allowlist; swagger
// v1SetIpAllowlistIntent, v1RemoveIpAllowlistIntent, v1GetIpAllowlistRequest, v1IpAllowlist).
//
// Decisions, following the reference service where it is documented:
//  - Lists belong to top-level organizations only. They restrict the credentials of that
//    organization (API keys, passkeys, read-only sessions), also when those act on a sub-organization.
//    A sub-organization's own users (end users, who connect from anywhere) are never evaluated, and a
//    sub-organization cannot set a list.
//  - The organization-level list (no publicKey) has `enabled`; while it is absent or disabled every
//    address is allowed and API-key lists are inert. When it is enabled, an API key with a list of
//    its own (at least one rule) is judged by that list alone, every other credential by the
//    organization's rules; an enabled list without rules blocks every request.
//  - Rules are CIDR blocks, IPv4 and IPv6, stored normalized (host bits cleared), the broadest
//    block /20 (IPv4) or /48 (IPv6), at most 10 of each family, duplicates keep the first label.
//    A bare address is a block of one. set_ip_allowlist replaces a list wholesale.
//  - `onEvaluationError` (ALLOW or DENY, default DENY) decides when the client address cannot be
//    evaluated, e.g. a request that did not come over TCP.
//  - A read-only session (X-Session) is judged as the credential that created it.
//  - A change that would refuse the very request making it (same credential, same address) is
//    itself refused, so an administrator cannot lock themselves out by mistake. (An activity run
//    by a later approval is checked with the submitter's credential and the approver's address.)
//  - A key's list stays stored when the key is deleted; remove_ip_allowlist {publicKey} clears it.
import { SigilError, invalid } from '../../errors/errors.js';
import type { IpAllowlistRow, Repositories } from '../../store/index.js';
import { cidrContains, formatCidr, formatIp, parseCidr, parseClientAddress, type CidrBlock } from './cidr.js';
import type { ActivityContext, Caller, OperationContext } from '../context.js';

export const MAX_RULES_PER_FAMILY = 10;
const BROADEST_PREFIX = { 4: 20, 6: 48 } as const;
const ON_EVALUATION_ERROR = ['ALLOW', 'DENY'] as const;
const MAX_LABEL = 256;

interface StoredRule {
  cidr: string;
  label: string;
  /** Millisecond epoch string, as v1IpAllowlistRule shows it. */
  createdAt: string;
}

export interface IpAllowlistRuleParams {
  cidr: string;
  label?: string;
}

export interface SetIpAllowlistParams {
  publicKey?: string;
  enabled?: boolean;
  rules?: IpAllowlistRuleParams[];
  onEvaluationError?: string;
}

const normalizeKey = (publicKey: string | undefined) => (publicKey ?? '').trim().toLowerCase().replace(/^0x/, '');

function requireTopLevel(ctx: OperationContext): void {
  if (ctx.organization.parent_organization_id) {
    throw new SigilError(
      'INVALID_ACTIVITY_CALLER',
      "IP allowlists are set on the top-level organization only; a sub-organization's own users are never evaluated against one",
    );
  }
}

function normalizeRules(rules: IpAllowlistRuleParams[], previous: StoredRule[], now: number): StoredRule[] {
  const since = new Map(previous.map((r) => [r.cidr, r.createdAt]));
  const out: StoredRule[] = [];
  const counts = { 4: 0, 6: 0 };
  for (const [i, rule] of rules.entries()) {
    const block = parseCidr(rule.cidr.trim());
    if (!block) throw invalid(`invalid CIDR at rules[${i}]: ${JSON.stringify(rule.cidr)} is not an IPv4 or IPv6 CIDR block such as 203.0.113.0/24 or 2001:db8::/48`);
    if (block.prefix < BROADEST_PREFIX[block.version]) {
      throw invalid(
        `invalid CIDR at rules[${i}]: ${JSON.stringify(rule.cidr)} is too broad; the broadest block allowed is /${BROADEST_PREFIX[4]} for IPv4 and /${BROADEST_PREFIX[6]} for IPv6`,
      );
    }
    const label = rule.label ?? '';
    if (label.length > MAX_LABEL) throw invalid(`rules[${i}].label must be at most ${MAX_LABEL} characters`);
    const cidr = formatCidr(block);
    if (out.some((r) => r.cidr === cidr)) continue; // a duplicate keeps the first label
    if (++counts[block.version] > MAX_RULES_PER_FAMILY) {
      throw invalid(`too many IP allowlist rules: at most ${MAX_RULES_PER_FAMILY} IPv${block.version} CIDR blocks per allowlist`);
    }
    out.push({ cidr, label, createdAt: since.get(cidr) ?? String(now) });
  }
  return out;
}

// Parsed rules per stored JSON text: the per-request check parses nothing after the first time.
const parsedRules = new Map<string, CidrBlock[]>();

function blocksOf(row: IpAllowlistRow): CidrBlock[] {
  let blocks = parsedRules.get(row.rules);
  if (!blocks) {
    blocks = (JSON.parse(row.rules) as StoredRule[]).map((r) => parseCidr(r.cidr)!).filter(Boolean);
    if (parsedRules.size >= 1024) parsedRules.delete(parsedRules.keys().next().value as string);
    parsedRules.set(row.rules, blocks);
  }
  return blocks;
}

type Verdict = { allowed: true } | { allowed: false; reason: string };

/** The decision for one credential (its API key public key, if any) from one address, given the stored lists. */
function evaluate(rows: IpAllowlistRow[], organizationId: string, publicKey: string | undefined, address: string | undefined): Verdict {
  const org = rows.find((r) => r.public_key === '');
  if (!org || org.enabled !== 1) return { allowed: true };
  const own = publicKey ? rows.find((r) => r.public_key === publicKey) : undefined;
  const list = own && blocksOf(own).length > 0 ? own : org;
  const scope = list === own ? `API key ${publicKey}` : `organization ${organizationId}`;
  const ip = address ? parseClientAddress(address) : undefined;
  if (!ip) {
    if (list.on_evaluation_error === 'ALLOW') return { allowed: true };
    return { allowed: false, reason: `the client address ${JSON.stringify(address ?? 'unknown')} cannot be evaluated against the IP allowlist of ${scope}` };
  }
  if (blocksOf(list).some((b) => cidrContains(b, ip))) return { allowed: true };
  return { allowed: false, reason: `IP address ${formatIp(ip)} is not allowed by the IP allowlist of ${scope}` };
}

const apiKeyOf = (caller: Caller) => (caller.credential.kind === 'api_key' ? caller.credential.apiKey.public_key : undefined);

/**
 * The per-request check, after the caller is known: refuses with 403 when the caller's organization
 * has an enabled allowlist that does not cover `clientAddress`.
 */
export async function enforceIpAllowlist(repos: Repositories, caller: Caller, clientAddress: string | undefined): Promise<void> {
  const publicKey = apiKeyOf(caller);
  const rows = await repos.ipAllowlists.forCredential(caller.organizationId, publicKey);
  if (rows.length === 0) return;
  const verdict = evaluate(rows, caller.organizationId, publicKey, clientAddress);
  if (!verdict.allowed) throw new SigilError('FORBIDDEN', `request denied by IP allowlist: ${verdict.reason}`);
}

/** Refuses a change after which the request making it would itself be refused. */
async function refuseSelfLockout(ctx: ActivityContext, change: { publicKey: string; row?: IpAllowlistRow }): Promise<void> {
  if (ctx.caller.organizationId !== ctx.organization.id) return;
  const publicKey = apiKeyOf(ctx.caller);
  const rows = (await ctx.repos.ipAllowlists.forCredential(ctx.organization.id, publicKey)).filter((r) => r.public_key !== change.publicKey);
  if (change.row) rows.push(change.row);
  const verdict = evaluate(rows, ctx.organization.id, publicKey, ctx.clientAddress);
  if (!verdict.allowed) {
    throw invalid(
      `refused: after this change the request making it would be denied (${verdict.reason}); add a rule covering it, or make the change with a credential and from an address that stay allowed`,
    );
  }
}

export async function setIpAllowlist(ctx: ActivityContext, p: SetIpAllowlistParams): Promise<Record<string, never>> {
  requireTopLevel(ctx);
  const orgId = ctx.organization.id;
  const publicKey = normalizeKey(p.publicKey);
  if (publicKey === '') {
    if (p.enabled === undefined) {
      throw invalid('enabled is required for the organization-level allowlist (no publicKey): true enforces it, false keeps it stored but inactive');
    }
  } else {
    if (p.enabled !== undefined) {
      throw invalid("enabled applies to the organization-level allowlist only; omit it when publicKey is set (an API key's allowlist is active while it exists)");
    }
    if ((await ctx.repos.apiKeys.findByPublicKey([orgId], publicKey)).length === 0) {
      throw new SigilError('NOT_FOUND', `api key not found: no API key of organization ${orgId} has public key ${publicKey}`);
    }
  }
  const onError = p.onEvaluationError ?? 'DENY';
  if (!(ON_EVALUATION_ERROR as readonly string[]).includes(onError)) {
    throw invalid(`invalid onEvaluationError ${JSON.stringify(onError)}: use ALLOW or DENY`);
  }
  const previous = await ctx.repos.ipAllowlists.get(orgId, publicKey);
  const rules = normalizeRules(p.rules ?? [], previous ? (JSON.parse(previous.rules) as StoredRule[]) : [], ctx.now);
  const row: IpAllowlistRow = {
    organization_id: orgId,
    public_key: publicKey,
    enabled: publicKey === '' ? (p.enabled ? 1 : 0) : null,
    on_evaluation_error: onError,
    rules: JSON.stringify(rules),
    created_at: previous?.created_at ?? ctx.now,
    updated_at: ctx.now,
  };
  await refuseSelfLockout(ctx, { publicKey, row });
  await ctx.repos.ipAllowlists.upsert(row);
  return {};
}

/** Removes a list; removing one that does not exist changes nothing and succeeds. */
export async function removeIpAllowlist(ctx: ActivityContext, p: { publicKey?: string }): Promise<Record<string, never>> {
  requireTopLevel(ctx);
  const publicKey = normalizeKey(p.publicKey);
  await refuseSelfLockout(ctx, { publicKey });
  await ctx.repos.ipAllowlists.delete(ctx.organization.id, publicKey);
  return {};
}

/** v1IpAllowlist of the organization, or of one API key; an absent list is shown with no rules. */
export async function getIpAllowlist(ctx: OperationContext, publicKeyParam: string | undefined) {
  const orgId = ctx.organization.id;
  const publicKey = normalizeKey(publicKeyParam);
  const row = await ctx.repos.ipAllowlists.get(orgId, publicKey);
  const rules = row ? (JSON.parse(row.rules) as StoredRule[]) : [];
  return {
    allowlist: {
      organizationId: orgId,
      rules,
      ...(publicKey ? { publicKey } : { enabled: row?.enabled === 1 }),
      onEvaluationError: row?.on_evaluation_error ?? 'DENY',
    },
  };
}
