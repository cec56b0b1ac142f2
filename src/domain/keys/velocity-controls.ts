// Velocity controls (docs/velocity-controls.md; @turnkey/http 6.6.0 v1CreateVelocityControlIntent, v1VelocityControl):
// a named aggregate over time that policies read as `controls.<identifier>`. This file holds what a
// control is and the rules of create_velocity_control / delete_velocity_control; what counts toward
// a control and when is src/domain/keys/velocity-limits.ts.
//
// Rules at creation (each refusal is a 400 that changes nothing):
// - `identifier` is an identifier of the policy language (`[A-Za-z_][A-Za-z0-9_]*`, at most 64
//   characters, not `true`, `false` or `in`), unique in the organization, so `controls.<identifier>`
//   parses; `name` is a non-empty label of at most 256 characters.
// - `dataSource` names exactly one source. `activityExecution`: COUNT of executed activities,
//   optionally of the listed types (each listed type stands for every version of it, as
//   `activity.kind` does, so an older type value cannot slip past a limit). `chainAssetTransfer`:
//   the transfers signed activities authorize, of the assets it lists (CAIP-19): Ethereum native
//   value `eip155:<chainId>/slip44:60` (decimals "18"), ERC-20 tokens
//   `eip155:<chainId>/erc20:0x<contract>` (decimals "0" to "18"), native SOL
//   `solana:<cluster>/slip44:501` (decimals "9") and SPL tokens `solana:<cluster>/token:<mint>`
//   (decimals "0" to "18"), bitcoin `bip122:<genesis prefix>/slip44:0` (decimals "8"; mainnet,
//   testnet3, testnet4, signet, regtest), TRX `tron:<network>/slip44:195` (decimals "6") and TRC-20
//   tokens `tron:<network>/trc20:<base58 contract>` (decimals "0" to "18"). Other assets are refused rather than accepted as a limit Sigil would
//   never count toward. Decimals stop at 18 because amounts are kept exactly in the threshold's
//   fixed point (18 fractional digits): a base unit of a token with d ≤ 18 decimals is exactly
//   10^(18-d) of it, while one with more decimals would have to be rounded. `phase` may be
//   `signature` (the default: measured when Sigil signs), not the reserved `submission`.
// - `aggregation`: `method` COUNT for activityExecution, SUM (amounts in the asset's whole units,
//   so "10" is 10 ether) or COUNT (transfers) for chainAssetTransfer; `operator` one of the five; `threshold` a
//   non-negative decimal string of at most 38 digits, at most 18 of them after the point; `window`
//   exactly one of `rolling {duration}` (whole seconds, 1 to 10 years) and `infinite`; `groupBy`
//   exactly one of `organization`, `user`, `wallet`.
// - an organization holds at most 100 controls.
//
// Deleting a control that a policy of the organization reads is refused, naming the policies: a
// limit cannot disappear from under the policy that enforces it (drop or change the policy first).
import { SigilError, badRequestDetail, invalid, notFound } from '../../errors/errors.js';
import { isUniqueViolation, type Repositories, type VelocityControlRow } from '../../store/index.js';
import { checkName } from '../identity/contacts.js';
import type { ActivityContext } from '../context.js';
import { loadCompiledPolicies } from '../governance/policies.js';
import { activityKind } from '../governance/policy-context.js';
import { timestamp } from '../records.js';
import { base58, createBase58check } from '@scure/base';
import { sha256 } from '@noble/hashes/sha2.js';

export const COUNT = 'VELOCITY_CONTROL_AGGREGATION_METHOD_COUNT';
export const SUM = 'VELOCITY_CONTROL_AGGREGATION_METHOD_SUM';
export const OPERATORS = [
  'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN',
  'VELOCITY_CONTROL_AGGREGATION_OPERATOR_LESS_THAN_OR_EQUAL',
  'VELOCITY_CONTROL_AGGREGATION_OPERATOR_EQUAL',
  'VELOCITY_CONTROL_AGGREGATION_OPERATOR_GREATER_THAN_OR_EQUAL',
  'VELOCITY_CONTROL_AGGREGATION_OPERATOR_GREATER_THAN',
] as const;
export type Operator = (typeof OPERATORS)[number];

/** Controls an organization may hold. */
export const MAX_CONTROLS = 100;
/** Longest rolling window: ten years of seconds. */
export const MAX_WINDOW_SECONDS = 10 * 366 * 24 * 3600;
/** Amounts are fixed-point with the threshold's 18 fractional digits. */
export const SCALE = 10n ** 18n;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const RESERVED = new Set(['true', 'false', 'in']);
const THRESHOLD = /^([0-9]+)(?:\.([0-9]+))?$/;
const DURATION = /^[1-9][0-9]{0,9}$/;

export type GroupBy = 'organization' | 'user' | 'wallet';

// The CAIP-19 assets Sigil measures transfers of. Ethereum chain ids are CAIP-2 `eip155:<decimal>`;
// contract addresses compare case-insensitively (EIP-55 checksums are a spelling, not a different
// address). Solana references are base58 (CAIP-30: the genesis hash, usually cut to 32 characters);
// mints are base58 public keys and compare exactly.
const ETH_NATIVE = /^eip155:([1-9][0-9]{0,19})\/slip44:60$/;
const ERC20 = /^eip155:([1-9][0-9]{0,19})\/erc20:(0x[0-9a-fA-F]{40})$/;
const SOL_NATIVE = /^solana:([1-9A-HJ-NP-Za-km-z]{1,44})\/slip44:501$/;
const SPL = /^solana:([1-9A-HJ-NP-Za-km-z]{1,44})\/token:([1-9A-HJ-NP-Za-km-z]{32,44})$/;
// Bitcoin (CAIP-2 bip122, BIP-122): the reference is the first 32 hex digits of the genesis block
// hash. Only the networks below are measured: a chain Sigil cannot tell a PSBT is for would be a
// limit nothing counts toward. testnet3, testnet4 and signet share one address encoding (tb1…, m/n/2…).
const BTC_NATIVE = /^bip122:([0-9a-f]{32})\/slip44:0$/;
export const BITCOIN_CHAINS: Readonly<Record<string, string>> = {
  '000000000019d6689c085ae165831e93': 'mainnet',
  '000000000933ea01ad0ee984209779ba': 'testnet3',
  '00000000da84f2bafbbc53dee25a72ae': 'testnet4',
  '00000008819873e925422c1ff0f99f7c': 'signet',
  '0f9188f13cb7b2c71f2a335e3a4fc328': 'regtest',
};
// Tron: ChainAgnostic registers no `tron` namespace; wallets (WalletConnect/Reown) write the chain id
// in hex (`tron:0x2b6653dc`), some tools in decimal (`tron:728126428`) or by name (`tron:mainnet`).
// Sigil accepts those three spellings of mainnet, Shasta and Nile. A Tron transaction does not name
// its network (its ref_block_hash is of a chain a signer cannot look at), so, as with Solana, the
// asset key leaves the network out and a Tron transfer counts whichever network it is sent to.
const TRX_NATIVE = /^tron:([-_a-zA-Z0-9]{1,32})\/slip44:195$/;
const TRC20 = /^tron:([-_a-zA-Z0-9]{1,32})\/trc20:([1-9A-HJ-NP-Za-km-z]{1,64})$/;
export const TRON_CHAINS: Readonly<Record<string, string>> = {
  '0x2b6653dc': 'mainnet',
  '728126428': 'mainnet',
  mainnet: 'mainnet',
  '0x94a9059e': 'shasta',
  '2494104990': 'shasta',
  shasta: 'shasta',
  '0xcd8690dc': 'nile',
  '3448148188': 'nile',
  nile: 'nile',
};
const base58checkSha256 = createBase58check(sha256);
const DECIMALS = /^(0|[1-9][0-9]?)$/;
/** Most decimals a token may have: amounts are kept exactly in the threshold's 18-digit fixed point. */
export const MAX_DECIMALS = 18;

/**
 * One listed asset, by the key a signed transaction's transfers are matched on: `eth:<chainId>`,
 * `erc20:<chainId>:<lowercase contract>`, `sol`, `spl:<mint>`. A Solana transaction does not name
 * its cluster (only a recent blockhash, which a signer without a chain cannot place), so Solana
 * keys leave the cluster out: a Solana transfer counts whichever cluster it is sent to. Bitcoin:
 * `btc:<network>` (mainnet, testnet3, testnet4, signet, regtest). Tron: `trx`, `trc20:<base58
 * contract>`, without the network for the reason Solana's keys have none.
 */
export interface AssetDefinition {
  key: string;
  /** 10^(18 - decimals): what one base unit is in the threshold's fixed point. */
  unit: bigint;
}

/** What a control measures. */
export type ControlSource =
  | { kind: 'activityExecution' }
  /** Transfers of the listed assets, by key; SUM in whole units × 10^18, or COUNT of transfers. */
  | { kind: 'chainAssetTransfer'; assets: ReadonlyMap<string, AssetDefinition>; method: 'SUM' | 'COUNT' };

/** The asset key of a CAIP-19 name Sigil measures and the decimals it must have, or a reason it is refused. */
export function assetOf(caip19: string): { key: string; decimals?: number; label?: string } | { refused: string } {
  let m = ETH_NATIVE.exec(caip19);
  if (m) return { key: `eth:${BigInt(m[1])}`, decimals: 18, label: 'ether' };
  m = ERC20.exec(caip19);
  if (m) return { key: `erc20:${BigInt(m[1])}:${m[2].toLowerCase()}` };
  m = SOL_NATIVE.exec(caip19);
  if (m) return { key: 'sol', decimals: 9, label: 'SOL' };
  m = SPL.exec(caip19);
  if (m) {
    // A mint is a 32-byte public key; anything else is a typo no transfer would ever match.
    let bytes = 0;
    try {
      bytes = base58.decode(m[2]).length;
    } catch {
      bytes = 0;
    }
    if (bytes !== 32) return { refused: `the mint ${m[2]} is not a base58 32-byte public key` };
    return { key: `spl:${m[2]}` };
  }
  m = BTC_NATIVE.exec(caip19);
  if (m) {
    const network = BITCOIN_CHAINS[m[1]];
    if (!network) return { refused: `bip122:${m[1]} is not a Bitcoin network this Sigil measures (${Object.entries(BITCOIN_CHAINS).map(([ref, n]) => `${n} bip122:${ref}`).join(', ')})` };
    return { key: `btc:${network}`, decimals: 8, label: 'bitcoin' };
  }
  m = TRX_NATIVE.exec(caip19) ?? TRC20.exec(caip19);
  if (m) {
    if (!TRON_CHAINS[m[1]]) return { refused: `tron:${m[1]} is not a Tron network this Sigil measures (mainnet, shasta, nile; written tron:0x2b6653dc, tron:728126428 or tron:mainnet)` };
    if (m[2] === undefined) return { key: 'trx', decimals: 6, label: 'TRX' };
    // A contract address is base58check of 0x41 and 20 bytes; a typo would be a token no transfer matches.
    let body: Uint8Array | undefined;
    try {
      body = base58checkSha256.decode(m[2]);
    } catch {
      body = undefined;
    }
    if (!body || body.length !== 21 || body[0] !== 0x41) return { refused: `the contract ${m[2]} is not a base58check Tron address (T…, 0x41 and 20 bytes)` };
    return { key: `trc20:${m[2]}` };
  }
  return {
    refused:
      'this Sigil measures eip155:<chainId>/slip44:60 (ether), eip155:<chainId>/erc20:0x<contract> (ERC-20 tokens), solana:<cluster>/slip44:501 (SOL), solana:<cluster>/token:<mint> (SPL tokens), bip122:<genesis>/slip44:0 (bitcoin), tron:<network>/slip44:195 (TRX) and tron:<network>/trc20:<contract> (TRC-20 tokens); a limit on an asset it does not measure would never hold',
  };
}

const unitOf = (decimals: number) => 10n ** BigInt(MAX_DECIMALS - decimals);

/** A control as the engine uses it: parsed once from its row. */
export interface VelocityControl {
  id: string;
  identifier: string;
  source: ControlSource;
  /** Activity kinds (`SIGN_RAW_PAYLOAD`) that count; undefined: every activity. */
  kinds?: ReadonlySet<string>;
  operator: Operator;
  /** threshold × 10^18 */
  threshold: bigint;
  /** Rolling window in seconds; undefined: infinite. */
  windowSeconds?: number;
  groupBy: GroupBy;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function refuse(field: string, description: string): SigilError {
  return invalid(`invalid velocity control: ${field}: ${description}`, [badRequestDetail([{ field, description }])]);
}

/** The one member of a "oneof" object that is set; refuses none or several. */
function oneOf(value: unknown, field: string, members: readonly string[]): string {
  const set = isObject(value) ? members.filter((m) => value[m] !== undefined && value[m] !== null) : [];
  if (set.length !== 1) throw refuse(field, `must set exactly one of ${members.join(', ')}${set.length > 1 ? ` (got ${set.join(' and ')})` : ''}`);
  return set[0];
}

/** A decimal string of the aggregate's scale (×10^18), or a refusal naming `field`. */
export function parseThreshold(text: unknown, field = 'aggregation.threshold'): bigint {
  const m = typeof text === 'string' ? THRESHOLD.exec(text) : null;
  if (!m) throw refuse(field, 'must be a non-negative base-10 decimal string such as "10" or "0.5"');
  const [, whole, fraction = ''] = m;
  if (fraction.length > 18) throw refuse(field, `has ${fraction.length} fractional digits; at most 18`);
  if (whole.length + fraction.length > 38) throw refuse(field, `has ${whole.length + fraction.length} digits; at most 38`);
  return BigInt(whole) * SCALE + BigInt(fraction.padEnd(18, '0') || '0');
}

/** An aggregate (×10^18) as the decimal string a threshold is written in. */
export function formatAmount(scaled: bigint): string {
  const whole = scaled / SCALE;
  const fraction = (scaled % SCALE).toString().padStart(18, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : `${whole}`;
}

function checkActivityFilter(filter: unknown, field: string, knownTypes: ReadonlySet<string>): string[] | undefined {
  if (filter === undefined || filter === null) return undefined;
  const list = (filter as Json).activity;
  if (list === undefined || list === null) return undefined;
  if (!Array.isArray(list) || list.length === 0) throw refuse(`${field}.activity`, 'must list at least one activity type, or be left out to count every activity');
  return list.map((entry, i) => {
    const type = isObject(entry) ? entry.activityType : undefined;
    if (typeof type !== 'string' || !knownTypes.has(type)) {
      throw refuse(`${field}.activity[${i}].activityType`, `${JSON.stringify(String(type).slice(0, 80))} is not an activity type (ACTIVITY_TYPE_…)`);
    }
    return type;
  });
}

/**
 * Checks a create_velocity_control intent and answers the control it describes. `knownTypes` are
 * the activity type values of the API (src/schemas), which the filter's entries must be.
 */
export function checkControlIntent(p: Json, knownTypes: ReadonlySet<string>): Omit<VelocityControl, 'id'> & { name: string } {
  if (typeof p.identifier !== 'string' || !IDENTIFIER.test(p.identifier) || RESERVED.has(p.identifier)) {
    throw refuse(
      'identifier',
      `${JSON.stringify(String(p.identifier).slice(0, 80))} cannot be read as controls.<identifier>: use letters, digits and underscores, not starting with a digit, at most 64 characters (and not true, false or in)`,
    );
  }
  checkName(String(p.name ?? ''), 'name');
  const sourceName = oneOf(p.dataSource, 'dataSource', ['chainAssetTransfer', 'activityExecution']);
  const sourceBody = (p.dataSource as Json)[sourceName] as Json;
  if (!isObject(sourceBody)) throw refuse(`dataSource.${sourceName}`, 'must be an object');
  const types = checkActivityFilter(sourceBody.filter, `dataSource.${sourceName}.filter`, knownTypes);
  const a = p.aggregation as Json;
  let source: ControlSource;
  if (sourceName === 'activityExecution') {
    if (a.method !== COUNT) throw refuse('aggregation.method', `${JSON.stringify(a.method)}: an activityExecution source is counted (${COUNT})`);
    source = { kind: 'activityExecution' };
  } else {
    source = checkAssetTransfer(sourceBody, a.method);
  }
  if (!OPERATORS.includes(a.operator as Operator)) throw refuse('aggregation.operator', `must be one of ${OPERATORS.join(', ')}`);
  const threshold = parseThreshold(a.threshold);
  const window = oneOf(a.window, 'aggregation.window', ['rolling', 'infinite']);
  let windowSeconds: number | undefined;
  if (window === 'rolling') {
    const duration = ((a.window as Json).rolling as Json).duration;
    if (typeof duration !== 'string' || !DURATION.test(duration) || Number(duration) > MAX_WINDOW_SECONDS) {
      throw refuse('aggregation.window.rolling.duration', `must be a whole number of seconds from 1 to ${MAX_WINDOW_SECONDS}, as a string`);
    }
    windowSeconds = Number(duration);
  } else if (!isObject((a.window as Json).infinite)) {
    throw refuse('aggregation.window.infinite', 'must be an object ({})');
  }
  const groupBy = oneOf(a.groupBy, 'aggregation.groupBy', ['organization', 'user', 'wallet']) as GroupBy;
  if (!isObject((a.groupBy as Json)[groupBy])) throw refuse(`aggregation.groupBy.${groupBy}`, 'must be an object ({})');
  return {
    identifier: p.identifier,
    name: String(p.name),
    source,
    kinds: types ? new Set(types.map(activityKind)) : undefined,
    operator: a.operator as Operator,
    threshold,
    windowSeconds,
    groupBy,
  };
}

/** A chainAssetTransfer source: the assets it lists, each once, with the decimals it must have. */
function checkAssetTransfer(body: Json, method: unknown): ControlSource {
  const field = 'dataSource.chainAssetTransfer';
  if (method !== SUM && method !== COUNT) throw refuse('aggregation.method', `must be ${SUM} or ${COUNT}`);
  const definition = body.definition;
  if (!Array.isArray(definition) || definition.length === 0) throw refuse(`${field}.definition`, 'must list at least one asset');
  const assets = new Map<string, AssetDefinition>();
  definition.forEach((d, i) => {
    const caip19 = isObject(d) ? d.caip19 : undefined;
    const asset = typeof caip19 === 'string' ? assetOf(caip19) : { refused: 'must be a CAIP-19 asset name such as eip155:1/slip44:60' };
    if ('refused' in asset) throw refuse(`${field}.definition[${i}].caip19`, `${JSON.stringify(String(caip19).slice(0, 120))}: ${asset.refused}`);
    const decimals = (d as Json).decimals;
    const n = typeof decimals === 'string' && DECIMALS.test(decimals) ? Number(decimals) : undefined;
    if (asset.decimals !== undefined && n !== asset.decimals) {
      throw refuse(`${field}.definition[${i}].decimals`, `${asset.label} has ${asset.decimals} decimals, got ${JSON.stringify(decimals)}`);
    }
    if (n === undefined || n > MAX_DECIMALS) {
      throw refuse(`${field}.definition[${i}].decimals`, `must be a whole number from "0" to "${MAX_DECIMALS}" as a string (amounts are kept exactly with 18 fractional digits), got ${JSON.stringify(decimals)}`);
    }
    if (assets.has(asset.key)) {
      const why =
        asset.key.startsWith('sol') || asset.key.startsWith('spl:')
          ? ' (a Solana transaction does not name its cluster, so one Solana asset is one entry whatever the cluster)'
          : asset.key === 'trx' || asset.key.startsWith('trc20:')
            ? ' (a Tron transaction does not name its network, so one Tron asset is one entry whatever the network)'
            : '';
      throw refuse(`${field}.definition[${i}].caip19`, `${caip19} is listed twice${why}`);
    }
    assets.set(asset.key, { key: asset.key, unit: unitOf(n) });
  });
  const phase = body.phase;
  if (phase !== undefined && phase !== null) {
    const which = oneOf(phase, `${field}.phase`, ['signature', 'submission']);
    if (which === 'submission') throw refuse(`${field}.phase.submission`, 'is reserved; transfers are measured when Sigil signs them (signature)');
  }
  return { kind: 'chainAssetTransfer', assets, method: method === SUM ? 'SUM' : 'COUNT' };
}

/** The engine's view of a stored control (rows were checked when created). */
export function controlOf(row: VelocityControlRow): VelocityControl {
  const stored = JSON.parse(row.data_source) as Json;
  const a = JSON.parse(row.aggregation) as Json;
  const body = (stored.activityExecution ?? stored.chainAssetTransfer) as Json;
  const filter = (body.filter as Json | undefined)?.activity as { activityType: string }[] | undefined;
  const source: ControlSource = stored.chainAssetTransfer
    ? {
        kind: 'chainAssetTransfer',
        assets: new Map(
          ((stored.chainAssetTransfer as Json).definition as { caip19: string; decimals: string }[]).map((d) => {
            const { key } = assetOf(d.caip19) as { key: string };
            return [key, { key, unit: unitOf(Number(d.decimals)) }];
          }),
        ),
        method: a.method === SUM ? 'SUM' : 'COUNT',
      }
    : { kind: 'activityExecution' };
  const rolling = (a.window as Json).rolling as Json | undefined;
  const groupBy = (['organization', 'user', 'wallet'] as const).find((g) => (a.groupBy as Json)[g] !== undefined)!;
  return {
    id: row.id,
    identifier: row.identifier,
    source,
    kinds: filter ? new Set(filter.map((f) => activityKind(f.activityType))) : undefined,
    operator: a.operator as Operator,
    threshold: parseThreshold(a.threshold),
    windowSeconds: rolling ? Number(rolling.duration) : undefined,
    groupBy,
  };
}

/** The v1VelocityControl record. */
export function velocityControlRecord(row: VelocityControlRow) {
  return {
    velocityControlId: row.id,
    organizationId: row.organization_id,
    name: row.name,
    dataSource: JSON.parse(row.data_source),
    aggregation: JSON.parse(row.aggregation),
    createdAt: timestamp(row.created_at),
    updatedAt: timestamp(row.updated_at),
    identifier: row.identifier,
  };
}

export async function requireVelocityControl(repos: Repositories, organizationId: string, id: string): Promise<VelocityControlRow> {
  const row = await repos.velocityControls.get(organizationId, id);
  if (!row) throw notFound(`velocity control not found: ${id}`);
  return row;
}

function identifierTaken(identifier: string): SigilError {
  return refuse('identifier', `velocity control identifier must be unique: the organization already has a control "${identifier}"`);
}

/** Keeps only the members the API defines, so what is stored and shown is exactly the intent's. */
function storedDataSource(p: Json): Json {
  const source = p.dataSource as Json;
  const name = source.chainAssetTransfer !== undefined && source.chainAssetTransfer !== null ? 'chainAssetTransfer' : 'activityExecution';
  const body = source[name] as Json;
  const filter = (body.filter as Json | undefined)?.activity as { activityType: string }[] | undefined;
  const out: Json = filter ? { filter: { activity: filter.map((f) => ({ activityType: f.activityType })) } } : {};
  if (name === 'chainAssetTransfer') {
    out.definition = (body.definition as Json[]).map((d) => ({ caip19: d.caip19, decimals: d.decimals }));
    out.phase = { signature: {} };
  }
  return { [name]: out };
}

function storedAggregation(p: Json): Json {
  const a = p.aggregation as Json;
  const rolling = (a.window as Json).rolling as Json | undefined;
  const groupBy = (['organization', 'user', 'wallet'] as const).find((g) => (a.groupBy as Json)[g] !== undefined && (a.groupBy as Json)[g] !== null)!;
  return {
    method: a.method,
    operator: a.operator,
    threshold: a.threshold,
    window: rolling ? { rolling: { duration: rolling.duration } } : { infinite: {} },
    groupBy: { [groupBy]: {} },
  };
}

export async function createVelocityControl(ctx: ActivityContext, p: Json, knownTypes: ReadonlySet<string>): Promise<{ velocityControlId: string }> {
  const checked = checkControlIntent(p, knownTypes);
  const orgId = ctx.organization.id;
  const existing = await ctx.repos.velocityControls.list(orgId);
  if (existing.some((c) => c.identifier === checked.identifier)) throw identifierTaken(checked.identifier);
  if (existing.length >= MAX_CONTROLS) {
    throw new SigilError('RATE_LIMIT_EXCEEDED', `organization has exceeded maximum velocity controls: it holds at most ${MAX_CONTROLS}`);
  }
  const id = ctx.newId();
  try {
    await ctx.repos.velocityControls.insert({
      id,
      organization_id: orgId,
      identifier: checked.identifier,
      name: checked.name,
      data_source: JSON.stringify(storedDataSource(p)),
      aggregation: JSON.stringify(storedAggregation(p)),
      created_at: ctx.now,
      updated_at: ctx.now,
    });
  } catch (err) {
    // A concurrent creation took the identifier between the check and the insert.
    if (isUniqueViolation(err)) throw identifierTaken(checked.identifier);
    throw err;
  }
  return { velocityControlId: id };
}

export async function deleteVelocityControl(ctx: ActivityContext, id: string): Promise<{ velocityControlId: string }> {
  const orgId = ctx.organization.id;
  const row = await requireVelocityControl(ctx.repos, orgId, id);
  // Taken as create_policy takes it (src/domain/governance/quotas.ts), so a policy naming this control cannot
  // be created between the check below and the delete.
  await ctx.repos.quotas.lockCount('policies', orgId);
  const users = (await loadCompiledPolicies(ctx.repos, orgId)).filter((policy) => policy.controls.has(row.identifier));
  if (users.length > 0) {
    const named = users.map((policy) => `${JSON.stringify(policy.name)} (${policy.id})`).join(', ');
    throw invalid(`velocity control "${row.identifier}" is read by ${users.length === 1 ? 'policy' : 'policies'} ${named}: update or delete ${users.length === 1 ? 'it' : 'them'} first`, [
      badRequestDetail([{ field: 'velocityControlId', description: `read as controls.${row.identifier} by ${users.map((u) => u.id).join(', ')}` }]),
    ]);
  }
  await ctx.repos.velocityControls.delete(orgId, row.id);
  return { velocityControlId: row.id };
}
