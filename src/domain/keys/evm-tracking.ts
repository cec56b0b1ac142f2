// What tracking an EVM send means (docs/broadcasting.md "Statuses" and "Tracking"; swagger
// v1RevertChainEntry for the revert reasons): the EVM part the send tracker of
// src/domain/keys/send-tracking.ts is given.
//
// Handing a recorded send to the node: BROADCASTING when it takes it (or already has it), FAILED when
// it refuses it (its nonce given back if no later one was handed out), left INITIALIZED when the node
// cannot be reached. Following it: INCLUDED once mined and succeeded; FAILED when it reverted (the
// revert reason read by replaying the call on the state before its block), when its nonce was used
// by another transaction (replaced), when the node dropped it and refuses it again, or, for a raw
// send (eth_send_raw_transaction), when it is not mined within SIGIL_EVM_RAW_SEND_TTL_SECONDS.
import { EvmRpcError, type EvmRpc } from '../../delivery/evm-rpc.js';
import type { Repositories, SendTransactionRow } from '../../store/index.js';
import { TX_STATUS, handOver, type ChainTracking, type ChainTrackingDeps, type RevertChainEntry, type TxError } from './send-tracking.js';

const ERROR_STRING = '0x08c379a0';
const PANIC = '0x4e487b71';
/** What nodes answer when they already have the transaction: taken, not refused. */
const ALREADY_KNOWN = /already known|already imported|known transaction/i;

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

export function revertError(entry: RevertChainEntry): TxError {
  return { message: entry.displayMessage, revertChain: [entry], eth: { revertChain: [entry] } };
}

export interface EvmTrackingDeps extends ChainTrackingDeps<EvmRpc> {
  /** How long a raw send may stay unmined before it is FAILED as expired (SIGIL_EVM_RAW_SEND_TTL_SECONDS). */
  rawSendTtlMs: number;
}

export class EvmTracking implements ChainTracking {
  readonly name = 'EVM send';

  constructor(private readonly deps: EvmTrackingDeps) {}

  get chains(): string[] {
    return [...this.deps.rpcs.keys()];
  }

  /**
   * Hands a recorded transaction to the node: BROADCASTING when it takes it (or already has it),
   * FAILED when it refuses it (the nonce is given back if no later one was handed out); left
   * INITIALIZED when the node cannot be reached, for the tracker to try again.
   */
  async broadcast(row: SendTransactionRow): Promise<void> {
    const rpc = this.deps.rpcs.get(row.caip2);
    if (!rpc) return;
    const answer = await handOver(() => rpc.sendRawTransaction(row.signed_transaction), row, this.deps.log);
    if (answer === 'unreachable') return;
    // Two processes' trackers may hand over the same recorded transaction at once: the node mines
    // the first (at once on an automining node) and refuses the second ("nonce too low"). A
    // refusal of a transaction the node already holds or has mined is not a refusal.
    if (answer !== 'taken' && !ALREADY_KNOWN.test(answer.message) && !(await this.nodeHolds(rpc, row))) {
      await this.deps.recorder.transaction(async (repos) => {
        if (await this.deps.recorder.record(repos, row, TX_STATUS.INITIALIZED, TX_STATUS.FAILED, { error: { message: `the node refused the transaction: ${answer.message}` } })) {
          await this.giveBackNonce(repos, row);
        }
      });
      return;
    }
    await this.deps.recorder.change(row, TX_STATUS.INITIALIZED, TX_STATUS.BROADCASTING);
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
   * A BROADCASTING transaction: mined (INCLUDED or reverted), still pending, replaced, or dropped;
   * a raw send past its time to live is FAILED as expired.
   */
  async follow(row: SendTransactionRow, now: number): Promise<void> {
    const rpc = this.deps.rpcs.get(row.caip2);
    if (!rpc) return;
    const { recorder } = this.deps;
    const receipt = await rpc.receipt(row.tx_hash);
    if (receipt) {
      if (receipt.status === 'success') {
        await recorder.change(row, TX_STATUS.BROADCASTING, TX_STATUS.INCLUDED);
      } else {
        await recorder.change(row, TX_STATUS.BROADCASTING, TX_STATUS.FAILED, { error: await this.revertReason(rpc, row, receipt.blockNumber) });
      }
      return;
    }
    if (row.origin === 'raw' && row.created_at < now - this.deps.rawSendTtlMs) {
      // A transaction signed elsewhere that still is not mined (a nonce gap keeps it in the pool for
      // ever, or the node dropped it): stop following it. Sigil never signed it, so there is no nonce
      // of its own to give back.
      await recorder.change(row, TX_STATUS.BROADCASTING, TX_STATUS.FAILED, {
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
        await recorder.change(row, TX_STATUS.BROADCASTING, TX_STATUS.FAILED, {
          error: { message: `replaced: nonce ${row.nonce} of ${row.from_address} was used by another transaction, so this one will never be included` },
        });
        return;
      }
    }
    // Neither mined nor in the pool: the node dropped it. Hand it over again; report a refusal.
    try {
      await rpc.sendRawTransaction(row.signed_transaction);
    } catch (err) {
      if (err instanceof EvmRpcError && err.code !== undefined && !ALREADY_KNOWN.test(err.message)) {
        await recorder.transaction(async (repos) => {
          const error = { message: `dropped: the node no longer has the transaction and refused it again: ${err.message}` };
          if ((await recorder.record(repos, row, TX_STATUS.BROADCASTING, TX_STATUS.FAILED, { error })) && row.origin !== 'raw') {
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
