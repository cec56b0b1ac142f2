// IP allowlist operations (docs/reference/organizations.md remove_ip_allowlist;
// swagger v1SetIpAllowlistIntent, v1RemoveIpAllowlistIntent, v1GetIpAllowlistRequest/Response).
// Enforcement on every request is in the pipeline (src/domain/governance/ip-allowlists.ts enforceIpAllowlist).
import { getIpAllowlist, removeIpAllowlist, setIpAllowlist, type SetIpAllowlistParams } from '../domain/governance/ip-allowlists.js';
import { defineActivity, defineQuery } from './define.js';

export const setIpAllowlistOp = defineActivity<SetIpAllowlistParams, Record<string, never>>({
  path: 'set_ip_allowlist',
  type: 'ACTIVITY_TYPE_SET_IP_ALLOWLIST',
  result: 'setIpAllowlistResult',
  policy: { resource: 'CONFIG', action: 'UPDATE' },
  policyParams: (p) => ({ public_key: p.publicKey ?? '' }),
  execute: (ctx, p) => setIpAllowlist(ctx, p),
});

export const removeIpAllowlistOp = defineActivity<{ publicKey?: string }, Record<string, never>>({
  path: 'remove_ip_allowlist',
  type: 'ACTIVITY_TYPE_REMOVE_IP_ALLOWLIST',
  result: 'removeIpAllowlistResult',
  policy: { resource: 'CONFIG', action: 'DELETE' },
  policyParams: (p) => ({ public_key: p.publicKey ?? '' }),
  execute: (ctx, p) => removeIpAllowlist(ctx, p),
});

export const getIpAllowlistOp = defineQuery<{ organizationId: string; publicKey?: string }, unknown>({
  path: 'get_ip_allowlist',
  request: 'v1GetIpAllowlistRequest',
  execute: (ctx, b) => getIpAllowlist(ctx, b.publicKey),
});
