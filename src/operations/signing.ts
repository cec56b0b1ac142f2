// Signing operations (interface-spec.md §4.5; turnkey-contract.md §6): sign_raw_payload (V2),
// sign_raw_payloads, sign_transaction (V2). They complete in the submit response itself, because
// @turnkey/viem, ethers and solana with a TurnkeyClient never poll (contract Traps 9).
import { parseForSigning, resolveSigningTarget, signParsedTransaction, signRawPayloads } from '../domain/signing.js';
import { defineActivity } from './define.js';

interface RawPayloadParams {
  signWith: string;
  payload: string;
  encoding: string;
  hashFunction: string;
}

export const signRawPayloadOp = defineActivity<RawPayloadParams, unknown>({
  path: 'sign_raw_payload',
  type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
  aliases: ['ACTIVITY_TYPE_SIGN_RAW_PAYLOAD'],
  result: 'signRawPayloadResult',
  policy: { resource: 'PRIVATE_KEY', action: 'SIGN' },
  execution: 'pure',
  execute: async (ctx, p) => {
    const target = await resolveSigningTarget(ctx.repos, ctx.services.barrier, ctx.organization.id, p.signWith);
    const [signature] = await signRawPayloads(target, { payloads: [p.payload], encoding: p.encoding, hashFunction: p.hashFunction });
    return signature;
  },
});

export const signRawPayloadsOp = defineActivity<Omit<RawPayloadParams, 'payload'> & { payloads: string[] }, unknown>({
  path: 'sign_raw_payloads',
  type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOADS',
  result: 'signRawPayloadsResult',
  policy: { resource: 'PRIVATE_KEY', action: 'SIGN' },
  execution: 'pure',
  execute: async (ctx, p) => {
    const target = await resolveSigningTarget(ctx.repos, ctx.services.barrier, ctx.organization.id, p.signWith);
    return { signatures: await signRawPayloads(target, p) };
  },
});

export const signTransactionOp = defineActivity<{ signWith: string; unsignedTransaction: string; type: string }, unknown>({
  path: 'sign_transaction',
  type: 'ACTIVITY_TYPE_SIGN_TRANSACTION_V2',
  aliases: ['ACTIVITY_TYPE_SIGN_TRANSACTION'],
  result: 'signTransactionResult',
  policy: { resource: 'PRIVATE_KEY', action: 'SIGN' },
  execution: 'pure',
  execute: async (ctx, p) => {
    const target = await resolveSigningTarget(ctx.repos, ctx.services.barrier, ctx.organization.id, p.signWith);
    const parsed = parseForSigning(target, p.type, p.unsignedTransaction);
    return { signedTransaction: signParsedTransaction(target, parsed) };
  },
});
