// Run-time values of the policy language and how context data becomes one
// (docs/reference/policies.md "The language").
//
//   bool       → boolean
//   int/uint   → bigint            (context may give a safe-integer `number`; converted on read)
//   string     → string, or CaseInsensitiveText for a string that compares ignoring case
//   timestamp  → TimestampValue    (context gives a `Date`; converted on read)
//   list<T>    → readonly array    (elements converted when read)
//   struct/map → plain object      (own enumerable-or-not properties only, never the prototype)
//
// Conversion is lazy: the evaluator converts exactly the values a policy touches, so a large
// request costs nothing for the fields no policy reads. Anything that is not one of the above
// (a fractional or unsafe number, a function, a symbol, an invalid Date) is reported, never coerced:
// a policy must not match because `1.5` was rounded or `2**60` lost precision.

/** A point in time, in nanoseconds since the Unix epoch (RFC 3339 allows nanosecond fractions). */
export class TimestampValue {
  constructor(readonly nanos: bigint) {}

  static fromDate(date: Date): TimestampValue | null {
    const ms = date.getTime();
    return Number.isNaN(ms) ? null : new TimestampValue(BigInt(ms) * 1_000_000n);
  }

  /** Milliseconds since the epoch, rounded down. */
  get millis(): number {
    const ms = this.nanos / 1_000_000n;
    return Number(this.nanos < 0n && this.nanos % 1_000_000n !== 0n ? ms - 1n : ms);
  }
}

/**
 * A string that compares ignoring case (docs/reference/policies.md "The language"). Produced by reading a field the
 * schema marks `CI_STRING`, by `CaseInsensitiveString(x)`, or by the pipeline for dynamic data it
 * knows to be an address (`caseInsensitive()`). `==`, `!=`, `in` and `contains` fold case when
 * either side is one; slicing and indexing keep the flag (`tempo.tx.calls[0].input[34..74]`).
 * Case folding is `toLowerCase()`: locale-independent Unicode default mapping.
 */
export class CaseInsensitiveText {
  private foldedText: string | undefined;

  constructor(readonly text: string) {}

  /** The lowercased text, computed on first comparison (call data can be long and never compared). */
  get folded(): string {
    this.foldedText ??= this.text.toLowerCase();
    return this.foldedText;
  }
}

/** Marks request data (an address-typed ABI argument, an EIP-712 `address`/`bytes` value) as case-insensitive. */
export function caseInsensitive(text: string): CaseInsensitiveText {
  return new CaseInsensitiveText(text);
}

/** The text of a string value (plain or case-insensitive), or null for any other value. */
export function stringOf(value: Value): string | null {
  if (typeof value === 'string') return value;
  return value instanceof CaseInsensitiveText ? value.text : null;
}

/**
 * A context value the pipeline cannot provide for a reason other than absence: a velocity control
 * a policy names that no longer exists, a simulation that did not run. Reading it is a `value`
 * error, never a `missing` one, so a DENY policy that reads it still applies and an ALLOW policy
 * does not (outcome.ts): a limit that vanished fails closed.
 */
export class Unavailable {
  /** Nominal: a struct that happens to have a `reason` field is not one. */
  private readonly unavailable = true;

  constructor(readonly reason: string) {}
}

/** A struct or map from the context (or an element of a dynamic list). */
export type HostObject = { readonly [key: string]: unknown };

export type Value = boolean | bigint | string | CaseInsensitiveText | TimestampValue | readonly unknown[] | HostObject;

export type RuntimeTypeName = 'bool' | 'int' | 'string' | 'timestamp' | 'list' | 'object';

/** Result of reading one raw context value. */
export type HostRead =
  | { readonly tag: 'value'; readonly value: Value }
  | { readonly tag: 'absent' }
  | { readonly tag: 'invalid'; readonly kind: 'type' | 'value'; readonly reason: string };

export function isHostObject(value: unknown): value is HostObject {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof TimestampValue) &&
    !(value instanceof CaseInsensitiveText) &&
    !(value instanceof Unavailable) &&
    !(value instanceof Date)
  );
}

/** Converts a raw context value; `undefined` and `null` both mean "not populated". */
export function readHost(raw: unknown): HostRead {
  switch (typeof raw) {
    case 'undefined':
      return { tag: 'absent' };
    case 'boolean':
    case 'string':
    case 'bigint':
      return { tag: 'value', value: raw };
    case 'number':
      if (Number.isSafeInteger(raw)) return { tag: 'value', value: BigInt(raw) };
      return { tag: 'invalid', kind: 'type', reason: `the context holds the number ${String(raw)}, which is not a safe integer (use a bigint)` };
    case 'object': {
      if (raw === null) return { tag: 'absent' };
      if (raw instanceof Unavailable) return { tag: 'invalid', kind: 'value', reason: raw.reason };
      if (raw instanceof TimestampValue || raw instanceof CaseInsensitiveText || Array.isArray(raw)) return { tag: 'value', value: raw };
      if (raw instanceof Date) {
        const ts = TimestampValue.fromDate(raw);
        return ts ? { tag: 'value', value: ts } : { tag: 'invalid', kind: 'value', reason: 'the context holds an invalid Date' };
      }
      return { tag: 'value', value: raw as HostObject };
    }
    default:
      return { tag: 'invalid', kind: 'type', reason: `the context holds ${typeof raw === 'object' || typeof raw === 'undefined' ? 'an' : 'a'} ${typeof raw}, which is not a policy value` };
  }
}

/** An own property of a context object, or undefined. Never consults the prototype chain. */
export function ownProperty(object: HostObject, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(object, key) ? object[key] : undefined;
}

export function runtimeTypeName(value: Value): RuntimeTypeName {
  switch (typeof value) {
    case 'boolean':
      return 'bool';
    case 'bigint':
      return 'int';
    case 'string':
      return 'string';
    default:
      if (value instanceof TimestampValue) return 'timestamp';
      if (value instanceof CaseInsensitiveText) return 'string';
      return Array.isArray(value) ? 'list' : 'object';
  }
}

/**
 * `a == b` for two values of the same scalar type (bool, int, string, timestamp); `null` when the
 * two values cannot be compared (different types, lists, objects).
 */
export function scalarEquals(a: Value, b: Value): boolean | null {
  const ta = runtimeTypeName(a);
  if (ta !== runtimeTypeName(b)) return null;
  switch (ta) {
    case 'bool':
    case 'int':
      return a === b;
    case 'string':
      if (a instanceof CaseInsensitiveText || b instanceof CaseInsensitiveText) return foldCase(a) === foldCase(b);
      return a === b;
    case 'timestamp':
      return (a as TimestampValue).nanos === (b as TimestampValue).nanos;
    default:
      return null;
  }
}

function foldCase(value: Value): string {
  return value instanceof CaseInsensitiveText ? value.folded : (value as string).toLowerCase();
}

/** Ordering of two ints or two timestamps (-1, 0, 1); `null` for anything else. */
export function orderedCompare(a: Value, b: Value): -1 | 0 | 1 | null {
  let x: bigint;
  let y: bigint;
  if (typeof a === 'bigint' && typeof b === 'bigint') {
    x = a;
    y = b;
  } else if (a instanceof TimestampValue && b instanceof TimestampValue) {
    x = a.nanos;
    y = b.nanos;
  } else {
    return null;
  }
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Code-point view of a string for indexing and slicing. Policy strings are almost always ASCII
 * (hex, base58, enum names); the fast path avoids splitting those.
 */
export function codePoints(value: string): { readonly length: number; slice(start: number, end: number): string } {
  if (!/[\uD800-\uDFFF]/.test(value)) return { length: value.length, slice: (s, e) => value.slice(s, e) };
  const points = Array.from(value);
  return { length: points.length, slice: (s, e) => points.slice(s, e).join('') };
}
