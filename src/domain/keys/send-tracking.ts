// Recording and tracking of broadcast transactions, whatever their chain (swagger
// v1GetSendTransactionStatusResponse, v1TxError; docs/broadcasting.md "Statuses", "Tracking" and
// "Solana" for Sigil's decisions). The EVM sends (src/domain/keys/broadcasting.ts) and the Solana
// sends (src/domain/keys/solana-sends.ts) build and sign their transactions their own way; what
// happens to a send once it is signed is the same for both and lives here:
//
// - SendRecorder: the one place a send's status changes (`record`), in the transaction that makes
//   the change, with its SEND_TRANSACTION_STATUS_UPDATES webhook event enqueued in that same
//   transaction; a new send is recorded in the approval's transaction when an approval executes it
//   (`recordNew`), and an identical submission racing it is a conflict, so a transaction is sent once.
// - SendTracker: the loop that follows sends in flight, organizations in turn (at most
//   TRACK_PER_ORGANIZATION sends of each per pass, least recently checked first, TRACK_ORGANIZATIONS_PER_PASS
//   organizations per pass, going on where the last pass stopped), so no organization's sends can
//   hold back another's. One tracker per chain family, each reading only the sends of the chains it
//   has a node for: one family's sends never take another's places in a pass, and a tracker never
//   marks as looked at a send it cannot ask about.
// - ChainTracking: what differs between chains, given to a tracker: how a recorded send is handed to
//   the node, and how the node is asked what became of it (and so what INCLUDED and FAILED mean).
//
// No node is called while a database transaction is open: a chain module asks its node, then
// records what it heard through `SendRecorder.change`, each in a transaction of its own.
import { SigilError } from '../../errors/errors.js';
import { isUniqueViolation, type Repositories, type SendTransactionRow } from '../../store/index.js';
import type { ActivityContext, OperationContext } from '../context.js';
import { enqueueWebhookEvent } from '../governance/webhooks.js';

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
  /** v1SolanaFailureDetails (sol_send_transaction). */
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

/**
 * How long a signed, recorded send may stay unsent before the tracker sends it: the process stopped
 * (or the node was down) before the send, or an approval's transaction recorded it and the send
 * waits until that transaction has surely committed.
 */
const SEND_AFTER_MS = 5_000;
/** Sends of one organization a tracker looks at per pass: no organization can take a whole pass. */
const TRACK_PER_ORGANIZATION = 20;
/** Organizations a tracker visits per pass; the next pass goes on from where this one stopped. */
const TRACK_ORGANIZATIONS_PER_PASS = 50;

/** How a send's status names its transaction: `eth.txHash`, or a Solana send's `solana.signature`. */
function chainStatus(row: SendTransactionRow): { eth: { txHash: string } } | { solana: { signature: string } } {
  return row.caip2.startsWith('solana:') ? { solana: { signature: row.tx_hash } } : { eth: { txHash: row.tx_hash } };
}

/**
 * A new send's row: what identifies the transaction on its chain, and the rest from the activity
 * that sends it (its organization, time and fingerprint, so an activity sends at most once).
 */
export function sendRow(
  ctx: ActivityContext,
  id: string,
  chain: Pick<SendTransactionRow, 'caip2' | 'from_address' | 'nonce' | 'tx_hash' | 'signed_transaction' | 'origin'>,
): SendTransactionRow {
  return {
    id,
    organization_id: ctx.organization.id,
    ...chain,
    status: TX_STATUS.INITIALIZED,
    error: null,
    activity_fingerprint: ctx.fingerprint ?? null,
    created_at: ctx.now,
    updated_at: ctx.now,
    checked_at: 0,
  };
}

export interface SendRecorderDeps {
  /** This process's own repositories (an approval's transaction hands the activity others). */
  repos: Repositories;
  /** Runs `fn` in one database transaction (Store.transaction). */
  transaction<T>(fn: (repos: Repositories) => Promise<T>): Promise<T>;
  /** Tells this process's webhook dispatcher that events were committed (it polls anyway). */
  wakeWebhooks?: () => void;
}

export class SendRecorder {
  /** Events were enqueued by a transaction of this process: wake the dispatcher once it committed. */
  private pendingWake = false;

  constructor(private readonly deps: SendRecorderDeps) {}

  /**
   * The one place a send's status changes: inserts it (from null) or moves it from `from` to `to`
   * when it still is in `from`, and puts the SEND_TRANSACTION_STATUS_UPDATES event in the webhook
   * outbox in the same transaction, so the change and its event commit together. False when another
   * process recorded the change first (it also enqueued the event).
   */
  async record(
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

  /** `record` in a transaction of its own (what a tracker heard from the node). */
  change(row: SendTransactionRow, from: TxStatus, to: TxStatus, opts: { error?: TxError; nonce?: number } = {}): Promise<boolean> {
    return this.transaction((repos) => this.record(repos, row, from, to, opts));
  }

  /** A transaction of this process's own; the webhook dispatcher hears of the events it committed. */
  async transaction<T>(fn: (repos: Repositories) => Promise<T>): Promise<T> {
    const result = await this.deps.transaction(fn);
    if (this.pendingWake) {
      this.pendingWake = false;
      this.deps.wakeWebhooks?.();
    }
    return result;
  }

  /**
   * Whether an approval executes this activity inside the deciding vote's transaction (its
   * repositories are not this process's own). A send recorded there is handed to the node by the
   * tracker once that transaction has committed: a send must never precede the record it depends on.
   */
  inApproval(ctx: OperationContext): boolean {
    return ctx.repos.sendTransactions !== this.deps.repos.sendTransactions;
  }

  /**
   * Records a new send at `status`, built by `build` in the transaction that records it: the
   * approval's when there is one (a second transaction there would wait for it: SQLite has one
   * writer), else one of its own. An identical submission (same fingerprint) that recorded its send
   * first makes this one a conflict, so the transaction is sent once.
   */
  async recordNew(ctx: OperationContext, status: TxStatus, build: (repos: Repositories) => Promise<SendTransactionRow>): Promise<SendTransactionRow> {
    const write = async (repos: Repositories) => {
      const row = { ...(await build(repos)), status };
      await this.record(repos, row, null, status);
      return row;
    };
    try {
      return await (this.inApproval(ctx) ? write(ctx.repos) : this.transaction(write));
    } catch (err) {
      if (isUniqueViolation(err)) throw new SigilError('CONFLICT', 'an identical submission (same fingerprint) already sent this transaction; read its activity');
      throw err;
    }
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
}

/** What a tracker does differently for one chain family. */
export interface ChainTracking {
  /** Names the tracker in log lines. */
  readonly name: string;
  /** The CAIP-2 ids of the chains it has a node for: its tracker reads only their sends. */
  readonly chains: readonly string[];
  /** Hands a recorded (INITIALIZED) send to its node and records what the node answered. */
  broadcast(row: SendTransactionRow): Promise<void>;
  /** Asks the node what became of a BROADCASTING send and records it (INCLUDED, FAILED, or nothing yet). */
  follow(row: SendTransactionRow, now: number): Promise<void>;
}

/** What a chain module is given: its nodes' clients, one per CAIP-2 chain id it sends on, and the recorder. */
export interface ChainTrackingDeps<Rpc> {
  rpcs: ReadonlyMap<string, Rpc>;
  recorder: SendRecorder;
  log?: { warn(obj: object, msg: string): void };
}

/** A node's answer with a JSON-RPC error code (the chains' clients throw one): it refused, or already has it. */
export type NodeRefusal = Error & { code: number };

/**
 * Hands a signed transaction to its node through `submit`: 'taken', its refusal (for the chain to
 * judge: some refusals mean the node already has it), or 'unreachable' when it could not be asked
 * (logged; the send stays as it is, for the tracker's next pass).
 */
export async function handOver(
  submit: () => Promise<unknown>,
  row: SendTransactionRow,
  log: ChainTrackingDeps<unknown>['log'],
): Promise<'taken' | 'unreachable' | NodeRefusal> {
  try {
    await submit();
    return 'taken';
  } catch (err) {
    if (err instanceof Error && typeof (err as { code?: unknown }).code === 'number') return err as NodeRefusal;
    log?.warn({ sendTransactionStatusId: row.id, caip2: row.caip2, err: (err as Error).message }, 'send: node unreachable, will retry');
    return 'unreachable';
  }
}

export interface SendTrackerDeps {
  recorder: SendRecorder;
  /** What the tracker polls through (Store.background: off the request path's connections). */
  reads: Repositories;
  pollIntervalMs: number;
  log?: { warn(obj: object, msg: string): void };
}

/** What every chain family's sends are given by the composition root. */
export interface ChainSendsDeps {
  /** This process's own repositories. */
  repos: Repositories;
  /** What the tracker polls through (Store.background: off the request path's connections); `repos` if absent. */
  background?: Repositories;
  /** CAIP-2 chain id → its node's JSON-RPC URL (the chains this process sends on). */
  rpcUrls: Record<string, string>;
  /** The setting that configures a chain's RPC, named when it has none. */
  rpcSetting(caip2: string): string;
  /** Where statuses are recorded and their webhook events enqueued (shared by every chain's sends). */
  recorder: SendRecorder;
  pollIntervalMs: number;
  /** The largest JSON-RPC answer read (SIGIL_EVM_RPC_MAX_RESPONSE_BYTES). */
  rpcMaxResponseBytes?: number;
  newId(): string;
  log?: { warn(obj: object, msg: string): void };
}

/** One node client per configured chain, made by `client`. */
export function nodeClients<Rpc>(deps: ChainSendsDeps, client: (url: string, maxResponseBytes?: number) => Rpc): Map<string, Rpc> {
  return new Map(Object.entries(deps.rpcUrls).map(([caip2, url]) => [caip2, client(url, deps.rpcMaxResponseBytes)]));
}

/** The tracker of one chain family's sends, polling off the request path's connections. */
export function sendTracker(deps: ChainSendsDeps, chain: ChainTracking): SendTracker {
  return new SendTracker({ recorder: deps.recorder, reads: deps.background ?? deps.repos, pollIntervalMs: deps.pollIntervalMs, log: deps.log }, chain);
}

/** Follows one chain family's sends in flight, every poll interval, until they settle. */
export class SendTracker {
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  /** The last organization the tracker visited: the next pass goes on after it. */
  private trackCursor: string | undefined;

  constructor(
    private readonly deps: SendTrackerDeps,
    private readonly chain: ChainTracking,
  ) {}

  /** Starts polling; a tracker with no node to ask does not start. */
  start(): void {
    if (this.timer || this.chain.chains.length === 0) return;
    this.timer = setInterval(() => {
      if (this.ticking) return;
      this.ticking = this.track()
        .catch((err) => this.deps.log?.warn({ err: (err as Error).message }, `${this.chain.name} tracker`))
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
   * One pass over this chain family's sends in flight: the organizations with such sends in turn,
   * going on after the one the last pass stopped at, at most TRACK_PER_ORGANIZATION sends of each,
   * least recently checked first (those looked at go to the back of their organization's line).
   */
  async track(now = Date.now()): Promise<void> {
    const chains = [...this.chain.chains];
    if (chains.length === 0) return;
    const reads = this.deps.reads.sendTransactions;
    let organizations = await reads.organizationsWithStatus(IN_FLIGHT, chains, this.trackCursor, TRACK_ORGANIZATIONS_PER_PASS);
    if (organizations.length < TRACK_ORGANIZATIONS_PER_PASS && this.trackCursor !== undefined) {
      // The end of the list: start again from the first, without visiting one twice in a pass.
      const wrapped = await reads.organizationsWithStatus(IN_FLIGHT, chains, undefined, TRACK_ORGANIZATIONS_PER_PASS - organizations.length);
      organizations = [...organizations, ...wrapped.filter((o) => !organizations.includes(o))];
    }
    this.trackCursor = organizations.at(-1);
    const looked: string[] = [];
    for (const organizationId of organizations) {
      const rows = await reads.listForTracking(organizationId, IN_FLIGHT, chains, TRACK_PER_ORGANIZATION);
      for (const row of rows) await this.check(row, now);
      looked.push(...rows.map((r) => r.id));
    }
    // One write per pass: those looked at go to the back of their organization's line.
    if (looked.length > 0) await this.deps.recorder.transaction((repos) => repos.sendTransactions.markChecked(looked, now));
  }

  /** One send in flight, once; a failure is logged and left for the next pass. */
  private async check(row: SendTransactionRow, now: number): Promise<void> {
    try {
      if (row.status === TX_STATUS.INITIALIZED) {
        if (row.updated_at < now - SEND_AFTER_MS) await this.chain.broadcast(row);
      } else {
        await this.chain.follow(row, now);
      }
    } catch (err) {
      this.deps.log?.warn({ sendTransactionStatusId: row.id, err: (err as Error).message }, `${this.chain.name} tracker: check failed, will retry`);
    }
  }
}
