// Organization and identity operations: update_organization_name (root quorum only,
// docs/reference/organizations.md), get_organization, whoami (docs/reference/organizations.md).
import { organizationData, renameOrganization, rootQuorum } from '../domain/governance/organizations.js';
import { defineActivity, defineQuery, type TypeAlias } from './define.js';
import { invalid } from '../errors/errors.js';
import {
  createSubOrganization,
  deleteSubOrganization,
  prepareSubOrganization,
  type CreateSubOrganizationParams,
  type CreateSubOrganizationResult,
  type RootUserParams,
} from '../domain/governance/sub-organizations.js';
import { pageLimit } from '../domain/records.js';
import { checkPhoneNumber } from '../domain/identity/contacts.js';
import { keyDerivationFacts, walletDerivationFacts } from '../domain/keys/app-proofs.js';

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

// get_organization is only in @turnkey/http's larger swagger copy (docs/reference/api.md).
export const getOrganizationOp = defineQuery<{ organizationId: string }, unknown>({
  path: 'get_organization',
  request: { type: 'object', properties: { organizationId: { type: 'string' } }, required: ['organizationId'] },
  // The bundled swagger has no v1OrganizationData: the answer's shape is stated to its first level.
  response: { type: 'object', properties: { organizationData: { type: 'object' } }, required: ['organizationData'] },
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

// The older name of whoami's path, answering the same.
export const getWhoamiOp = defineQuery({ ...whoamiOp, path: 'get_whoami', response: 'v1GetWhoamiResponse' });

// The root quorum and organization features (docs/reference/organizations.md).
export const getOrganizationConfigsOp = defineQuery<{ organizationId: string }, unknown>({
  path: 'get_organization_configs',
  request: 'v1GetOrganizationConfigsRequest',
  execute: async (ctx) => ({
    configs: { features: await ctx.repos.organizations.features(ctx.organization.id), quorum: await rootQuorum(ctx.repos, ctx.organization) },
  }),
});

/** Root users of an older version: API keys without curveType are P-256, missing lists are empty. */
const olderRootUsers = (p: CreateSubOrganizationParams): CreateSubOrganizationParams => ({
  ...p,
  rootUsers: (p.rootUsers ?? []).map((u) => ({
    ...u,
    apiKeys: (u.apiKeys ?? []).map((k) => ({ ...k, curveType: k.curveType ?? 'API_KEY_CURVE_P256' })),
    authenticators: u.authenticators ?? [],
    oauthProviders: u.oauthProviders ?? [],
  })),
});

/**
 * Older create_sub_organization versions take the members of V8 with fewer fields per root user:
 * API keys without curveType (P-256 then), no OAuth providers before V5's root users, no phone
 * number before V6's; V3 creates private keys (and answers them), V4 and later a wallet. V1
 * (`{name, rootAuthenticator}`) makes one root user, named after the sub-organization, holding that
 * passkey, with a threshold of 1. Each answers under its own result member: V1 and V2 under
 * createSubOrganizationResult (the swagger has no V2 member), later ones under their own.
 */
function subOrganizationAlias(version: 2 | 3 | 4 | 5 | 6 | 7) {
  return { type: `ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V${version}`, result: `createSubOrganizationResult${version === 2 ? '' : `V${version}`}`, adapt: olderRootUsers };
}

const subOrganizationV1: TypeAlias = {
  type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION',
  result: 'createSubOrganizationResult',
  adapt: (p: { name: string; rootAuthenticator: RootUserParams['authenticators'][number] }): CreateSubOrganizationParams => ({
    subOrganizationName: p.name,
    rootUsers: [{ userName: p.name, apiKeys: [], authenticators: [p.rootAuthenticator], oauthProviders: [] }],
    rootQuorumThreshold: 1,
  }),
};

export const createSubOrganizationOp = defineActivity<CreateSubOrganizationParams, CreateSubOrganizationResult>({
  path: 'create_sub_organization',
  type: 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8',
  aliases: [...([7, 6, 5, 4, 3, 2] as const).map(subOrganizationAlias), subOrganizationV1],
  result: 'createSubOrganizationResultV8',
  policy: { resource: 'ORGANIZATION', action: 'CREATE' },
  // The verification token and its signup signature log a user in; OIDC tokens are bearer tokens.
  secretFields: ['verificationToken', 'clientSignature.signature', 'rootUsers[].oauthProviders[].oidcToken'],
  appProofFacts: (_ctx, p, r) => [
    ...(r.wallet && p.wallet ? walletDerivationFacts(r.subOrganizationId, r.wallet.walletId, p.wallet.accounts, r.wallet.addresses) : []),
    ...(r.privateKeys ?? []).flatMap((k) => keyDerivationFacts(r.subOrganizationId, k.addresses.map((a) => a.address))),
  ],
  // Keys, seeds and attestations are made before any lock; the inserts join the grouped commit, so
  // concurrent signups share commits.
  prepare: (ctx, p) => prepareSubOrganization(ctx, p),
  execute: (ctx, p) => createSubOrganization(ctx, p),
});

export const deleteSubOrganizationOp = defineActivity<{ deleteWithoutExport?: boolean }, { subOrganizationUuid: string }>({
  path: 'delete_sub_organization',
  type: 'ACTIVITY_TYPE_DELETE_SUB_ORGANIZATION',
  result: 'deleteSubOrganizationResult',
  policy: { resource: 'ORGANIZATION', action: 'DELETE' },
  execute: (ctx, p) => deleteSubOrganization(ctx, p.deleteWithoutExport),
});

// Sub-organizations of the caller's organization, optionally filtered (docs/reference/organizations.md).
export const listSubOrgsOp = defineQuery<
  { organizationId: string; filterType?: string; filterValue?: string; paginationOptions?: { limit?: string; before?: string; after?: string } },
  unknown
>({
  path: 'list_suborgs',
  request: 'v1GetSubOrgIdsRequest',
  execute: async (ctx, b) => {
    const page = b.paginationOptions ?? {};
    // An OIDC token names an identity (iss, aud, sub) only once it verifies.
    const identity = b.filterType === 'OIDC_TOKEN' ? await ctx.services.oidc.verify(b.filterValue ?? '', {}) : undefined;
    const organizationIds = await ctx.repos.organizations.children(
      ctx.organization.id,
      { type: b.filterType, value: b.filterValue, identity },
      { limit: pageLimit(page.limit), after: page.after || undefined, before: page.before || undefined },
    );
    return { organizationIds };
  },
});

// Sub-organizations whose user holds the email or phone number as a verified contact
// (docs/reference/auth-proxy.md sdk-server getVerifiedSubOrgIds; src/domain/identity/verified-contacts.ts).
export const listVerifiedSubOrgsOp = defineQuery<
  { organizationId: string; filterType?: string; filterValue?: string; paginationOptions?: { limit?: string; before?: string; after?: string } },
  unknown
>({
  path: 'list_verified_suborgs',
  request: 'v1GetVerifiedSubOrgIdsRequest',
  execute: async (ctx, b) => {
    if (b.filterType !== 'EMAIL' && b.filterType !== 'PHONE_NUMBER') {
      throw invalid(`invalid filterType ${JSON.stringify(b.filterType ?? '')}: list_verified_suborgs filters by EMAIL or PHONE_NUMBER`);
    }
    const value = b.filterType === 'PHONE_NUMBER' ? checkPhoneNumber(b.filterValue ?? '', 'filterValue') : b.filterValue ?? '';
    const page = b.paginationOptions ?? {};
    const organizationIds = await ctx.repos.organizations.children(
      ctx.organization.id,
      { type: b.filterType, value, verified: true },
      { limit: pageLimit(page.limit), after: page.after || undefined, before: page.before || undefined },
    );
    return { organizationIds };
  },
});

// Organization features (docs/reference/organizations.md): root quorum only; setting overrides an existing value.
export const setOrganizationFeatureOp = defineActivity<{ name: string; value: string }, { features: { name: string; value: string }[] }>({
  path: 'set_organization_feature',
  type: 'ACTIVITY_TYPE_SET_ORGANIZATION_FEATURE',
  result: 'setOrganizationFeatureResult',
  policy: { resource: 'ORGANIZATION', action: 'UPDATE' },
  authorization: 'root_quorum_only',
  execute: async (ctx, p) => {
    await ctx.repos.organizations.setFeature(ctx.organization.id, p.name, p.value, ctx.now);
    return { features: await ctx.repos.organizations.features(ctx.organization.id) };
  },
});

export const removeOrganizationFeatureOp = defineActivity<{ name: string }, { features: { name: string; value: string }[] }>({
  path: 'remove_organization_feature',
  type: 'ACTIVITY_TYPE_REMOVE_ORGANIZATION_FEATURE',
  result: 'removeOrganizationFeatureResult',
  policy: { resource: 'ORGANIZATION', action: 'UPDATE' },
  authorization: 'root_quorum_only',
  execute: async (ctx, p) => {
    if (!(await ctx.repos.organizations.removeFeature(ctx.organization.id, p.name))) {
      throw invalid(`feature ${p.name} is not set on this organization`);
    }
    return { features: await ctx.repos.organizations.features(ctx.organization.id) };
  },
});
