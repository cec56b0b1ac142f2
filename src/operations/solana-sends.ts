// sol_send_transaction (swagger v1SolSendTransactionIntentV2, and the older
// ACTIVITY_TYPE_SOL_SEND_TRANSACTION with v1SolSendTransactionIntent's single `signWith`). The rules
// are in src/domain/keys/solana-sends.ts; docs/broadcasting.md "Solana". Its status is read with
// get_send_transaction_status (src/operations/broadcasting.ts), which names it by `solana.signature`.
//
// Resource PRIVATE_KEY / SIGN like every signing activity, with `activity.params.type`
// TRANSACTION_TYPE_SOLANA and the `solana.tx` keywords sign_transaction would give the very
// transaction sent (blockhash filled in), judged once per signer: a policy that denies signing a
// transaction denies sending it, and velocity controls count its transfers. Before it is judged it is
// simulated on the cluster it names (docs/policies.md "Simulation before approval"), so `simulation.*`
// reads what it would do there, and the simulation is recorded with the activity.
import type { OperationContext } from '../domain/context.js';
import { transactionPolicyContext } from '../domain/governance/policy-context.js';
import { notSupported } from '../domain/keys/broadcasting.js';
import { simulateForSigning, type AssetChanges } from '../domain/keys/simulation.js';
import type { PreparedSolanaSend, SolanaSends, SolSendTransactionParams } from '../domain/keys/solana-sends.js';
import { defineActivity } from './define.js';

function solanaSends(ctx: OperationContext): SolanaSends {
  if (!ctx.services.solanaSends) throw notSupported('Solana broadcasting');
  return ctx.services.solanaSends;
}

/** v1SolSendTransactionIntent (the older type): one signer. */
interface SolSendTransactionParamsV1 extends Omit<SolSendTransactionParams, 'signWiths'> {
  signWith: string;
}

/** A send as prepared, with its simulation where one ran. */
type SimulatedSolanaSend = PreparedSolanaSend & { simulation?: AssetChanges };

export const solSendTransactionOp = defineActivity<SolSendTransactionParams, { sendTransactionStatusId: string }, SimulatedSolanaSend>({
  path: 'sol_send_transaction',
  type: 'ACTIVITY_TYPE_SOL_SEND_TRANSACTION_V2',
  aliases: [
    {
      type: 'ACTIVITY_TYPE_SOL_SEND_TRANSACTION',
      parameters: ['v1SolSendTransactionIntent', 'v1SolSendTransactionIntentV2'],
      result: 'solSendTransactionResult',
      adapt: (p: SolSendTransactionParamsV1 | SolSendTransactionParams) => {
        if ('signWiths' in p && Array.isArray(p.signWiths)) return p;
        const { signWith, ...rest } = p as SolSendTransactionParamsV1;
        return { ...rest, signWiths: [signWith] };
      },
    },
  ],
  result: 'solSendTransactionResultV2',
  policy: { resource: 'PRIVATE_KEY', action: 'SIGN' },
  policyParams: () => ({ type: 'TRANSACTION_TYPE_SOLANA' }),
  load: async (ctx, p) => {
    const prepared = await solanaSends(ctx).prepare(ctx, p);
    // Outside any transaction, like the rest of the load: the node is asked once for the whole send.
    const simulation = await simulateForSigning(ctx, prepared.signers[0], prepared.parsed[0], prepared.caip2);
    return Object.freeze(simulation ? { ...prepared, simulation } : prepared);
  },
  loadCallsNode: true,
  simulation: (prepared) => prepared.simulation,
  policyContext: async (ctx, _p, prepared) => {
    // One `solana.tx` (the same object) in every signer's context: it is one transaction, so velocity
    // controls count its transfers once however many of the organization's keys sign it.
    const contexts = await Promise.all(
      prepared.signers.map((target) => transactionPolicyContext(ctx.repos, ctx.organization.id, target, prepared.parsed[0], prepared.simulation)),
    );
    return contexts.length === 1 ? contexts[0] : contexts;
  },
  execution: 'pure',
  execute: async (ctx, _p, prepared) => ({ sendTransactionStatusId: await solanaSends(ctx).send(ctx, prepared) }),
});
