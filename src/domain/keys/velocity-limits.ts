// What counts toward velocity controls, and when (docs/velocity-controls.md). The semantics, which the reference's
// public material leaves open:
//
// `controls.<identifier>` is a bool: true when the control's aggregate over its window, for the
// group of the activity being judged and COUNTING THAT ACTIVITY, satisfies `operator threshold`.
// So "at most 10 signatures a day" is a control {COUNT, LESS_THAN_OR_EQUAL, 10, rolling 86400} read
// as `EFFECT_DENY … !controls.daily` (or `EFFECT_ALLOW … controls.daily`): the eleventh signature
// makes the aggregate 11, the control false, and the activity is refused. An activity the control's
// filter does not count adds nothing, so the control then says whether the aggregate so far holds.
//
// What counts: an activityExecution control counts 1 for each executed activity whose kind (its
// type without `_V<n>`: every version of a listed type) it lists, or for every activity when it
// lists none. A chainAssetTransfer control counts the transfers of its listed assets that a signed
// transaction carries (see `transfersOf` below for exactly which), each as its amount in base units
// × 10^(18 - decimals), i.e. in whole units at the thresholds' 18-digit fixed point, for SUM, or 1
// per transfer for COUNT; a transfer of nothing adds nothing. An activity
// counts when it executes: at submission when it is allowed outright, after
// the deciding approval when it waited for consensus; a denied, rejected or failed activity never
// counts, nor one still waiting. The root quorum's activities count too (the root quorum bypasses
// the policies that read a control, not the control's arithmetic).
//
// Groups: `organization` is one group; `user` is the submitter; `wallet` is the wallet the policy
// engine sees as the `wallet` keyword (the wallet a signing or export activity signs with or acts
// on). An activity without one does not count toward wallet controls, and reading such a control
// for it is a missing field (as `wallet.id` is): a DENY reading it does not apply, an ALLOW does not
// allow.
//
// Windows: `infinite` is one bucket. A rolling window of D seconds is kept in buckets of
// w = max(1, floor(D / 100)) seconds; what executed in bucket b ([b·w, (b+1)·w)) counts while any of
// the bucket is within the last D seconds, so an execution counts for at least D and at most D + w
// seconds: never less than the window, at most 1% longer. Older buckets are deleted as they fall
// out, and a check reads the group's running total (see TOTAL below), not its buckets.
//
// Raw signing: the transfers a raw payload authorizes cannot be read (it may be
// the hash of a transaction, so signing it would move value no control counted). So while a
// chainAssetTransfer control counts the transfers of a key (its group is the organization, the
// signing user, or the key's wallet, and it counts raw signing's kind), sign_raw_payload(s) with
// that key is refused with an error naming the control, unless an ALLOW policy of the organization
// explicitly allows raw signing for it: its condition reads `controls.<identifier>` and names raw
// signing's kind ('SIGN_RAW_PAYLOAD' / 'SIGN_RAW_PAYLOADS' or their ACTIVITY_TYPE_ values); raw
// signing is then judged by the policies as usual and counts nothing. One raw payload is measured
// instead of refused: an EIP-712 EIP-2612 `Permit` (primary type Permit with spender and value), which
// counts as the `approve` of `value` it is on its verifying contract (`erc20:<chain>:<contract>`).
//
// Cannot be raced: the engine measures the controls the organization's policies read, decides, and
// if the activity is allowed reserves its counts in a short transaction that first locks each
// (control, group) row in a fixed order, re-measures, and proceeds only if every control still says
// what the decision was made on (otherwise it measures and decides again). The reservation commits
// before the activity executes and is released if the activity then fails; a process that dies in
// between leaves it counted (fails closed). An activity that waited for consensus is measured,
// decided, executed and counted in the deciding approval's own transaction, under the same locks.
import { Unavailable, type Controls, type PolicyContext } from '../../policy/index.js';
import { SigilError, invalid } from '../../errors/errors.js';
import { AbiDecodeError, decodeFunctionArguments, findFunction, parseAbi } from '../../chains/ethereum/abi.js';
import type { Repositories } from '../../store/index.js';
import { activityKind } from '../governance/policy-context.js';
import { loadCompiledPolicies } from '../governance/policies.js';
import { SCALE, controlOf, type Operator, type VelocityControl } from './velocity-controls.js';

/** One group of one control, and what the activity adds to it. */
export interface Contribution {
  control: VelocityControl;
  groupKey: string;
  amount: bigint;
}

/** What the engine measured for one activity. */
export interface Measurement {
  /** The `controls` keyword, one per policy context of the activity (a batch has several). */
  controls: Controls[];
  /** What the activity adds to each of its groups when it executes. */
  contributions: Contribution[];
  /** The groups the decision read, with the aggregate before this activity. */
  read: Map<string, { control: VelocityControl; groupKey: string; before: bigint }>;
  /** The velocity time the measurement was made at (ms). */
  at: number;
}

/** A reservation: bucket amounts added, to take back if the activity fails. */
export interface Reservation {
  entries: { controlId: string; groupKey: string; bucket: number; amount: bigint }[];
}

const keyOf = (controlId: string, groupKey: string) => `${controlId}\u0000${groupKey}`;

/** The organization's controls, parsed once per cache generation. Costs no query when cached. */
export async function controlsOf(repos: Repositories, organizationId: string): Promise<readonly VelocityControl[]> {
  return repos.memo(organizationId, 'velocity-controls-parsed', async () => (await repos.velocityControls.list(organizationId)).map(controlOf));
}

function groupKeyOf(control: VelocityControl, userId: string, context: PolicyContext): string | undefined {
  switch (control.groupBy) {
    case 'organization':
      return 'organization';
    case 'user':
      return `user:${userId}`;
    case 'wallet':
      return context.wallet ? `wallet:${context.wallet.id}` : undefined;
  }
}

/** A policy integer (bigint, or a safe-integer number) as a bigint. */
const big = (v: unknown): bigint | undefined => (typeof v === 'bigint' ? v : typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : undefined);

/** One transfer a signed transaction carries: the asset key (velocity-controls.ts `assetOf`) and base units. */
interface Moved {
  key: string;
  amount: bigint;
  /** Set when the transfer's amount could not be read (calldata that does not decode): it is refused, not guessed. */
  unreadable?: string;
}

// The ERC-20 calls that move or commit a holder's tokens, decoded by the ABI decoder eth.tx's
// contract_call_args use (src/chains/ethereum/abi.ts). `approve` counts too (docs/velocity-controls.md lists it): an allowance
// hands the spender the power to move that amount without another signature, so a limit that
// ignored it would be passed by approving a contract and letting it pull. An approval that lowers or
// revokes an allowance (amount 0) adds nothing.
const ERC20_ABI = parseAbi(
  [
    ['transfer', ['to', 'amount']],
    ['transferFrom', ['from', 'to', 'amount']],
    ['approve', ['spender', 'amount']],
    // OpenZeppelin's increaseAllowance(spender, addedValue): an approve of the amount added.
    ['increaseAllowance', ['spender', 'amount']],
  ].map(([name, inputs]) => ({
    type: 'function',
    name,
    inputs: (inputs as string[]).map((n) => ({ name: n, type: n === 'amount' ? 'uint256' : 'address' })),
    outputs: [{ name: '', type: 'bool' }],
  })),
);

/** Marks an SPL `Transfer`, which does not name its mint (velocity-controls.ts keys are `spl:<mint>`). */
const SPL_UNKNOWN_MINT = 'spl:?';

/**
 * The transfers one signed transaction carries, from the keywords the policy engine judged it by
 * (`eth.tx`, `solana.tx`), so what is counted is what was decided on and what is signed:
 * - Ethereum: the ether `value` (`eth:<chainId>`), and, when the calldata to `to` is ERC-20
 *   `transfer`, `transferFrom` or `approve`, its amount (`erc20:<chainId>:<to>`). A transaction that
 *   does both moves two assets and counts for each listed one. A pre-EIP-155 legacy transaction
 *   (chain id 0 here) names no chain and can be replayed on any: it counts on every listed chain.
 * - Solana: every System Program `Transfer`/`TransferWithSeed` (`sol`, lamports) and SPL Token /
 *   Token-2022 `TransferChecked`(`WithFee`) (`spl:<mint>`), as `solana.tx.transfers` and
 *   `spl_transfers` list them, whichever account they move from: a transaction Sigil signs may carry
 *   transfers other signers authorize, and counting them errs toward stopping a transaction, never
 *   toward letting one past. An SPL `Transfer` does not name its mint (it is in the source token
 *   account's data on chain, which a signer cannot read); see `amountOf` for how it counts.
 * - Tron (`tron.tx`): a TransferContract's amount and a TriggerSmartContract's call_value (`trx`,
 *   sun), and a TriggerSmartContract's ERC-20-shaped `transfer`/`transferFrom`/`approve` amount
 *   (`trc20:<contract>`), decoded as Ethereum calldata is.
 * - Bitcoin (`bitcoin.tx`): the outputs not paying one of the wallet's own addresses (`own`), on the
 *   network(s) `bitcoinNetworksOf` finds (`btc:<network>`, satoshis).
 */
function transfersOf(context: PolicyContext, own: ReadonlySet<string>): Moved[] {
  const out: Moved[] = [];
  const eth = context.eth?.tx;
  if (eth) {
    const chainId = big(eth.chain_id) ?? 0n;
    const value = big(eth.value);
    if (value !== undefined && value > 0n) out.push({ key: `eth:${chainId}`, amount: value });
    const fn = eth.to && typeof eth.data === 'string' ? findFunction(ERC20_ABI, eth.data) : undefined;
    if (fn) {
      const key = `erc20:${chainId}:${String(eth.to).toLowerCase()}`;
      try {
        out.push({ key, amount: decodeFunctionArguments(fn, eth.data).amount as bigint });
      } catch (err) {
        if (!(err instanceof AbiDecodeError)) throw err;
        out.push({ key, amount: 0n, unreadable: `${fn.signature} calldata does not decode: ${err.message}` });
      }
    }
  }
  if (eth) mergeSimulated(out, context, big(eth.chain_id) ?? 0n, String(eth.from));
  const sol = context.solana?.tx;
  if (sol) {
    for (const t of sol.transfers) out.push({ key: 'sol', amount: big(t.amount) ?? 0n });
    for (const t of sol.spl_transfers) out.push({ key: t.token_mint ? `spl:${t.token_mint}` : SPL_UNKNOWN_MINT, amount: big(t.amount) ?? 0n });
  }
  const tron = context.tron?.tx;
  if (tron) {
    for (const c of tron.contract) {
      if (c.type === 'TransferContract') out.push({ key: 'trx', amount: big(c.amount) ?? 0n });
      if (c.type !== 'TriggerSmartContract') continue;
      // TRX sent along with a contract call leaves the wallet as a transfer does.
      const value = big(c.call_value);
      if (value !== undefined && value > 0n) out.push({ key: 'trx', amount: value });
      // A TRC-20 token is an ERC-20 contract on the TVM: the same selectors and argument encoding.
      const fn = c.contract_address && typeof c.data === 'string' ? findFunction(ERC20_ABI, c.data) : undefined;
      if (!fn) continue;
      const key = `trc20:${c.contract_address}`;
      try {
        out.push({ key, amount: decodeFunctionArguments(fn, c.data!).amount as bigint });
      } catch (err) {
        if (!(err instanceof AbiDecodeError)) throw err;
        out.push({ key, amount: 0n, unreadable: `${fn.signature} calldata does not decode: ${err.message}` });
      }
    }
  }
  const btc = context.bitcoin?.tx;
  if (btc) {
    // What leaves the wallet: every output but those paying one of its own addresses (change).
    // OP_RETURN and other address-less outputs count too: their satoshis leave the wallet all the same.
    let leaving = 0n;
    for (const o of btc.outputs) if (!(o.address && own.has(normalBitcoinAddress(o.address)))) leaving += big(o.value) ?? 0n;
    for (const network of bitcoinNetworksOf(context)) out.push({ key: `btc:${network}`, amount: leaving });
  }
  return out;
}

/**
 * What the transaction's simulation says leaves the organization (docs/policies.md "Simulation before
 * approval"), where one ran: its native and ERC-20 outflows and the ERC-20 allowances it grants. Per
 * asset, the count is the larger of what the calldata says and what the simulation says, so a token
 * pull hidden behind a proxy or a delegatecall counts, and a node that under-reports cannot lower
 * what the calldata shows. Allowances count when the signer grants them. A transaction that was not
 * simulated counts by its calldata alone.
 */
function mergeSimulated(out: Moved[], context: PolicyContext, chainId: bigint, signer: string): void {
  const sim = context.simulation;
  if (!sim || sim.status !== 'SIMULATED' || sim.reverted) return;
  const simulated = new Map<string, bigint>();
  const add = (key: string, amount: bigint) => simulated.set(key, (simulated.get(key) ?? 0n) + amount);
  for (const o of sim.outflows) {
    const amount = big(o.amount) ?? 0n;
    if (o.asset.kind === 'native') add(`eth:${chainId}`, amount);
    else if (o.asset.kind === 'erc20') add(`erc20:${chainId}:${o.asset.contract.toLowerCase()}`, amount);
  }
  for (const a of sim.approvals) if (a.asset.kind === 'erc20' && !a.revoked && a.owner.toLowerCase() === signer.toLowerCase()) add(`erc20:${chainId}:${a.asset.contract.toLowerCase()}`, big(a.amount) ?? 0n);
  for (const [key, amount] of simulated) {
    const said = out.filter((m) => m.key === key).reduce((sum, m) => sum + m.amount, 0n);
    if (amount > said) out.push({ key, amount: amount - said });
  }
}

/** Activity kinds that sign a raw payload, whose transfers cannot be read. */
const RAW_SIGNING = new Set(['SIGN_RAW_PAYLOAD', 'SIGN_RAW_PAYLOADS']);
/** A policy condition names raw signing when it spells its kind or type as a string. */
const NAMES_RAW_SIGNING = /['"](ACTIVITY_TYPE_)?SIGN_RAW_PAYLOADS?(_V2)?['"]/;

/**
 * An EIP-2612 permit (EIP-712 primary type `Permit` with `spender` and `value`) as the approve it
 * is, on its verifying contract; undefined for any other payload.
 */
function permitOf(context: PolicyContext): Moved | undefined {
  const typed = context.eth?.eip_712;
  if (!typed || typed.primary_type !== 'Permit' || !typed.domain.verifying_contract) return undefined;
  const { spender, value } = typed.message as Record<string, unknown>;
  if (spender === undefined || value === undefined) return undefined;
  const chainId = big(typed.domain.chain_id) ?? 0n;
  const key = `erc20:${chainId}:${String(typed.domain.verifying_contract).toLowerCase()}`;
  const amount = typeof value === 'string' && /^[0-9]{1,78}$/.test(value) ? BigInt(value) : big(value);
  return amount === undefined ? { key, amount: 0n, unreadable: 'the Permit value is not an integer' } : { key, amount };
}

/**
 * Refuses raw signing with a key whose transfers a control counts (see the top of this file),
 * unless a policy explicitly allows raw signing for that control.
 */
async function refuseUnmeasuredRawSigning(repos: Repositories, organizationId: string, controls: readonly VelocityControl[], kind: string): Promise<void> {
  const counting = controls.filter((c) => c.source.kind === 'chainAssetTransfer' && (!c.kinds || c.kinds.has(kind)));
  if (counting.length === 0) return;
  const allowed = new Set<string>();
  for (const p of await loadCompiledPolicies(repos, organizationId)) {
    if (p.effect !== 'EFFECT_ALLOW' || !p.condition || !NAMES_RAW_SIGNING.test(p.condition.source)) continue;
    for (const c of p.condition.controls) allowed.add(c);
  }
  const refusing = counting.find((c) => !allowed.has(c.identifier));
  if (!refusing) return;
  throw new SigilError(
    'FORBIDDEN',
    `raw signing with this key is refused: velocity control '${refusing.identifier}' counts its transfers, and the transfers a raw payload authorizes cannot be measured; ` +
      `an ALLOW policy whose condition reads controls.${refusing.identifier} and names 'SIGN_RAW_PAYLOAD' explicitly allows it`,
  );
}

/** Bech32 addresses are case-insensitive (BIP-173) and base58 ones are not. */
export const normalBitcoinAddress = (a: string) => (/^(bc|tb|bcrt)1/i.test(a) ? a.toLowerCase() : a);

const BITCOIN_NETWORKS = ['mainnet', 'testnet3', 'testnet4', 'signet', 'regtest'];

/**
 * The Bitcoin networks a PSBT can be for. A PSBT names none; the signing wallet account's address
 * does (bc1…/1…/3… mainnet, bcrt1… regtest, tb1…/m…/n…/2… any of testnet3, testnet4 and signet,
 * which share that encoding). When it cannot tell (a private key signs, whose addresses may be of
 * several networks, or the address is of no Bitcoin format) the PSBT counts on every network, and so
 * on every listed one: a limit is not passed by ambiguity.
 */
function bitcoinNetworksOf(context: PolicyContext): string[] {
  const address = context.wallet_account?.address ?? '';
  if (/^bcrt1/i.test(address)) return ['regtest'];
  if (/^bc1/i.test(address) || /^[13][1-9A-HJ-NP-Za-km-z]{25,34}$/.test(address)) return ['mainnet'];
  if (/^tb1/i.test(address) || /^[mn2][1-9A-HJ-NP-Za-km-z]{25,34}$/.test(address)) return ['testnet3', 'testnet4', 'signet'];
  return BITCOIN_NETWORKS;
}

/**
 * The signing wallet's own addresses (every account of the wallet, or every address of the private
 * key), which a PSBT's change pays: read only for a Bitcoin transaction. The outputs' addresses are
 * spelled in the signer's network (src/chains/bitcoin/psbt.ts bitcoinTxPolicyFields), as the wallet's accounts of
 * that network are, so they compare as strings.
 */
export async function ownAddresses(repos: Repositories, context: PolicyContext): Promise<ReadonlySet<string>> {
  if (!context.bitcoin?.tx) return new Set();
  const addresses: string[] = [];
  if (context.wallet_account?.address) addresses.push(context.wallet_account.address);
  if (context.wallet) for (const a of await repos.wallets.accountsOfWallet(context.wallet.id)) addresses.push(a.address);
  if (context.private_key) for (const a of await repos.privateKeys.addresses([context.private_key.id])) addresses.push(a.address);
  return new Set(addresses.map(normalBitcoinAddress));
}

/** The listed asset a transfer is of, if the control lists it (a chain-less Ethereum transfer matches every listed chain). */
function listedUnits(control: VelocityControl & { source: { kind: 'chainAssetTransfer' } }, moved: Moved): bigint[] {
  const assets = control.source.assets;
  if (moved.key === SPL_UNKNOWN_MINT) {
    // The mint is unknown, so it might be any listed SPL token: it counts once, as the listed SPL
    // token whose base unit is largest (the fewest decimals). A limit cannot be passed by leaving
    // the mint out; a sender who wants exact accounting uses TransferChecked, as wallets do.
    const units = [...assets.values()].filter((a) => a.key.startsWith('spl:')).map((a) => a.unit);
    return units.length ? [units.reduce((a, b) => (a > b ? a : b))] : [];
  }
  // No chain id (a pre-EIP-155 transaction): replayable on every chain, so it moves the asset on
  // each listed chain.
  const [namespace, chain, contract] = moved.key.split(':');
  if ((namespace === 'eth' || namespace === 'erc20') && chain === '0') {
    return [...assets.values()].filter((a) => {
      const [n, , c] = a.key.split(':');
      return n === namespace && c === contract;
    }).map((a) => a.unit);
  }
  const a = assets.get(moved.key);
  return a ? [a.unit] : [];
}

/**
 * What one policy context of the activity adds to a control (×10^18). activityExecution: 1 if the
 * control counts the activity's kind. chainAssetTransfer: for each transfer of a listed asset the
 * transaction carries (`transfersOf`), its amount × 10^(18 - decimals) for SUM, or 1 for COUNT;
 * 0 for anything else. A listed token's call whose amount cannot be decoded is refused (400): the
 * contract might still act on it, and a transfer Sigil cannot measure must not slip past a limit.
 */
function amountOf(control: VelocityControl, kind: string, moved: readonly Moved[]): bigint {
  if (control.kinds && !control.kinds.has(kind)) return 0n;
  const source = control.source;
  if (source.kind === 'activityExecution') return SCALE;
  let total = 0n;
  for (const t of moved) {
    const units = listedUnits(control as VelocityControl & { source: typeof source }, t);
    if (units.length === 0) continue;
    if (t.unreadable) throw invalid(`velocity control '${control.identifier}' cannot measure this transaction: ${t.unreadable}`);
    if (t.amount <= 0n) continue;
    for (const unit of units) total += source.method === 'SUM' ? t.amount * unit : SCALE;
  }
  return total;
}

function holds(operator: Operator, aggregate: bigint, threshold: bigint): boolean {
  switch (operator) {
    case 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN':
      return aggregate < threshold;
    case 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL':
      return aggregate <= threshold;
    case 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_EQUAL':
      return aggregate === threshold;
    case 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_GREATER_THAN_OR_EQUAL':
      return aggregate >= threshold;
    case 'VELOCITY_CONTROL_AGGREGATION_OPERATOR_GREATER_THAN':
      return aggregate > threshold;
  }
}

/** Bucket width in ms (0: the infinite window's single bucket). */
function bucketMs(control: VelocityControl): number {
  return control.windowSeconds === undefined ? 0 : Math.max(1, Math.floor(control.windowSeconds / 100)) * 1000;
}

function currentBucket(control: VelocityControl, at: number): number {
  const w = bucketMs(control);
  return w === 0 ? 0 : Math.floor(at / w);
}

/** The first bucket still (partly) inside the window at `at`. */
function firstBucket(control: VelocityControl, at: number): number {
  const w = bucketMs(control);
  return w === 0 ? 0 : Math.floor((at - control.windowSeconds! * 1000) / w);
}

// A rolling window's group keeps, beside its time buckets, its running total in bucket -1 (never a
// time: bucket numbers count from 1970): the sum of every time bucket the group still stores. So a
// check reads the total and the buckets that fell out of the window since they were last pruned
// (usually none: every record prunes), one or two rows in one statement, instead of the ~100 rows
// of a full window; a signature costs the same at 1,000,000 recorded transfers as at 0
// (bench/velocity-history.mjs). Every change of a time bucket changes the total with it, under the
// group's lock. A group recorded before totals were kept has no total row: it is read by summing its
// window, and its first record under the lock writes the total.
const TOTAL = -1;

const sum = (rows: { amount: string }[]) => rows.reduce((s, r) => s + BigInt(r.amount), 0n);

async function aggregate(repos: Repositories, control: VelocityControl, groupKey: string, at: number): Promise<bigint> {
  const first = firstBucket(control, at);
  if (control.windowSeconds !== undefined) {
    const rows = await repos.velocityControls.before(control.id, groupKey, first);
    const total = rows.find((r) => r.bucket === TOTAL);
    if (total) return BigInt(total.amount) - sum(rows.filter((r) => r.bucket !== TOTAL));
  }
  return sum(await repos.velocityControls.amounts(control.id, groupKey, first));
}

/** Locks the groups in a fixed order (no two transactions wait on each other); false if a control is gone. */
async function lockAll(repos: Repositories, organizationId: string, groups: Iterable<{ control: VelocityControl; groupKey: string }>): Promise<boolean> {
  const sorted = [...new Map([...groups].map((g) => [keyOf(g.control.id, g.groupKey), g])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [, g] of sorted) if (!(await repos.velocityControls.lockGroup(organizationId, g.control.id, g.groupKey))) return false;
  return true;
}

/**
 * Measures the controls for an activity judged over `contexts` (its own policy contexts, one per
 * element of a batch). `reading` are the identifiers the organization's policies read. Undefined
 * when the organization has no controls and its policies read none: nothing to measure or count.
 * With `lock`, every group is locked before it is read (inside a transaction).
 */
export async function measure(input: {
  cached: Repositories;
  repos: Repositories;
  organizationId: string;
  type: string;
  userId: string;
  contexts: PolicyContext[];
  reading: ReadonlySet<string>;
  at: number;
  lock?: boolean;
}): Promise<Measurement | undefined> {
  const controls = await controlsOf(input.cached, input.organizationId);
  if (controls.length === 0 && input.reading.size === 0) return undefined;
  const kind = activityKind(input.type);
  const contributions = new Map<string, Contribution>();
  const wanted = new Map<string, { control: VelocityControl; groupKey: string }>();
  const measuresTransfers = controls.some((c) => c.source.kind === 'chainAssetTransfer');
  const owned = measuresTransfers ? await Promise.all(input.contexts.map((context) => ownAddresses(input.repos, context))) : [];
  if (RAW_SIGNING.has(kind)) {
    // Raw payloads other than permits: refused where a control counts the key's transfers.
    const unmeasured = input.contexts.filter((context) => !permitOf(context));
    const counted = controls.filter((c) => unmeasured.some((context) => groupKeyOf(c, input.userId, context) !== undefined));
    if (unmeasured.length > 0) await refuseUnmeasuredRawSigning(input.cached, input.organizationId, counted, kind);
  }
  // Contexts judging one transaction (sol_send_transaction: one per signer, sharing its `solana.tx`)
  // move its value once: per group, a transaction already counted adds nothing more.
  const countedTransactions = new Map<string, Set<object>>();
  const perContext = input.contexts.map((context, i) => {
    const groups = new Map<string, string>();
    const permit = RAW_SIGNING.has(kind) ? permitOf(context) : undefined;
    const moved = measuresTransfers ? (permit ? [permit] : transfersOf(context, owned[i])) : [];
    for (const control of controls) {
      const groupKey = groupKeyOf(control, input.userId, context);
      if (groupKey === undefined) continue;
      groups.set(control.id, groupKey);
      const amount = amountOf(control, kind, moved);
      const key = keyOf(control.id, groupKey);
      const transaction = context.solana?.tx as object | undefined;
      const again = transaction !== undefined && countedTransactions.get(key)?.has(transaction) === true;
      if (transaction !== undefined) countedTransactions.set(key, (countedTransactions.get(key) ?? new Set()).add(transaction));
      if (amount > 0n && !again) {
        // An activity counts once per group; transfers add up (a batch's elements each send theirs).
        const earlier = contributions.get(key)?.amount ?? 0n;
        const total = control.source.kind === 'activityExecution' ? amount : earlier + amount;
        contributions.set(key, { control, groupKey, amount: total });
      }
      if (input.reading.has(control.identifier)) wanted.set(key, { control, groupKey });
    }
    return groups;
  });
  if (input.lock && !(await lockAll(input.repos, input.organizationId, [...wanted.values(), ...contributions.values()]))) {
    throw new SigilError('CONFLICT', 'a velocity control was deleted while this activity was being counted; submit it again');
  }
  const read = new Map<string, { control: VelocityControl; groupKey: string; before: bigint }>();
  for (const [key, g] of wanted) read.set(key, { ...g, before: await aggregate(input.repos, g.control, g.groupKey, input.at) });
  const byIdentifier = new Map(controls.map((c) => [c.identifier, c]));
  const values = perContext.map((groups) => {
    const out: Record<string, boolean | Unavailable> = {};
    for (const identifier of input.reading) {
      const control = byIdentifier.get(identifier);
      if (!control) {
        out[identifier] = new Unavailable(`velocity control '${identifier}' no longer exists`);
        continue;
      }
      const groupKey = groups.get(control.id);
      if (groupKey === undefined) continue;
      const key = keyOf(control.id, groupKey);
      const including = read.get(key)!.before + (contributions.get(key)?.amount ?? 0n);
      out[identifier] = holds(control.operator, including, control.threshold);
    }
    return out;
  });
  return { controls: values, contributions: [...contributions.values()], read, at: input.at };
}

/** Whether the activity adds to a group or its decision read one: what must be reserved under locks. */
export function needsReservation(m: Measurement | undefined): m is Measurement {
  return m !== undefined && (m.contributions.length > 0 || m.read.size > 0);
}

/** Adds the activity's contributions to their current buckets (the caller holds the groups' locks). */
export async function record(repos: Repositories, m: Measurement): Promise<Reservation> {
  const entries: Reservation['entries'] = [];
  for (const c of m.contributions) {
    const bucket = currentBucket(c.control, m.at);
    const store = repos.velocityControls;
    if (c.control.windowSeconds === undefined) {
      const [row] = (await store.amounts(c.control.id, c.groupKey, bucket)).filter((r) => r.bucket === bucket);
      await store.setAmount(c.control.id, c.groupKey, bucket, String((row ? BigInt(row.amount) : 0n) + c.amount));
    } else {
      const first = firstBucket(c.control, m.at);
      // The total, the buckets that fell out, and the current bucket, in one read.
      const rows = await store.before(c.control.id, c.groupKey, first, bucket);
      const current = rows.find((r) => r.bucket === bucket);
      const expired = rows.filter((r) => r.bucket !== TOTAL && r.bucket < first);
      const stored = rows.find((r) => r.bucket === TOTAL);
      // No total yet (a new group, or one recorded before totals were kept): every time bucket it stores.
      const total = stored ? BigInt(stored.amount) : sum(await store.amounts(c.control.id, c.groupKey, 0));
      await store.setAmount(c.control.id, c.groupKey, bucket, String((current ? BigInt(current.amount) : 0n) + c.amount));
      if (expired.length > 0) await store.prune(c.control.id, c.groupKey, first);
      await store.setAmount(c.control.id, c.groupKey, TOTAL, String(total + c.amount - sum(expired)));
    }
    entries.push({ controlId: c.control.id, groupKey: c.groupKey, bucket, amount: c.amount });
  }
  return { entries };
}

/**
 * Inside a transaction: locks the measured groups, checks that every control the decision read
 * still says the same, and records the contributions. 'changed' when a control moved (or was
 * deleted) since the measurement: measure and decide again.
 */
export async function reserve(repos: Repositories, organizationId: string, m: Measurement): Promise<Reservation | 'changed'> {
  if (!(await lockAll(repos, organizationId, [...m.read.values(), ...m.contributions]))) return 'changed';
  for (const [key, r] of m.read) {
    const now = await aggregate(repos, r.control, r.groupKey, m.at);
    const added = m.contributions.find((c) => keyOf(c.control.id, c.groupKey) === key)?.amount ?? 0n;
    if (holds(r.control.operator, now + added, r.control.threshold) !== holds(r.control.operator, r.before + added, r.control.threshold)) return 'changed';
  }
  return record(repos, m);
}

/** Takes a reservation back (the activity failed after all); in a transaction of its own. */
export async function release(repos: Repositories, organizationId: string, reservation: Reservation): Promise<void> {
  for (const e of reservation.entries) {
    // A control deleted meanwhile took its counts with it.
    if (!(await repos.velocityControls.lockGroup(organizationId, e.controlId, e.groupKey))) continue;
    const rows = await repos.velocityControls.before(e.controlId, e.groupKey, TOTAL + 1, e.bucket);
    const row = rows.find((r) => r.bucket === e.bucket);
    // Pruned meanwhile: it fell out of the window, and out of the total, with what it held.
    if (!row) continue;
    const taken = BigInt(row.amount) < e.amount ? BigInt(row.amount) : e.amount;
    await repos.velocityControls.setAmount(e.controlId, e.groupKey, e.bucket, String(BigInt(row.amount) - taken));
    // A rolling window's total holds every stored bucket, this one included (an infinite window keeps none: bucket 0 is its total).
    const total = rows.find((r) => r.bucket === TOTAL);
    if (total) await repos.velocityControls.setAmount(e.controlId, e.groupKey, TOTAL, String(BigInt(total.amount) - taken));
  }
}

/**
 * Every group of a control whose aggregate over its window at `at` is above zero, with that
 * aggregate (×10^18), read as a check reads it (`aggregate`): what get_velocity_control and
 * list_velocity_controls show as `usage`. One or two rows per group the control has.
 */
export async function groupAggregates(repos: Repositories, control: VelocityControl, at: number): Promise<{ groupKey: string; aggregate: bigint }[]> {
  const out: { groupKey: string; aggregate: bigint }[] = [];
  for (const groupKey of await repos.velocityControls.groupKeys(control.id)) {
    const value = await aggregate(repos, control, groupKey, at);
    if (value > 0n) out.push({ groupKey, aggregate: value });
  }
  return out;
}
