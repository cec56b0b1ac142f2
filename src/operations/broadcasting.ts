// Broadcasting operations (swagger: eth_send_transaction V2 and its older
// ACTIVITY_TYPE_ETH_SEND_TRANSACTION, eth_send_raw_transaction, get_send_transaction_status,
// get_nonces). The rules are in src/domain/keys/broadcasting.ts; docs/broadcasting.md "Broadcasting".
//
// eth_send_transaction is resource PRIVATE_KEY / SIGN like every signing activity (docs/reference/policies.md "Keywords"),
// and its policy keywords are those sign_transaction would give the unsigned transaction it builds
// (transactionPolicyContext), with `activity.params.type` TRANSACTION_TYPE_ETHEREUM as
// sign_transaction's: a policy that denies signing a transaction denies sending it.
// eth_send_raw_transaction signs nothing; it is governed as PRIVATE_KEY / SIGN too (recorded as
// deliberate in test/vectors/activity-resources.json), so whoever may send may broadcast, and
// policies tell the two apart by activity.type.
// eth_undelegate_7702 sends, through the same machinery, the EIP-7702 transaction that clears the
// sender's delegation; it is judged as sign_transaction of that transaction (PRIVATE_KEY / SIGN).
// list_supported_assets and get_wallet_address_balances read the chains configured for broadcasting
// (src/domain/keys/assets.ts).
import type { ActivityContext, OperationContext } from '../domain/context.js';
import { transactionPolicyContext } from '../domain/governance/policy-context.js';
import { notSupported, type Broadcasting, type EthSendTransactionParams, type EthUndelegate7702Params, type PreparedSend } from '../domain/keys/broadcasting.js';
import { supportedAssets, walletAddressBalances } from '../domain/keys/assets.js';
import { resolveSigningTarget } from '../domain/keys/signing.js';
import { simulateForSigning, type AssetChanges } from '../domain/keys/simulation.js';
import { SigilError, invalid } from '../errors/errors.js';
import { defineActivity, defineQuery } from './define.js';

function broadcasting(ctx: OperationContext): Broadcasting {
  if (!ctx.services.broadcasting) throw notSupported('broadcasting');
  return ctx.services.broadcasting;
}

/** `activity.params` of every activity that puts an Ethereum transaction on chain, as sign_transaction's. */
const ETHEREUM_TRANSACTION_PARAMS = () => ({ type: 'TRANSACTION_TYPE_ETHEREUM' });

/**
 * An activity that sends a transaction Sigil builds: its `load` builds it (asking the node for gas,
 * fees and nonce where the caller left them out), it is judged as sign_transaction of that very
 * transaction (transactionPolicyContext), then signed, recorded and broadcast by `send`.
 */

function sendingPrepared<P>(prepare: (b: Broadcasting, ctx: OperationContext, p: P) => Promise<PreparedSend>) {
  return {
    policyParams: ETHEREUM_TRANSACTION_PARAMS,
    // The send as built, and what a simulation of it does (docs/policies.md "Simulation before approval").
    load: async (ctx: OperationContext, p: P): Promise<SimulatedSend> => {
      const prepared = await prepare(broadcasting(ctx), ctx, p);
      const simulation = await simulateForSigning(ctx, prepared.target, prepared.parsed);
      return Object.freeze(simulation ? { ...prepared, simulation } : prepared);
    },
    loadCallsNode: true,
    simulation: (prepared: SimulatedSend) => prepared.simulation,
    policyContext: async (ctx: OperationContext, _p: P, prepared: SimulatedSend) => transactionPolicyContext(ctx.repos, ctx.organization.id, prepared.target, prepared.parsed, prepared.simulation),
    execution: 'pure' as const,
    execute: async (ctx: ActivityContext, _p: P, prepared: PreparedSend) => ({ sendTransactionStatusId: await broadcasting(ctx).send(ctx, prepared) }),
  };
}

/** A send as built, with its simulation where one ran. */
type SimulatedSend = PreparedSend & { simulation?: AssetChanges };

/** v1EthSendTransactionIntent (the older type): one call, flat. */
interface EthSendTransactionParamsV1 extends Omit<EthSendTransactionParams, 'calls'> {
  to: string;
  value?: string;
  data?: string;
}

export const ethSendTransactionOp = defineActivity<EthSendTransactionParams, { sendTransactionStatusId: string }, PreparedSend>({
  path: 'eth_send_transaction',
  type: 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION_V2',
  aliases: [
    {
      type: 'ACTIVITY_TYPE_ETH_SEND_TRANSACTION',
      parameters: ['v1EthSendTransactionIntent', 'v1EthSendTransactionIntentV2'],
      result: 'ethSendTransactionResult',
      adapt: (p: EthSendTransactionParamsV1 | EthSendTransactionParams) => {
        if ('calls' in p && Array.isArray(p.calls)) return p;
        const { to, value, data, ...rest } = p as EthSendTransactionParamsV1;
        return { ...rest, calls: [{ to, value, data }] };
      },
    },
  ],
  result: 'ethSendTransactionResultV2',
  policy: { resource: 'PRIVATE_KEY', action: 'SIGN' },
  ...sendingPrepared((b, ctx, p: EthSendTransactionParams) => b.prepare(ctx, p)),
});

export const ethSendRawTransactionOp = defineActivity<{ signedTransaction: string; caip2: string }, { transactionHash: string }>({
  path: 'eth_send_raw_transaction',
  type: 'ACTIVITY_TYPE_ETH_SEND_RAW_TRANSACTION',
  result: 'ethSendRawTransactionResult',
  policy: { resource: 'PRIVATE_KEY', action: 'SIGN' },
  policyParams: ETHEREUM_TRANSACTION_PARAMS,
  policyContext: async (ctx, p) => {
    // Refuse an unconfigured chain before anything is recorded.
    broadcasting(ctx).rpc(p.caip2);
    return {};
  },
  execution: 'pure',
  execute: async (ctx, p) => ({ transactionHash: (await broadcasting(ctx).sendRaw(ctx, p.caip2, p.signedTransaction)).transactionHash }),
});

export const getSendTransactionStatusOp = defineQuery<{ organizationId: string; sendTransactionStatusId: string }, unknown>({
  path: 'get_send_transaction_status',
  request: 'v1GetSendTransactionStatusRequest',
  execute: (ctx, body) => broadcasting(ctx).status(ctx.repos, ctx.organization.id, body.sendTransactionStatusId),
});

export const getNoncesOp = defineQuery<{ organizationId: string; address: string; caip2: string; nonce?: boolean; gasStationNonce?: boolean }, { nonce?: string }>({
  path: 'get_nonces',
  request: 'v1GetNoncesRequest',
  execute: async (ctx, body) => {
    if (body.gasStationNonce === true) throw notSupported('gasStationNonce (Gas Station sponsorship)');
    const b = broadcasting(ctx);
    b.rpc(body.caip2);
    if (!/^0x[0-9a-fA-F]{40}$/.test(body.address)) throw invalid(`address must be a 0x-prefixed 20-byte hex address, got "${body.address.slice(0, 80)}"`);
    // Only an address of this organization's own keys: the nonce Sigil stores for an address tells
    // how many sends it made, which is no other organization's business.
    const address = body.address.toLowerCase();
    const notOwn = () => new SigilError('NOT_FOUND', `address ${address} is not an Ethereum address of a wallet account or private key of this organization`);
    const target = await resolveSigningTarget(ctx.repos, ctx.services.barrier, ctx.organization.id, address).catch((err) => {
      throw err instanceof SigilError && err.turnkeyErrorCode === 'NOT_FOUND' ? notOwn() : err;
    });
    if (target.curve !== 'CURVE_SECP256K1' || target.address?.toLowerCase() !== address) throw notOwn();
    if (body.nonce !== true) return {};
    return { nonce: String(await b.nextNonce(body.caip2, address, ctx.repos)) };
  },
});

export const ethUndelegate7702Op = defineActivity<EthUndelegate7702Params, { sendTransactionStatusId: string }, PreparedSend>({
  path: 'eth_undelegate_7702',
  type: 'ACTIVITY_TYPE_ETH_UNDELEGATE_7702',
  // @turnkey/sdk-server's generated ethUndelegate7702 (8.2.1) submits this spelling, which no
  // swagger has; accepted so the SDK's method works, and recorded as the real type (docs/broadcasting.md "Broadcasting").
  aliases: [{ type: 'ACTIVITY_TYPE_ETH_UNDELEGATE7702', spelling: true }],
  result: 'ethUndelegate7702Result',
  policy: { resource: 'PRIVATE_KEY', action: 'SIGN' },
  ...sendingPrepared((b, ctx, p: EthUndelegate7702Params) => b.prepareUndelegation(ctx, p)),
});

export const listSupportedAssetsOp = defineQuery<{ organizationId: string; caip2: string }, { assets: unknown[] }>({
  path: 'list_supported_assets',
  request: 'v1ListSupportedAssetsRequest',
  execute: async (ctx, body) => ({ assets: supportedAssets(ctx.services.broadcasting, body.caip2) }),
});

export const getWalletAddressBalancesOp = defineQuery<{ organizationId: string; address: string; caip2: string }, { balances: unknown[] }>({
  path: 'get_wallet_address_balances',
  request: 'v1GetWalletAddressBalancesRequest',
  execute: async (ctx, body) => ({ balances: await walletAddressBalances(ctx, ctx.services.broadcasting, body.address, body.caip2) }),
});
