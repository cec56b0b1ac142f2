// A Solana JSON-RPC node for the tests (docs/broadcasting.md "Solana"): plain Solana
// JSON-RPC over HTTP on loopback, answered by litesvm, which runs the real Solana virtual machine
// with the System and SPL Token programs in this process. It serves what Sigil and the tests'
// @solana/web3.js Connection call: getLatestBlockhash, sendTransaction (with preflight, or
// skipPreflight), getSignatureStatuses, simulateTransaction, getBalance, getAccountInfo,
// getMultipleAccounts, getTransaction, getFeeForMessage, isBlockhashValid,
// getMinimumBalanceForRentExemption, getSlot, getBlockHeight, getVersion, getGenesisHash.
// simulateTransaction honours sigVerify, replaceRecentBlockhash and `accounts` (the states after the
// transaction, from litesvm's post-accounts), as the simulation before approval asks it.
//
// A litesvm instance executes a transaction the moment it gets it; a real cluster does not. So the
// node can hold what it is sent (`hold()`: it answers with the signature, as a node that accepted the
// transaction, but runs nothing) until `release()` runs it, which is how a test lets a blockhash
// expire (`expireBlockhash()`) under a transaction in flight. A transaction that fails on chain (sent
// with skipPreflight) is kept in the history with its error and logs, as a cluster keeps a failed
// transaction that paid its fee.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LiteSVM, FailedTransactionMetadata, type TransactionMetadata } from 'litesvm';
import { address, getTransactionDecoder, lamports, type Transaction } from '@solana/kit';
import { base58 as bs58 } from '@scure/base';

/** Names of litesvm's fieldless error enums (its declarations hold them as const enums). */
function enumNames(name: string): string[] {
  const require = createRequire(import.meta.url);
  const dts = readFileSync(require.resolve('litesvm').replace(/index\.js$/, 'internal.d.ts'), 'utf8');
  const body = new RegExp(`enum ${name} \\{([^}]*)\\}`).exec(dts)?.[1] ?? '';
  return body.split(',').map((l) => l.trim().split(/\s*=\s*/)[0]).filter(Boolean);
}
const TX_ERRORS = enumNames('TransactionErrorFieldless');
const IX_ERRORS = enumNames('InstructionErrorFieldless');

/** A litesvm error as the JSON-RPC `err` a cluster gives ("BlockhashNotFound", {"InstructionError":[0,{"Custom":1}]}). */
function errJson(err: unknown): unknown {
  if (typeof err === 'number') return TX_ERRORS[err] ?? err;
  const e = err as { index?: number; err?: () => unknown; accountIndex?: number };
  if (typeof e.err === 'function' && typeof e.index === 'number') {
    const inner = e.err() as number | { code?: number; msg?: string };
    const ix = typeof inner === 'number' ? (IX_ERRORS[inner] ?? inner) : inner.code !== undefined ? { Custom: inner.code } : { BorshIoError: inner.msg };
    return { InstructionError: [e.index, ix] };
  }
  if (typeof e.accountIndex === 'number') return { InsufficientFundsForRent: { account_index: e.accountIndex } };
  return String(err);
}

interface Landed {
  slot: number;
  err: unknown;
  logs: string[];
  fee: number;
  wire: Uint8Array;
}

export interface SolanaNode {
  url: string;
  svm: LiteSVM;
  /** Every method name the node was called with, in order (what Sigil asked). */
  calls: string[];
  /** Funds an address, in lamports. */
  airdrop(to: string, amount: bigint): void;
  /** Sends a signed transaction straight to the runtime (test set-up); throws on failure. */
  execute(wire: Uint8Array): void;
  /** Holds what sendTransaction receives from now on, without running it. */
  hold(): void;
  /** Runs what was held (each as the cluster would; an expired blockhash drops it) and stops holding. */
  release(): void;
  /** Moves the cluster past the latest blockhash: transactions carrying an older one never land. */
  expireBlockhash(): void;
  /**
   * Runs `fn` once, right after the next isBlockhashValid has been answered: what the cluster does
   * between a tracker's question and its next call (a held transaction landing, the blockhash expiring).
   */
  onNextValidityCheck(fn: () => void): void;
  close(): Promise<void>;
}

const FEE_PER_SIGNATURE = 5000;

export async function startSolanaNode(): Promise<SolanaNode> {
  const svm = new LiteSVM();
  const decoder = getTransactionDecoder();
  const landed = new Map<string, Landed>();
  /** Blockhashes handed out since the last expiry: what isBlockhashValid says yes to. */
  let valid = new Set<string>([svm.latestBlockhash()]);
  let holding = false;
  const held: Uint8Array[] = [];
  let afterValidityCheck: (() => void) | undefined;
  const calls: string[] = [];
  const slot = () => Number(svm.getClock().slot);

  const blockhashOf = (tx: Transaction): string => {
    const m = new Uint8Array(tx.messageBytes);
    const nKeysAt = m[0] & 0x80 ? 4 : 3;
    // Keys are fewer than 128 in the tests: a one-byte shortvec.
    return bs58.encode(m.slice(nKeysAt + 1 + 32 * m[nKeysAt], nKeysAt + 1 + 32 * m[nKeysAt] + 32));
  };
  const withBlockhash = (tx: Transaction, blockhash: string): Transaction => {
    const m = new Uint8Array(tx.messageBytes);
    const nKeysAt = m[0] & 0x80 ? 4 : 3;
    m.set(bs58.decode(blockhash), nKeysAt + 1 + 32 * m[nKeysAt]);
    return { ...tx, messageBytes: m as unknown as Transaction['messageBytes'] };
  };
  const signatureOf = (tx: Transaction): string => {
    const first = Object.values(tx.signatures)[0];
    return bs58.encode(first ?? new Uint8Array(64));
  };
  const signatureCount = (tx: Transaction) => Object.keys(tx.signatures).length;

  /** Runs a transaction; a fee-paying failure is recorded as landed with its error, an invalid one is not. */
  const run = (wire: Uint8Array): { signature: string; result: TransactionMetadata | FailedTransactionMetadata } => {
    const tx = decoder.decode(wire);
    const signature = signatureOf(tx);
    const result = svm.sendTransaction(tx);
    if (!(result instanceof FailedTransactionMetadata)) {
      landed.set(signature, { slot: slot(), err: null, logs: result.logs(), fee: FEE_PER_SIGNATURE * signatureCount(tx), wire });
    } else {
      const err = errJson(result.err());
      // An instruction error happens after the fee is charged: the transaction lands, failed.
      if (typeof err === 'object' && err !== null && 'InstructionError' in err) {
        landed.set(signature, { slot: slot(), err, logs: result.meta().logs(), fee: FEE_PER_SIGNATURE * signatureCount(tx), wire });
      }
    }
    return { signature, result };
  };

  const context = () => ({ slot: slot(), apiVersion: '2.2.0' });
  const accountJson = (key: string) => {
    const a = svm.getAccount(address(key));
    if (!a.exists) return null;
    return { lamports: Number(a.lamports), owner: a.programAddress, data: [Buffer.from(a.data).toString('base64'), 'base64'], executable: a.executable, rentEpoch: 0, space: a.data.length };
  };

  const methods: Record<string, (params: any[]) => unknown> = {
    getLatestBlockhash: () => {
      const blockhash = svm.latestBlockhash();
      valid.add(blockhash);
      return { context: context(), value: { blockhash, lastValidBlockHeight: slot() + 150 } };
    },
    isBlockhashValid: ([hash]) => {
      const answer = { context: context(), value: valid.has(hash) };
      const then = afterValidityCheck;
      afterValidityCheck = undefined;
      then?.();
      return answer;
    },
    sendTransaction: ([encoded, opts]) => {
      const wire = new Uint8Array(Buffer.from(encoded, opts?.encoding === 'base64' ? 'base64' : 'binary'));
      const bytes = opts?.encoding === 'base64' ? wire : bs58.decode(encoded);
      const tx = decoder.decode(bytes);
      if (holding) {
        held.push(bytes);
        return signatureOf(tx);
      }
      if (!opts?.skipPreflight) {
        const sim = svm.simulateTransaction(tx);
        if (sim instanceof FailedTransactionMetadata) {
          const err = errJson(sim.err());
          throw Object.assign(new Error(`Transaction simulation failed: ${typeof err === 'string' ? err : JSON.stringify(err)}`), {
            rpc: { code: -32002, data: { err, logs: sim.meta().logs(), accounts: null, unitsConsumed: 0 } },
          });
        }
      }
      const { signature, result } = run(bytes);
      if (result instanceof FailedTransactionMetadata && !landed.has(signature)) {
        const err = errJson(result.err());
        if (err !== 'AlreadyProcessed') throw Object.assign(new Error(`Transaction failed: ${JSON.stringify(err)}`), { rpc: { code: -32002, data: { err, logs: [] } } });
      }
      return signature;
    },
    simulateTransaction: ([encoded, opts]) => {
      let tx = decoder.decode(opts?.encoding === 'base64' ? new Uint8Array(Buffer.from(encoded, 'base64')) : bs58.decode(encoded));
      // replaceRecentBlockhash: the node's latest blockhash goes in the message, as a cluster does.
      if (opts?.replaceRecentBlockhash) tx = withBlockhash(tx, svm.latestBlockhash());
      // sigVerify: false simulates a transaction not yet signed (litesvm checks signatures unless told not to).
      const verify = opts?.sigVerify === true;
      svm.withSigverify(verify);
      let sim: ReturnType<LiteSVM['simulateTransaction']>;
      try {
        sim = svm.simulateTransaction(tx);
      } finally {
        svm.withSigverify(true);
      }
      if (sim instanceof FailedTransactionMetadata) return { context: context(), value: { err: errJson(sim.err()), logs: sim.meta().logs(), accounts: null, unitsConsumed: 0 } };
      const meta = sim.meta();
      // `accounts.addresses`: each account's state after the transaction, as litesvm's post-accounts
      // hold it (the accounts the transaction loaded), else as it is now; an emptied account is gone.
      const wanted = opts?.accounts?.addresses as string[] | undefined;
      let accounts: unknown[] | null = null;
      if (wanted) {
        const after = new Map(sim.postAccounts().map((a) => [String(a.address), a]));
        accounts = wanted.map((key) => {
          const a = after.get(key);
          if (!a) return accountJson(key);
          if (a.lamports === 0n && a.data.length === 0) return null;
          return { lamports: Number(a.lamports), owner: a.programAddress, data: [Buffer.from(a.data).toString('base64'), 'base64'], executable: a.executable, rentEpoch: 0, space: a.data.length };
        });
      }
      return { context: context(), value: { err: null, logs: meta.logs(), accounts, unitsConsumed: Number(meta.computeUnitsConsumed()) } };
    },
    getSignatureStatuses: ([signatures]) => ({
      context: context(),
      value: (signatures as string[]).map((s) => {
        const l = landed.get(s);
        return l ? { slot: l.slot, confirmations: null, err: l.err, status: l.err ? { Err: l.err } : { Ok: null }, confirmationStatus: 'finalized' } : null;
      }),
    }),
    getTransaction: ([signature]) => {
      const l = landed.get(signature);
      if (!l) return null;
      return {
        slot: l.slot,
        blockTime: Math.floor(Date.now() / 1000),
        transaction: [Buffer.from(l.wire).toString('base64'), 'base64'],
        meta: { err: l.err, status: l.err ? { Err: l.err } : { Ok: null }, fee: l.fee, logMessages: l.logs, preBalances: [], postBalances: [], innerInstructions: [], preTokenBalances: [], postTokenBalances: [], rewards: [], loadedAddresses: { writable: [], readonly: [] }, computeUnitsConsumed: 0 },
        version: 'legacy',
      };
    },
    getBalance: ([key]) => ({ context: context(), value: Number(svm.getBalance(address(key)) ?? 0n) }),
    getAccountInfo: ([key]) => ({ context: context(), value: accountJson(key) }),
    getMultipleAccounts: ([keys]) => ({ context: context(), value: (keys as string[]).map(accountJson) }),
    getFeeForMessage: ([message]) => {
      const m = Buffer.from(message, 'base64');
      return { context: context(), value: FEE_PER_SIGNATURE * (m[0] & 0x80 ? m[1] : m[0]) };
    },
    getMinimumBalanceForRentExemption: ([size]) => Number(svm.minimumBalanceForRentExemption(BigInt(size))),
    getSlot: () => slot(),
    getBlockHeight: () => slot(),
    getVersion: () => ({ 'solana-core': '2.2.0', 'feature-set': 0 }),
    getGenesisHash: () => 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG',
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let request: { id: unknown; method: string; params?: unknown[] };
      let body: unknown;
      try {
        request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        calls.push(request.method);
        const method = methods[request.method];
        if (!method) body = { jsonrpc: '2.0', id: request.id, error: { code: -32601, message: `Method not found: ${request.method}` } };
        else body = { jsonrpc: '2.0', id: request.id, result: method(request.params ?? []) };
      } catch (err) {
        const rpc = (err as { rpc?: { code: number; data?: unknown } }).rpc;
        body = { jsonrpc: '2.0', id: (request! as { id?: unknown } | undefined)?.id ?? null, error: { code: rpc?.code ?? -32603, message: (err as Error).message, ...(rpc?.data ? { data: rpc.data } : {}) } };
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    svm,
    calls,
    airdrop: (to, amount) => void svm.airdrop(address(to), lamports(amount)),
    execute: (wire) => {
      const { result } = run(wire);
      if (result instanceof FailedTransactionMetadata) throw new Error(`set-up transaction failed: ${String(result)}`);
    },
    hold: () => void (holding = true),
    release: () => {
      holding = false;
      for (const wire of held.splice(0)) {
        const tx = decoder.decode(wire);
        // A cluster drops a transaction whose blockhash it no longer knows.
        if (valid.has(blockhashOf(tx))) run(wire);
      }
    },
    expireBlockhash: () => {
      svm.expireBlockhash();
      valid = new Set([svm.latestBlockhash()]);
    },
    onNextValidityCheck: (fn) => void (afterValidityCheck = fn),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
