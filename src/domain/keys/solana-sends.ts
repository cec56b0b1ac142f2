// Broadcasting Solana transactions (swagger v1SolSendTransactionIntentV2 and the
// older v1SolSendTransactionIntent, v1GetSendTransactionStatusResponse's `solana`,
// v1SolanaFailureDetails; docs/broadcasting.md "Solana" for Sigil's decisions).
//
// sol_send_transaction takes a serialized unsigned transaction and the Sigil-held signers to sign it
// with (`signWiths`, fee payer included). Sigil puts a recent blockhash from the cluster's node in
// it (unless the caller gave `recentBlockhash`), so the transaction judged and signed is the one
// sent; it is judged exactly as sign_transaction of that transaction would be (`solana.tx`, once
// per signer: every key that signs must be allowed to), signed by every listed signer, recorded
// and sent with preflight, then tracked with the statuses, recorder and tracker every chain's sends
// share (src/domain/keys/send-tracking.ts): INITIALIZED (signed and recorded), BROADCASTING (the
// node took it), INCLUDED (confirmed or finalized without error), FAILED (refused at preflight or
// failed on chain, with the program's logs, or its blockhash expired before it landed; what the
// node's answers mean is src/domain/keys/solana-tracking.ts). Every change emits the same
// SEND_TRANSACTION_STATUS_UPDATES webhook events as the EVM sends', naming the transaction by
// `solana.signature`.
//
// A Solana transaction has no nonce: concurrent sends from one fee payer need no allocation, and
// its lifetime is its blockhash, so a send that has not landed once the node says its blockhash is
// no longer valid never will. No node is called while a database transaction is open.
import { base58 } from '@scure/base';
import { parseSolanaTransaction, serializeSolanaTransaction, withRecentBlockhash, type SolanaTransaction } from '../../chains/transactions.js';
import { SolanaRpc } from '../../delivery/solana-rpc.js';
import { SigilError, invalid } from '../../errors/errors.js';
import type { ActivityContext, OperationContext } from '../context.js';
import { notSupported } from './broadcasting.js';
import { TX_STATUS, nodeClients, sendRow, sendTracker, type ChainSendsDeps, type SendTracker } from './send-tracking.js';
import { SolanaTracking } from './solana-tracking.js';
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

/** `rpcUrls` is keyed by the clusters' canonical CAIP-2 ids (Config.solanaRpcUrls). */
export interface SolanaSendsDeps extends ChainSendsDeps {
  /** The canonical CAIP-2 id of a cluster named any way the API accepts (config solanaCluster). */
  cluster(caip2: string): { caip2: string } | undefined;
}

declare module '../context.js' {
  interface Services {
    /** Broadcasting and tracking of Solana transactions (sol_send_transaction); absent in processes that send none. */
    solanaSends?: SolanaSends;
  }
}

export class SolanaSends {
  private readonly rpcs: Map<string, SolanaRpc>;
  private readonly tracking: SolanaTracking;
  /** Follows this family's sends in flight (started and stopped with the process's servers). */
  readonly tracker: SendTracker;

  constructor(private readonly deps: SolanaSendsDeps) {
    this.rpcs = nodeClients(deps, (url, max) => new SolanaRpc(url, max));
    this.tracking = new SolanaTracking({ rpcs: this.rpcs, recorder: deps.recorder, log: deps.log });
    this.tracker = sendTracker(deps, this.tracking);
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
    // Inside an approval's transaction the send is recorded there and sent by the tracker once that
    // transaction has committed: a send must never precede the record it depends on.
    const row = await this.deps.recorder.recordNew(ctx, TX_STATUS.INITIALIZED, async () =>
      sendRow(ctx, this.deps.newId(), {
        caip2: prepared.caip2,
        from_address: base58.encode(signed.staticAccountKeys[0]),
        nonce: null,
        // A Solana transaction is named by its first signature (the fee payer's).
        tx_hash: base58.encode(signed.signatures[0]),
        signed_transaction: Buffer.from(signedHex, 'hex').toString('base64'),
        origin: 'sigil',
      }),
    );
    if (!this.deps.recorder.inApproval(ctx)) await this.tracking.broadcast(row);
    return row.id;
  }
}

function unavailable(err: unknown): SigilError {
  return new SigilError('REQUEST_INVALID', `the cluster's RPC endpoint failed: ${(err as Error).message}`, { grpc: 14, http: 503 });
}
