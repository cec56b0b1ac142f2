// Broadcasting EVM transactions (swagger v1EthSendTransactionIntentV2,
// v1EthSendRawTransactionIntent, v1GetSendTransactionStatusResponse, v1GetNoncesResponse; Turnkey's
// "Broadcasting" concept page for the statuses; docs/broadcasting.md "Broadcasting" for Sigil's decisions).
//
// eth_send_transaction builds an EIP-1559 transaction from the caller's call, filling what was left
// out from the chain's node (nonce, gas limit by eth_estimateGas, fees from the latest base fee and
// the node's priority fee), and hands its unsigned serialization to the same parse, policy keywords
// and signing as sign_transaction. It is then broadcast and tracked to inclusion or failure.
// eth_undelegate_7702 (v1EthUndelegate7702Intent) builds an EIP-7702 transaction the same way and
// goes through the same nonce allocation, signing, tracking and events.
//
// Statuses (txStatus): INITIALIZED (signed, recorded, not yet accepted by the node), BROADCASTING
// (accepted, waiting for a block), INCLUDED (mined and succeeded), FAILED (refused by the node,
// reverted, replaced or dropped; `error` says which, with the revert reason where there is one).
// Every change, and its SEND_TRANSACTION_STATUS_UPDATES webhook event, is recorded by the send
// recorder every chain's sends share (src/domain/keys/send-tracking.ts); what the node's answers
// mean for an EVM send is in src/domain/keys/evm-tracking.ts.
//
// Nonces: allocated in the database under a row lock per (chain, address) (migration 024): the
// larger of the next one Sigil stored and the node's pending nonce, so sends from one address in
// several processes on one PostgreSQL take consecutive nonces, a nonce the node moved past (a
// transaction sent outside Sigil) is skipped, and one given back is used again. The node can move
// the nonce up, never down: a node answering a lower pending nonce cannot make Sigil sign a second
// transaction for a nonce it already signed one for.
//
// What the node is trusted with: the fees it suggests are bounded by the operator's
// caps per chain (maxFeePerGas, and gas limit × maxFeePerGas), checked on the transaction as it will
// be signed, before the policies judge it (they see those fees in eth.tx); its answers are read up
// to a size cap (src/delivery/evm-rpc.ts); its URL is https unless the operator lists the host.
//
// Tracking: the shared send tracker (organizations in turn, least recently checked first) over the
// sends of the chains configured here only. A raw send (eth_send_raw_transaction) not mined within
// SIGIL_EVM_RAW_SEND_TTL_SECONDS is FAILED as expired.
import { EvmRpc, EvmRpcError, type EvmCall } from '../../delivery/evm-rpc.js';
import { ethereumTransactionHash, serializeUnsignedEip1559, serializeUnsignedEip7702, type Eip1559Fields } from '../../chains/transactions.js';
import { SigilError, invalid } from '../../errors/errors.js';
import type { Repositories } from '../../store/index.js';
import type { EvmAssetSetting } from '../../config/config.js';
import type { ActivityContext, OperationContext } from '../context.js';
import { parseForSigning, resolveSigningTarget, signEip7702Authorization, signParsedTransaction, type SigningTarget } from './signing.js';
import { TX_STATUS, nodeClients, sendRow, sendTracker, type ChainSendsDeps, type SendTracker } from './send-tracking.js';
import { EvmTracking, revertEntry, revertError } from './evm-tracking.js';

// What other modules read of a send's statuses and errors, where they always found it.
export { TX_STATUS, type RevertChainEntry, type SendTransactionStatusEvent, type TxError, type TxStatus } from './send-tracking.js';
export { revertEntry } from './evm-tracking.js';

/** The parameters of eth_send_transaction V2 (v1EthSendTransactionIntentV2). */
export interface EthSendTransactionParams {
  from: string;
  caip2: string;
  sponsor?: boolean;
  nonce?: string;
  gasLimit?: string;
  maxFeePerGas?: string;
  maxPriorityFeePerGas?: string;
  deadline?: string;
  gasStationNonce?: string;
  calls: { to: string; value?: string; data?: string }[];
}

/** A transaction built and judged, ready to be allocated a nonce and signed. */
export interface PreparedSend {
  caip2: string;
  from: string;
  target: SigningTarget;
  fields: Eip1559Fields;
  /** The caller chose the nonce; Sigil's allocator is bypassed. */
  callerNonce: boolean;
  parsed: ReturnType<typeof parseForSigning>;
  /**
   * The unsigned transaction to sign once its nonce is allocated, where it is more than `fields`
   * with that nonce (eth_undelegate_7702: the authorization, signed only then, carries nonce + 1).
   */
  unsignedAt?: (nonce: bigint) => string;
  /**
   * How many of the sender's nonces the transaction uses: 2 for a set-code transaction carrying the
   * sender's own authorization (EIP-7702 increments the authority's nonce too), else 1.
   */
  noncesUsed?: bigint;
}

/** The parameters of eth_undelegate_7702 (v1EthUndelegate7702Intent). */
export interface EthUndelegate7702Params {
  from: string;
  caip2: string;
  nonce?: string;
  gasLimit?: string;
  maxFeePerGas?: string;
  maxPriorityFeePerGas?: string;
}

/** EIP-7702: delegating to the zero address clears the account's code (its delegation indicator). */
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';
/**
 * The undelegation's gas limit when the caller gives none (the swagger's "fixed undelegation gas
 * limit"): 21000 + 25000 per authorization (EIP-7702 PER_EMPTY_ACCOUNT_COST) with head room; only
 * the gas used is paid.
 */
const UNDELEGATION_GAS_LIMIT = 100_000n;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const HEX_DATA = /^0x([0-9a-fA-F]{2})*$/;
const UINT = /^(0|[1-9][0-9]{0,77})$/;
/** Head room over eth_estimateGas: state can move between the estimate and the block. */
const GAS_MARGIN_PERCENT = 20n;

function quantity(name: string, v: string | undefined): bigint | undefined {
  if (v === undefined || v === '') return undefined;
  if (!UINT.test(v)) throw invalid(`${name} must be a non-negative decimal integer, got "${v.slice(0, 80)}"`);
  return BigInt(v);
}

export function notSupported(what: string): SigilError {
  return new SigilError('UNIMPLEMENTED', `${what} is not supported by this deployment`);
}

function chainIdOf(caip2: string): bigint {
  const m = /^eip155:([1-9][0-9]{0,18})$/.exec(caip2);
  if (!m) throw invalid(`caip2 must be an EVM chain id such as eip155:1, got "${caip2.slice(0, 80)}"`);
  return BigInt(m[1]);
}

function checkAddress(name: string, address: string): string {
  if (!ADDRESS.test(address)) throw invalid(`${name} must be a 0x-prefixed 20-byte hex address, got "${address.slice(0, 80)}"`);
  return address.toLowerCase();
}

export interface BroadcastingDeps extends ChainSendsDeps {
  /** CAIP-2 chain id → the ERC-20 tokens the operator lists (Config.evmAssets; src/domain/keys/assets.ts). */
  assets?: Record<string, EvmAssetSetting[]>;
  /** The operator's fee cap `which` on a chain, in wei, and the setting that sets it (Config.evmFeeCaps). */
  feeCap(caip2: string, which: 'maxFeePerGas' | 'maxTxFee'): { wei: bigint; setting: string };
  /** How long a raw send may stay unmined before it is FAILED as expired (SIGIL_EVM_RAW_SEND_TTL_SECONDS). */
  rawSendTtlMs: number;
}

declare module '../context.js' {
  interface Services {
    /** Broadcasting and tracking of EVM transactions (eth_send_transaction); absent in processes that send none. */
    broadcasting?: Broadcasting;
  }
}

export class Broadcasting {
  private readonly rpcs: Map<string, EvmRpc>;
  /** policyContext and execute of one request share the transaction built for the policy. */
  private readonly prepared = new WeakMap<object, Promise<PreparedSend>>();
  private readonly tracking: EvmTracking;
  /** Follows this family's sends in flight (started and stopped with the process's servers). */
  readonly tracker: SendTracker;

  constructor(private readonly deps: BroadcastingDeps) {
    this.rpcs = nodeClients(deps, (url, max) => new EvmRpc(url, max));
    this.tracking = new EvmTracking({ rpcs: this.rpcs, recorder: deps.recorder, rawSendTtlMs: deps.rawSendTtlMs, log: deps.log });
    this.tracker = sendTracker(deps, this.tracking);
  }

  /**
   * The operator's fee caps, on the transaction as it will be signed: the node's
   * suggestion and the caller's choice alike. A refusal names the cap and the setting that raises it.
   */
  private checkFees(caip2: string, fields: Eip1559Fields): void {
    const perGas = this.deps.feeCap(caip2, 'maxFeePerGas');
    if (fields.maxFeePerGas > perGas.wei) {
      throw invalid(
        `maxFeePerGas ${fields.maxFeePerGas} wei is above this deployment's cap of ${perGas.wei} wei per gas on ${caip2} (${perGas.setting}); nothing was sent`,
      );
    }
    const total = this.deps.feeCap(caip2, 'maxTxFee');
    if (fields.gas * fields.maxFeePerGas > total.wei) {
      throw invalid(
        `the transaction could cost up to ${fields.gas * fields.maxFeePerGas} wei in fees (gas limit ${fields.gas} × maxFeePerGas ${fields.maxFeePerGas}), above this deployment's cap of ${total.wei} wei per transaction on ${caip2} (${total.setting}); nothing was sent`,
      );
    }
  }

  /** The chain's RPC client; a chain without one is refused, naming the setting. */
  rpc(caip2: string): EvmRpc {
    chainIdOf(caip2);
    const rpc = this.rpcs.get(caip2);
    if (!rpc) {
      throw new SigilError('REQUEST_INVALID', `broadcasting on ${caip2} is not configured on this deployment: set ${this.deps.rpcSetting(caip2)} to the chain's JSON-RPC URL`, {
        grpc: 9,
      });
    }
    return rpc;
  }

  /** The ERC-20 tokens listed for a chain (SIGIL_EVM_ASSETS), none when it lists none. */
  tokens(caip2: string): EvmAssetSetting[] {
    return this.deps.assets?.[caip2] ?? [];
  }

  /**
   * Builds the transaction eth_send_transaction will sign, filling nonce, gas and fees the caller
   * left out; computed once per request (policyContext and execute share it).
   */
  prepare(ctx: OperationContext, p: EthSendTransactionParams): Promise<PreparedSend> {
    return this.once(p, () => this.build(ctx, p));
  }

  /** The same for eth_undelegate_7702. */
  prepareUndelegation(ctx: OperationContext, p: EthUndelegate7702Params): Promise<PreparedSend> {
    return this.once(p, () => this.buildUndelegation(ctx, p));
  }

  /** One build per request's parameters object. */
  private once(p: object, build: () => Promise<PreparedSend>): Promise<PreparedSend> {
    let pending = this.prepared.get(p);
    if (!pending) {
      pending = build();
      this.prepared.set(p, pending);
    }
    return pending;
  }

  /** A key of the organization that signs for `from` (a wallet account or private key address). */
  private async sender(ctx: OperationContext, given: string, from: string): Promise<SigningTarget> {
    const target = await resolveSigningTarget(ctx.repos, ctx.services.barrier, ctx.organization.id, given);
    if (target.curve !== 'CURVE_SECP256K1' || !target.address || target.address.toLowerCase() !== from) {
      throw invalid(`from must be an Ethereum address of a wallet account or private key of this organization, got "${given.slice(0, 80)}"`);
    }
    return target;
  }

  /**
   * An EIP-7702 transaction from `from` to itself, no value, no data, whose one authorization
   * delegates `from` to the zero address, clearing its delegation. The sender is the authority, so
   * the authorization's nonce is the transaction's plus one (the sender's nonce is incremented before
   * authorizations are processed). Policies judge it as sign_transaction would; the authorization is
   * signed only when the transaction is (the policy keywords do not read its signature).
   */
  private async buildUndelegation(ctx: OperationContext, p: EthUndelegate7702Params): Promise<PreparedSend> {
    const chainId = chainIdOf(p.caip2);
    const rpc = this.rpc(p.caip2);
    const from = checkAddress('from', p.from ?? '');
    const callerNonce = quantity('nonce', p.nonce);
    const gas = quantity('gasLimit', p.gasLimit) ?? UNDELEGATION_GAS_LIMIT;
    const callerMaxFee = quantity('maxFeePerGas', p.maxFeePerGas);
    const callerPriority = quantity('maxPriorityFeePerGas', p.maxPriorityFeePerGas);
    const target = await this.sender(ctx, p.from, from);
    const [nonce, fees] = await Promise.all([callerNonce ?? this.nextNonce(p.caip2, from, ctx.repos), this.fees(rpc, callerMaxFee, callerPriority)]);
    const fields: Eip1559Fields = { chainId, nonce, gas, to: from, value: 0n, data: '0x', ...fees };
    this.checkFees(p.caip2, fields);
    const withAuthorization = (n: bigint, authorization: { yParity: bigint; r: bigint; s: bigint }) =>
      serializeUnsignedEip7702({ ...fields, to: from, nonce: n, authorizationList: [{ chainId, address: ZERO_ADDRESS, nonce: n + 1n, ...authorization }] });
    // Judged with an unsigned authorization: the key is opened only after the policy allowed it.
    const parsed = parseForSigning(target, 'TRANSACTION_TYPE_ETHEREUM', withAuthorization(nonce, { yParity: 0n, r: 0n, s: 0n }));
    const unsignedAt = (n: bigint) => withAuthorization(n, signEip7702Authorization(target, { chainId, address: ZERO_ADDRESS, nonce: n + 1n }));
    return { caip2: p.caip2, from, target, fields, callerNonce: callerNonce !== undefined, parsed, unsignedAt, noncesUsed: 2n };
  }

  private async build(ctx: OperationContext, p: EthSendTransactionParams): Promise<PreparedSend> {
    if (p.sponsor === true) throw notSupported('sponsor: true (Gas Station sponsorship)');
    if (!Array.isArray(p.calls) || p.calls.length === 0) throw invalid('calls must list one call');
    if (p.calls.length > 1) throw notSupported('more than one call (EIP-7702 batch execution through Gas Station)');
    const chainId = chainIdOf(p.caip2);
    const rpc = this.rpc(p.caip2);
    const from = checkAddress('from', p.from);
    const call = p.calls[0];
    const to = checkAddress('calls[0].to', call.to ?? '');
    const data = call.data === undefined || call.data === '' ? '0x' : call.data;
    if (!HEX_DATA.test(data)) throw invalid('calls[0].data must be 0x-prefixed hex with an even number of digits');
    const value = quantity('calls[0].value', call.value) ?? 0n;
    const callerNonce = quantity('nonce', p.nonce);
    const callerGas = quantity('gasLimit', p.gasLimit);
    const callerMaxFee = quantity('maxFeePerGas', p.maxFeePerGas);
    const callerPriority = quantity('maxPriorityFeePerGas', p.maxPriorityFeePerGas);
    const target = await this.sender(ctx, p.from, from);
    const ask: EvmCall = { from, to, value, data };
    const [nonce, gas, fees] = await Promise.all([
      // ctx.repos: inside an approval's transaction, the only connection a reader may use (SQLite has one).
      callerNonce ?? this.nextNonce(p.caip2, from, ctx.repos),
      callerGas ?? this.estimateGas(rpc, ask),
      this.fees(rpc, callerMaxFee, callerPriority),
    ]);
    const fields: Eip1559Fields = { chainId, nonce, gas, to, value, data, ...fees };
    this.checkFees(p.caip2, fields);
    const parsed = parseForSigning(target, 'TRANSACTION_TYPE_ETHEREUM', serializeUnsignedEip1559(fields));
    return { caip2: p.caip2, from, target, fields, callerNonce: callerNonce !== undefined, parsed };
  }

  private async estimateGas(rpc: EvmRpc, call: EvmCall): Promise<bigint> {
    try {
      const estimate = await rpc.estimateGas(call);
      return estimate + (estimate * GAS_MARGIN_PERCENT) / 100n;
    } catch (err) {
      if (err instanceof EvmRpcError && err.code !== undefined) {
        // The node ran the call and it fails: say why, with the decoded revert, and send nothing.
        const entry = revertEntry(call.to ?? '', err.data, err.message);
        throw invalid(`the transaction would fail, so it was not sent (gas estimation: ${entry.displayMessage})`, [
          { '@type': 'type.googleapis.com/sigil.v1.TxError', ...revertError(entry) },
        ]);
      }
      throw unavailable(err);
    }
  }

  /** EIP-1559 fees: the node's priority fee, and a max fee of twice the latest base fee plus it. */
  private async fees(rpc: EvmRpc, maxFee: bigint | undefined, priority: bigint | undefined): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
    try {
      const tip = priority ?? (await rpc.maxPriorityFeePerGas());
      const cap = maxFee ?? 2n * (await rpc.baseFeePerGas()) + tip;
      return { maxFeePerGas: cap, maxPriorityFeePerGas: tip > cap ? cap : tip };
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** The nonce the next send from `address` takes: the larger of the node's pending nonce and the next one Sigil stored. */
  async nextNonce(caip2: string, address: string, repos: Repositories): Promise<bigint> {
    const rpc = this.rpc(caip2);
    let pending: bigint;
    try {
      pending = await rpc.transactionCount(address, 'pending');
    } catch (err) {
      throw unavailable(err);
    }
    return nonceFrom(pending, await repos.sendTransactions.nextNonce(caip2, address));
  }

  /**
   * Allocates the nonce (unless the caller chose it), signs, records the send (INITIALIZED) in one
   * transaction under the address's nonce lock, then broadcasts. Answers the sendTransactionStatusId.
   */
  async send(ctx: ActivityContext, prepared: PreparedSend): Promise<string> {
    const { caip2, from, target } = prepared;
    // In an approval's transaction the send is recorded there, and broadcast by the tracker once that
    // transaction has committed, since a broadcast must never precede the record it depends on.
    const inTransaction = this.deps.recorder.inApproval(ctx);
    const rpc = this.rpc(caip2);
    // Nothing waits on the node while a transaction is open. The node's pending nonce is read before
    // the transaction; inside an approval's, the nonce the send was built with (read from the node
    // when it was loaded, before that transaction opened) stands for it.
    // The node may raise the nonce but never lower it below what Sigil stored (nonceFrom).
    const pending: bigint | undefined = prepared.callerNonce
      ? undefined
      : inTransaction
        ? prepared.fields.nonce
        : await rpc.transactionCount(from, 'pending').catch((err) => Promise.reject(unavailable(err)));
    const row = await this.deps.recorder.recordNew(ctx, TX_STATUS.INITIALIZED, async (repos) => {
      const stored = await repos.sendTransactions.lockNonce(caip2, from);
      const nonce = pending === undefined ? prepared.fields.nonce : nonceFrom(pending, stored);
      const parsed = prepared.unsignedAt
        ? parseForSigning(target, 'TRANSACTION_TYPE_ETHEREUM', prepared.unsignedAt(nonce))
        : nonce === prepared.fields.nonce
          ? prepared.parsed
          : parseForSigning(target, 'TRANSACTION_TYPE_ETHEREUM', serializeUnsignedEip1559({ ...prepared.fields, nonce }));
      const signed = '0x' + signParsedTransaction(target, parsed);
      const next = nonce + (prepared.noncesUsed ?? 1n);
      if (stored === undefined || BigInt(stored) < next) await repos.sendTransactions.setNextNonce(caip2, from, Number(next));
      return sendRow(ctx, this.deps.newId(), { caip2, from_address: from, nonce: Number(nonce), tx_hash: ethereumTransactionHash(signed), signed_transaction: signed, origin: 'sigil' });
    });
    if (!inTransaction) await this.tracking.broadcast(row);
    return row.id;
  }

  /**
   * eth_send_raw_transaction: broadcasts a transaction signed elsewhere and records it as
   * BROADCASTING so it is tracked like any other. A refusal by the node fails the activity.
   */
  async sendRaw(ctx: ActivityContext, caip2: string, signedTransaction: string): Promise<{ id: string; transactionHash: string }> {
    const rpc = this.rpc(caip2);
    const signed = signedTransaction.startsWith('0x') ? signedTransaction : `0x${signedTransaction}`;
    if (!HEX_DATA.test(signed) || signed.length < 4) throw invalid('signedTransaction must be the hex of a signed transaction');
    // Inside an approval's transaction nothing waits on the node: recorded INITIALIZED there, it is
    // handed to the node by the tracker once that transaction has committed.
    if (this.deps.recorder.inApproval(ctx)) return this.recordRawForTracker(ctx, caip2, signed);
    let hash: string;
    try {
      hash = await rpc.sendRawTransaction(signed);
    } catch (err) {
      if (err instanceof EvmRpcError && err.code !== undefined) throw invalid(`the node refused the transaction: ${err.message}`);
      throw unavailable(err);
    }
    const known = await rpc.transaction(hash).catch(() => undefined);
    const row = sendRow(ctx, this.deps.newId(), {
      caip2,
      from_address: known?.from ?? '',
      nonce: known ? Number(known.nonce) : null,
      tx_hash: hash.toLowerCase(),
      signed_transaction: signed.toLowerCase(),
      origin: 'raw',
    });
    await this.deps.recorder.recordNew(ctx, TX_STATUS.BROADCASTING, async () => row);
    return { id: row.id, transactionHash: hash };
  }

  /** An approved raw send, recorded in the approval's transaction for the tracker to broadcast. */
  private async recordRawForTracker(ctx: ActivityContext, caip2: string, signed: string): Promise<{ id: string; transactionHash: string }> {
    let hash: string;
    try {
      hash = ethereumTransactionHash(signed);
    } catch (err) {
      throw invalid(`signedTransaction is not a signed Ethereum transaction: ${(err as Error).message}`);
    }
    const row = sendRow(ctx, this.deps.newId(), { caip2, from_address: '', nonce: null, tx_hash: hash.toLowerCase(), signed_transaction: signed.toLowerCase(), origin: 'raw' });
    await this.deps.recorder.recordNew(ctx, TX_STATUS.INITIALIZED, async () => row);
    return { id: row.id, transactionHash: row.tx_hash };
  }

  /** get_send_transaction_status (v1GetSendTransactionStatusResponse), for every chain's sends. */
  status(repos: Repositories, organizationId: string, id: string) {
    return this.deps.recorder.status(repos, organizationId, id);
  }
}

/**
 * The nonce an allocation hands out: the larger of the node's pending nonce and the next one Sigil
 * stored. The node moves it up (transactions sent outside Sigil), never down.
 */
function nonceFrom(pending: bigint, stored: number | undefined): bigint {
  return stored !== undefined && BigInt(stored) > pending ? BigInt(stored) : pending;
}

export function unavailable(err: unknown): SigilError {
  return new SigilError('REQUEST_INVALID', `the chain's RPC endpoint failed: ${(err as Error).message}`, { grpc: 14, http: 503 });
}

export type { SigningTarget };
