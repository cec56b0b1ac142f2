// Organization and identity operations: update_organization_name (root quorum only,
// interface-spec.md §4.3), get_organization, whoami (turnkey-semantics.md §2).
import { organizationData, renameOrganization, rootQuorum } from '../domain/organizations.js';
import { defineActivity, defineQuery } from './define.js';

export const updateOrganizationNameOp = defineActivity<
  { organizationName: string },
  { organizationId: string; organizationName: string }
>({
  path: 'update_organization_name',
  type: 'ACTIVITY_TYPE_UPDATE_ORGANIZATION_NAME',
  result: 'updateOrganizationNameResult',
  policy: { resource: 'ORGANIZATION', action: 'UPDATE' },
  authorization: 'root_quorum_only',
  execute: (ctx, p) => renameOrganization(ctx, p.organizationName),
});

// get_organization is only in @turnkey/http's larger swagger copy (turnkey-contract.md A.2).
export const getOrganizationOp = defineQuery<{ organizationId: string }, unknown>({
  path: 'get_organization',
  request: { type: 'object', properties: { organizationId: { type: 'string' } }, required: ['organizationId'] },
  execute: async (ctx) => ({ organizationData: await organizationData(ctx.repos, ctx.organization) }),
});

// The caller's own identity: the organization its credential lives in, which for a parent-org
// credential querying a sub-organization is the parent.
export const whoamiOp = defineQuery<{ organizationId: string }, unknown>({
  path: 'whoami',
  request: 'v1GetWhoamiRequest',
  execute: async (ctx) => {
    const org = ctx.caller.organizationId === ctx.organization.id ? ctx.organization : await ctx.repos.organizations.get(ctx.caller.organizationId);
    return {
      organizationId: ctx.caller.organizationId,
      organizationName: org?.name ?? '',
      userId: ctx.caller.user.id,
      username: ctx.caller.user.user_name,
    };
  },
});

export const getWhoamiOp = defineQuery({ ...whoamiOp, path: 'get_whoami' });

// The root quorum and organization features (turnkey-semantics.md §2); no features are set yet.
export const getOrganizationConfigsOp = defineQuery<{ organizationId: string }, unknown>({
  path: 'get_organization_configs',
  request: 'v1GetOrganizationConfigsRequest',
  execute: async (ctx) => ({ configs: { features: [], quorum: await rootQuorum(ctx.repos, ctx.organization) } }),
});
