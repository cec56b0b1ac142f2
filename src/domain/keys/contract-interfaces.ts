// Smart contract interfaces (docs/reference/organizations.md "Smart contract interfaces", docs/reference/policies.md "Keywords"
// EthereumTransaction; swagger v1CreateSmartContractInterfaceIntent, externaldatav1SmartContractInterface):
// an organization uploads an Ethereum ABI or a Solana (Anchor) IDL for a contract address, and
// policies on calls to that address then see `eth.tx.function_name`, `function_signature` and
// `contract_call_args`.
//
// Rules at upload: the interface text is at most 400 kb (400 × 1024 bytes of UTF-8, the reference's
// "≤400kb"), must be JSON; an ETHEREUM interface must parse as an ABI array whose entries are
// well-formed (src/chains/ethereum/abi.ts), a SOLANA interface must be an IDL object with `instructions` and
// `types` arrays (the reference requires `types`, possibly empty). Addresses: EVM `0x` + 40 hex
// (mixed case must be a valid EIP-55 checksum; stored checksummed so lookups ignore the caller's
// casing), Solana base58 of 32 bytes (case-sensitive, stored as given).
//
// Several interfaces may be uploaded for one address (say, the ABIs of a proxy and of its
// implementation); a call is decoded by the newest one that knows its selector.
import { base58 } from '@scure/base';
import {
  AbiDecodeError,
  AbiError,
  decodeFunctionArguments,
  findFunction,
  parseAbi,
  type DecodeOptions,
  type ParsedAbi,
} from '../../chains/ethereum/abi.js';
import { toChecksumAddress } from '../../chains/addresses/ethereum.js';
import { SigilError, invalid, notFound } from '../../errors/errors.js';
import type { Repositories, SmartContractInterfaceRow } from '../../store/index.js';
import { checkName } from '../identity/contacts.js';
import type { ActivityContext } from '../context.js';
import { timestamp } from '../records.js';

export const ETHEREUM_INTERFACE = 'SMART_CONTRACT_INTERFACE_TYPE_ETHEREUM';
export const SOLANA_INTERFACE = 'SMART_CONTRACT_INTERFACE_TYPE_SOLANA';
export const MAX_INTERFACE_BYTES = 400 * 1024;

export interface CreateSmartContractInterfaceParams {
  smartContractAddress: string;
  smartContractInterface: string;
  type: string;
  label: string;
  notes?: string;
}

export function contractInterfaceRecord(row: SmartContractInterfaceRow) {
  return {
    organizationId: row.organization_id,
    smartContractInterfaceId: row.id,
    smartContractAddress: row.address,
    smartContractInterface: row.interface,
    type: row.type,
    label: row.label,
    notes: row.notes,
    createdAt: timestamp(row.created_at),
    updatedAt: timestamp(row.updated_at),
  };
}

export async function requireContractInterface(repos: Repositories, organizationId: string, id: string): Promise<SmartContractInterfaceRow> {
  const row = await repos.contractInterfaces.get(organizationId, id);
  if (!row) throw notFound(`smart contract interface not found: ${id}`);
  return row;
}

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The address as stored: EVM checksummed, Solana as given; refuses malformed ones. */
function canonicalAddress(type: string, address: string): string {
  if (type === ETHEREUM_INTERFACE) {
    if (!EVM_ADDRESS.test(address)) {
      throw invalid(`invalid smartContractAddress ${JSON.stringify(address.slice(0, 64))}: an Ethereum address is 0x followed by 40 hex digits`);
    }
    const checksummed = toChecksumAddress(address);
    const body = address.slice(2);
    const mixedCase = body !== body.toLowerCase() && body !== body.toUpperCase();
    if (mixedCase && checksummed !== address) {
      throw invalid(`invalid smartContractAddress ${address}: the mixed-case EIP-55 checksum does not match (expected ${checksummed})`);
    }
    return checksummed;
  }
  let bytes: Uint8Array | undefined;
  try {
    bytes = base58.decode(address);
  } catch {
    bytes = undefined;
  }
  if (!bytes || bytes.length !== 32) {
    throw invalid(`invalid smartContractAddress ${JSON.stringify(address.slice(0, 64))}: a Solana address is the base58 encoding of 32 bytes`);
  }
  return address;
}

function checkInterface(type: string, text: string): void {
  const size = Buffer.byteLength(text, 'utf8');
  if (size > MAX_INTERFACE_BYTES) {
    throw invalid(`smartContractInterface is ${size} bytes; the limit is 400kb (${MAX_INTERFACE_BYTES} bytes)`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw invalid(`smartContractInterface is not valid JSON: ${(err as Error).message}`);
  }
  if (type === ETHEREUM_INTERFACE) {
    try {
      parseAbi(json);
    } catch (err) {
      if (err instanceof AbiError) throw invalid(`smartContractInterface is not a valid Ethereum ABI: ${err.message}`);
      throw err;
    }
    return;
  }
  const idl = json as Record<string, unknown>;
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw invalid('smartContractInterface is not a valid Solana IDL: expected a JSON object');
  }
  for (const key of ['instructions', 'types']) {
    if (!Array.isArray(idl[key])) {
      throw invalid(`smartContractInterface is not a valid Solana IDL: "${key}" must be an array${key === 'types' ? ' (it may be empty)' : ''}`);
    }
  }
}

export async function createContractInterface(ctx: ActivityContext, p: CreateSmartContractInterfaceParams): Promise<{ smartContractInterfaceId: string }> {
  if (p.type !== ETHEREUM_INTERFACE && p.type !== SOLANA_INTERFACE) {
    throw invalid(`type must be ${ETHEREUM_INTERFACE} or ${SOLANA_INTERFACE}`);
  }
  checkName(p.label, 'label');
  const address = canonicalAddress(p.type, p.smartContractAddress);
  checkInterface(p.type, p.smartContractInterface);
  const id = ctx.newId();
  await ctx.repos.contractInterfaces.insert({
    id,
    organization_id: ctx.organization.id,
    address,
    type: p.type,
    label: p.label,
    notes: p.notes ?? '',
    interface: p.smartContractInterface,
    created_at: ctx.now,
    updated_at: ctx.now,
  });
  return { smartContractInterfaceId: id };
}

export async function deleteContractInterface(ctx: ActivityContext, id: string): Promise<{ smartContractInterfaceId: string }> {
  const row = await requireContractInterface(ctx.repos, ctx.organization.id, id);
  await ctx.repos.contractInterfaces.delete(ctx.organization.id, row.id);
  return { smartContractInterfaceId: row.id };
}

// ------------------------------------------------------------------------- decoding for policies

// Parsed ABIs by interface id. Rows never change (there is no update), so the id is the key;
// bounded by the total size of the cached ABI texts.
const CACHE_BYTES = 32 * 1024 * 1024;
const abiCache = new Map<string, { abi: ParsedAbi; bytes: number }>();
let abiCacheBytes = 0;

/** The parsed ABI of a stored Ethereum interface (cached by id). */
export function parsedAbiOf(row: SmartContractInterfaceRow): ParsedAbi {
  const hit = abiCache.get(row.id);
  if (hit) {
    abiCache.delete(row.id);
    abiCache.set(row.id, hit);
    return hit.abi;
  }
  const abi = parseAbi(JSON.parse(row.interface));
  const bytes = row.interface.length;
  abiCache.set(row.id, { abi, bytes });
  abiCacheBytes += bytes;
  while (abiCacheBytes > CACHE_BYTES && abiCache.size > 1) {
    const [oldest, entry] = abiCache.entries().next().value as [string, { bytes: number }];
    abiCache.delete(oldest);
    abiCacheBytes -= entry.bytes;
  }
  return abi;
}

/**
 * The ABI view of an Ethereum call for policies (docs/reference/policies.md "Keywords": `function_name`, `function_signature` =
 * '0x' + selector, `contract_call_args` by parameter name, tuples positional). Undefined when the
 * organization has no ABI for `to` (matched ignoring case) or none of its ABIs knows the selector.
 *
 * Values: integers as bigint, bytes as '0x' + lowercase hex, addresses EIP-55 checksummed strings
 * unless `opts.address` maps them (the engine may pass `caseInsensitive` from src/policy).
 *
 * Throws INVALID_TRANSACTION when an ABI knows the selector but the arguments do not decode as its
 * parameters (dirty padding, offsets outside the calldata): a policy must see exactly what the
 * contract will act on, and the request is refused rather than evaluated without its arguments.
 */
export async function decodeEthCallForPolicy(
  repos: Repositories,
  organizationId: string,
  to: string,
  data: string,
  opts: DecodeOptions = {},
): Promise<{ function_name: string; function_signature: string; contract_call_args: Record<string, unknown> } | undefined> {
  if (!EVM_ADDRESS.test(to)) return undefined;
  const rows = await repos.contractInterfaces.forAddress(organizationId, toChecksumAddress(to), ETHEREUM_INTERFACE);
  for (const row of rows) {
    const fn = findFunction(parsedAbiOf(row), data);
    if (!fn) continue;
    try {
      const args = decodeFunctionArguments(fn, data, opts);
      return { function_name: fn.name, function_signature: fn.selector, contract_call_args: args };
    } catch (err) {
      if (err instanceof AbiDecodeError) {
        throw new SigilError(
          'INVALID_TRANSACTION',
          `invalid transaction: the call data of ${fn.signature} to ${row.address} does not decode under the uploaded ABI: ${err.message}`,
        );
      }
      throw err;
    }
  }
  return undefined;
}
