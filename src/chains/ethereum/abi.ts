// Ethereum contract ABIs: parsing a JSON ABI, function selectors and calldata decoding, for the
// `eth.tx.function_name` / `function_signature` / `contract_call_args` policy fields
// (docs/reference/policies.md "Keywords" EthereumTransaction, docs/reference/organizations.md smart contract interfaces) and for validating
// ABIs uploaded with create_smart_contract_interface. Pure: bytes and JSON in, values out.
//
// Encoding rules are the Solidity ABI specification ("Contract ABI Specification", docs.soliditylang.org):
// a selector is the first 4 bytes of keccak256 of the canonical signature `name(type,...)` with
// tuples written as `(t1,t2)`, `uint`/`int` as `uint256`/`int256`; arguments are a tuple encoded as
// heads (static values inline, 32-byte offsets for dynamic ones) followed by tails.
//
// Decoding is strict in the way Solidity's ABI coder v2 is: a value with dirty padding (an address
// with non-zero upper bytes, a uint8 above 255, a bool other than 0/1, an int not sign-extended), an
// offset or length outside the calldata, all raise AbiDecodeError rather than being masked. A policy
// must see exactly the value the contract will act on; when that cannot be established the caller
// refuses the request instead of guessing. Trailing bytes after the arguments are ignored, as the
// EVM ignores them.
//
// Values: uintN/intN → bigint; address → EIP-55 checksummed string (or what `opts.address` makes of
// it); bool → boolean; bytesN/bytes → '0x' + lowercase hex; string → UTF-8 text; T[] and T[k] →
// arrays; tuples → arrays in component order (policies index them positionally, `call[0]`).
// fixedMxN/ufixedMxN decode to their raw scaled integer (bigint); Solidity cannot pass them anyway.

import { keccak256 } from '../../crypto/hash.js';
import { isHexBody, toHex } from '../../crypto/bytes.js';
import { toChecksumAddress } from '../addresses/ethereum.js';

export class AbiError extends Error {
  override readonly name = 'AbiError';
}

/** Calldata that matches a function's selector but does not decode as its arguments. */
export class AbiDecodeError extends Error {
  override readonly name = 'AbiDecodeError';
}

export type AbiType =
  | { readonly kind: 'uint' | 'int'; readonly bits: number }
  | { readonly kind: 'address' }
  | { readonly kind: 'bool' }
  /** bytes1…bytes32, and `function` (an address and a selector, 24 bytes). */
  | { readonly kind: 'fixedBytes'; readonly size: number }
  | { readonly kind: 'bytes' }
  | { readonly kind: 'string' }
  /** `length` undefined for T[]. */
  | { readonly kind: 'array'; readonly element: AbiType; readonly length?: number }
  | { readonly kind: 'tuple'; readonly components: readonly AbiParameter[] };

export interface AbiParameter {
  /** '' when the ABI gives none. */
  readonly name: string;
  readonly type: AbiType;
  /** Canonical type text as it appears in signatures, tuples expanded: `(address,uint256)[]`. */
  readonly canonical: string;
}

export interface AbiFunction {
  readonly name: string;
  readonly inputs: readonly AbiParameter[];
  /** `transfer(address,uint256)`. */
  readonly signature: string;
  /** '0x' + 8 lowercase hex digits. */
  readonly selector: string;
}

export interface ParsedAbi {
  /** Functions by selector; with duplicate signatures the first entry wins. */
  readonly functions: ReadonlyMap<string, AbiFunction>;
}

export interface DecodedFunctionCall {
  readonly functionName: string;
  /** '0x' + 8 hex digits: the selector, as `eth.tx.function_signature` shows it. */
  readonly functionSignature: string;
  /** `transfer(address,uint256)`. */
  readonly canonicalSignature: string;
  /** Argument name → value; unnamed (or repeated) names are keyed by their position ('0', '1'…). */
  readonly args: Record<string, unknown>;
}

export interface DecodeOptions {
  /** Turns a decoded (checksummed) address into the value to return; default: the string itself. */
  readonly address?: (checksummed: string) => unknown;
}

// Nesting deeper than this is not a real contract, and bounding it keeps recursion shallow.
const MAX_TYPE_DEPTH = 32;
// Work bound of one decode: 1 per value plus the byte length of every bytes/string produced.
// Offsets may alias, so output can outgrow the calldata; this keeps a crafted call from making
// the decoder produce gigabytes.
const MAX_DECODE_COST = 1 << 20;
const MAX_STATIC_ARRAY_LENGTH = 1 << 20;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const TYPE_TEXT = /^([a-z]+)([0-9]*)(?:x([0-9]+))?((?:\[[0-9]*\])*)$/;
const ENTRY_TYPES = new Set(['function', 'constructor', 'receive', 'fallback', 'event', 'error']);

// ---------------------------------------------------------------------------------------- parsing

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 64 ? `${value.slice(0, 61)}...` : value);
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : typeof value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseBaseType(base: string, size: string, fraction: string | undefined, at: string): { type: AbiType; canonical: string } {
  const bad = (why: string) => new AbiError(`${at}: ${why}`);
  if (fraction !== undefined) {
    if (base !== 'fixed' && base !== 'ufixed') throw bad(`unknown type ${JSON.stringify(base + size + 'x' + fraction)}`);
  }
  switch (base) {
    case 'address':
    case 'bool':
    case 'string':
    case 'function':
      if (size !== '') throw bad(`unknown type ${JSON.stringify(base + size)}`);
      if (base === 'function') return { type: { kind: 'fixedBytes', size: 24 }, canonical: 'function' };
      return { type: { kind: base }, canonical: base };
    case 'bytes': {
      if (size === '') return { type: { kind: 'bytes' }, canonical: 'bytes' };
      const n = Number(size);
      if (!/^[1-9][0-9]?$/.test(size) || n > 32) throw bad(`invalid type bytes${size}: bytesN needs N from 1 to 32`);
      return { type: { kind: 'fixedBytes', size: n }, canonical: `bytes${n}` };
    }
    case 'uint':
    case 'int': {
      const bits = size === '' ? 256 : Number(size);
      if (!/^([1-9][0-9]*)?$/.test(size) || bits % 8 !== 0 || bits < 8 || bits > 256) {
        throw bad(`invalid type ${base}${size}: the size must be a multiple of 8 from 8 to 256`);
      }
      return { type: { kind: base, bits }, canonical: `${base}${bits}` };
    }
    case 'fixed':
    case 'ufixed': {
      const bits = size === '' ? 128 : Number(size);
      const places = fraction === undefined ? 18 : Number(fraction);
      if ((size === '') !== (fraction === undefined)) throw bad(`invalid type ${base}${size}${fraction ? 'x' + fraction : ''}: write ${base}MxN`);
      if (bits % 8 !== 0 || bits < 8 || bits > 256 || places < 1 || places > 80) {
        throw bad(`invalid type ${base}${size}x${fraction}: M must be a multiple of 8 from 8 to 256 and N from 1 to 80`);
      }
      return { type: { kind: base === 'fixed' ? 'int' : 'uint', bits }, canonical: `${base}${bits}x${places}` };
    }
    default:
      throw bad(`unknown type ${JSON.stringify(base + size)}`);
  }
}

function parseParameter(raw: unknown, at: string, depth: number): AbiParameter {
  if (!isObject(raw)) throw new AbiError(`${at}: expected an object with a "type", got ${describe(raw)}`);
  if (raw.name !== undefined && typeof raw.name !== 'string') throw new AbiError(`${at}.name: expected a string, got ${describe(raw.name)}`);
  const name = (raw.name as string | undefined) ?? '';
  if (typeof raw.type !== 'string') throw new AbiError(`${at}.type: expected a string, got ${describe(raw.type)}`);
  const m = TYPE_TEXT.exec(raw.type);
  if (!m) throw new AbiError(`${at}.type: invalid type ${describe(raw.type)}`);
  const [, base, size, fraction, suffixes] = m as unknown as [string, string, string, string | undefined, string];

  let type: AbiType;
  let canonical: string;
  if (base === 'tuple') {
    if (size !== '' || fraction !== undefined) throw new AbiError(`${at}.type: invalid type ${describe(raw.type)}`);
    if (depth >= MAX_TYPE_DEPTH) throw new AbiError(`${at}: tuples nested deeper than ${MAX_TYPE_DEPTH} levels`);
    if (!Array.isArray(raw.components)) throw new AbiError(`${at}.components: a tuple needs a "components" array`);
    if (raw.components.length === 0) throw new AbiError(`${at}.components: a tuple needs at least one component`);
    const components = raw.components.map((c, i) => parseParameter(c, `${at}.components[${i}]`, depth + 1));
    type = { kind: 'tuple', components };
    canonical = `(${components.map((c) => c.canonical).join(',')})`;
  } else {
    ({ type, canonical } = parseBaseType(base, size, fraction, `${at}.type`));
  }
  // `T[2][]` is a dynamic array of T[2]: suffixes apply innermost first.
  for (const dim of suffixes.match(/\[[0-9]*\]/g) ?? []) {
    const digits = dim.slice(1, -1);
    if (digits === '') {
      type = { kind: 'array', element: type };
    } else {
      const length = Number(digits);
      if (!/^[1-9][0-9]*$/.test(digits) || length > MAX_STATIC_ARRAY_LENGTH) {
        throw new AbiError(`${at}.type: invalid array length ${digits} in ${describe(raw.type)} (1 to ${MAX_STATIC_ARRAY_LENGTH})`);
      }
      type = { kind: 'array', element: type, length };
    }
    canonical += dim;
  }
  return { name, type, canonical };
}

function parseParameters(raw: unknown, at: string): AbiParameter[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new AbiError(`${at}: expected an array, got ${describe(raw)}`);
  return raw.map((p, i) => parseParameter(p, `${at}[${i}]`, 0));
}

/** '0x' + the first 4 bytes of keccak256 of a canonical signature such as `transfer(address,uint256)`. */
export function functionSelector(signature: string): string {
  return '0x' + toHex(keccak256(new TextEncoder().encode(signature)).subarray(0, 4));
}

/**
 * Parses a JSON ABI (the array solc, Foundry and Hardhat emit). Every entry must be well-formed:
 * functions need a name and valid parameter types; events, errors and constructors are checked the
 * same way so an ABI that is not one fails here, with the entry and field named.
 */
export function parseAbi(abi: unknown): ParsedAbi {
  if (!Array.isArray(abi)) throw new AbiError(`an Ethereum ABI must be a JSON array of entries, got ${describe(abi)}`);
  const functions = new Map<string, AbiFunction>();
  abi.forEach((entry, i) => {
    const at = `abi[${i}]`;
    if (!isObject(entry)) throw new AbiError(`${at}: expected an object, got ${describe(entry)}`);
    // The ABI specification lets `type` default to "function".
    const kind = entry.type ?? 'function';
    if (typeof kind !== 'string' || !ENTRY_TYPES.has(kind)) {
      throw new AbiError(`${at}.type: expected one of ${[...ENTRY_TYPES].join(', ')}, got ${describe(kind)}`);
    }
    if (kind === 'receive' || kind === 'fallback') return;
    if (kind !== 'constructor') {
      if (typeof entry.name !== 'string' || !IDENTIFIER.test(entry.name)) {
        throw new AbiError(`${at}.name: a ${kind} needs a name that is an identifier, got ${describe(entry.name)}`);
      }
    }
    const inputs = parseParameters(entry.inputs, `${at}.inputs`);
    if (kind !== 'function') return;
    parseParameters(entry.outputs, `${at}.outputs`);
    const name = entry.name as string;
    const signature = `${name}(${inputs.map((p) => p.canonical).join(',')})`;
    const selector = functionSelector(signature);
    if (!functions.has(selector)) functions.set(selector, { name, inputs, signature, selector });
  });
  return { functions };
}

/** Parses ABI JSON text; malformed JSON is an AbiError too. */
export function parseAbiJson(text: string): ParsedAbi {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new AbiError(`not valid JSON: ${(err as Error).message}`);
  }
  return parseAbi(json);
}

// --------------------------------------------------------------------------------------- decoding

// Both are asked for every value decoded; memoized per type object so deep types cost once.
const dynamicMemo = new WeakMap<AbiType, boolean>();
const headMemo = new WeakMap<AbiType, number>();

function isDynamic(t: AbiType): boolean {
  let v = dynamicMemo.get(t);
  if (v === undefined) {
    if (t.kind === 'bytes' || t.kind === 'string') v = true;
    else if (t.kind === 'array') v = t.length === undefined || isDynamic(t.element);
    else if (t.kind === 'tuple') v = t.components.some((c) => isDynamic(c.type));
    else v = false;
    dynamicMemo.set(t, v);
  }
  return v;
}

/** Bytes a type occupies in the head of its enclosing tuple (32 for an offset if dynamic). */
function headSize(t: AbiType): number {
  let v = headMemo.get(t);
  if (v === undefined) {
    if (isDynamic(t)) v = 32;
    else if (t.kind === 'array') v = t.length! * headSize(t.element);
    else if (t.kind === 'tuple') v = t.components.reduce((n, c) => n + headSize(c.type), 0);
    else v = 32;
    headMemo.set(t, v);
  }
  return v;
}

const TWO_256 = 1n << 256n;
const utf8 = new TextDecoder('utf-8');

class Decoder {
  private cost = 0;

  constructor(
    private readonly data: Uint8Array,
    private readonly opts: DecodeOptions,
  ) {}

  private charge(n: number): void {
    this.cost += n;
    if (this.cost > MAX_DECODE_COST) throw new AbiDecodeError('the arguments are too large to decode');
  }

  private word(pos: number, what: string): Uint8Array {
    if (pos + 32 > this.data.length) throw new AbiDecodeError(`${what}: calldata ends at byte ${this.data.length}, before byte ${pos + 32}`);
    return this.data.subarray(pos, pos + 32);
  }

  private uint256(pos: number, what: string): bigint {
    return BigInt('0x' + toHex(this.word(pos, what)));
  }

  /** An offset or length word, which must point inside the calldata. */
  private position(pos: number, what: string): number {
    const v = this.uint256(pos, what);
    if (v > BigInt(this.data.length)) throw new AbiDecodeError(`${what}: ${v} points past the end of the calldata (${this.data.length} bytes)`);
    return Number(v);
  }

  value(t: AbiType, pos: number, what: string): unknown {
    this.charge(1);
    switch (t.kind) {
      case 'uint': {
        const v = this.uint256(pos, what);
        if (v >> BigInt(t.bits) !== 0n) throw new AbiDecodeError(`${what}: value does not fit uint${t.bits}`);
        return v;
      }
      case 'int': {
        const raw = this.uint256(pos, what);
        const v = raw >= TWO_256 / 2n ? raw - TWO_256 : raw;
        const half = 1n << BigInt(t.bits - 1);
        if (v < -half || v >= half) throw new AbiDecodeError(`${what}: value does not fit int${t.bits}`);
        return v;
      }
      case 'address': {
        const w = this.word(pos, what);
        if (w.subarray(0, 12).some((b) => b !== 0)) throw new AbiDecodeError(`${what}: address with non-zero upper bytes`);
        const checksummed = toChecksumAddress(toHex(w.subarray(12)));
        return this.opts.address ? this.opts.address(checksummed) : checksummed;
      }
      case 'bool': {
        const v = this.uint256(pos, what);
        if (v > 1n) throw new AbiDecodeError(`${what}: bool must be 0 or 1`);
        return v === 1n;
      }
      case 'fixedBytes': {
        const w = this.word(pos, what);
        if (w.subarray(t.size).some((b) => b !== 0)) throw new AbiDecodeError(`${what}: bytes${t.size} with non-zero padding`);
        return '0x' + toHex(w.subarray(0, t.size));
      }
      case 'bytes':
      case 'string': {
        const length = this.position(pos, `${what} length`);
        const start = pos + 32;
        if (start + length > this.data.length) throw new AbiDecodeError(`${what}: ${length} bytes run past the end of the calldata`);
        this.charge(length);
        const bytes = this.data.subarray(start, start + length);
        return t.kind === 'bytes' ? '0x' + toHex(bytes) : utf8.decode(bytes);
      }
      case 'array': {
        if (t.length !== undefined) {
          // T[k] is k heads in a row (k offsets when T is dynamic); all must lie inside the calldata.
          if (pos + t.length * headSize(t.element) > this.data.length) {
            throw new AbiDecodeError(`${what}: ${t.length} elements run past the end of the calldata`);
          }
          return this.sequence(Array(t.length).fill(t.element), pos, what);
        }
        const length = this.position(pos, `${what} length`);
        // Every element needs its head inside the calldata; checked before allocating anything.
        if (pos + 32 + length * headSize(t.element) > this.data.length) {
          throw new AbiDecodeError(`${what}: ${length} elements run past the end of the calldata`);
        }
        return this.sequence(Array(length).fill(t.element), pos + 32, what);
      }
      case 'tuple':
        return this.sequence(
          t.components.map((c) => c.type),
          pos,
          what,
        );
    }
  }

  /** A tuple encoding at `start`: heads in order, dynamic values at offsets from `start`. */
  sequence(types: readonly AbiType[], start: number, what: string): unknown[] {
    const out: unknown[] = [];
    let head = start;
    types.forEach((t, i) => {
      const at = `${what}[${i}]`;
      if (isDynamic(t)) {
        const offset = this.position(head, `${at} offset`);
        out.push(this.value(t, start + offset, at));
      } else {
        out.push(this.value(t, head, at));
      }
      head += headSize(t);
    });
    return out;
  }
}

function toBytes(data: string | Uint8Array): Uint8Array | undefined {
  if (typeof data !== 'string') return data;
  const body = data.startsWith('0x') || data.startsWith('0X') ? data.slice(2) : data;
  if (!isHexBody(body)) return undefined;
  return new Uint8Array(Buffer.from(body, 'hex'));
}

/** The ABI function whose selector starts `data`, or undefined (no such function, or under 4 bytes). */
export function findFunction(abi: ParsedAbi, data: string | Uint8Array): AbiFunction | undefined {
  const bytes = toBytes(data);
  if (!bytes || bytes.length < 4) return undefined;
  return abi.functions.get('0x' + toHex(bytes.subarray(0, 4)));
}

/** Decodes the arguments after the selector as `fn`'s inputs; AbiDecodeError when they do not fit. */
export function decodeFunctionArguments(fn: AbiFunction, data: string | Uint8Array, opts: DecodeOptions = {}): Record<string, unknown> {
  const bytes = toBytes(data);
  if (!bytes) throw new AbiDecodeError('calldata is not hex');
  const values = new Decoder(bytes.subarray(4), opts).sequence(
    fn.inputs.map((p) => p.type),
    0,
    'argument',
  );
  const args: Record<string, unknown> = {};
  fn.inputs.forEach((p, i) => {
    const key = p.name !== '' && !Object.hasOwn(args, p.name) ? p.name : String(i);
    args[key] = values[i];
  });
  return args;
}

/**
 * Decodes a call to one of `abi`'s functions (a parsed ABI or the JSON array itself). Returns
 * undefined when `data` does not start with the selector of a function of the ABI; throws
 * AbiDecodeError when it does but the arguments are malformed (see the file comment).
 */
export function decodeFunctionCall(
  abi: ParsedAbi | readonly unknown[],
  data: string | Uint8Array,
  opts: DecodeOptions = {},
): DecodedFunctionCall | undefined {
  const parsed = Array.isArray(abi) ? parseAbi(abi) : (abi as ParsedAbi);
  const fn = findFunction(parsed, data);
  if (!fn) return undefined;
  return {
    functionName: fn.name,
    functionSignature: fn.selector,
    canonicalSignature: fn.signature,
    args: decodeFunctionArguments(fn, data, opts),
  };
}
