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
// Every change goes through `recordSendTransactionStatus`, in the transaction that makes it, which
// is where a status-change event (webhooks' SEND_TRANSACTION_STATUS_UPDATES) is enqueued.
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
// Tracking: each pass goes through the organizations with sends in flight in turn,
// at most TRACK_PER_ORGANIZATION sends of each, least recently checked first, so no organization's
// sends can hold back another's. A raw send (eth_send_raw_transaction) not mined within
// SIGIL_EVM_RAW_SEND_TTL_SECONDS is FAILED as expired.
import { EvmRpc, EvmRpcError, type EvmCall } from '../../delivery/evm-rpc.js';
import { ethereumTransactionHash, serializeUnsignedEip1559, serializeUnsignedEip7702, type Eip1559Fields } from '../../chains/transactions.js';
import { SigilError, invalid } from '../../errors/errors.js';
import type { Repositories, SendTransactionRow } from '../../store/index.js';
import type { EvmAssetSetting } from '../../config/config.js';
import type { ActivityContext, OperationContext } from '../context.js';
import { isUniqueViolation } from '../../store/index.js';
import { enqueueWebhookEvent } from '../governance/webhooks.js';
import { parseForSigning, resolveSigningTarget, signEip7702Authorization, signParsedTransaction, type SigningTarget } from './signing.js';

export const TX_STATUS = {
  INITIALIZED: 'INITIALIZED',
  BROADCASTING: 'BROADCASTING',
  INCLUDED: 'INCLUDED',
  FAILED: 'FAILED',
} as const;
export type TxStatus = (typeof TX_STATUS)[keyof typeof TX_STATUS];
const IN_FLIGHT: TxStatus[] = [TX_STATUS.INITIALIZED, TX_STATUS.BROADCASTING];

/** v1RevertChainEntry. */
export interface RevertChainEntry {
  address: string;
  errorType: 'unknown' | 'native' | 'custom';
  displayMessage: string;
  native?: { nativeType: 'error_string' | 'panic' | 'execution_reverted'; message?: string; panicCode?: string };
  unknown?: { selector?: string; data?: string };
}

/** v1TxError. */
export interface TxError {
  message: string;
  revertChain?: RevertChainEntry[];
  eth?: { revertChain: RevertChainEntry[] };
  /** v1SolanaFailureDetails (sol_send_transaction; src/domain/keys/solana-sends.ts). */
  solana?: { source?: string; rpcCode?: number; rpcMessage?: string; transactionErrorJson?: string; logs?: string[] };
}

/**
 * The body of a SEND_TRANSACTION_STATUS_UPDATES webhook event (Sigil's reading; Turnkey documents
 * only `msg.idempotencyKey`): the status get_send_transaction_status would now answer, with what
 * identifies the transaction. `idempotencyKey` is the send and the status, the same for every
 * delivery of this change.
 */
export interface SendTransactionStatusEvent {
  type: 'SEND_TRANSACTION_STATUS_UPDATES';
  msg: {
    idempotencyKey: string;
    organizationId: string;
    sendTransactionStatusId: string;
    caip2: string;
    from: string;
    nonce: string | null;
    previousTxStatus: TxStatus | null;
    txStatus: TxStatus;
    eth?: { txHash: string };
    /** A Solana send (sol_send_transaction) names its transaction by its first signature instead. */
    solana?: { signature: string };
    txError?: string;
    error?: TxError;
    timestampMs: string;
  };
}

/** Order of the statuses within one send's events: a later status never goes out before an earlier one. */
const STATUS_SEQUENCE: Record<TxStatus, number> = { INITIALIZED: 1, BROADCASTING: 2, INCLUDED: 3, FAILED: 3 };


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
/** How long a signed, recorded transaction may stay unbroadcast before the tracker broadcasts it (a crash in between). */
const REBROADCAST_AFTER_MS = 5_000;
/** Sends of one organization the tracker looks at per pass: no organization can take a whole pass. */
const TRACK_PER_ORGANIZATION = 20;
/** Organizations the tracker visits per pass; the next pass goes on from where this one stopped. */
const TRACK_ORGANIZATIONS_PER_PASS = 50;

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

const ERROR_STRING = '0x08c379a0';
const PANIC = '0x4e487b71';

/** Decodes revert data: Error(string), Panic(uint256), none, or an unknown selector (v1RevertChainEntry). */
export function revertEntry(address: string, data: string | undefined, nodeMessage: string): RevertChainEntry {
  const d = (data ?? '0x').toLowerCase();
  if (d.startsWith(ERROR_STRING) && d.length >= 10 + 128) {
    const body = Buffer.from(d.slice(10), 'hex');
    const length = Number(BigInt('0x' + body.subarray(32, 64).toString('hex')));
    const message = body.subarray(64, 64 + length).toString('utf8');
    return { address, errorType: 'native', displayMessage: `execution reverted: ${message}`, native: { nativeType: 'error_string', message } };
  }
  if (d.startsWith(PANIC) && d.length === 10 + 64) {
    const code = BigInt('0x' + d.slice(10));
    return { address, errorType: 'native', displayMessage: `panic: 0x${code.toString(16)}`, native: { nativeType: 'panic', panicCode: code.toString() } };
  }
  if (d === '0x' || d === '') {
    return { address, errorType: 'native', displayMessage: nodeMessage || 'execution reverted', native: { nativeType: 'execution_reverted' } };
  }
  return { address, errorType: 'unknown', displayMessage: `execution reverted with custom error ${d.slice(0, 10)}`, unknown: { selector: d.slice(0, 10), data: d } };
}

function revertError(entry: RevertChainEntry): TxError {
  return { message: entry.displayMessage, revertChain: [entry], eth: { revertChain: [entry] } };
}

export interface BroadcastingDeps {
  repos: Repositories;
  /** What the tracker polls through (Store.background: off the request path's connections); `repos` if absent. */
  background?: Repositories;
  /** Runs `fn` in one database transaction (Store.transaction). */
  transaction<T>(fn: (repos: Repositories) => Promise<T>): Promise<T>;
  /** CAIP-2 chain id → JSON-RPC URL (Config.evmRpcUrls). */
  rpcUrls: Record<string, string>;
  /** The setting that configures a chain's RPC, named when a chain has none. */
  rpcSetting(caip2: string): string;
  /** CAIP-2 chain id → the ERC-20 tokens the operator lists (Config.evmAssets; src/domain/keys/assets.ts). */
  assets?: Record<string, EvmAssetSetting[]>;
  pollIntervalMs: number;
  /** The operator's fee cap `which` on a chain, in wei, and the setting that sets it (Config.evmFeeCaps). */
  feeCap(caip2: string, which: 'maxFeePerGas' | 'maxTxFee'): { wei: bigint; setting: string };
  /** How long a raw send may stay unmined before it is FAILED as expired (SIGIL_EVM_RAW_SEND_TTL_SECONDS). */
  rawSendTtlMs: number;
  /** The largest JSON-RPC answer read (SIGIL_EVM_RPC_MAX_RESPONSE_BYTES). */
  rpcMaxResponseBytes?: number;
  newId(): string;
  /** Tells this process's webhook dispatcher that events were committed (it polls anyway). */
  wakeWebhooks?: () => void;
  log?: { warn(obj: object, msg: string): void };
}

declare module '../context.js' {
  interface Services {
    /** Broadcasting and tracking of EVM transactions (eth_send_transaction); absent in processes that send none. */
    broadcasting?: Broadcasting;
  }
}

export class Broadcasting {
  private readonly rpcs = new Map<string, EvmRpc>();
  /** policyContext and execute of one request share the transaction built for the policy. */
  private readonly prepared = new WeakMap<object, Promise<PreparedSend>>();
  private timer: NodeJS.Timeout | undefined;
  /** Events were enqueued by a transaction of this process: wake the dispatcher once it committed. */
  private pendingWake = false;
  private ticking: Promise<void> | undefined;
  /** The last organization the tracker visited: the next pass goes on after it. */
  private trackCursor: string | undefined;

  constructor(private readonly deps: BroadcastingDeps) {
    for (const [caip2, url] of Object.entries(deps.rpcUrls)) this.rpcs.set(caip2, new EvmRpc(url, deps.rpcMaxResponseBytes));
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
   * The one place a send's status changes: inserts it (from null) or moves it from `from` to `to`
   * when it still is in `from`, and puts the SEND_TRANSACTION_STATUS_UPDATES event in the webhook
   * outbox in the same transaction, so the change and its event commit together. False when another
   * process recorded the change first (it also enqueued the event).
   */
  async recordSendTransactionStatus(
    repos: Repositories,
    row: SendTransactionRow,
    from: TxStatus | null,
    to: TxStatus,
    opts: { error?: TxError; nonce?: number; at?: number } = {},
  ): Promise<boolean> {
    const at = opts.at ?? Date.now();
    const error = opts.error ? JSON.stringify(opts.error) : undefined;
    if (from === null) {
      await repos.sendTransactions.insert({ ...row, status: to, error: error ?? null, created_at: at, updated_at: at });
    } else if (!(await repos.sendTransactions.setStatus(row.id, from, to, { error, nonce: opts.nonce, at }))) {
      return false;
    }
    const nonce = opts.nonce ?? row.nonce;
    const event: SendTransactionStatusEvent = {
      type: 'SEND_TRANSACTION_STATUS_UPDATES',
      msg: {
        idempotencyKey: `${row.id}:${to}`,
        organizationId: row.organization_id,
        sendTransactionStatusId: row.id,
        caip2: row.caip2,
        from: row.from_address,
        nonce: nonce === null ? null : String(nonce),
        previousTxStatus: from,
        txStatus: to,
        ...chainStatus(row),
        ...(opts.error ? { txError: opts.error.message, error: opts.error } : {}),
        timestampMs: String(at),
      },
    };
    const queued = await enqueueWebhookEvent(repos, row.organization_id, 'SEND_TRANSACTION_STATUS_UPDATES', event, {
      subject: `send-transaction:${row.id}`,
      sequence: STATUS_SEQUENCE[to],
      now: at,
    });
    if (queued > 0) this.pendingWake = true;
    return true;
  }

  private changeStatus(row: SendTransactionRow, from: TxStatus, to: TxStatus, opts: { error?: TxError; nonce?: number } = {}): Promise<boolean> {
    return this.transaction((repos) => this.recordSendTransactionStatus(repos, row, from, to, opts));
  }

  /** A transaction of this process's own; the webhook dispatcher hears of the events it committed. */
  private async transaction<T>(fn: (repos: Repositories) => Promise<T>): Promise<T> {
    const result = await this.deps.transaction(fn);
    if (this.pendingWake) {
      this.pendingWake = false;
      this.deps.wakeWebhooks?.();
    }
    return result;
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
    const { run, inTransaction } = this.writer(ctx);
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
    const id = this.deps.newId();
    const row = await once(() => run(async (repos) => {
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
      const record: SendTransactionRow = {
        id,
        organization_id: ctx.organization.id,
        caip2,
        from_address: from,
        nonce: Number(nonce),
        tx_hash: ethereumTransactionHash(signed),
        signed_transaction: signed,
        status: TX_STATUS.INITIALIZED,
        error: null,
        activity_fingerprint: ctx.fingerprint ?? null,
        created_at: ctx.now,
        updated_at: ctx.now,
        checked_at: 0,
        origin: 'sigil',
      };
      await this.recordSendTransactionStatus(repos, record, null, TX_STATUS.INITIALIZED);
      return record;
    }));
    if (!inTransaction) await this.broadcast(row);
    return id;
  }

  /**
   * Where an activity's writes go: an approval executes the activity inside the deciding vote's
   * transaction (its repositories are not this process's own), and a second transaction there would
   * wait for that one (SQLite has one writer); otherwise a transaction of their own.
   */
  private writer(ctx: OperationContext): { inTransaction: boolean; run<T>(fn: (repos: Repositories) => Promise<T>): Promise<T> } {
    const inTransaction = ctx.repos.sendTransactions !== this.deps.repos.sendTransactions;
    return { inTransaction, run: (fn) => (inTransaction ? fn(ctx.repos) : this.transaction(fn)) };
  }

  /**
   * Hands a recorded transaction to the node: BROADCASTING when it takes it (or already has it),
   * FAILED when it refuses it (the nonce is given back if no later one was handed out); left
   * INITIALIZED when the node cannot be reached, for the tracker to try again.
   */
  private async broadcast(row: SendTransactionRow): Promise<void> {
    const rpc = this.rpcs.get(row.caip2);
    if (!rpc) return;
    try {
      await rpc.sendRawTransaction(row.signed_transaction);
    } catch (err) {
      if (!(err instanceof EvmRpcError) || err.code === undefined) {
        this.deps.log?.warn({ sendTransactionStatusId: row.id, err: (err as Error).message }, 'broadcast: node unreachable, will retry');
        return;
      }
      // Two processes' trackers may hand over the same recorded transaction at once: the node mines
      // the first (at once on an automining node) and refuses the second ("nonce too low"). A
      // refusal of a transaction the node already holds or has mined is not a refusal.
      if (!/already known|already imported|known transaction/i.test(err.message) && !(await this.nodeHolds(rpc, row))) {
        await this.transaction(async (repos) => {
          if (await this.recordSendTransactionStatus(repos, row, TX_STATUS.INITIALIZED, TX_STATUS.FAILED, { error: { message: `the node refused the transaction: ${err.message}` } })) {
            await this.giveBackNonce(repos, row);
          }
        });
        return;
      }
    }
    await this.changeStatus(row, TX_STATUS.INITIALIZED, TX_STATUS.BROADCASTING);
  }

  /** Whether the node has this very transaction, in its pool or mined (false when it cannot say). */
  private async nodeHolds(rpc: EvmRpc, row: SendTransactionRow): Promise<boolean> {
    try {
      return Boolean((await rpc.transaction(row.tx_hash)) ?? (await rpc.receipt(row.tx_hash)));
    } catch {
      return false;
    }
  }

  /** A nonce whose transaction never reached the chain is handed out again when it was the last one handed out. */
  private async giveBackNonce(repos: Repositories, row: SendTransactionRow): Promise<void> {
    if (row.nonce === null) return;
    const stored = await repos.sendTransactions.lockNonce(row.caip2, row.from_address);
    if (stored === row.nonce + 1) await repos.sendTransactions.setNextNonce(row.caip2, row.from_address, row.nonce);
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
    if (this.writer(ctx).inTransaction) return this.recordRawForTracker(ctx, caip2, signed);
    let hash: string;
    try {
      hash = await rpc.sendRawTransaction(signed);
    } catch (err) {
      if (err instanceof EvmRpcError && err.code !== undefined) throw invalid(`the node refused the transaction: ${err.message}`);
      throw unavailable(err);
    }
    const known = await rpc.transaction(hash).catch(() => undefined);
    const id = this.deps.newId();
    const row: SendTransactionRow = {
      id,
      organization_id: ctx.organization.id,
      caip2,
      from_address: known?.from ?? '',
      nonce: known ? Number(known.nonce) : null,
      tx_hash: hash.toLowerCase(),
      signed_transaction: signed.toLowerCase(),
      status: TX_STATUS.BROADCASTING,
      error: null,
      activity_fingerprint: ctx.fingerprint ?? null,
      created_at: ctx.now,
      updated_at: ctx.now,
      checked_at: 0,
      origin: 'raw',
    };
    await once(() => this.writer(ctx).run((repos) => this.recordSendTransactionStatus(repos, row, null, TX_STATUS.BROADCASTING)));
    return { id, transactionHash: hash };
  }

  /** An approved raw send, recorded in the approval's transaction for the tracker to broadcast. */
  private async recordRawForTracker(ctx: ActivityContext, caip2: string, signed: string): Promise<{ id: string; transactionHash: string }> {
    let hash: string;
    try {
      hash = ethereumTransactionHash(signed);
    } catch (err) {
      throw invalid(`signedTransaction is not a signed Ethereum transaction: ${(err as Error).message}`);
    }
    const id = this.deps.newId();
    const row: SendTransactionRow = {
      id,
      organization_id: ctx.organization.id,
      caip2,
      from_address: '',
      nonce: null,
      tx_hash: hash.toLowerCase(),
      signed_transaction: signed.toLowerCase(),
      status: TX_STATUS.INITIALIZED,
      error: null,
      activity_fingerprint: ctx.fingerprint ?? null,
      created_at: ctx.now,
      updated_at: ctx.now,
      checked_at: 0,
      origin: 'raw',
    };
    await once(() => this.recordSendTransactionStatus(ctx.repos, row, null, TX_STATUS.INITIALIZED));
    return { id, transactionHash: row.tx_hash };
  }

  /** get_send_transaction_status (v1GetSendTransactionStatusResponse). */
  async status(repos: Repositories, organizationId: string, id: string) {
    const row = await repos.sendTransactions.get(organizationId, id);
    if (!row) throw new SigilError('NOT_FOUND', `send transaction status not found: ${id.slice(0, 80)}`);
    const error = row.error ? (JSON.parse(row.error) as TxError) : undefined;
    return {
      txStatus: row.status,
      ...chainStatus(row),
      ...(error ? { txError: error.message, error } : {}),
    };
  }

  /** Starts the tracker: every poll interval, each unfinished transaction is checked with its node. */
  start(): void {
    if (this.timer || this.rpcs.size === 0) return;
    this.timer = setInterval(() => {
      if (this.ticking) return;
      this.ticking = this.track()
        .catch((err) => this.deps.log?.warn({ err: (err as Error).message }, 'send transaction tracker'))
        .finally(() => (this.ticking = undefined));
    }, this.deps.pollIntervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
  }

  /**
   * One pass over the unfinished transactions: the organizations with sends in flight in turn,
   * going on after the one the last pass stopped at, at most TRACK_PER_ORGANIZATION sends of each,
   * least recently checked first (those looked at go to the back of their organization's line).
   */
  async track(now = Date.now()): Promise<void> {
    const reads = (this.deps.background ?? this.deps.repos).sendTransactions;
    let organizations = await reads.organizationsWithStatus(IN_FLIGHT, this.trackCursor, TRACK_ORGANIZATIONS_PER_PASS);
    if (organizations.length < TRACK_ORGANIZATIONS_PER_PASS && this.trackCursor !== undefined) {
      // The end of the list: start again from the first, without visiting one twice in a pass.
      const wrapped = await reads.organizationsWithStatus(IN_FLIGHT, undefined, TRACK_ORGANIZATIONS_PER_PASS - organizations.length);
      organizations = [...organizations, ...wrapped.filter((o) => !organizations.includes(o))];
    }
    this.trackCursor = organizations.at(-1);
    const looked: string[] = [];
    for (const organizationId of organizations) {
      const rows = await reads.listForTracking(organizationId, IN_FLIGHT, TRACK_PER_ORGANIZATION);
      for (const row of rows) await this.check(row, now);
      looked.push(...rows.map((r) => r.id));
    }
    // One write per pass: those looked at go to the back of their organization's line.
    if (looked.length > 0) await this.deps.transaction((repos) => repos.sendTransactions.markChecked(looked, now));
  }

  /** One unfinished send, once; a failure is logged and left for the next pass. */
  private async check(row: SendTransactionRow, now: number): Promise<void> {
    const rpc = this.rpcs.get(row.caip2);
    if (!rpc) return;
    try {
      if (row.status === TX_STATUS.INITIALIZED) {
        // Signed and recorded, but not broadcast yet: the process stopped (or the node was down)
        // before the broadcast, or an approval's transaction recorded it (broadcast only once that
        // transaction has surely committed).
        if (row.updated_at < now - REBROADCAST_AFTER_MS) await this.broadcast(row);
      } else {
        await this.follow(rpc, row, now);
      }
    } catch (err) {
      this.deps.log?.warn({ sendTransactionStatusId: row.id, err: (err as Error).message }, 'send transaction tracker: check failed, will retry');
    }
  }

  /**
   * A BROADCASTING transaction: mined (INCLUDED or reverted), still pending, replaced, or dropped;
   * a raw send past its time to live is FAILED as expired.
   */
  private async follow(rpc: EvmRpc, row: SendTransactionRow, now: number): Promise<void> {
    const receipt = await rpc.receipt(row.tx_hash);
    if (receipt) {
      if (receipt.status === 'success') {
        await this.changeStatus(row, TX_STATUS.BROADCASTING, TX_STATUS.INCLUDED);
      } else {
        await this.changeStatus(row, TX_STATUS.BROADCASTING, TX_STATUS.FAILED, { error: await this.revertReason(rpc, row, receipt.blockNumber) });
      }
      return;
    }
    if (row.origin === 'raw' && row.created_at < now - this.deps.rawSendTtlMs) {
      // A transaction signed elsewhere that still is not mined (a nonce gap keeps it in the pool for
      // ever, or the node dropped it): stop following it. Sigil never signed it, so there is no nonce
      // of its own to give back.
      await this.changeStatus(row, TX_STATUS.BROADCASTING, TX_STATUS.FAILED, {
        error: { message: `expired: not included within ${Math.round(this.deps.rawSendTtlMs / 1000)} s of its broadcast (SIGIL_EVM_RAW_SEND_TTL_SECONDS)` },
      });
      return;
    }
    if (await rpc.transaction(row.tx_hash)) return; // in the node's pool: still waiting for a block
    if (row.nonce !== null && row.from_address !== '') {
      const mined = await rpc.transactionCount(row.from_address, 'latest');
      if (mined > BigInt(row.nonce)) {
        // The nonce was used, but not by this transaction (unless it was mined just now).
        if (await rpc.receipt(row.tx_hash)) return;
        await this.changeStatus(row, TX_STATUS.BROADCASTING, TX_STATUS.FAILED, {
          error: { message: `replaced: nonce ${row.nonce} of ${row.from_address} was used by another transaction, so this one will never be included` },
        });
        return;
      }
    }
    // Neither mined nor in the pool: the node dropped it. Hand it over again; report a refusal.
    try {
      await rpc.sendRawTransaction(row.signed_transaction);
    } catch (err) {
      if (err instanceof EvmRpcError && err.code !== undefined && !/already known|already imported|known transaction/i.test(err.message)) {
        await this.transaction(async (repos) => {
          const error = { message: `dropped: the node no longer has the transaction and refused it again: ${err.message}` };
          if ((await this.recordSendTransactionStatus(repos, row, TX_STATUS.BROADCASTING, TX_STATUS.FAILED, { error })) && row.origin !== 'raw') {
            await this.giveBackNonce(repos, row);
          }
        });
        return;
      }
      throw err;
    }
  }

  /** Replays a reverted transaction on the state before its block to read the revert reason. */
  private async revertReason(rpc: EvmRpc, row: SendTransactionRow, blockNumber: bigint): Promise<TxError> {
    const tx = await rpc.transaction(row.tx_hash);
    const to = tx?.to ?? '';
    if (!tx) return revertError(revertEntry(to, undefined, 'execution reverted'));
    try {
      await rpc.call({ from: tx.from, to: tx.to, value: tx.value, data: tx.input, gas: tx.gas }, blockNumber > 0n ? blockNumber - 1n : 0n);
    } catch (err) {
      if (err instanceof EvmRpcError && err.code !== undefined) return revertError(revertEntry(to, err.data, err.message));
    }
    // The replay succeeded (state moved within the block): the receipt still says it reverted.
    return revertError(revertEntry(to, undefined, 'execution reverted'));
  }
}

/** How a send's status names its transaction: `eth.txHash`, or a Solana send's `solana.signature`. */
function chainStatus(row: SendTransactionRow): { eth: { txHash: string } } | { solana: { signature: string } } {
  return row.caip2.startsWith('solana:') ? { solana: { signature: row.tx_hash } } : { eth: { txHash: row.tx_hash } };
}

/**
 * Runs the write that records a send; an identical submission (same fingerprint) that recorded its
 * send first makes this one a conflict, so the transaction is broadcast once.
 */
async function once<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw new SigilError('CONFLICT', 'an identical submission (same fingerprint) already sent this transaction; read its activity');
    throw err;
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
