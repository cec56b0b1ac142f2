// Broadcasting Solana transactions (swagger v1SolSendTransactionIntentV2 and the
// older v1SolSendTransactionIntent, v1GetSendTransactionStatusResponse's `solana`,
// v1SolanaFailureDetails; docs/broadcasting.md "Solana" for Sigil's decisions).
//
// sol_send_transaction takes a serialized unsigned transaction and the Sigil-held signers to sign it
// with (`signWiths`, fee payer included). Sigil puts a recent blockhash from the cluster's node in
// it (unless the caller gave `recentBlockhash`), so the transaction judged and signed is the one
// sent; it is judged exactly as sign_transaction of that transaction would be (`solana.tx`, once
// per signer: every key that signs must be allowed to), signed by every listed signer, recorded
// and sent with preflight, then tracked through the EVM sends' table and statuses
// (src/domain/keys/broadcasting.ts): INITIALIZED (signed and recorded), BROADCASTING (the node took
// it), INCLUDED (confirmed or finalized without error), FAILED (refused at preflight or failed on
// chain, with the program's logs, or its blockhash expired before it landed). Every change goes
// through Broadcasting.recordSendTransactionStatus, so it emits the same
// SEND_TRANSACTION_STATUS_UPDATES webhook events, naming the transaction by `solana.signature`.
//
// A Solana transaction has no nonce: concurrent sends from one fee payer need no allocation, and
// its lifetime is its blockhash, so a send that has not landed once the node says its blockhash is
// no longer valid never will. No node is called while a database transaction is open.
import { base58 } from '@scure/base';
import { parseSolanaTransaction, serializeSolanaTransaction, withRecentBlockhash, type SolanaTransaction } from '../../chains/transactions.js';
import { SolanaRpc, SolanaRpcError } from '../../delivery/solana-rpc.js';
import { SigilError, invalid } from '../../errors/errors.js';
import { isUniqueViolation, type Repositories, type SendTransactionRow } from '../../store/index.js';
import type { ActivityContext, OperationContext } from '../context.js';
import { TX_STATUS, notSupported, type Broadcasting, type TxError, type TxStatus } from './broadcasting.js';
import { parseForSigning, resolveSigningTarget, signParsedTransaction, type SigningTarget } from './signing.js';

/** The parameters of sol_send_transaction V2 (v1SolSendTransactionIntentV2). */
export interface SolSendTransactionParams {
  unsignedTransaction: string;
  signWiths: string[];
  sponsor?: boolean;
  caip2: string;
  recentBlockhash?: string;
}

/** A transaction with its blockhash filled, judged, ready to be signed by its signers. */
export interface PreparedSolanaSend {
  caip2: string;
  signers: SigningTarget[];
  /** The transaction as judged (one parse per signer: what each signer's policies see), unsigned. */
  parsed: ReturnType<typeof parseForSigning>[];
  blockhash: string;
}

/** Most signers the swagger allows for a legacy or v0 transaction. */
const MAX_SIGNERS = 16;
const TYPE = 'TRANSACTION_TYPE_SOLANA';
/** How long a signed, recorded send may stay unsent before the tracker sends it (a crash, or an approval's transaction). */
const RESEND_AFTER_MS = 5_000;
/** Sends of one organization the tracker looks at per pass, and organizations per pass (as the EVM tracker). */
const TRACK_PER_ORGANIZATION = 20;
const TRACK_ORGANIZATIONS_PER_PASS = 50;
const IN_FLIGHT: TxStatus[] = [TX_STATUS.INITIALIZED, TX_STATUS.BROADCASTING];

export interface SolanaSendsDeps {
  repos: Repositories;
  background?: Repositories;
  transaction<T>(fn: (repos: Repositories) => Promise<T>): Promise<T>;
  /** Canonical CAIP-2 cluster id → JSON-RPC URL (Config.solanaRpcUrls). */
  rpcUrls: Record<string, string>;
  /** The canonical CAIP-2 id of a cluster named any way the API accepts (config solanaCluster). */
  cluster(caip2: string): { caip2: string } | undefined;
  /** The setting that configures a cluster's RPC, named when it has none. */
  rpcSetting(caip2: string): string;
  /** Where statuses are recorded and their webhook events enqueued (shared with the EVM sends). */
  statuses: Broadcasting;
  pollIntervalMs: number;
  rpcMaxResponseBytes?: number;
  newId(): string;
  wakeWebhooks?: () => void;
  log?: { warn(obj: object, msg: string): void };
}

declare module '../context.js' {
  interface Services {
    /** Broadcasting and tracking of Solana transactions (sol_send_transaction); absent in processes that send none. */
    solanaSends?: SolanaSends;
  }
}

export class SolanaSends {
  private readonly rpcs = new Map<string, SolanaRpc>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private trackCursor: string | undefined;

  constructor(private readonly deps: SolanaSendsDeps) {
    for (const [caip2, url] of Object.entries(deps.rpcUrls)) this.rpcs.set(caip2, new SolanaRpc(url, deps.rpcMaxResponseBytes));
  }

  /** The cluster's canonical id and RPC client; a cluster without one is refused, naming the setting. */
  rpc(caip2: string): { caip2: string; rpc: SolanaRpc } {
    const cluster = this.deps.cluster(caip2);
    if (!cluster) throw invalid(`caip2 must be a Solana cluster (solana:mainnet, solana:devnet or their CAIP-2 ids), got "${String(caip2).slice(0, 80)}"`);
    const rpc = this.rpcs.get(cluster.caip2);
    if (!rpc) {
      throw new SigilError('REQUEST_INVALID', `broadcasting on ${caip2} is not configured on this deployment: set ${this.deps.rpcSetting(caip2)} to the cluster's JSON-RPC URL`, { grpc: 9 });
    }
    return { caip2: cluster.caip2, rpc };
  }

  /**
   * Resolves the signers, fills the blockhash and parses the transaction once per signer, before
   * any policy judges it. Every required signature must come from a listed signer (a blockhash
   * Sigil fills voids any signature already there), so nothing is sent that could never land.
   */
  async prepare(ctx: OperationContext, p: SolSendTransactionParams): Promise<PreparedSolanaSend> {
    if (p.sponsor === true) throw notSupported('sponsor: true (Gas Station sponsorship)');
    const { caip2, rpc } = this.rpc(p.caip2);
    if (!Array.isArray(p.signWiths) || p.signWiths.length === 0) throw invalid('signWiths must list at least one signer');
    if (p.signWiths.length > MAX_SIGNERS) throw invalid(`signWiths lists ${p.signWiths.length} signers; at most ${MAX_SIGNERS}`);
    if (new Set(p.signWiths).size !== p.signWiths.length) throw invalid('signWiths lists a signer twice');
    let tx: SolanaTransaction;
    try {
      tx = parseSolanaTransaction(p.unsignedTransaction);
    } catch (err) {
      throw invalid(`unsignedTransaction is not a Solana transaction: ${(err as Error).message}`);
    }
    const required = tx.staticAccountKeys.slice(0, tx.header.numRequiredSignatures).map((k) => base58.encode(k));
    const signers: SigningTarget[] = [];
    for (const signWith of p.signWiths) {
      const target = Object.freeze(await resolveSigningTarget(ctx.repos, ctx.services.barrier, ctx.organization.id, signWith));
      if (target.curve !== 'CURVE_ED25519' || !target.address || !required.includes(target.address)) {
        throw invalid(`signWiths: ${signWith.slice(0, 80)} is not a Solana address of this organization that the transaction requires a signature from`);
      }
      signers.push(target);
    }
    let blockhash: Uint8Array;
    if (p.recentBlockhash !== undefined && p.recentBlockhash !== '') {
      try {
        blockhash = base58.decode(p.recentBlockhash);
      } catch {
        blockhash = new Uint8Array(0);
      }
      if (blockhash.length !== 32) throw invalid('recentBlockhash must be a base58 32-byte blockhash');
    } else {
      try {
        blockhash = base58.decode((await rpc.latestBlockhash()).blockhash);
      } catch (err) {
        throw unavailable(err);
      }
    }
    const filled = withRecentBlockhash(tx, blockhash);
    const signedBy = new Set(signers.map((s) => s.address));
    const missing = required.filter((a) => !signedBy.has(a));
    if (missing.length > 0) {
      throw invalid(`the transaction requires signatures from ${missing.join(', ')}, which signWiths does not list; Sigil signs with every signer it is asked to and sends only a fully signed transaction`);
    }
    const unsigned = serializeSolanaTransaction(filled);
    const parsed = signers.map((target) => Object.freeze(parseForSigning(target, TYPE, unsigned)));
    return { caip2, signers, parsed, blockhash: base58.encode(blockhash) };
  }

  /**
   * Signs with every signer, records the send (INITIALIZED) in one transaction, then sends it
   * (outside any transaction). Answers the sendTransactionStatusId.
   */
  async send(ctx: ActivityContext, prepared: PreparedSolanaSend): Promise<string> {
    let signedHex = signParsedTransaction(prepared.signers[0], prepared.parsed[0]);
    for (const target of prepared.signers.slice(1)) signedHex = signParsedTransaction(target, parseForSigning(target, TYPE, signedHex));
    const signed = parseSolanaTransaction(signedHex);
    const id = this.deps.newId();
    const row: SendTransactionRow = {
      id,
      organization_id: ctx.organization.id,
      caip2: prepared.caip2,
      from_address: base58.encode(signed.staticAccountKeys[0]),
      nonce: null,
      // A Solana transaction is named by its first signature (the fee payer's).
      tx_hash: base58.encode(signed.signatures[0]),
      signed_transaction: Buffer.from(signedHex, 'hex').toString('base64'),
      status: TX_STATUS.INITIALIZED,
      error: null,
      activity_fingerprint: ctx.fingerprint ?? null,
      created_at: ctx.now,
      updated_at: ctx.now,
      checked_at: 0,
      origin: 'sigil',
    };
    // Inside an approval's transaction the send is recorded there and sent by the tracker once that
    // transaction has committed: a send must never precede the record it depends on.
    const inTransaction = ctx.repos.sendTransactions !== this.deps.repos.sendTransactions;
    try {
      if (inTransaction) await this.deps.statuses.recordSendTransactionStatus(ctx.repos, row, null, TX_STATUS.INITIALIZED);
      else await this.transaction((repos) => this.deps.statuses.recordSendTransactionStatus(repos, row, null, TX_STATUS.INITIALIZED));
    } catch (err) {
      if (isUniqueViolation(err)) throw new SigilError('CONFLICT', 'an identical submission (same fingerprint) already sent this transaction; read its activity');
      throw err;
    }
    if (!inTransaction) await this.broadcast(row);
    return id;
  }

  private async transaction<T>(fn: (repos: Repositories) => Promise<T>): Promise<T> {
    const result = await this.deps.transaction(fn);
    this.deps.wakeWebhooks?.();
    return result;
  }

  private changeStatus(row: SendTransactionRow, from: TxStatus, to: TxStatus, error?: TxError): Promise<boolean> {
    return this.transaction((repos) => this.deps.statuses.recordSendTransactionStatus(repos, row, from, to, error ? { error } : {}));
  }

  /**
   * Hands a recorded transaction to the node: BROADCASTING when it takes it, FAILED when its
   * preflight refuses it (with the program's logs); left as it is when the node cannot be reached.
   */
  private async broadcast(row: SendTransactionRow, from: TxStatus = TX_STATUS.INITIALIZED): Promise<void> {
    const rpc = this.rpcs.get(row.caip2);
    if (!rpc) return;
    try {
      await rpc.sendTransaction(row.signed_transaction);
    } catch (err) {
      if (!(err instanceof SolanaRpcError) || err.code === undefined) {
        this.deps.log?.warn({ sendTransactionStatusId: row.id, err: (err as Error).message }, 'solana send: node unreachable, will retry');
        return;
      }
      if (/already been processed|AlreadyProcessed/i.test(err.message + JSON.stringify(err.data?.err ?? ''))) {
        if (from === TX_STATUS.INITIALIZED) await this.changeStatus(row, from, TX_STATUS.BROADCASTING);
        return;
      }
      await this.changeStatus(row, from, TX_STATUS.FAILED, refusal(err));
      return;
    }
    if (from === TX_STATUS.INITIALIZED) await this.changeStatus(row, from, TX_STATUS.BROADCASTING);
  }

  /** Starts the tracker: every poll interval, each Solana send in flight is checked with its node. */
  start(): void {
    if (this.timer || this.rpcs.size === 0) return;
    this.timer = setInterval(() => {
      if (this.ticking) return;
      this.ticking = this.track()
        .catch((err) => this.deps.log?.warn({ err: (err as Error).message }, 'solana send tracker'))
        .finally(() => (this.ticking = undefined));
    }, this.deps.pollIntervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
  }

  /** One pass, organizations in turn and least recently checked sends first, as the EVM tracker. */
  async track(now = Date.now()): Promise<void> {
    const reads = (this.deps.background ?? this.deps.repos).sendTransactions;
    let organizations = await reads.organizationsWithStatus(IN_FLIGHT, this.trackCursor, TRACK_ORGANIZATIONS_PER_PASS);
    if (organizations.length < TRACK_ORGANIZATIONS_PER_PASS && this.trackCursor !== undefined) {
      const wrapped = await reads.organizationsWithStatus(IN_FLIGHT, undefined, TRACK_ORGANIZATIONS_PER_PASS - organizations.length);
      organizations = [...organizations, ...wrapped.filter((o) => !organizations.includes(o))];
    }
    this.trackCursor = organizations.at(-1);
    const looked: string[] = [];
    for (const organizationId of organizations) {
      const rows = (await reads.listForTracking(organizationId, IN_FLIGHT, TRACK_PER_ORGANIZATION)).filter((r) => this.rpcs.has(r.caip2));
      for (const row of rows) await this.check(row, now);
      looked.push(...rows.map((r) => r.id));
    }
    if (looked.length > 0) await this.deps.transaction((repos) => repos.sendTransactions.markChecked(looked, now));
  }

  private async check(row: SendTransactionRow, now: number): Promise<void> {
    const rpc = this.rpcs.get(row.caip2)!;
    try {
      if (row.status === TX_STATUS.INITIALIZED) {
        if (row.updated_at < now - RESEND_AFTER_MS) await this.broadcast(row);
      } else {
        await this.follow(rpc, row);
      }
    } catch (err) {
      this.deps.log?.warn({ sendTransactionStatusId: row.id, err: (err as Error).message }, 'solana send tracker: check failed, will retry');
    }
  }

  /**
   * A BROADCASTING send: landed (INCLUDED once confirmed, FAILED with the program's logs when it
   * failed), still pending (sent again, as Solana nodes drop what they cannot place), or expired.
   */
  private async follow(rpc: SolanaRpc, row: SendTransactionRow): Promise<void> {
    const landed = async (): Promise<boolean> => {
      const status = await rpc.signatureStatus(row.tx_hash);
      if (!status) return false;
      if (status.err !== null && status.err !== undefined) {
        const meta = await rpc.transactionMeta(row.tx_hash).catch(() => null);
        const logs = meta?.logMessages ?? [];
        await this.changeStatus(row, TX_STATUS.BROADCASTING, TX_STATUS.FAILED, {
          message: `the transaction failed on chain: ${JSON.stringify(status.err)}${logs.length ? `; logs: ${logs.slice(-5).join(' | ')}` : ''}`,
          solana: { source: 'execution', transactionErrorJson: JSON.stringify(status.err), logs },
        });
        return true;
      }
      if (status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized') {
        await this.changeStatus(row, TX_STATUS.BROADCASTING, TX_STATUS.INCLUDED);
      }
      return true;
    };
    if (await landed()) return;
    const blockhash = base58.encode(parseSolanaTransaction(Buffer.from(row.signed_transaction, 'base64').toString('hex')).recentBlockhash);
    if (!(await rpc.isBlockhashValid(blockhash))) {
      // It may have landed between the two questions; otherwise it never will.
      if (await landed()) return;
      await this.changeStatus(row, TX_STATUS.BROADCASTING, TX_STATUS.FAILED, {
        message: `expired: the transaction's blockhash ${blockhash} is no longer valid and the transaction did not land`,
        solana: { source: 'expiry', transactionErrorJson: JSON.stringify('BlockhashNotFound') },
      });
      return;
    }
    await this.broadcast(row, TX_STATUS.BROADCASTING);
  }
}

/** A node's refusal at preflight, as the send's error: its message, the transaction error and the program logs. */
function refusal(err: SolanaRpcError): TxError {
  const logs = err.data?.logs ?? [];
  const txErr = err.data?.err;
  const expired = /BlockhashNotFound|blockhash not found/i.test(err.message + JSON.stringify(txErr ?? ''));
  return {
    message: `${expired ? 'expired: ' : ''}the node refused the transaction: ${err.message}${logs.length ? `; logs: ${logs.slice(-5).join(' | ')}` : ''}`,
    solana: {
      source: 'preflight',
      rpcCode: err.code,
      rpcMessage: err.message,
      ...(txErr !== undefined ? { transactionErrorJson: JSON.stringify(txErr) } : {}),
      logs,
    },
  };
}

function unavailable(err: unknown): SigilError {
  return new SigilError('REQUEST_INVALID', `the cluster's RPC endpoint failed: ${(err as Error).message}`, { grpc: 14, http: 503 });
}
