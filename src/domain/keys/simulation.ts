// Simulation before approval (docs/policies.md "Simulation before approval"; docs/broadcasting.md
// "Simulation"): what a transaction a signing activity targets would do, as the asset changes of
// src/chains/simulation.ts. One registry for every chain: each chain's simulator says which parsed
// transactions it takes and whether simulating one asks a node (an RPC is configured for its chain);
// a transaction no simulator takes, or one whose chain has no RPC, costs nothing beyond a constant.
// The simulation runs where the activity's target is loaded, outside any database transaction; the
// result is recorded with the activity (its `simulation` column), shown in `decodedView.simulation`
// and read by policies as `simulation.*`.
import type { AssetChanges, SimulatedAsset, SimulatedTransfer } from '../../chains/simulation.js';

export type { AssetChanges } from '../../chains/simulation.js';
import {
  balanceChangesOf,
  decodeDecimals,
  decodeRevertReason,
  decodeSymbol,
  delegationsOf,
  executionFromCallTrace,
  executionFromSimulateV1,
  fungibleContracts,
  movementsOf,
  nameAssets,
  type CallFrame,
  type SimulateV1Call,
} from '../../chains/ethereum/simulation.js';
import { toChecksumAddress } from '../../chains/addresses/ethereum.js';
import { parseTransaction, type ParsedTransaction } from '../../chains/transactions.js';
import { EvmRpc } from '../../delivery/evm-rpc.js';
import { simulateEvmCall, tokenMetadataCalls, type EvmSimulationMethod } from '../../delivery/evm-simulation.js';
import { Unavailable, type Simulation, type SimulationAsset as PolicySimulationAsset } from '../../policy/index.js';
import type { Repositories } from '../../store/index.js';
import type { OperationContext } from '../context.js';
import type { SigningTarget } from './signing.js';

/** What a simulator is given: the organization's reads, the signing key, and the transaction as parsed for signing. */
export interface SimulationRequest {
  repos: Repositories;
  organizationId: string;
  target: SigningTarget;
  parsed: ParsedTransaction;
  /** The network the activity itself names (a send's caip2), where the transaction alone does not say. */
  network?: string;
}

/** One chain's simulation (EVM here; Solana's in ./solana-simulation.ts). */
export interface TransactionSimulator {
  /** The TRANSACTION_TYPE_* it simulates. */
  readonly transactionType: string;
  /** Whether simulating `parsed` asks a node: false (no RPC for its chain) keeps the signing path as it was. */
  callsNode(parsed: ParsedTransaction): boolean;
  /** The asset changes; never throws: a node that fails gives status FAILED with the reason. */
  simulate(request: SimulationRequest): Promise<AssetChanges>;
}

/** The simulators of this deployment, by transaction type (the composition root registers them). */
export class TransactionSimulators {
  private readonly byType = new Map<string, TransactionSimulator>();

  register(simulator: TransactionSimulator): this {
    this.byType.set(simulator.transactionType, simulator);
    return this;
  }

  /** Whether simulating this transaction would ask a node. */
  callsNode(parsed: ParsedTransaction): boolean {
    return this.byType.get(parsed.type)?.callsNode(parsed) ?? false;
  }

  /** The asset changes of the transaction, or undefined when no simulator takes its type. */
  simulate(request: SimulationRequest): Promise<AssetChanges> | undefined {
    return this.byType.get(request.parsed.type)?.simulate(request);
  }
}

declare module '../context.js' {
  interface Services {
    /** Simulation before approval, per transaction type; absent: nothing is simulated. */
    simulators?: TransactionSimulators;
  }
}

/** The simulation of a signing target's transaction, or undefined when nothing simulates its type. */
export function simulateForSigning(ctx: OperationContext, target: SigningTarget, parsed: ParsedTransaction, network?: string): Promise<AssetChanges> | undefined {
  return ctx.services.simulators?.simulate({ repos: ctx.repos, organizationId: ctx.organization.id, target, parsed, ...(network ? { network } : {}) });
}

/**
 * Whether loading a signing activity's transaction asks a node (its chain has an RPC that
 * simulates it): reads skip such loads. No simulator, or a transaction that does not parse: no.
 */
export function transactionCallsNode(ctx: OperationContext, type: string, unsignedTransaction: string): boolean {
  const simulators = ctx.services.simulators;
  if (!simulators) return false;
  try {
    return simulators.callsNode(parseTransaction(type, unsignedTransaction, { signerAddress: '' }));
  } catch {
    return false;
  }
}

// ------------------------------------------------------------------------------------------- EVM

export interface EvmSimulatorDeps {
  /** CAIP-2 chain id → JSON-RPC URL (the broadcasting RPCs, Config.evmRpcUrls). */
  rpcUrls: Record<string, string>;
  /** The setting that configures a chain's RPC, named when a chain has none. */
  rpcSetting(caip2: string): string;
  rpcMaxResponseBytes?: number;
  /** The deadline of one simulation, token names included (SIGIL_EVM_SIMULATION_TIMEOUT_MS). */
  timeoutMs: number;
  /** How the node is asked (SIGIL_EVM_SIMULATION_METHOD). */
  method: EvmSimulationMethod;
}

/** At most this many distinct addresses of a simulation are looked up as the organization's own. */
const MAX_OWN_LOOKUPS = 32;

const empty = (status: AssetChanges['status'], network: string, reason: string): AssetChanges => ({
  status,
  reason,
  chain: 'ethereum',
  network,
  reverted: false,
  transfers: [],
  approvals: [],
  balanceChanges: [],
  deployments: [],
  delegations: [],
});

export class EvmSimulator implements TransactionSimulator {
  readonly transactionType = 'TRANSACTION_TYPE_ETHEREUM';

  private readonly rpcs = new Map<string, EvmRpc>();

  constructor(private readonly deps: EvmSimulatorDeps) {
    for (const [caip2, url] of Object.entries(deps.rpcUrls)) this.rpcs.set(caip2, new EvmRpc(url, deps.rpcMaxResponseBytes));
  }

  private rpcOf(parsed: ParsedTransaction): EvmRpc | undefined {
    const chainId = parsed.ethereum?.chainId;
    return chainId ? this.rpcs.get(`eip155:${chainId}`) : undefined;
  }

  callsNode(parsed: ParsedTransaction): boolean {
    return this.rpcOf(parsed) !== undefined;
  }

  async simulate(request: SimulationRequest): Promise<AssetChanges> {
    const tx = request.parsed.ethereum;
    if (!tx) return empty('NOT_SIMULATED', '', 'not an Ethereum transaction');
    const network = tx.chainId === null ? '' : tx.chainId.toString();
    if (tx.chainId === null) return empty('NOT_SIMULATED', network, 'the transaction names no chain (pre-EIP-155), so there is no one chain to simulate it on');
    const rpc = this.rpcOf(request.parsed);
    const caip2 = `eip155:${tx.chainId}`;
    if (!rpc) return empty('NOT_SIMULATED', network, `no RPC is configured for ${caip2} (${this.deps.rpcSetting(caip2)})`);
    const from = (request.target.address ?? '').toLowerCase();
    const data = '0x' + Buffer.from(tx.data).toString('hex');
    const simulated = { from, to: tx.to, nonce: tx.nonce, value: tx.value, data };
    const started = Date.now();
    try {
      const answer = await simulateEvmCall(rpc, { ...simulated, gas: tx.gas, authorizationList: tx.authorizationList }, { timeoutMs: this.deps.timeoutMs, method: this.deps.method });
      const execution = answer.method === 'eth_simulateV1' ? executionFromSimulateV1(answer.call as SimulateV1Call, simulated) : executionFromCallTrace(answer.trace as CallFrame);
      const moved = movementsOf(execution);
      const contracts = fungibleContracts(moved);
      const remaining = Math.max(0, this.deps.timeoutMs - (Date.now() - started));
      const raw = contracts.length > 0 ? await tokenMetadataCalls(rpc, contracts, answer.block, remaining) : new Map();
      const tokens = new Map([...raw].map(([c, r]) => [c, { symbol: decodeSymbol(r.symbol), decimals: decodeDecimals(r.decimals) }]));
      const named = nameAssets(moved, tokens, { symbol: 'ETH', decimals: 18 });
      const others = named.transfers.flatMap((t) => [t.from, t.to]).map((a) => a.toLowerCase()).filter((a) => a !== from);
      const own = new Set([from, ...(await heldAmong(request, others, toChecksumAddress))].map((a) => a.toLowerCase()));
      return {
        status: 'SIMULATED',
        chain: 'ethereum',
        network,
        block: answer.block.toString(),
        simulatedAt: new Date().toISOString(),
        reverted: execution.reverted,
        ...(execution.reverted ? { revertReason: decodeRevertReason(execution.revertData, execution.revertMessage) } : {}),
        transfers: named.transfers,
        approvals: named.approvals,
        balanceChanges: balanceChangesOf(named.transfers, (a) => own.has(a.toLowerCase())),
        deployments: execution.reverted ? [] : execution.deployments.map((d) => toChecksumAddress(d)),
        delegations: delegationsOf(tx.authorizationList),
      };
    } catch (err) {
      return { ...empty('FAILED', network, `the simulation on ${caip2} failed: ${(err as Error).message}`), simulatedAt: new Date().toISOString() };
    }
  }
}

/**
 * The addresses among `candidates` that the organization holds (one of its wallet accounts or private
 * keys), for any chain: `stored` gives the form addresses are stored in (EIP-55 for Ethereum; the
 * address itself for base58 chains). At most MAX_OWN_LOOKUPS distinct candidates are looked up.
 */
export async function heldAmong(request: Pick<SimulationRequest, 'repos' | 'organizationId'>, candidates: string[], stored: (address: string) => string = (a) => a): Promise<string[]> {
  const distinct = [...new Set(candidates)].slice(0, MAX_OWN_LOOKUPS);
  const held = await Promise.all(
    distinct.map(async (a) => {
      const address = stored(a);
      const [accounts, keys] = await Promise.all([request.repos.wallets.accountsByAddress(request.organizationId, address), request.repos.privateKeys.findByAddress(request.organizationId, address)]);
      return accounts.length > 0 || keys.length > 0 ? a : undefined;
    }),
  );
  return held.filter((a): a is string => a !== undefined);
}

// ------------------------------------------------------------------------------ what policies read

const MAX_UINT256 = (1n << 256n) - 1n;

function policyAsset(a: SimulatedAsset): PolicySimulationAsset {
  return {
    kind: a.kind,
    contract: a.contract ?? '',
    symbol: a.symbol ?? '',
    ...(a.decimals !== undefined ? { decimals: a.decimals } : {}),
    token_id: a.tokenId ?? '',
  };
}

/**
 * `simulation` as policies read it (src/policy/context.ts Simulation). Outflows are the transfers out
 * of the signer or of another address of the organization whose balance it changes. When it did not
 * run (NOT_SIMULATED, FAILED), every field but `status`, `reason` and `network` is Unavailable:
 * reading one is an evaluation error, so an ALLOW on it never allows and a DENY on it applies.
 */
export function simulationKeyword(c: AssetChanges, signer: string): Simulation {
  const base = { status: c.status, reason: c.reason ?? '', network: c.network };
  if (c.status !== 'SIMULATED') {
    const gone = new Unavailable(`the transaction's simulation is ${c.status}${c.reason ? `: ${c.reason}` : ''}; a policy on simulation.* cannot pass without one`);
    const fields = ['block', 'reverted', 'revert_reason', 'outflows', 'transfers', 'approvals', 'balance_changes', 'deployments', 'delegations'] as const;
    // Unavailable stands where a value would: the evaluator reports it when read (values.ts).
    return { ...base, ...Object.fromEntries(fields.map((f) => [f, gone])) } as unknown as Simulation;
  }
  const own = new Set([signer.toLowerCase(), ...c.balanceChanges.map((b) => b.address.toLowerCase())]);
  const transfer = (t: SimulatedTransfer) => ({ asset: policyAsset(t.asset), from: t.from, to: t.to, amount: BigInt(t.amount) });
  return {
    ...base,
    block: BigInt(c.block ?? '0'),
    reverted: c.reverted,
    revert_reason: c.revertReason ?? '',
    outflows: c.transfers.filter((t) => own.has(t.from.toLowerCase())).map(transfer),
    transfers: c.transfers.map(transfer),
    approvals: c.approvals.map((a) => ({
      asset: policyAsset(a.asset),
      owner: a.owner,
      spender: a.spender,
      amount: a.amount === 'unlimited' ? MAX_UINT256 : BigInt(a.amount),
      unlimited: a.amount === 'unlimited',
      revoked: a.revoked,
      via: a.via,
    })),
    balance_changes: c.balanceChanges.map((b) => ({ address: b.address, asset: policyAsset(b.asset), delta: BigInt(b.delta) })),
    deployments: c.deployments,
    delegations: c.delegations,
  };
}

// ------------------------------------------------------------------------------ how it is shown

const GROUP = /\B(?=(\d{3})+(?!\d))/g;

/** An amount of base units in the asset's own units where its decimals are known ("1,200.5 USDC"). */
export function assetAmountText(amount: string, asset: SimulatedAsset): string {
  if (amount === 'unlimited') return `unlimited ${assetName(asset)}`;
  if (asset.kind === 'erc721') return `${assetName(asset)} #${asset.tokenId ?? '?'}`;
  const value = BigInt(amount);
  const negative = value < 0n;
  const abs = negative ? -value : value;
  let text: string;
  if (asset.decimals !== undefined) {
    const unit = 10n ** BigInt(asset.decimals);
    const whole = (abs / unit).toString().replace(GROUP, ',');
    const fraction = asset.decimals > 0 ? (abs % unit).toString().padStart(asset.decimals, '0').replace(/0+$/, '') : '';
    text = fraction ? `${whole}.${fraction}` : whole;
  } else {
    text = `${abs.toString().replace(GROUP, ',')} base units of`;
  }
  return `${negative ? '-' : ''}${text} ${assetName(asset)}${asset.kind === 'erc1155' ? ` #${asset.tokenId ?? '?'}` : ''}`;
}

function assetName(asset: SimulatedAsset): string {
  return asset.symbol ?? asset.contract ?? asset.kind;
}

const short = (a: string) => (a.length > 14 ? `${a.slice(0, 6)}…${a.slice(-4)}` : a);

/** One line of what the simulation says the transaction does: "sends 1,200 USDC from 0x… to 0x…; grants unlimited approval to 0x…". */
export function simulationSummary(c: AssetChanges): string {
  if (c.status === 'NOT_SIMULATED') return `not simulated: ${c.reason ?? 'no simulation ran'}`;
  if (c.status === 'FAILED') return `simulation failed: ${c.reason ?? 'the node did not answer'}`;
  if (c.reverted) return `reverts: ${c.revertReason ?? 'execution reverted'}`;
  const parts: string[] = [];
  for (const t of c.transfers) parts.push(`sends ${assetAmountText(t.amount, t.asset)} from ${short(t.from)} to ${short(t.to)}`);
  for (const a of c.approvals) {
    if (a.revoked) parts.push(`revokes ${short(a.spender)}'s approval on ${assetName(a.asset)}`);
    else if (a.via === 'setApprovalForAll') parts.push(`grants ${short(a.spender)} approval for all ${assetName(a.asset)} of ${short(a.owner)}`);
    else parts.push(`grants ${a.amount === 'unlimited' ? 'unlimited approval' : `approval of ${assetAmountText(a.amount, a.asset)}`} to ${short(a.spender)}${a.via === 'permit' ? ' (permit)' : ''}`);
  }
  for (const d of c.deployments) parts.push(`deploys ${short(d)}`);
  for (const d of c.delegations) parts.push(`delegates ${short(d.authority)} to ${short(d.delegate)}`);
  return parts.length ? parts.join('; ') : 'moves no assets';
}

/** The simulation as a decoded-view section (label/value rows), so `sigil activities show` prints it. */
export function simulationSection(c: AssetChanges): { title: string; rows: { label: string; value: string; note?: string }[] } {
  const rows: { label: string; value: string; note?: string }[] = [{ label: 'status', value: c.status, note: c.reason }];
  if (c.block) rows.push({ label: 'block', value: c.block, note: c.simulatedAt });
  rows.push({ label: 'summary', value: simulationSummary(c) });
  for (const b of c.balanceChanges) rows.push({ label: `balance ${b.address}`, value: assetAmountText(b.delta, b.asset) });
  return { title: 'Simulation', rows };
}
