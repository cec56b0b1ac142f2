// Signing operations (interface-spec.md §4.5; turnkey-contract.md §6): sign_raw_payload (V2),
// sign_raw_payloads, sign_transaction (V2). They complete in the submit response itself, because
// @turnkey/viem, ethers and solana with a TurnkeyClient never poll (contract Traps 9). With
// generateAppProofs they carry the policy-outcome proof every activity gets (Turnkey documents no
// proof type of signatures; the signature itself is in the result).
import { signingTargetKeywords, transactionPolicyContext } from '../domain/governance/policy-context.js';
import {
  parseForSigning,
  payloadPolicyKeywords,
  resolveSigningTarget,
  signParsedTransaction,
  signRawPayloads,
} from '../domain/keys/signing.js';
import type { OperationContext } from '../domain/context.js';
import type { PolicyContext } from '../policy/index.js';
import { defineActivity } from './define.js';

async function targetKeywords(ctx: OperationContext, signWith: string): Promise<PolicyContext> {
  const target = await resolveSigningTarget(ctx.repos, ctx.services.barrier, ctx.organization.id, signWith);
  return signingTargetKeywords(ctx.repos, ctx.organization.id, target);
}

interface RawPayloadParams {
  signWith: string;
  payload: string;
  encoding: string;
  hashFunction: string;
}

type Signature = { r: string; s: string; v: string };

export const signRawPayloadOp = defineActivity<RawPayloadParams, Signature>({
  path: 'sign_raw_payload',
  type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
  aliases: ['ACTIVITY_TYPE_SIGN_RAW_PAYLOAD'],
  result: 'signRawPayloadResult',
  policy: { resource: 'PRIVATE_KEY', action: 'SIGN' },
  policyParams: (p) => ({ hash_function: p.hashFunction, encoding: p.encoding }),
  policyContext: async (ctx, p) => ({ ...(await targetKeywords(ctx, p.signWith)), ...payloadPolicyKeywords(p.encoding, p.payload) }),
  execution: 'pure',
  execute: async (ctx, p) => {
    const target = await resolveSigningTarget(ctx.repos, ctx.services.barrier, ctx.organization.id, p.signWith);
    const [signature] = await signRawPayloads(target, { payloads: [p.payload], encoding: p.encoding, hashFunction: p.hashFunction });
    return signature;
  },
});

export const signRawPayloadsOp = defineActivity<Omit<RawPayloadParams, 'payload'> & { payloads: string[] }, { signatures: Signature[] }>({
  path: 'sign_raw_payloads',
  type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
  result: 'signRawPayloadsResult',
  policy: { resource: 'PRIVATE_KEY', action: 'SIGN' },
  policyParams: (p) => ({ hash_function: p.hashFunction, encoding: p.encoding }),
  // Each payload is judged with its own keywords (eth.eip_712, eth.eip_7702_authorization), exactly
  // as sign_raw_payload would judge it alone; the batch is signed only when every payload may be.
  policyContext: async (ctx, p) => {
    const target = await targetKeywords(ctx, p.signWith);
    return p.payloads.map((payload) => ({ ...target, ...payloadPolicyKeywords(p.encoding, payload) }));
  },
  execution: 'pure',
  execute: async (ctx, p) => {
    const target = await resolveSigningTarget(ctx.repos, ctx.services.barrier, ctx.organization.id, p.signWith);
    return { signatures: await signRawPayloads(target, p) };
  },
});

export const signTransactionOp = defineActivity<{ signWith: string; unsignedTransaction: string; type: string }, { signedTransaction: string }>({
  path: 'sign_transaction',
  type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
  aliases: ['ACTIVITY_TYPE_SIGN_TRANSACTION'],
  result: 'signTransactionResult',
  policy: { resource: 'PRIVATE_KEY', action: 'SIGN' },
  policyParams: (p) => ({ type: p.type }),
  policyContext: async (ctx, p) => {
    const target = await resolveSigningTarget(ctx.repos, ctx.services.barrier, ctx.organization.id, p.signWith);
    return transactionPolicyContext(ctx.repos, ctx.organization.id, target, parseForSigning(target, p.type, p.unsignedTransaction));
  },
  execution: 'pure',
  execute: async (ctx, p) => {
    const target = await resolveSigningTarget(ctx.repos, ctx.services.barrier, ctx.organization.id, p.signWith);
    const parsed = parseForSigning(target, p.type, p.unsignedTransaction);
    return { signedTransaction: signParsedTransaction(target, parsed) };
  },
});
