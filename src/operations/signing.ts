// Signing operations (docs/reference/keys.md "Signing"): sign_raw_payload (V2),
// sign_raw_payloads, sign_transaction (V2). They complete in the submit response itself, because
// @turnkey/viem, ethers and solana with a TurnkeyClient never poll (docs/reference/activities.md "Status"). With
// generateAppProofs they carry the policy-outcome proof every activity gets (Turnkey documents no
// proof type of signatures; the signature itself is in the result).
import { signingTargetKeywords, transactionPolicyContext } from '../domain/governance/policy-context.js';
import {
  parseForSigning,
  payloadPolicyKeywords,
  resolveSigningTarget,
  signParsedTransaction,
  signRawPayloads,
  type SigningTarget,
} from '../domain/keys/signing.js';
import type { OperationContext } from '../domain/context.js';
import { simulateForSigning, transactionCallsNode, type AssetChanges } from '../domain/keys/simulation.js';
import { defineActivity } from './define.js';

/**
 * The key `signWith` names (a wallet account, a private key, or its address), resolved once per
 * request: the policy judges it and the signature is made with it. Frozen, so nothing between the
 * two can change what was judged.
 */
async function loadTarget(ctx: OperationContext, signWith: string): Promise<SigningTarget> {
  return Object.freeze(await resolveSigningTarget(ctx.repos, ctx.services.barrier, ctx.organization.id, signWith));
}

/**
 * sign_transaction's target: the key, the transaction parsed for it (the bytes judged and signed),
 * and what a simulation of it does where one runs (docs/policies.md "Simulation before approval").
 */
export interface TransactionToSign {
  target: SigningTarget;
  parsed: ReturnType<typeof parseForSigning>;
  simulation?: AssetChanges;
}



interface RawPayloadParams {
  signWith: string;
  payload: string;
  encoding: string;
  hashFunction: string;
}

type Signature = { r: string; s: string; v: string };

export const signRawPayloadOp = defineActivity<RawPayloadParams, Signature, SigningTarget>({
  path: 'sign_raw_payload',
  type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
  aliases: ['ACTIVITY_TYPE_SIGN_RAW_PAYLOAD'],
  result: 'signRawPayloadResult',
  policy: { resource: 'PRIVATE_KEY', action: 'SIGN' },
  policyParams: (p) => ({ hash_function: p.hashFunction, encoding: p.encoding }),
  load: (ctx, p) => loadTarget(ctx, p.signWith),
  policyContext: async (ctx, p, target) => ({ ...(await signingTargetKeywords(ctx.repos, ctx.organization.id, target)), ...payloadPolicyKeywords(p.encoding, p.payload) }),
  execution: 'pure',
  execute: async (_ctx, p, target) => {
    const [signature] = await signRawPayloads(target, { payloads: [p.payload], encoding: p.encoding, hashFunction: p.hashFunction });
    return signature;
  },
});

export const signRawPayloadsOp = defineActivity<Omit<RawPayloadParams, 'payload'> & { payloads: string[] }, { signatures: Signature[] }, SigningTarget>({
  path: 'sign_raw_payloads',
  type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
  result: 'signRawPayloadsResult',
  policy: { resource: 'PRIVATE_KEY', action: 'SIGN' },
  policyParams: (p) => ({ hash_function: p.hashFunction, encoding: p.encoding }),
  load: (ctx, p) => loadTarget(ctx, p.signWith),
  // Each payload is judged with its own keywords (eth.eip_712, eth.eip_7702_authorization), exactly
  // as sign_raw_payload would judge it alone; the batch is signed only when every payload may be.
  policyContext: async (ctx, p, target) => {
    const keywords = await signingTargetKeywords(ctx.repos, ctx.organization.id, target);
    return p.payloads.map((payload) => ({ ...keywords, ...payloadPolicyKeywords(p.encoding, payload) }));
  },
  execution: 'pure',
  execute: async (_ctx, p, target) => ({ signatures: await signRawPayloads(target, p) }),
});

export const signTransactionOp = defineActivity<{ signWith: string; unsignedTransaction: string; type: string }, { signedTransaction: string }, TransactionToSign>({
  path: 'sign_transaction',
  type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
  aliases: ['ACTIVITY_TYPE_SIGN_TRANSACTION'],
  result: 'signTransactionResult',
  policy: { resource: 'PRIVATE_KEY', action: 'SIGN' },
  policyParams: (p) => ({ type: p.type }),
  load: async (ctx, p) => {
    const target = await loadTarget(ctx, p.signWith);
    const parsed = Object.freeze(parseForSigning(target, p.type, p.unsignedTransaction));
    // Outside any transaction, like the rest of the load; a type nothing simulates costs nothing.
    const simulation = await simulateForSigning(ctx, target, parsed);
    return Object.freeze({ target, parsed, ...(simulation ? { simulation } : {}) });
  },
  loadCallsNode: (ctx, p) => transactionCallsNode(ctx, p.type, p.unsignedTransaction),
  simulation: (loaded) => loaded.simulation,
  policyContext: (ctx, _p, { target, parsed, simulation }) => transactionPolicyContext(ctx.repos, ctx.organization.id, target, parsed, simulation),
  execution: 'pure',
  execute: async (_ctx, _p, { target, parsed }) => ({ signedTransaction: signParsedTransaction(target, parsed) }),
});
