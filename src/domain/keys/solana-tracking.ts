// What tracking a Solana send means (docs/broadcasting.md "Solana"; swagger v1SolanaFailureDetails
// for the errors): the Solana part the send tracker of src/domain/keys/send-tracking.ts is given.
//
// Handing a recorded send to the node (sendTransaction with preflight): BROADCASTING when it takes it
// (or already processed it), FAILED when preflight refuses it, with the program's logs; left as it is
// when the node cannot be reached. A refusal for an unknown blockhash is recorded only once the node
// says the transaction is not on chain: it may have landed before its blockhash expired. Following it
// (getSignatureStatuses): INCLUDED once confirmed or finalized without error; FAILED when it failed on
// chain (its logs from getTransaction); FAILED as expired when the node says its blockhash is no
// longer valid (isBlockhashValid) and it has not landed, since a Solana transaction lives only as
// long as its blockhash; otherwise sent again, as Solana nodes drop what they cannot place.
import { base58 } from '@scure/base';
import { parseSolanaTransaction } from '../../chains/transactions.js';
import type { SolanaRpc, SolanaRpcError } from '../../delivery/solana-rpc.js';
import type { SendTransactionRow } from '../../store/index.js';
import { TX_STATUS, handOver, type ChainTracking, type ChainTrackingDeps, type TxError, type TxStatus } from './send-tracking.js';

/** `rpcs` is keyed by the clusters' canonical CAIP-2 ids, as their sends are recorded. */
export class SolanaTracking implements ChainTracking {
  readonly name = 'Solana send';

  constructor(private readonly deps: ChainTrackingDeps<SolanaRpc>) {}

  get chains(): string[] {
    return [...this.deps.rpcs.keys()];
  }

  /**
   * Hands a recorded transaction to the node: BROADCASTING when it takes it, FAILED when its
   * preflight refuses it (with the program's logs); left as it is when the node cannot be reached.
   * `from` BROADCASTING sends it again, recording only a refusal.
   */
  async broadcast(row: SendTransactionRow, from: TxStatus = TX_STATUS.INITIALIZED): Promise<void> {
    const rpc = this.deps.rpcs.get(row.caip2);
    if (!rpc) return;
    const answer = await handOver(() => rpc.sendTransaction(row.signed_transaction), row, this.deps.log);
    if (answer === 'unreachable') return;
    if (answer !== 'taken') {
      const said = answer.message + JSON.stringify((answer as SolanaRpcError).data?.err ?? '');
      if (/BlockhashNotFound|blockhash not found/i.test(said)) {
        // A node refuses a blockhash it no longer knows even for a transaction that landed before the
        // blockhash expired: one sent before (follow's re-send, or a process that stopped before
        // recording BROADCASTING) may be on chain, so the node is asked before anything is recorded.
        if (await this.landed(rpc, row, from)) return;
        // Not on chain. A re-send of one the node took before has expired (what follow() records);
        // a first hand-over is the node's refusal.
        const error = from === TX_STATUS.BROADCASTING ? expired(blockhashOf(row)) : refusal(answer as SolanaRpcError);
        await this.deps.recorder.change(row, from, TX_STATUS.FAILED, { error });
        return;
      }
      if (!/already been processed|AlreadyProcessed/i.test(said)) {
        await this.deps.recorder.change(row, from, TX_STATUS.FAILED, { error: refusal(answer as SolanaRpcError) });
        return;
      }
    }
    if (from === TX_STATUS.INITIALIZED) await this.deps.recorder.change(row, from, TX_STATUS.BROADCASTING);
  }

  /**
   * A BROADCASTING send: landed (INCLUDED once confirmed, FAILED with the program's logs when it
   * failed), still pending (sent again), or expired.
   */
  async follow(row: SendTransactionRow): Promise<void> {
    const rpc = this.deps.rpcs.get(row.caip2);
    if (!rpc) return;
    if (await this.landed(rpc, row)) return;
    const blockhash = blockhashOf(row);
    if (!(await rpc.isBlockhashValid(blockhash))) {
      // It may have landed between the two questions; otherwise it never will.
      if (await this.landed(rpc, row)) return;
      await this.deps.recorder.change(row, TX_STATUS.BROADCASTING, TX_STATUS.FAILED, { error: expired(blockhash) });
      return;
    }
    await this.broadcast(row, TX_STATUS.BROADCASTING);
  }

  /**
   * Whether the node has the transaction in a block, recording its outcome (from `from`) once it is
   * confirmed; one found unconfirmed before it was recorded as BROADCASTING is recorded so now.
   */
  private async landed(rpc: SolanaRpc, row: SendTransactionRow, from: TxStatus = TX_STATUS.BROADCASTING): Promise<boolean> {
    const status = await rpc.signatureStatus(row.tx_hash);
    if (!status) return false;
    if (status.err !== null && status.err !== undefined) {
      const meta = await rpc.transactionMeta(row.tx_hash).catch(() => null);
      const logs = meta?.logMessages ?? [];
      await this.deps.recorder.change(row, from, TX_STATUS.FAILED, {
        error: {
          message: `the transaction failed on chain: ${JSON.stringify(status.err)}${logs.length ? `; logs: ${logs.slice(-5).join(' | ')}` : ''}`,
          solana: { source: 'execution', transactionErrorJson: JSON.stringify(status.err), logs },
        },
      });
      return true;
    }
    if (status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized') {
      await this.deps.recorder.change(row, from, TX_STATUS.INCLUDED);
    } else if (from === TX_STATUS.INITIALIZED) {
      await this.deps.recorder.change(row, from, TX_STATUS.BROADCASTING);
    }
    return true;
  }
}

/** The recent blockhash the signed transaction carries, base58 as nodes name it. */
function blockhashOf(row: SendTransactionRow): string {
  return base58.encode(parseSolanaTransaction(Buffer.from(row.signed_transaction, 'base64').toString('hex')).recentBlockhash);
}

/** A send that was handed to the node and outlived its blockhash without landing. */
function expired(blockhash: string): TxError {
  return {
    message: `expired: the transaction's blockhash ${blockhash} is no longer valid and the transaction did not land`,
    solana: { source: 'expiry', transactionErrorJson: JSON.stringify('BlockhashNotFound') },
  };
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
