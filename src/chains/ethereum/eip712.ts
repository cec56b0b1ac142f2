// EIP-712 typed structured data and EIP-7702 authorizations: the PAYLOAD_ENCODING_EIP712 and
// PAYLOAD_ENCODING_EIP7702_AUTHORIZATION payloads of sign_raw_payload(s).
// Spec: EIP-712 (encodeType / hashStruct / domainSeparator, digest keccak256(0x1901 ‖ domainSeparator ‖
// hashStruct(message))); EIP-7702 (keccak256(0x05 ‖ rlp([chain_id, address, nonce])));
// docs/reference/keys.md "Signing" (viem sends `serializeTypedData(data)`, ethers sends
// `JSON.stringify(TypedDataEncoder.getPayload(...))`, viem signAuthorization sends
// `JSON.stringify({address, chainId, nonce})`); docs/reference/policies.md "Keywords" (`eth.eip_712`,
// `eth.eip_7702_authorization`, field names verbatim) and docs/reference/keys.md "Signing"
//
// Parsing validates everything up front, so hashing a parsed value cannot fail:
// - The JSON is read by a strict parser of our own (RFC 8259), which keeps number literals exact and
//   rejects duplicate keys, so the policy engine and the signer can never see two readings of one payload.
// - Integers may be JSON numbers (exact integers within ±(2^53 − 1): a larger JSON number is ambiguous,
//   since a JavaScript client already rounded it), decimal strings or 0x-hex strings, optionally negative;
//   they are range-checked against their uintN/intN type. Addresses are 20-byte hex (0x optional, as
//   ethers allows) and a mixed-case address must carry a valid EIP-55 checksum, as viem and ethers
//   require. bytes/bytesN are 0x-hex with an even number of digits; bytesN must be exactly N bytes.
// - Struct and field names follow viem's validateTypedData: struct names [A-Za-z0-9_$:]+ that are not
//   Solidity type names (Hyperliquid's `HyperliquidTransaction:ApproveAgent` is valid); field names
//   [A-Za-z0-9_$]+, unique per struct. Every field type must be atomic or a struct in `types`
//   (bare `int`/`uint`, `uint7`, `bytes33` are rejected, as viem does).
// - When `types` lacks EIP712Domain it is derived from the domain's non-null fields, in the order
//   name, version, chainId, verifyingContract, salt (viem getTypesForEIP712Domain, ethers getPayload).
// - Values are read only for declared fields; undeclared message/domain keys are ignored by the hash,
//   and therefore also left out of the policy view, so a policy can only look at signed data.

import { bigIntToMinimalBytes, concatBytes, fromHex, isHexBody, toHex, utf8ToBytes } from '../../crypto/bytes.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { CryptoInputError, describeValue } from '../../crypto/errors.js';
import { rlpEncode } from './rlp.js';

// ------------------------------------------------------------------------------------------ types

/** A field of a struct type: `{name, type}` as listed in `types`. */
export interface Eip712Field {
  readonly name: string;
  readonly type: string;
}

/**
 * A value after parsing, normalized by its declared type: integers are bigint, `address`, `bytes` and
 * `bytesN` are lowercase 0x-hex strings, `string` is the string, `bool` a boolean, arrays are arrays
 * and structs are objects holding exactly the declared fields (in declaration order).
 */
export type Eip712Value = bigint | boolean | string | readonly Eip712Value[] | Eip712Struct;

export interface Eip712Struct {
  readonly [field: string]: Eip712Value;
}

/** Parsed, validated typed data. Build it with `parseTypedData`. */
export interface Eip712TypedData {
  /** Every struct type, EIP712Domain included (as sent, or derived from the domain's fields). */
  readonly types: ReadonlyMap<string, readonly Eip712Field[]>;
  readonly primaryType: string;
  /** The domain's values for the EIP712Domain fields. */
  readonly domain: Eip712Struct;
  /** The message's values for the primary type's fields; `{}` when primaryType is EIP712Domain. */
  readonly message: Eip712Struct;
}

/** `eth.eip_712.domain` (docs/reference/policies.md "Keywords"; src/policy/context.ts Eip712Domain). */
export interface Eip712PolicyDomain {
  /** `''` when the domain has no `name` (likewise `version`, `verifying_contract`). */
  readonly name: string;
  readonly version: string;
  /** Absent when the domain has no chainId. */
  readonly chain_id?: bigint;
  /** Lowercase 0x-hex (the policy schema compares it ignoring case). */
  readonly verifying_contract: string;
}

/** `eth.eip_712` (docs/reference/policies.md "Keywords"; src/policy/context.ts Eip712TypedData). */
export interface Eip712PolicyFields {
  readonly primary_type: string;
  readonly domain: Eip712PolicyDomain;
  /**
   * The signed message: integers as decimal strings (they compare as strings, `p['amount'] ==
   * '100000000'`), `address`/`bytes`/`bytesN` as lowercase 0x-hex passed through
   * `markCaseInsensitive`, strings and booleans as they are, arrays and nested structs as lists and maps.
   */
  readonly message: Readonly<Record<string, unknown>>;
}

export interface Eip712PolicyOptions {
  /**
   * Wraps `address`, `bytes` and `bytesN` message values, which the reference engine compares ignoring
   * case (docs/reference/policies.md "The language"). The pipeline passes `caseInsensitive` from src/policy/values.ts; the default
   * leaves the lowercase string as it is.
   */
  readonly markCaseInsensitive?: (text: string) => unknown;
}

/** A parsed EIP-7702 authorization tuple. */
export interface Eip7702Authorization {
  /** Lowercase 0x-hex, 20 bytes. */
  readonly address: string;
  /** uint256; 0 means "valid on any chain". */
  readonly chainId: bigint;
  /** uint64. */
  readonly nonce: bigint;
}

/** `eth.eip_7702_authorization` (docs/reference/policies.md "Keywords"; src/policy/context.ts Eip7702Authorization). */
export interface Eip7702PolicyFields {
  /** EIP-55 checksummed, the form Turnkey shows EVM addresses in (compared exactly). */
  readonly address: string;
  readonly chain_id: bigint;
  readonly nonce: bigint;
}

// ------------------------------------------------------------------------------------------ errors

const EIP712_PREFIX = 'invalid EIP-712 payload: ';
const EIP7702_PREFIX = 'invalid EIP-7702 authorization payload: ';

type Fail = (message: string) => never;

const fail712: Fail = (message) => {
  throw new CryptoInputError('INVALID_PAYLOAD', EIP712_PREFIX + message);
};

const fail7702: Fail = (message) => {
  throw new CryptoInputError('INVALID_PAYLOAD', EIP7702_PREFIX + message);
};

// ------------------------------------------------------------------------------------------ strict JSON

/** A JSON number, kept as its literal text so that no precision is lost before its type is known. */
class JsonNumber {
  constructor(readonly text: string) {}
}

type Json = null | boolean | string | JsonNumber | Json[] | JsonObject;
type JsonObject = Map<string, Json>;

const MAX_JSON_DEPTH = 128;
const NUMBER_RE = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

/** RFC 8259 JSON, rejecting duplicate object keys and nesting deeper than MAX_JSON_DEPTH. */
function parseJson(text: string, fail: Fail): Json {
  if (typeof text !== 'string') return fail('payload must be a JSON string');
  let i = 0;
  const n = text.length;
  const at = (what: string): never => fail(`malformed JSON: ${what} at offset ${i}`);

  const skipWs = (): void => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else break;
    }
  };

  const parseString = (): string => {
    i++; // opening quote
    let out = '';
    let start = i;
    for (;;) {
      if (i >= n) return at('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(start, i);
        i++;
        return out;
      }
      if (c < 0x20) return at('control character in string');
      if (c !== 0x5c) {
        i++;
        continue;
      }
      out += text.slice(start, i);
      const e = text[i + 1];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          i += 2;
          break;
        case 'b':
          out += '\b';
          i += 2;
          break;
        case 'f':
          out += '\f';
          i += 2;
          break;
        case 'n':
          out += '\n';
          i += 2;
          break;
        case 'r':
          out += '\r';
          i += 2;
          break;
        case 't':
          out += '\t';
          i += 2;
          break;
        case 'u': {
          const hex = text.slice(i + 2, i + 6);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) return at('bad \\u escape');
          out += String.fromCharCode(parseInt(hex, 16));
          i += 6;
          break;
        }
        default:
          return at('bad escape');
      }
      start = i;
    }
  };

  const parseValue = (depth: number): Json => {
    skipWs();
    if (i >= n) return at('unexpected end of input');
    const c = text[i];
    if (c === '{' || c === '[') {
      if (depth >= MAX_JSON_DEPTH) return at('nesting too deep');
      i++;
      skipWs();
      if (c === '[') {
        const arr: Json[] = [];
        if (text[i] === ']') {
          i++;
          return arr;
        }
        for (;;) {
          arr.push(parseValue(depth + 1));
          skipWs();
          if (text[i] === ',') i++;
          else if (text[i] === ']') {
            i++;
            return arr;
          } else return at("expected ',' or ']'");
        }
      }
      const obj: JsonObject = new Map();
      if (text[i] === '}') {
        i++;
        return obj;
      }
      for (;;) {
        skipWs();
        if (text[i] !== '"') return at('expected a string key');
        const key = parseString();
        if (obj.has(key)) return fail(`malformed JSON: duplicate key ${describeValue(key)}`);
        skipWs();
        if (text[i] !== ':') return at("expected ':'");
        i++;
        obj.set(key, parseValue(depth + 1));
        skipWs();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return obj;
        } else return at("expected ',' or '}'");
      }
    }
    if (c === '"') return parseString();
    if (text.startsWith('true', i)) {
      i += 4;
      return true;
    }
    if (text.startsWith('false', i)) {
      i += 5;
      return false;
    }
    if (text.startsWith('null', i)) {
      i += 4;
      return null;
    }
    NUMBER_RE.lastIndex = i;
    const m = NUMBER_RE.exec(text);
    if (m) {
      i += m[0].length;
      return new JsonNumber(m[0]);
    }
    return at('unexpected character');
  };

  const v = parseValue(0);
  skipWs();
  if (i !== n) at('trailing characters');
  return v;
}

function isObject(v: Json | undefined): v is JsonObject {
  return v instanceof Map;
}

function jsonKind(v: Json | undefined): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (v instanceof JsonNumber) return 'a number';
  if (v instanceof Map) return 'an object';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'string' ? `the string ${describeValue(v)}` : 'a boolean';
}

/** Sets an own, enumerable property (a field called `__proto__` stays a plain field). */
function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

// ------------------------------------------------------------------------------------------ numbers

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const INT_STRING_RE = /^(-?)(?:0[xX]([0-9a-fA-F]+)|([0-9]+))$/;
const TWO_256 = 1n << 256n;

/** The exact integer a JSON number literal denotes, or an error if it is fractional or beyond ±(2^53−1). */
function integerFromJsonNumber(text: string, fail: Fail, where: string): bigint {
  const m = /^(-?)([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/.exec(text)!;
  const negative = m[1] === '-';
  const frac = m[3] ?? '';
  let digits = (m[2] + frac).replace(/^0+/, '');
  if (digits === '') return 0n;
  const expText = m[4] ?? '0';
  // Anything needing more than ~20 digits of shifting is outside the safe range (or not an integer).
  if (expText.replace(/^[+-]?0*/, '').length > 4) {
    return fail(`${where}: the number ${text} is not a safe integer; send large integers as decimal strings`);
  }
  let exp = parseInt(expText, 10) - frac.length;
  while (exp < 0 && digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    exp++;
  }
  if (exp < 0) return fail(`${where}: the number ${text} is not an integer`);
  if (digits.length + exp > 16) {
    return fail(`${where}: the number ${text} is not a safe integer; send large integers as decimal strings`);
  }
  const v = BigInt(digits) * 10n ** BigInt(exp);
  if (v > MAX_SAFE) {
    return fail(`${where}: the number ${text} is not a safe integer; send large integers as decimal strings`);
  }
  return negative ? -v : v;
}

/** Reads an integer from a JSON number, a decimal string or a 0x-hex string (either optionally negative). */
function readInteger(v: Json | undefined, fail: Fail, where: string): bigint {
  if (v instanceof JsonNumber) return integerFromJsonNumber(v.text, fail, where);
  if (typeof v === 'string') {
    const m = INT_STRING_RE.exec(v);
    if (!m) return fail(`${where}: expected an integer, got ${jsonKind(v)}`);
    const abs = m[2] !== undefined ? BigInt('0x' + m[2]) : BigInt(m[3]);
    return m[1] === '-' ? -abs : abs;
  }
  return fail(`${where}: expected an integer (number or decimal/hex string), got ${jsonKind(v)}`);
}

function checkRange(value: bigint, signed: boolean, bits: number, fail: Fail, where: string): bigint {
  const b = BigInt(bits);
  const ok = signed ? value >= -(1n << (b - 1n)) && value < 1n << (b - 1n) : value >= 0n && value < 1n << b;
  if (!ok) fail(`${where}: ${value} is out of range for ${signed ? 'int' : 'uint'}${bits}`);
  return value;
}

// ------------------------------------------------------------------------------------------ hex, addresses

/** EIP-55 checksum form of a 40-digit lowercase hex address body. */
function checksumBody(lower: string): string {
  const hash = toHex(keccak_256(utf8ToBytes(lower)));
  let out = '';
  for (let k = 0; k < 40; k++) out += parseInt(hash[k], 16) >= 8 ? lower[k].toUpperCase() : lower[k];
  return out;
}

/** A 20-byte hex address (0x optional), checksum-verified when mixed-case; returns lowercase 0x-hex. */
function readAddress(v: Json | undefined, fail: Fail, where: string, requirePrefix: boolean): string {
  if (typeof v !== 'string') return fail(`${where}: expected an address string, got ${jsonKind(v)}`);
  const hasPrefix = v.startsWith('0x') || v.startsWith('0X');
  const body = hasPrefix ? v.slice(2) : v;
  if ((requirePrefix && !hasPrefix) || body.length !== 40 || !isHexBody(body)) {
    return fail(`${where}: ${describeValue(v)} is not a 20-byte hex address`);
  }
  const lower = body.toLowerCase();
  if (body !== lower && body !== body.toUpperCase() && body !== checksumBody(lower)) {
    return fail(`${where}: ${describeValue(v)} has an invalid EIP-55 checksum`);
  }
  return '0x' + lower;
}

/** 0x-prefixed hex with an even number of digits; returns it lowercase. */
function readHexBytes(v: Json | undefined, fail: Fail, where: string, size: number | null): string {
  if (typeof v !== 'string') return fail(`${where}: expected a 0x-prefixed hex string, got ${jsonKind(v)}`);
  if (!(v.startsWith('0x') || v.startsWith('0X')) || !isHexBody(v.slice(2))) {
    return fail(`${where}: ${describeValue(v)} is not 0x-prefixed hex with an even number of digits`);
  }
  const len = (v.length - 2) / 2;
  if (size !== null && len !== size) return fail(`${where}: expected ${size} bytes, got ${len}`);
  return '0x' + v.slice(2).toLowerCase();
}

// ------------------------------------------------------------------------------------------ type grammar

type TypeRef =
  | { readonly kind: 'array'; readonly of: TypeRef; readonly length: number | null }
  | { readonly kind: 'struct'; readonly name: string }
  | { readonly kind: 'uint' | 'int'; readonly bits: number }
  | { readonly kind: 'fixedBytes'; readonly size: number }
  | { readonly kind: 'address' | 'bool' | 'string' | 'bytes' };

const STRUCT_NAME_RE = /^[A-Za-z0-9_$:]+$/;
const FIELD_NAME_RE = /^[A-Za-z0-9_$]+$/;
const ARRAY_RE = /^(.*)\[([0-9]*)\]$/;
const INT_TYPE_RE = /^(u?int)([1-9][0-9]{0,2})$/;
const BYTES_TYPE_RE = /^bytes([1-9][0-9]?)$/;
const DOMAIN = 'EIP712Domain';
const MAX_ARRAY_DIMENSIONS = 32;

function atomicType(t: string): TypeRef | null {
  if (t === 'address' || t === 'bool' || t === 'string' || t === 'bytes') return { kind: t };
  let m = INT_TYPE_RE.exec(t);
  if (m) {
    const bits = Number(m[2]);
    if (bits % 8 === 0 && bits <= 256) return { kind: m[1] === 'uint' ? 'uint' : 'int', bits };
    return null;
  }
  m = BYTES_TYPE_RE.exec(t);
  if (m) {
    const size = Number(m[1]);
    if (size <= 32) return { kind: 'fixedBytes', size };
  }
  return null;
}

/** A name that other implementations would read as a Solidity type (viem validateReference). */
function looksLikeSolidityType(name: string): boolean {
  return name === 'address' || name === 'bool' || name === 'string' || /^(u?int|bytes)[0-9]*$/.test(name);
}

/** Strips array suffixes: `Person[2][]` → `Person`. */
function baseTypeName(t: string): string {
  return t.replace(/(\[[0-9]*\])+$/, '');
}

class TypeTable {
  private readonly refs = new Map<string, TypeRef>();
  private readonly hashes = new Map<string, Uint8Array>();

  constructor(readonly structs: ReadonlyMap<string, readonly Eip712Field[]>) {}

  /** Resolves a type string; unknown or malformed types are INVALID_PAYLOAD. */
  resolve(t: string, where: string): TypeRef {
    const cached = this.refs.get(t);
    if (cached) return cached;
    let ref: TypeRef;
    if ((t.match(/\[/g)?.length ?? 0) > MAX_ARRAY_DIMENSIONS) {
      return fail712(`${where}: type "${t.slice(0, 40)}..." has more than ${MAX_ARRAY_DIMENSIONS} array dimensions`);
    }
    const arr = ARRAY_RE.exec(t);
    if (arr) {
      if (arr[2] !== '' && !/^(0|[1-9][0-9]{0,8})$/.test(arr[2])) fail712(`${where}: bad array length in type "${t}"`);
      ref = { kind: 'array', of: this.resolve(arr[1], where), length: arr[2] === '' ? null : Number(arr[2]) };
    } else {
      const atomic = atomicType(t);
      if (atomic) ref = atomic;
      else if (this.structs.has(t)) ref = { kind: 'struct', name: t };
      else return fail712(`${where}: unknown type ${describeValue(t)}`);
    }
    this.refs.set(t, ref);
    return ref;
  }

  fields(name: string): readonly Eip712Field[] {
    return this.structs.get(name)!;
  }

  /** encodeType: the primary type, then every struct it references (transitively), sorted by name. */
  encodeType(primary: string): string {
    const deps = new Set<string>();
    const visit = (name: string): void => {
      if (deps.has(name) || !this.structs.has(name)) return;
      deps.add(name);
      for (const f of this.fields(name)) visit(baseTypeName(f.type));
    };
    visit(primary);
    deps.delete(primary);
    return [primary, ...[...deps].sort()]
      .map((name) => `${name}(${this.fields(name).map((f) => `${f.type} ${f.name}`).join(',')})`)
      .join('');
  }

  typeHash(name: string): Uint8Array {
    let h = this.hashes.get(name);
    if (!h) {
      h = keccak_256(utf8ToBytes(this.encodeType(name)));
      this.hashes.set(name, h);
    }
    return h;
  }
}

// ------------------------------------------------------------------------------------------ parsing

function readTypes(v: Json | undefined): Map<string, Eip712Field[]> {
  if (!isObject(v)) return fail712(`"types" must be an object, got ${jsonKind(v)}`);
  const out = new Map<string, Eip712Field[]>();
  for (const [name, list] of v) {
    if (!STRUCT_NAME_RE.test(name) || looksLikeSolidityType(name)) {
      fail712(`invalid struct type name ${describeValue(name)}`);
    }
    if (!Array.isArray(list)) return fail712(`types.${name} must be an array of {name, type}, got ${jsonKind(list)}`);
    const seen = new Set<string>();
    const fields: Eip712Field[] = [];
    list.forEach((f, k) => {
      const where = `types.${name}[${k}]`;
      if (!isObject(f)) return fail712(`${where} must be an object {name, type}, got ${jsonKind(f)}`);
      const fname = f.get('name');
      const ftype = f.get('type');
      if (typeof fname !== 'string' || !FIELD_NAME_RE.test(fname)) {
        return fail712(`${where}.name must be a field name ([A-Za-z0-9_$]+), got ${jsonKind(fname)}`);
      }
      if (typeof ftype !== 'string' || ftype.length === 0) return fail712(`${where}.type must be a type name, got ${jsonKind(ftype)}`);
      if (seen.has(fname)) return fail712(`types.${name} lists the field "${fname}" twice`);
      seen.add(fname);
      fields.push({ name: fname, type: ftype });
    });
    out.set(name, fields);
  }
  return out;
}

/** viem getTypesForEIP712Domain / ethers getPayload: the standard fields the domain has, in order. */
const STANDARD_DOMAIN_FIELDS: readonly Eip712Field[] = [
  { name: 'name', type: 'string' },
  { name: 'version', type: 'string' },
  { name: 'chainId', type: 'uint256' },
  { name: 'verifyingContract', type: 'address' },
  { name: 'salt', type: 'bytes32' },
];

function coerce(table: TypeTable, ref: TypeRef, v: Json | undefined, where: string): Eip712Value {
  switch (ref.kind) {
    case 'struct': {
      if (!isObject(v)) return fail712(`${where}: expected a ${ref.name} object, got ${jsonKind(v)}`);
      const out: Record<string, Eip712Value> = {};
      for (const f of table.fields(ref.name)) {
        const fv = v.get(f.name);
        if (fv === undefined || fv === null) return fail712(`${where}.${f.name}: missing value for ${f.type} field`);
        setOwn(out, f.name, coerce(table, table.resolve(f.type, where), fv, `${where}.${f.name}`));
      }
      return out;
    }
    case 'array': {
      if (!Array.isArray(v)) return fail712(`${where}: expected an array, got ${jsonKind(v)}`);
      if (ref.length !== null && v.length !== ref.length) {
        return fail712(`${where}: expected ${ref.length} elements, got ${v.length}`);
      }
      return v.map((item, k) => coerce(table, ref.of, item, `${where}[${k}]`));
    }
    case 'uint':
    case 'int':
      return checkRange(readInteger(v, fail712, where), ref.kind === 'int', ref.bits, fail712, where);
    case 'bool':
      if (typeof v !== 'boolean') return fail712(`${where}: expected true or false, got ${jsonKind(v)}`);
      return v;
    case 'string':
      if (typeof v !== 'string') return fail712(`${where}: expected a string, got ${jsonKind(v)}`);
      return v;
    case 'address':
      return readAddress(v, fail712, where, false);
    case 'bytes':
      return readHexBytes(v, fail712, where, null);
    case 'fixedBytes':
      return readHexBytes(v, fail712, where, ref.size);
  }
}

/**
 * Parses the JSON typed data viem (`serializeTypedData`) and ethers
 * (`JSON.stringify(TypedDataEncoder.getPayload(...))`) send: `{types, domain, primaryType, message}`.
 * Throws CryptoInputError('INVALID_PAYLOAD', 'invalid EIP-712 payload: …') on any defect.
 */
export function parseTypedData(payload: string): Eip712TypedData {
  const root = parseJson(payload, fail712);
  if (!isObject(root)) return fail712(`expected a JSON object {types, domain, primaryType, message}, got ${jsonKind(root)}`);

  const primaryType = root.get('primaryType');
  if (primaryType === undefined || primaryType === null) return fail712('missing "primaryType"');
  if (typeof primaryType !== 'string') return fail712(`"primaryType" must be a string, got ${jsonKind(primaryType)}`);
  const rawTypes = root.get('types');
  if (rawTypes === undefined || rawTypes === null) return fail712('missing "types"');
  const structs = readTypes(rawTypes);

  const rawDomain = root.get('domain') ?? null;
  if (rawDomain !== null && !isObject(rawDomain)) return fail712(`"domain" must be an object, got ${jsonKind(rawDomain)}`);
  const domainJson: JsonObject = rawDomain ?? new Map();
  if (!structs.has(DOMAIN)) {
    const present = STANDARD_DOMAIN_FIELDS.filter((f) => {
      const dv = domainJson.get(f.name);
      return dv !== undefined && dv !== null;
    });
    structs.set(DOMAIN, present);
  }

  const table = new TypeTable(structs);
  for (const [name, fields] of structs) {
    for (const f of fields) {
      const base = baseTypeName(f.type);
      if (base === 'int' || base === 'uint') fail712(`types.${name}.${f.name}: use a sized integer type, not "${f.type}"`);
      table.resolve(f.type, `types.${name}.${f.name}`);
    }
  }
  if (!structs.has(primaryType)) return fail712(`primaryType ${describeValue(primaryType)} is not defined in "types"`);

  const domain = coerce(table, { kind: 'struct', name: DOMAIN }, domainJson, 'domain') as Eip712Struct;
  let message: Eip712Struct = {};
  if (primaryType !== DOMAIN) {
    const rawMessage = root.get('message');
    if (rawMessage === undefined || rawMessage === null) return fail712('missing "message"');
    message = coerce(table, { kind: 'struct', name: primaryType }, rawMessage, 'message') as Eip712Struct;
  }
  return { types: structs, primaryType, domain, message };
}

// ------------------------------------------------------------------------------------------ hashing

function word(n: bigint): Uint8Array {
  const v = n < 0n ? TWO_256 + n : n;
  return fromHex(v.toString(16).padStart(64, '0'));
}

/** The 32-byte encoding of one value in encodeData. */
function encodeValue(table: TypeTable, ref: TypeRef, v: Eip712Value): Uint8Array {
  switch (ref.kind) {
    case 'struct':
      return hashStructWith(table, ref.name, v as Eip712Struct);
    case 'array':
      return keccak_256(concatBytes(...(v as readonly Eip712Value[]).map((item) => encodeValue(table, ref.of, item))));
    case 'string':
      return keccak_256(utf8ToBytes(v as string));
    case 'bytes':
      return keccak_256(fromHex(v as string));
    case 'bool':
      return word(v ? 1n : 0n);
    case 'uint':
    case 'int':
      return word(v as bigint);
    case 'address': {
      const out = new Uint8Array(32);
      out.set(fromHex(v as string), 12);
      return out;
    }
    case 'fixedBytes': {
      const out = new Uint8Array(32);
      out.set(fromHex(v as string), 0);
      return out;
    }
  }
}

function hashStructWith(table: TypeTable, name: string, value: Eip712Struct): Uint8Array {
  const parts = [table.typeHash(name)];
  for (const f of table.fields(name)) parts.push(encodeValue(table, table.resolve(f.type, name), value[f.name]));
  return keccak_256(concatBytes(...parts));
}

/** EIP-712 encodeType of a struct of `typed` (e.g. `Mail(Person from,Person to,string contents)Person(...)`). */
export function eip712EncodeType(typed: Eip712TypedData, structName: string): string {
  if (!typed.types.has(structName)) return fail712(`unknown type ${describeValue(structName)}`);
  return new TypeTable(typed.types).encodeType(structName);
}

/** domainSeparator = hashStruct(EIP712Domain, domain). */
export function eip712DomainSeparator(typed: Eip712TypedData): Uint8Array {
  return hashStructWith(new TypeTable(typed.types), DOMAIN, typed.domain);
}

/**
 * The EIP-712 digest keccak256(0x1901 ‖ domainSeparator ‖ hashStruct(message)); when primaryType is
 * EIP712Domain the message part is omitted, as viem and eth-sig-util do.
 */
export function hashTypedData(typed: Eip712TypedData): Uint8Array {
  const table = new TypeTable(typed.types);
  const parts = [Uint8Array.of(0x19, 0x01), hashStructWith(table, DOMAIN, typed.domain)];
  if (typed.primaryType !== DOMAIN) parts.push(hashStructWith(table, typed.primaryType, typed.message));
  return keccak_256(concatBytes(...parts));
}

// ------------------------------------------------------------------------------------------ policy view

function policyValue(table: TypeTable, ref: TypeRef, v: Eip712Value, mark: (text: string) => unknown): unknown {
  switch (ref.kind) {
    case 'struct':
      return policyStruct(table, ref.name, v as Eip712Struct, mark);
    case 'array':
      return (v as readonly Eip712Value[]).map((item) => policyValue(table, ref.of, item, mark));
    case 'uint':
    case 'int':
      return (v as bigint).toString(10);
    case 'address':
    case 'bytes':
    case 'fixedBytes':
      return mark(v as string);
    case 'bool':
    case 'string':
      return v;
  }
}

function policyStruct(
  table: TypeTable,
  name: string,
  value: Eip712Struct,
  mark: (text: string) => unknown,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of table.fields(name)) {
    setOwn(out, f.name, policyValue(table, table.resolve(f.type, name), value[f.name], mark));
  }
  return out;
}

/** `eth.eip_712` for the policy engine (docs/reference/policies.md "Keywords"). */
export function eip712PolicyFields(typed: Eip712TypedData, options: Eip712PolicyOptions = {}): Eip712PolicyFields {
  const table = new TypeTable(typed.types);
  const mark = options.markCaseInsensitive ?? ((text: string) => text);
  const domainFields = typed.types.get(DOMAIN) ?? [];
  const declared = (fieldName: string): TypeRef | null => {
    const f = domainFields.find((x) => x.name === fieldName);
    return f ? table.resolve(f.type, DOMAIN) : null;
  };
  const str = (fieldName: string): string => {
    const ref = declared(fieldName);
    const v = typed.domain[fieldName];
    return ref && ref.kind === 'string' && typeof v === 'string' ? v : '';
  };
  const chainRef = declared('chainId');
  const contractRef = declared('verifyingContract');
  const domain: { name: string; version: string; chain_id?: bigint; verifying_contract: string } = {
    name: str('name'),
    version: str('version'),
    verifying_contract:
      contractRef && contractRef.kind === 'address' ? (typed.domain.verifyingContract as string) : '',
  };
  if (chainRef && (chainRef.kind === 'uint' || chainRef.kind === 'int')) domain.chain_id = typed.domain.chainId as bigint;
  const message = typed.primaryType === DOMAIN ? {} : policyStruct(table, typed.primaryType, typed.message, mark);
  return { primary_type: typed.primaryType, domain, message };
}

// ------------------------------------------------------------------------------------------ EIP-7702

const MAX_UINT64 = (1n << 64n) - 1n;

/**
 * Parses `JSON.stringify({address, chainId, nonce})` (@turnkey/viem signAuthorization); chainId and
 * nonce may be JSON numbers or decimal/hex strings. Other keys are ignored (they are not signed).
 * Throws CryptoInputError('INVALID_PAYLOAD', 'invalid EIP-7702 authorization payload: …').
 */
export function parseEip7702Authorization(payload: string): Eip7702Authorization {
  const root = parseJson(payload, fail7702);
  if (!isObject(root)) return fail7702(`expected a JSON object {address, chainId, nonce}, got ${jsonKind(root)}`);
  const need = (key: string): Json => {
    const v = root.get(key);
    if (v === undefined || v === null) return fail7702(`missing "${key}"`);
    return v;
  };
  const address = readAddress(need('address'), fail7702, 'address', true);
  const chainId = readInteger(need('chainId'), fail7702, 'chainId');
  if (chainId < 0n || chainId >= TWO_256) fail7702(`chainId ${chainId} is out of range for uint256`);
  const nonce = readInteger(need('nonce'), fail7702, 'nonce');
  if (nonce < 0n || nonce > MAX_UINT64) fail7702(`nonce ${nonce} is out of range for uint64`);
  return { address, chainId, nonce };
}

/** keccak256(0x05 ‖ rlp([chain_id, address, nonce])), the digest an EIP-7702 authority signs. */
export function eip7702AuthorizationDigest(auth: Eip7702Authorization): Uint8Array {
  const body = rlpEncode([bigIntToMinimalBytes(auth.chainId), fromHex(auth.address), bigIntToMinimalBytes(auth.nonce)]);
  const buf = new Uint8Array(1 + body.length);
  buf[0] = 0x05;
  buf.set(body, 1);
  return keccak_256(buf);
}

/** `eth.eip_7702_authorization` for the policy engine (docs/reference/policies.md "Keywords"). */
export function eip7702PolicyFields(auth: Eip7702Authorization): Eip7702PolicyFields {
  const lower = auth.address.slice(2).toLowerCase();
  return { address: '0x' + checksumBody(lower), chain_id: auth.chainId, nonce: auth.nonce };
}
