// Decoded approvals: what a waiting signature will sign, decoded
// by the server from the stored intent with the same parsers that sign it (src/chains,
// src/chains/ethereum/eip712.ts, src/chains/ethereum/abi.ts), never from anything the submitter described. The view is
// data (sections of label/value rows, flags, digests) so the dashboard and `sigil activities show`
// print the same thing; docs/policies.md "Approving what you see" documents the `decodedView` field it becomes.
// The digests are computed over the stored payload by rules the dashboard re-implements on its own
// (dashboard/src/integrity.ts), so a renderer that showed one thing and signs another is caught.
import { toChecksumAddress } from '../../chains/addresses/ethereum.js';
import { AbiDecodeError, decodeFunctionArguments, findFunction, parseAbi, type AbiFunction, type ParsedAbi } from '../../chains/ethereum/abi.js';
import { eip7702AuthorizationDigest, hashTypedData, parseEip7702Authorization, parseTypedData, type Eip712Value } from '../../chains/ethereum/eip712.js';
import { keccak256, sha256 } from '../../crypto/hash.js';
import { canonicalJson } from '../../crypto/canonical-json.js';
import {
  addressOf,
  bitcoinNetworkOfAddress,
  bitcoinTxPolicyFields,
  parseBitcoinPsbt,
  parseEthereumTransaction,
  parseSolanaTransaction,
  parseTronTransaction,
  solanaTxPolicyFields,
  tronTxPolicyFields,
  SYSTEM_PROGRAM,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
  type EthereumTransaction,
} from '../../chains/transactions.js';
import type { Barrier } from '../../barrier/barrier.js';
import type { ActivityRow, Repositories, VoteRow } from '../../store/index.js';
import { ETHEREUM_INTERFACE, parsedAbiOf } from './contract-interfaces.js';
import { signingTargetKeywords } from '../governance/policy-context.js';
import { resolveSigningTarget } from './signing.js';
import { simulationSection, type AssetChanges } from './simulation.js';
import { formatAmount } from './velocity-controls.js';
import { normalBitcoinAddress, ownAddresses } from './velocity-limits.js';

export interface DecodedRow {
  label: string;
  value: string;
  /** What the value is (a contract's stored label, "change", a unit). */
  note?: string;
}

export interface DecodedSection {
  title: string;
  rows: DecodedRow[];
}

export interface DecodedFlag {
  /** `danger`: the signature can hand over control of the account or a contract. */
  severity: 'danger' | 'warning';
  code: 'PROXY_UPGRADE' | 'DELEGATECALL' | 'EIP7702_DELEGATION' | 'UNDECODED_CALL' | 'CONTRACT_CREATION' | 'UNKNOWN_PROGRAM';
  message: string;
}

/**
 * A digest over the stored payload, by a rule the dashboard re-implements (`over`):
 * - `transaction`: keccak256 of the unsigned Ethereum transaction bytes (its signing hash);
 * - `solana-message`: sha256 of the message the Ed25519 signature covers (the transaction without its signature slots);
 * - `tron-raw-data`: sha256 of `raw_data` (the txID the key signs);
 * - `psbt`: sha256 of the PSBT bytes;
 * - `payload`: the raw payload's bytes (hex or UTF-8 per encoding) hashed by its hash function
 *   (`none` for HASH_FUNCTION_NO_OP: the payload is the digest);
 * - `intent`: sha256 of the canonical JSON of the stored intent (a send, whose transaction is built
 *   only when it is approved);
 * - `eip712`, `eip7702`: the typed-data / authorization digest (not recomputed in the browser).
 */
export interface DecodedDigest {
  over: 'transaction' | 'intent' | 'solana-message' | 'tron-raw-data' | 'psbt' | 'payload' | 'eip712' | 'eip7702';
  algorithm: 'keccak256' | 'sha256' | 'none' | 'eip712' | 'eip7702';
  /** Which payload of sign_raw_payloads (0 otherwise). */
  payloadIndex: number;
  /** 0x + lowercase hex. */
  value: string;
}

export interface DecodedView {
  format: 'ETHEREUM_TRANSACTION' | 'ETHEREUM_SEND' | 'SOLANA_TRANSACTION' | 'BITCOIN_PSBT' | 'TRON_TRANSACTION' | 'EIP712' | 'EIP7702_AUTHORIZATION' | 'RAW_PAYLOAD';
  /** One line naming what is approved: "send 1.5 ETH to 0x…". */
  summary: string;
  flags: DecodedFlag[];
  digests: DecodedDigest[];
  sections: DecodedSection[];
}

/** What decoding reads besides the payload: the signer, stored contract interfaces, the wallet's own addresses. */
export interface DecodeSources {
  /** The address `signWith` resolved to, when it was one. */
  signerAddress?: string;
  /** The stored Ethereum interface of a contract (EIP-55 address), if any. */
  contract(address: string): Promise<{ label: string; notes: string; abi: ParsedAbi } | undefined>;
  /** The signing wallet's (or private key's) own addresses, normalised as velocity-limits does. */
  ownAddresses(): Promise<ReadonlySet<string>>;
}

const hex = (b: Uint8Array) => '0x' + Buffer.from(b).toString('hex');

/** `value` base units of a `decimals`-digit asset, as a decimal string (reuses the velocity 10^18 formatter). */
export function formatUnits(value: bigint, decimals: number): string {
  if (decimals > 18) return formatAmount(value / 10n ** BigInt(decimals - 18));
  return formatAmount(value * 10n ** BigInt(18 - decimals));
}

const short = (a: string) => (a.length > 14 ? `${a.slice(0, 8)}…${a.slice(-6)}` : a);

// ------------------------------------------------------------------------------------ Ethereum

const CHAINS: Record<string, string> = {
  '1': 'Ethereum mainnet',
  '10': 'OP Mainnet',
  '56': 'BNB Smart Chain',
  '137': 'Polygon',
  '8453': 'Base',
  '42161': 'Arbitrum One',
  '43114': 'Avalanche C-Chain',
  '17000': 'Holesky',
  '11155111': 'Sepolia',
  '31337': 'local (anvil/hardhat)',
};

// Calls recognised whatever the stored ABIs say: an approver must see these even when nobody uploaded
// an interface. Parsed with the same ABI decoder as stored interfaces.
const fn = (name: string, inputs: [string, string][]) => ({ type: 'function', name, inputs: inputs.map(([n, t]) => ({ name: n, type: t })) });
const WELL_KNOWN_ABI = parseAbi([
  fn('transfer', [['to', 'address'], ['amount', 'uint256']]),
  fn('transferFrom', [['from', 'address'], ['to', 'address'], ['amount', 'uint256']]),
  fn('approve', [['spender', 'address'], ['amount', 'uint256']]),
  fn('upgradeTo', [['newImplementation', 'address']]),
  fn('upgradeToAndCall', [['newImplementation', 'address'], ['data', 'bytes']]),
  fn('changeAdmin', [['newAdmin', 'address']]),
  fn('upgrade', [['proxy', 'address'], ['implementation', 'address']]),
  fn('upgradeAndCall', [['proxy', 'address'], ['implementation', 'address'], ['data', 'bytes']]),
  fn('execTransaction', [
    ['to', 'address'],
    ['value', 'uint256'],
    ['data', 'bytes'],
    ['operation', 'uint8'],
    ['safeTxGas', 'uint256'],
    ['baseGas', 'uint256'],
    ['gasPrice', 'uint256'],
    ['gasToken', 'address'],
    ['refundReceiver', 'address'],
    ['signatures', 'bytes'],
  ]),
]);
/** Selectors that replace a proxy's implementation or admin (EIP-1967 proxies, OpenZeppelin ProxyAdmin). */
const PROXY_UPGRADES = new Set(['upgradeTo', 'upgradeToAndCall', 'changeAdmin', 'upgrade', 'upgradeAndCall']);
const ERC20_AMOUNT_CALLS = new Set(['transfer', 'transferFrom', 'approve']);
/** Safe calls nested inside Safe calls are followed this deep. */
const MAX_NESTING = 4;

/** Decimals of a token interface, from its notes or label ("decimals: 6" or "6 decimals"); docs/policies.md "Approving what you see" documents the convention. */
export function declaredDecimals(text: string): number | undefined {
  const m = /decimals\s*[:=]\s*(\d{1,2})\b/i.exec(text) ?? /\b(\d{1,2})\s+decimals\b/i.exec(text);
  return m && Number(m[1]) <= 36 ? Number(m[1]) : undefined;
}

function argText(v: unknown): string {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number') return String(v);
  return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
}

interface CallView {
  rows: DecodedRow[];
  flags: DecodedFlag[];
  /** "transfer 1.5 USDC to 0x…" when the call is a token movement. */
  summary?: string;
}

/** Decodes one call (`to`, `data`) with the stored ABI of `to`, else the well-known one; follows Safe execTransaction. */
async function decodeCall(sources: DecodeSources, to: string, data: Uint8Array, path: string, depth: number): Promise<CallView> {
  const rows: DecodedRow[] = [];
  const flags: DecodedFlag[] = [];
  if (data.length === 0) return { rows, flags };
  const stored = await sources.contract(toChecksumAddress(to.toLowerCase()));
  let func: AbiFunction | undefined = stored ? findFunction(stored.abi, data) : undefined;
  if (!func) func = findFunction(WELL_KNOWN_ABI, data);
  const where = path ? ` inside ${path}` : '';
  if (!func) {
    rows.push({ label: `${path ? path + ' ' : ''}call data`, value: hex(data), note: `selector ${hex(data.subarray(0, 4))}, no stored interface knows it` });
    if (data.length >= 4) flags.push({ severity: 'warning', code: 'UNDECODED_CALL', message: `Call${where} to ${to} could not be decoded: no stored interface knows selector ${hex(data.subarray(0, 4))}` });
    return { rows, flags };
  }
  let args: Record<string, unknown>;
  try {
    args = decodeFunctionArguments(func, data);
  } catch (err) {
    if (!(err instanceof AbiDecodeError)) throw err;
    flags.push({ severity: 'danger', code: 'UNDECODED_CALL', message: `Call data${where} of ${func.signature} does not decode: ${err.message}` });
    rows.push({ label: `${path ? path + ' ' : ''}call data`, value: hex(data) });
    return { rows, flags };
  }
  const prefix = path ? `${path} ` : '';
  rows.push({ label: `${prefix}function`, value: func.signature, note: stored && findFunction(stored.abi, data) ? `ABI of ${stored.label}` : 'well-known selector' });
  let summary: string | undefined;
  const decimals = stored ? declaredDecimals(`${stored.notes} ${stored.label}`) : undefined;
  for (const input of func.inputs) {
    const key = Object.hasOwn(args, input.name) ? input.name : String(func.inputs.indexOf(input));
    const value = args[key];
    const row: DecodedRow = { label: `${prefix}${input.name || key}`, value: argText(value) };
    if (ERC20_AMOUNT_CALLS.has(func.name) && input.name === 'amount' && typeof value === 'bigint' && decimals !== undefined) {
      row.note = `${formatUnits(value, decimals)} ${stored!.label}`;
    }
    if (input.canonical === 'address' && typeof value === 'string') {
      const known = await sources.contract(value);
      if (known) row.note = known.label;
    }
    rows.push(row);
  }
  if (ERC20_AMOUNT_CALLS.has(func.name) && typeof args.amount === 'bigint') {
    const amount = decimals !== undefined ? `${formatUnits(args.amount, decimals)} ${stored!.label}` : `${args.amount} base units of ${stored?.label ?? to}`;
    const dest = String(args.to ?? args.spender ?? '');
    summary = func.name === 'approve' ? `allow ${dest} to spend ${amount}` : `transfer ${amount} to ${dest}`;
  }
  if (PROXY_UPGRADES.has(func.name)) {
    const target = String(args.newImplementation ?? args.implementation ?? args.newAdmin ?? '');
    flags.push({
      severity: 'danger',
      code: 'PROXY_UPGRADE',
      message: `${func.name === 'changeAdmin' ? 'Proxy admin change' : 'Proxy upgrade'}${where}: ${func.signature} on ${to} sets ${target}`,
    });
  }
  if (func.name === 'execTransaction' && func.inputs.length === 10 && typeof args.to === 'string' && typeof args.data === 'string') {
    const inner = String(args.to);
    if (args.operation === 1n) {
      flags.push({ severity: 'danger', code: 'DELEGATECALL', message: `Safe execTransaction${where} with operation 1 (delegatecall): ${inner} runs with the Safe's storage and funds` });
    }
    if (depth < MAX_NESTING) {
      const nested = await decodeCall(sources, inner, Buffer.from(args.data.slice(2), 'hex'), `${prefix}execTransaction →`.trim(), depth + 1);
      rows.push(...nested.rows);
      flags.push(...nested.flags);
      summary = `Safe ${to} executes ${args.operation === 1n ? 'a delegatecall to' : 'a call to'} ${inner}${nested.summary ? `: ${nested.summary}` : ''}`;
    }
  }
  return { rows, flags, summary };
}

const gwei = (v: bigint) => `${formatUnits(v, 9)} gwei`;

export async function decodeEthereumTransaction(unsignedTransaction: string, sources: DecodeSources): Promise<DecodedView> {
  const tx: EthereumTransaction = parseEthereumTransaction(unsignedTransaction);
  const chain = tx.chainId === null ? 'none (pre-EIP-155: valid on every chain)' : `${tx.chainId}`;
  const to = tx.to ? toChecksumAddress(tx.to) : '';
  const toContract = to ? await sources.contract(to) : undefined;
  const from = sources.signerAddress && /^0x[0-9a-fA-F]{40}$/.test(sources.signerAddress) ? toChecksumAddress(sources.signerAddress.toLowerCase()) : sources.signerAddress ?? '';
  const rows: DecodedRow[] = [
    { label: 'chain', value: chain, note: tx.chainId !== null ? CHAINS[String(tx.chainId)] : undefined },
    { label: 'type', value: tx.type },
    { label: 'from', value: from },
    { label: 'to', value: to || '(contract creation)', note: toContract?.label },
    { label: 'value', value: `${formatUnits(tx.value, 18)} ETH`, note: `${tx.value} wei` },
    { label: 'nonce', value: tx.nonce.toString() },
    { label: 'gas limit', value: tx.gas.toString() },
  ];
  if (tx.gasPrice !== undefined) rows.push({ label: 'gas price', value: gwei(tx.gasPrice) });
  if (tx.maxFeePerGas !== undefined) rows.push({ label: 'max fee per gas', value: gwei(tx.maxFeePerGas) }, { label: 'max priority fee per gas', value: gwei(tx.maxPriorityFeePerGas!) });
  const maxFee = tx.gas * (tx.gasPrice ?? tx.maxFeePerGas!);
  rows.push({ label: 'max network fee', value: `${formatUnits(maxFee, 18)} ETH`, note: 'gas limit × fee per gas' });
  const flags: DecodedFlag[] = [];
  const sections: DecodedSection[] = [{ title: 'Transaction', rows }];
  let summary = tx.value > 0n ? `send ${formatUnits(tx.value, 18)} ETH to ${to || 'a new contract'}` : `call ${toContract?.label ?? to}`;
  if (!tx.to) {
    flags.push({ severity: 'warning', code: 'CONTRACT_CREATION', message: 'Deploys a new contract from the call data' });
    summary = `deploy a contract${tx.value > 0n ? ` with ${formatUnits(tx.value, 18)} ETH` : ''}`;
  } else if (tx.data.length > 0) {
    const call = await decodeCall(sources, tx.to, tx.data, '', 0);
    sections.push({ title: 'Call', rows: call.rows });
    flags.push(...call.flags);
    if (call.summary) summary = call.summary + (tx.value > 0n ? ` and send ${formatUnits(tx.value, 18)} ETH` : '');
    else if (call.rows[0]?.label === 'function') summary = `call ${call.rows[0].value} on ${toContract?.label ?? to}${tx.value > 0n ? ` with ${formatUnits(tx.value, 18)} ETH` : ''}`;
  }
  for (const [i, auth] of (tx.authorizationList ?? []).entries()) {
    const target = toChecksumAddress(auth.address);
    const label = (await sources.contract(target))?.label;
    flags.push({
      severity: 'danger',
      code: 'EIP7702_DELEGATION',
      message: `EIP-7702 authorization ${i}: the signing account delegates its code to ${target}${label ? ` (${label})` : ''} on ${auth.chainId === 0n ? 'every chain' : `chain ${auth.chainId}`}`,
    });
    sections.push({ title: `EIP-7702 authorization ${i}`, rows: [{ label: 'delegate to', value: target, note: label }, { label: 'chain', value: auth.chainId.toString() }, { label: 'nonce', value: auth.nonce.toString() }] });
  }
  // The delegation outlives this transaction, so it leads the line the approve button shows.
  if (tx.authorizationList?.length) summary = `delegate the account to ${tx.authorizationList.map((a) => toChecksumAddress(a.address)).join(', ')}; ${summary}`;
  return { format: 'ETHEREUM_TRANSACTION', summary, flags, digests: [{ over: 'transaction', algorithm: 'keccak256', payloadIndex: 0, value: hex(tx.signingHash) }], sections };
}

// --------------------------------------------------------------------------------------- Solana

const SOLANA_PROGRAMS: Record<string, string> = {
  [SYSTEM_PROGRAM]: 'System Program',
  [TOKEN_PROGRAM]: 'SPL Token',
  [TOKEN_2022_PROGRAM]: 'SPL Token-2022',
  ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL: 'Associated Token Account',
  ComputeBudget111111111111111111111111111111: 'Compute Budget',
  MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr: 'Memo',
  Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo: 'Memo (v1)',
  AddressLookupTab1e1111111111111111111111111: 'Address Lookup Table',
  Stake11111111111111111111111111111111111111: 'Stake Program',
  Vote111111111111111111111111111111111111111: 'Vote Program',
};

const u64le = (d: Uint8Array, off: number) => Buffer.from(d).readBigUInt64LE(off);

/** What a known instruction does, in words; amounts from its data (the layouts solana.ts reads for policies). */
function solanaInstructionText(program: string, d: Uint8Array, accounts: string[]): string | undefined {
  if (program === SYSTEM_PROGRAM && d.length >= 4) {
    const disc = Buffer.from(d).readUInt32LE(0);
    if (disc === 2 && d.length === 12) return `transfer ${formatUnits(u64le(d, 4), 9)} SOL from ${accounts[0]} to ${accounts[1]}`;
    if (disc === 11 && d.length >= 12) return `transfer ${formatUnits(u64le(d, 4), 9)} SOL (with seed) from ${accounts[0]} to ${accounts[2]}`;
    if (disc === 0 && d.length >= 52) return `create account ${accounts[1]} funded with ${formatUnits(u64le(d, 4), 9)} SOL`;
    if (disc === 1) return `assign ${accounts[0]} to a program`;
  }
  if ((program === TOKEN_PROGRAM || program === TOKEN_2022_PROGRAM) && d.length >= 1) {
    if (d[0] === 3 && d.length === 9) return `transfer ${u64le(d, 1)} base units from token account ${accounts[0]} to ${accounts[1]} (owner ${accounts[2]})`;
    if (d[0] === 12 && d.length === 10) return `transfer ${formatUnits(u64le(d, 1), d[9])} of mint ${accounts[1]} from ${accounts[0]} to ${accounts[2]} (owner ${accounts[3]})`;
    if (d[0] === 4 && d.length === 9) return `approve delegate ${accounts[1]} for ${u64le(d, 1)} base units of ${accounts[0]}`;
    if (d[0] === 6) return `set authority of ${accounts[0]}`;
    if (d[0] === 9) return `close token account ${accounts[0]}, lamports to ${accounts[1]}`;
  }
  if (program === 'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL') return `create the associated token account ${accounts[1]} of ${accounts[2]} for mint ${accounts[3]}`;
  if (program === 'ComputeBudget111111111111111111111111111111' && d.length >= 1) {
    if (d[0] === 2 && d.length >= 5) return `set compute unit limit ${Buffer.from(d).readUInt32LE(1)}`;
    if (d[0] === 3 && d.length >= 9) return `set compute unit price ${u64le(d, 1)} micro-lamports`;
  }
  return undefined;
}

export function decodeSolanaTransaction(unsignedTransaction: string): DecodedView {
  const tx = parseSolanaTransaction(unsignedTransaction);
  const policy = solanaTxPolicyFields(tx);
  const flags: DecodedFlag[] = [];
  const sections: DecodedSection[] = [
    {
      title: 'Transaction',
      rows: [
        { label: 'version', value: String(tx.version) },
        { label: 'fee payer', value: policy.static_account_keys[0] ?? '' },
        { label: 'signers', value: policy.static_account_keys.slice(0, tx.header.numRequiredSignatures).join(', ') },
        { label: 'recent blockhash', value: policy.recent_blockhash },
      ],
    },
  ];
  policy.instructions.forEach((ix, i) => {
    const name = SOLANA_PROGRAMS[ix.program_key];
    const accounts = ix.accounts.map((a) => a.account_key);
    const text = solanaInstructionText(ix.program_key, Buffer.from(ix.instruction_data_hex, 'hex'), accounts);
    if (!name) flags.push({ severity: 'warning', code: 'UNKNOWN_PROGRAM', message: `Instruction ${i} calls program ${ix.program_key}, which is not a well-known program` });
    sections.push({
      title: `Instruction ${i}: ${name ?? ix.program_key}`,
      rows: [
        { label: 'program', value: ix.program_key, note: name },
        ...(text ? [{ label: 'action', value: text }] : []),
        ...ix.accounts.map((a, j) => ({ label: `account ${j}`, value: a.account_key, note: [a.signer ? 'signer' : '', a.writable ? 'writable' : ''].filter(Boolean).join(', ') || undefined })),
        { label: 'data', value: ix.instruction_data_hex ? '0x' + ix.instruction_data_hex : '(none)' },
      ],
    });
  });
  for (const l of policy.address_table_lookups) {
    sections.push({
      title: 'Address lookup table',
      rows: [
        { label: 'table', value: l.address_table_key },
        { label: 'writable indexes', value: l.writable_indexes.join(', ') || '(none)' },
        { label: 'readonly indexes', value: l.readonly_indexes.join(', ') || '(none)' },
      ],
    });
  }
  const t = policy.transfers[0];
  const s = policy.spl_transfers[0];
  const summary = t
    ? `send ${formatUnits(t.amount, 9)} SOL to ${t.to}`
    : s
      ? `transfer ${s.amount} base units${s.token_mint ? ` of ${s.token_mint}` : ''} to ${s.to}`
      : `sign a Solana transaction with ${policy.instructions.length} instruction(s)`;
  const more = policy.transfers.length + policy.spl_transfers.length > 1 ? ` (+${policy.transfers.length + policy.spl_transfers.length - 1} more transfers)` : '';
  return { format: 'SOLANA_TRANSACTION', summary: summary + more, flags, digests: [{ over: 'solana-message', algorithm: 'sha256', payloadIndex: 0, value: hex(sha256(tx.message)) }], sections };
}

// -------------------------------------------------------------------------------------- Bitcoin

export async function decodeBitcoinPsbt(unsignedTransaction: string, sources: DecodeSources): Promise<DecodedView> {
  const parsed = parseBitcoinPsbt(unsignedTransaction);
  const network = bitcoinNetworkOfAddress(sources.signerAddress ?? '');
  const policy = bitcoinTxPolicyFields(parsed, network);
  const own = await sources.ownAddresses();
  const isOwn = (a: string) => a !== '' && own.has(normalBitcoinAddress(a));
  const inputs = policy.inputs.map((inp, i) => {
    const prev = parsed.prevouts[i];
    const from = addressOf(prev.script, network).address;
    return {
      label: `input ${i}`,
      value: `${formatUnits(prev.amount, 8)} BTC from ${from || 'a non-standard script'}`,
      note: `${inp.tx_id}:${inp.vout}${isOwn(from) ? ', signed by this wallet' : ', not this wallet’s'}`,
    };
  });
  let leaving = 0n;
  const outputs = policy.outputs.map((o, i) => {
    const change = isOwn(o.address);
    if (!change) leaving += o.value;
    return { label: `output ${i}`, value: `${formatUnits(o.value, 8)} BTC to ${o.address || o.address_type}`, note: change ? 'change (one of this wallet’s addresses)' : o.address_type };
  });
  const paid = policy.outputs.filter((o) => !isOwn(o.address));
  const summary = paid.length
    ? `send ${paid.map((o) => `${formatUnits(o.value, 8)} BTC to ${o.address || o.address_type}`).join(', ')} (fee ${formatUnits(policy.fee, 8)} BTC)`
    : `move ${formatUnits(leaving, 8)} BTC between this wallet's addresses (fee ${formatUnits(policy.fee, 8)} BTC)`;
  return {
    format: 'BITCOIN_PSBT',
    summary,
    flags: [],
    digests: [{ over: 'psbt', algorithm: 'sha256', payloadIndex: 0, value: hex(sha256(psbtBytes(unsignedTransaction))) }],
    sections: [
      { title: 'Transaction', rows: [{ label: 'network', value: network }, { label: 'fee', value: `${formatUnits(policy.fee, 8)} BTC`, note: `${policy.fee} sat` }, { label: 'locktime', value: `${policy.locktime.amount} (${policy.locktime.type})` }] },
      { title: 'Inputs', rows: inputs },
      { title: 'Outputs', rows: outputs },
    ],
  };
}

/** The PSBT's bytes as the stored string gives them (hex, or base64 as some clients send). */
function psbtBytes(text: string): Uint8Array {
  const t = text.trim().replace(/^0x/, '');
  return /^([0-9a-fA-F]{2})+$/.test(t) ? Buffer.from(t, 'hex') : Buffer.from(t, 'base64');
}

// ----------------------------------------------------------------------------------------- Tron

const TRX_FIELDS = new Set(['amount', 'call_value', 'balance', 'frozen_balance', 'unfreeze_balance']);

export function decodeTronTransaction(unsignedTransaction: string): DecodedView {
  const tx = parseTronTransaction(unsignedTransaction, { allowUnsupportedContracts: true });
  const policy = tronTxPolicyFields(tx);
  const sections: DecodedSection[] = [
    {
      title: 'Transaction',
      rows: [
        { label: 'expiration', value: new Date(Number(policy.expiration)).toISOString() },
        { label: 'fee limit', value: `${formatUnits(policy.fee_limit, 6)} TRX` },
        ...(policy.data ? [{ label: 'memo', value: Buffer.from(policy.data, 'hex').toString('utf8') }] : []),
      ],
    },
  ];
  for (const [i, c] of policy.contract.entries()) {
    const rows: DecodedRow[] = [];
    for (const [k, v] of Object.entries(c)) {
      if (v === undefined) continue;
      rows.push({ label: k, value: TRX_FIELDS.has(k) && typeof v === 'bigint' ? `${formatUnits(v, 6)} TRX` : argText(v) });
    }
    sections.push({ title: `Contract ${i}: ${c.type}`, rows });
  }
  const c = policy.contract[0];
  const summary =
    c?.type === 'TransferContract'
      ? `send ${formatUnits(c.amount ?? 0n, 6)} TRX to ${c.to_address}`
      : c?.type === 'TriggerSmartContract'
        ? `call contract ${c.contract_address}${c.call_value ? ` with ${formatUnits(c.call_value, 6)} TRX` : ''}`
        : `sign a Tron ${c?.type ?? 'transaction'}`;
  return { format: 'TRON_TRANSACTION', summary, flags: [], digests: [{ over: 'tron-raw-data', algorithm: 'sha256', payloadIndex: 0, value: hex(tx.txId) }], sections };
}

// --------------------------------------------------------------------------------- raw payloads

function typedValueRows(prefix: string, v: Eip712Value, out: DecodedRow[]): void {
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
    for (const [k, x] of Object.entries(v)) typedValueRows(prefix ? `${prefix}.${k}` : k, x as Eip712Value, out);
  } else if (Array.isArray(v)) {
    v.forEach((x, i) => typedValueRows(`${prefix}[${i}]`, x, out));
  } else {
    out.push({ label: prefix, value: typeof v === 'bigint' ? v.toString() : String(v) });
  }
}

const HASHES: Record<string, DecodedDigest['algorithm']> = {
  HASH_FUNCTION_KECCAK256: 'keccak256',
  HASH_FUNCTION_SHA256: 'sha256',
  HASH_FUNCTION_NO_OP: 'none',
  HASH_FUNCTION_NOT_APPLICABLE: 'sha256',
};

/** One raw payload: EIP-712 typed data, an EIP-7702 authorization, or bytes/text with their digest. */
export function decodeRawPayload(payload: string, encoding: string, hashFunction: string, index: number): DecodedView {
  if (encoding === 'PAYLOAD_ENCODING_EIP712') {
    const typed = parseTypedData(payload);
    const domain: DecodedRow[] = [];
    typedValueRows('', typed.domain, domain);
    const message: DecodedRow[] = [];
    typedValueRows('', typed.message, message);
    const name = typeof typed.domain.name === 'string' ? typed.domain.name : '';
    return {
      format: 'EIP712',
      summary: `sign ${typed.primaryType} typed data${name ? ` for ${name}` : ''}`,
      flags: [],
      digests: [{ over: 'eip712', algorithm: 'eip712', payloadIndex: index, value: hex(hashTypedData(typed)) }],
      sections: [
        { title: 'Domain', rows: domain },
        { title: `Message (${typed.primaryType})`, rows: message },
      ],
    };
  }
  if (encoding === 'PAYLOAD_ENCODING_EIP7702_AUTHORIZATION') {
    const auth = parseEip7702Authorization(payload);
    const target = toChecksumAddress(auth.address);
    return {
      format: 'EIP7702_AUTHORIZATION',
      summary: `delegate the account to ${target}`,
      flags: [{ severity: 'danger', code: 'EIP7702_DELEGATION', message: `EIP-7702 authorization: the signing account delegates its code to ${target} on ${auth.chainId === 0n ? 'every chain' : `chain ${auth.chainId}`}` }],
      digests: [{ over: 'eip7702', algorithm: 'eip7702', payloadIndex: index, value: hex(eip7702AuthorizationDigest(auth)) }],
      sections: [{ title: 'EIP-7702 authorization', rows: [{ label: 'delegate to', value: target }, { label: 'chain', value: auth.chainId.toString() }, { label: 'nonce', value: auth.nonce.toString() }] }],
    };
  }
  const bytes = encoding === 'PAYLOAD_ENCODING_TEXT_UTF8' ? Buffer.from(payload, 'utf8') : Buffer.from(payload.replace(/^0x/, ''), 'hex');
  const algorithm = HASHES[hashFunction] ?? 'sha256';
  const digest = algorithm === 'keccak256' ? keccak256(bytes) : algorithm === 'sha256' ? sha256(bytes) : bytes;
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  const printable = !text.includes('\uFFFD') && !/[\u0000-\u0008\u000e-\u001f\u007f]/.test(text);
  const rows: DecodedRow[] = [
    { label: 'encoding', value: encoding },
    { label: 'hash function', value: hashFunction },
    { label: 'bytes', value: String(bytes.length) },
  ];
  if (printable && bytes.length > 0) rows.push({ label: 'text', value: text });
  return {
    format: 'RAW_PAYLOAD',
    summary: printable && bytes.length > 0 ? `sign the message “${text.length > 60 ? text.slice(0, 60) + '…' : text}”` : `sign ${bytes.length} bytes with digest ${short(hex(digest))}`,
    flags: [],
    digests: [{ over: 'payload', algorithm, payloadIndex: index, value: hex(digest) }],
    sections: [{ title: 'Payload', rows }],
  };
}

// ------------------------------------------------------------------------------------ intents

/** The intent of a signing activity, whichever version's member holds it. */
interface SigningIntent {
  signWith?: string;
  unsignedTransaction?: string;
  type?: string;
  payload?: string;
  payloads?: string[];
  encoding?: string;
  hashFunction?: string;
}

/** An eth_send_transaction's intent: calls (or the oldest version's one flat call) and a CAIP-2 chain. */
function isSendIntent(m: object): boolean {
  const x = m as SendIntent;
  return typeof x.caip2 === 'string' && typeof x.from === 'string' && (Array.isArray(x.calls) || typeof x.to === 'string');
}

/** The view of a signing intent, or undefined when the activity signs nothing. */
export async function decodeSigningIntent(intent: SigningIntent, sources: DecodeSources): Promise<DecodedView | undefined> {
  if (typeof intent.unsignedTransaction === 'string') {
    switch (intent.type) {
      case 'TRANSACTION_TYPE_ETHEREUM':
        return decodeEthereumTransaction(intent.unsignedTransaction, sources);
      case 'TRANSACTION_TYPE_SOLANA':
        return decodeSolanaTransaction(intent.unsignedTransaction);
      case 'TRANSACTION_TYPE_BITCOIN':
        return decodeBitcoinPsbt(intent.unsignedTransaction, sources);
      case 'TRANSACTION_TYPE_TRON':
        return decodeTronTransaction(intent.unsignedTransaction);
      default:
        return undefined;
    }
  }
  const payloads = typeof intent.payload === 'string' ? [intent.payload] : Array.isArray(intent.payloads) ? intent.payloads : undefined;
  if (!payloads || typeof intent.encoding !== 'string') return undefined;
  const views = payloads.map((p, i) => decodeRawPayload(p, intent.encoding!, intent.hashFunction ?? '', i));
  if (views.length === 1) return views[0];
  return {
    format: views[0]?.format ?? 'RAW_PAYLOAD',
    summary: `sign ${views.length} payloads: ${views.map((v) => v.summary).join('; ')}`,
    flags: views.flatMap((v) => v.flags),
    digests: views.flatMap((v) => v.digests),
    sections: views.flatMap((v, i) => v.sections.map((s) => ({ ...s, title: `Payload ${i}: ${s.title}` }))),
  };
}

/** The intent of an eth_send_transaction (any version: the oldest names one call flat). */
interface SendIntent {
  from?: string;
  caip2?: string;
  calls?: { to: string; value?: string; data?: string }[];
  to?: string;
  value?: string;
  data?: string;
}

/**
 * The view of a waiting send (docs/policies.md "Approving what you see"). Its transaction is built only
 * when the approval runs (nonce, gas and fees are filled then), so the digest is over what the
 * approver can see: the stored intent's canonical JSON.
 */
export async function decodeEthereumSend(intent: SendIntent, sources: DecodeSources): Promise<DecodedView> {
  const calls = Array.isArray(intent.calls) ? intent.calls : [{ to: intent.to ?? '', value: intent.value, data: intent.data }];
  const chainId = /^eip155:(\d+)$/.exec(intent.caip2 ?? '')?.[1];
  const from = sources.signerAddress && /^0x[0-9a-fA-F]{40}$/.test(sources.signerAddress) ? toChecksumAddress(sources.signerAddress.toLowerCase()) : sources.signerAddress ?? intent.from ?? '';
  const sections: DecodedSection[] = [
    {
      title: 'Send',
      rows: [
        { label: 'chain', value: chainId ?? intent.caip2 ?? '', note: chainId ? CHAINS[chainId] : undefined },
        { label: 'from', value: from },
        { label: 'nonce, gas and fees', value: 'filled by Sigil when approved' },
      ],
    },
  ];
  const flags: DecodedFlag[] = [];
  const summaries: string[] = [];
  for (const [i, c] of calls.entries()) {
    const value = BigInt(c.value || '0');
    const to = /^0x[0-9a-fA-F]{40}$/.test(c.to) ? toChecksumAddress(c.to.toLowerCase()) : c.to;
    const toContract = to ? await sources.contract(to) : undefined;
    const rows: DecodedRow[] = [
      { label: 'to', value: to, note: toContract?.label },
      { label: 'value', value: `${formatUnits(value, 18)} ETH`, note: `${value} wei` },
    ];
    let summary = value > 0n ? `send ${formatUnits(value, 18)} ETH to ${to}` : `call ${toContract?.label ?? to}`;
    const data = c.data && c.data !== '0x' ? Uint8Array.from(Buffer.from(c.data.replace(/^0x/, ''), 'hex')) : new Uint8Array();
    if (data.length > 0) {
      const call = await decodeCall(sources, to, data, '', 0);
      rows.push(...call.rows);
      flags.push(...call.flags);
      if (call.summary) summary = call.summary + (value > 0n ? ` and send ${formatUnits(value, 18)} ETH` : '');
      else if (call.rows[0]?.label === 'function') summary = `call ${call.rows[0].value} on ${toContract?.label ?? to}${value > 0n ? ` with ${formatUnits(value, 18)} ETH` : ''}`;
    }
    sections.push({ title: calls.length > 1 ? `Call ${i}` : 'Call', rows });
    summaries.push(summary);
  }
  return {
    format: 'ETHEREUM_SEND',
    summary: `${summaries.join('; ')}${chainId ? ` on chain ${chainId}` : ''}`,
    flags,
    digests: [{ over: 'intent', algorithm: 'sha256', payloadIndex: 0, value: hex(sha256(new TextEncoder().encode(canonicalJson(intent)))) }],
    sections,
  };
}

// ------------------------------------------------------------------------------ with the store

/** The consensus beside a waiting activity (ACTIVITY_STATUS_CONSENSUS_NEEDED): policies and their outcomes, votes, what is still needed. */
export interface ConsensusView {
  policies: { policyId: string; policyName: string; outcome: string }[];
  votes: { userId: string; selection: string }[];
  rootQuorum: { threshold: number; approvals: number; memberIds: string[] };
  /** In words: "1 more approval from the root quorum, or approvals that satisfy a policy's consensus". */
  needs: string;
}

async function consensusOf(repos: Repositories, row: ActivityRow, votes: VoteRow[]): Promise<ConsensusView> {
  const [org, members, evaluations] = await Promise.all([
    repos.organizations.get(row.organization_id),
    repos.organizations.rootQuorumUserIds(row.organization_id),
    repos.policyEvaluations.listForActivity(row.organization_id, row.id),
  ]);
  const latest = evaluations.length ? (JSON.parse(evaluations[evaluations.length - 1].evaluations) as { policyId: string; outcome: string }[]) : [];
  const names = new Map((await repos.policies.getMany(row.organization_id, latest.map((e) => e.policyId))).map((p) => [p.id, p.name]));
  const approvers = new Set(votes.filter((v) => v.selection === 'VOTE_SELECTION_APPROVED').map((v) => v.user_id));
  const approvals = members.filter((m) => approvers.has(m)).length;
  const threshold = org?.root_quorum_threshold ?? 0;
  const remaining = Math.max(0, threshold - approvals);
  const consensusPolicies = latest.filter((e) => e.outcome === 'OUTCOME_REQUIRES_CONSENSUS').map((e) => names.get(e.policyId) ?? e.policyId);
  let needs = `${remaining} more approval(s) from the root quorum`;
  if (consensusPolicies.length) needs += `, or approvals that satisfy the consensus of ${consensusPolicies.join(', ')}`;
  return {
    policies: latest.map((e) => ({ policyId: e.policyId, policyName: names.get(e.policyId) ?? '', outcome: e.outcome })),
    votes: votes.map((v) => ({ userId: v.user_id, selection: v.selection })),
    rootQuorum: { threshold, approvals, memberIds: members },
    needs,
  };
}

/**
 * `decodedView` of an activity record (docs/policies.md "Approving what you see"): the decoded signing intent
 * and the consensus beside it; undefined for activities that sign nothing. A payload that does not
 * decode (it would not sign either) gives `{error}` rather than failing the read.
 */
export async function decodedViewOf(repos: Repositories, barrier: Barrier, row: ActivityRow, votes: VoteRow[]): Promise<Record<string, unknown> | undefined> {
  const member = Object.values(JSON.parse(row.intent) as Record<string, SigningIntent>)[0];
  if (!member || typeof member !== 'object') return undefined;
  // A send names calls rather than a transaction; its view's digest is over the intent itself.
  const send = isSendIntent(member) ? (member as SendIntent) : undefined;
  if (!send && member.unsignedTransaction === undefined && member.payload === undefined && member.payloads === undefined) return undefined;
  const recorded = row.simulation ? (JSON.parse(row.simulation) as AssetChanges) : undefined;
  // The consensus matters while votes are still cast; a decided activity's evaluations are in
  // get_policy_evaluations, and skipping them keeps a page of list_activities to the decoding's reads.
  const consensus = row.status === 'ACTIVITY_STATUS_CONSENSUS_NEEDED' ? await consensusOf(repos, row, votes) : undefined;
  try {
    const target = member.signWith ? await resolveSigningTarget(repos, barrier, row.organization_id, member.signWith).catch(() => undefined) : undefined;
    const sources: DecodeSources = {
      signerAddress: target?.address ?? member.signWith,
      contract: async (address) => {
        const [stored] = await repos.contractInterfaces.forAddress(row.organization_id, address, ETHEREUM_INTERFACE);
        return stored ? { label: stored.label, notes: stored.notes, abi: parsedAbiOf(stored) } : undefined;
      },
      ownAddresses: async () => (target ? ownAddresses(repos, { bitcoin: { tx: {} }, ...(await signingTargetKeywords(repos, row.organization_id, target)) } as never) : new Set()),
    };
    const view = send ? await decodeEthereumSend(send, sources) : await decodeSigningIntent(member, sources);
    return view ? { ...withSimulation(view, recorded), ...(consensus ? { consensus } : {}) } : undefined;
  } catch (err) {
    return { error: `the payload does not decode: ${(err as Error).message}`, ...(consensus ? { consensus } : {}) };
  }
}

// ---------------------------------------------------------------------------------- simulation

/**
 * The view with the simulation recorded at submission (docs/policies.md "Simulation before approval")
 * as `simulation` and as a section the CLI prints. An Ethereum transaction without one was not
 * simulated: the view says so, with why it could not have been.
 */
function withSimulation(view: DecodedView, recorded: AssetChanges | undefined): DecodedView & { simulation?: AssetChanges } {
  const chain = view.format === 'ETHEREUM_TRANSACTION' || view.format === 'ETHEREUM_SEND' ? 'ethereum' : view.format === 'SOLANA_TRANSACTION' ? 'solana' : undefined;
  const simulation =
    recorded ??
    (chain ? { ...NOT_SIMULATED, chain, reason: NOT_SIMULATED_REASON[chain] } : undefined);
  if (!simulation) return view;
  return { ...view, sections: [...view.sections, simulationSection(simulation)], simulation };
}

/** Why a transaction of each chain may have no recorded simulation, naming the settings that decide it. */
const NOT_SIMULATED_REASON = {
  ethereum: 'no simulation ran when it was submitted: the deployment had no RPC for its chain (or simulation is off), or the transaction names no chain',
  solana:
    'no simulation ran when it was submitted: the deployment had no Solana RPC (SIGIL_SOLANA_RPC_*), or several and SIGIL_SOLANA_SIMULATION_CLUSTER named none to simulate a signature on',
} as const;

const NOT_SIMULATED: Omit<AssetChanges, 'chain'> = { status: 'NOT_SIMULATED', network: '', reverted: false, transfers: [], approvals: [], balanceChanges: [], deployments: [], delegations: [] };
