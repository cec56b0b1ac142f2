// Policy and smart contract interface operations (docs/reference/policies.md,
// docs/reference/organizations.md): create_policy, create_policies, update_policy, delete_policy, delete_policies, get_policy,
// list_policies, get_active_policies (@turnkey/http 6.6.0; schema in scripts/swagger-supplement.json),
// create_smart_contract_interface, delete_smart_contract_interface,
// get_smart_contract_interface, list_smart_contract_interfaces.
//
// Older type values, which applications pinned to older SDKs send: ACTIVITY_TYPE_CREATE_POLICY and
// _V2 carry the legacy `selectors` (v1CreatePolicyIntent/V2), stored as the condition and consensus
// that say the same (src/domain/governance/policy-selectors.ts); ACTIVITY_TYPE_UPDATE_POLICY is V2 without
// `time`. Each answers under its own result member (createPolicyResult, updatePolicyResult).
import {
  contractInterfaceRecord,
  createContractInterface,
  deleteContractInterface,
  requireContractInterface,
  type CreateSmartContractInterfaceParams,
} from '../domain/keys/contract-interfaces.js';
import {
  activePolicyStatuses,
  createPolicies,
  createPolicy,
  deletePolicies,
  policyRecord,
  requirePolicy,
  updatePolicy,
  type CreatePolicyParams,
  type UpdatePolicyParams,
} from '../domain/governance/policies.js';
import { policyFromSelectors } from '../domain/governance/policy-selectors.js';
import { defineActivity, defineQuery } from './define.js';

export const createPolicyOp = defineActivity<CreatePolicyParams, { policyId: string }>({
  path: 'create_policy',
  type: 'ACTIVITY_TYPE_CREATE_POLICY_V3',
  aliases: [
    { type: 'ACTIVITY_TYPE_CREATE_POLICY_V2', adapt: policyFromSelectors },
    { type: 'ACTIVITY_TYPE_CREATE_POLICY', adapt: policyFromSelectors },
  ],
  result: 'createPolicyResult',
  policy: { resource: 'POLICY', action: 'CREATE' },
  execute: (ctx, p) => createPolicy(ctx, p),
});

export const createPoliciesOp = defineActivity<{ policies: CreatePolicyParams[] }, { policyIds: string[] }>({
  path: 'create_policies',
  type: 'ACTIVITY_TYPE_CREATE_POLICIES',
  result: 'createPoliciesResult',
  policy: { resource: 'POLICY', action: 'CREATE' },
  execute: async (ctx, p) => ({ policyIds: await createPolicies(ctx, p.policies) }),
});

export const updatePolicyOp = defineActivity<UpdatePolicyParams, { policyId: string }>({
  path: 'update_policy',
  type: 'ACTIVITY_TYPE_UPDATE_POLICY_V2',
  aliases: [{ type: 'ACTIVITY_TYPE_UPDATE_POLICY', result: 'updatePolicyResult' }],
  result: 'updatePolicyResultV2',
  policy: { resource: 'POLICY', action: 'UPDATE' },
  execute: (ctx, p) => updatePolicy(ctx, p),
});

export const deletePolicyOp = defineActivity<{ policyId: string }, { policyId: string }>({
  path: 'delete_policy',
  type: 'ACTIVITY_TYPE_DELETE_POLICY',
  result: 'deletePolicyResult',
  policy: { resource: 'POLICY', action: 'DELETE' },
  execute: async (ctx, p) => {
    const [policyId] = await deletePolicies(ctx, [p.policyId]);
    return { policyId };
  },
});

export const deletePoliciesOp = defineActivity<{ policyIds: string[] }, { policyIds: string[] }>({
  path: 'delete_policies',
  type: 'ACTIVITY_TYPE_DELETE_POLICIES',
  result: 'deletePoliciesResult',
  policy: { resource: 'POLICY', action: 'DELETE' },
  execute: async (ctx, p) => ({ policyIds: await deletePolicies(ctx, p.policyIds) }),
});

export const getPolicyOp = defineQuery<{ organizationId: string; policyId: string }, unknown>({
  path: 'get_policy',
  request: 'v1GetPolicyRequest',
  execute: async (ctx, b) => ({ policy: policyRecord(await requirePolicy(ctx.repos, ctx.organization.id, b.policyId)) }),
});

export const listPoliciesOp = defineQuery<{ organizationId: string }, unknown>({
  path: 'list_policies',
  request: 'v1GetPoliciesRequest',
  execute: async (ctx) => ({ policies: (await ctx.repos.policies.list(ctx.organization.id)).map(policyRecord) }),
});

export const getActivePoliciesOp = defineQuery<{ organizationId: string }, unknown>({
  path: 'get_active_policies',
  request: 'v1GetActivePoliciesRequest',
  execute: (ctx) => activePolicyStatuses(ctx.repos, ctx.organization.id, ctx.now),
});

export const createSmartContractInterfaceOp = defineActivity<CreateSmartContractInterfaceParams, { smartContractInterfaceId: string }>({
  path: 'create_smart_contract_interface',
  type: 'ACTIVITY_TYPE_CREATE_SMART_CONTRACT_INTERFACE',
  result: 'createSmartContractInterfaceResult',
  policy: { resource: 'SMART_CONTRACT_INTERFACE', action: 'CREATE' },
  execute: (ctx, p) => createContractInterface(ctx, p),
});

export const deleteSmartContractInterfaceOp = defineActivity<{ smartContractInterfaceId: string }, { smartContractInterfaceId: string }>({
  path: 'delete_smart_contract_interface',
  type: 'ACTIVITY_TYPE_DELETE_SMART_CONTRACT_INTERFACE',
  result: 'deleteSmartContractInterfaceResult',
  policy: { resource: 'SMART_CONTRACT_INTERFACE', action: 'DELETE' },
  execute: (ctx, p) => deleteContractInterface(ctx, p.smartContractInterfaceId),
});

export const getSmartContractInterfaceOp = defineQuery<{ organizationId: string; smartContractInterfaceId: string }, unknown>({
  path: 'get_smart_contract_interface',
  request: 'v1GetSmartContractInterfaceRequest',
  execute: async (ctx, b) => ({
    smartContractInterface: contractInterfaceRecord(await requireContractInterface(ctx.repos, ctx.organization.id, b.smartContractInterfaceId)),
  }),
});

export const listSmartContractInterfacesOp = defineQuery<{ organizationId: string }, unknown>({
  path: 'list_smart_contract_interfaces',
  request: 'v1GetSmartContractInterfacesRequest',
  execute: async (ctx) => ({
    smartContractInterfaces: (await ctx.repos.contractInterfaces.list(ctx.organization.id)).map(contractInterfaceRecord),
  }),
});
