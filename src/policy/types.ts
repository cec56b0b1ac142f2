// Static types of the policy language (docs/reference/policies.md "The language"; docs/reference/policies.md).
//
// The reference language has bool, int (i128), uint (u256), string, list<T>, struct and timestamp.
// Sigil folds int and uint into one `int` type: values are bigints at run time, so comparing an
// i128 field with a u256 literal is exact, and the literal range check (parser.ts) keeps literals
// inside [-2^127, 2^256-1]. Two types are added for the checker:
// - `map<V>`: string-keyed maps reached with `m['key']` (`contract_call_args`, `message`, …);
// - `dyn`: request data whose type is only known at run time (ABI/IDL arguments, EIP-712 values).
//   The checker lets any operation through on `dyn`; the evaluator checks it when it runs.
//
// `TypeFor<T>` maps a TypeScript type from context.ts to the descriptor it must have, so schema.ts
// cannot describe a field the context interfaces lack, miss one they have, or give it another type.

import type { PolicyInt } from './context.js';
import type { Unavailable } from './values.js';

export interface BoolType {
  readonly kind: 'bool';
}
export interface IntType {
  readonly kind: 'int';
}
export interface StringType {
  readonly kind: 'string';
  /**
   * Set on the fields the reference engine compares case-insensitively (docs/reference/policies.md "The language":
   * `eth.tx.to`, `eth.tx.from`, …). Values read from such a field compare ignoring case.
   */
  readonly caseInsensitive?: boolean;
}
export interface TimestampType {
  readonly kind: 'timestamp';
}
export interface DynType {
  readonly kind: 'dyn';
}
export interface ListType<E = PolicyType> {
  readonly kind: 'list';
  readonly elem: E;
}
export interface MapType<V = PolicyType> {
  readonly kind: 'map';
  readonly value: V;
}
export interface FieldType<T = PolicyType, O extends boolean = boolean> {
  readonly type: T;
  /** True when the pipeline may leave the field absent (reading it is then a `missing` error). */
  readonly optional: O;
}
export interface StructType {
  readonly kind: 'struct';
  /** The struct's name in the reference docs (EthereumTransaction, User, …), used in messages. */
  readonly name: string;
  readonly fields: Readonly<Record<string, FieldType>>;
}

export type PolicyType = BoolType | IntType | StringType | TimestampType | DynType | ListType | MapType | StructType;

export const BOOL: BoolType = Object.freeze({ kind: 'bool' });
export const INT: IntType = Object.freeze({ kind: 'int' });
export const STRING: StringType = Object.freeze({ kind: 'string' });
/** A string field compared case-insensitively (addresses the engine normalizes). */
export const CI_STRING: StringType = Object.freeze({ kind: 'string', caseInsensitive: true });
export const TIMESTAMP: TimestampType = Object.freeze({ kind: 'timestamp' });
export const DYN: DynType = Object.freeze({ kind: 'dyn' });

export function listOf<E extends PolicyType>(elem: E): ListType<E> {
  return Object.freeze({ kind: 'list', elem });
}

export function mapOf<V extends PolicyType>(value: V): MapType<V> {
  return Object.freeze({ kind: 'map', value });
}

/** A field that is always present. */
export function required<T extends PolicyType>(type: T): FieldType<T, false> {
  return Object.freeze({ type, optional: false });
}

/** A field the pipeline may leave absent. */
export function optional<T extends PolicyType>(type: T): FieldType<T, true> {
  return Object.freeze({ type, optional: true });
}

// ------------------------------------------------------------------ TS type → descriptor type

/** A struct descriptor whose field list is exactly the keys of `T`. */
export interface StructTypeFor<T> extends StructType {
  readonly fields: FieldsFor<T>;
}

export type FieldsFor<T> = { readonly [K in keyof T]-?: FieldFor<T[K]> };

type FieldFor<V> = undefined extends V ? FieldType<TypeFor<Exclude<V, undefined>>, true> : FieldType<TypeFor<V>, false>;

type MapValue<V> = V extends { readonly [key: string]: infer X } ? X : never;

/** The descriptor type a value of TypeScript type `V` must be described with. */
export type TypeFor<V> = unknown extends V
  ? DynType
  : [V] extends [string]
    ? StringType
    : [V] extends [boolean | Unavailable]
      ? BoolType
      : [V] extends [PolicyInt]
        ? IntType
        : [V] extends [Date]
          ? TimestampType
          : [V] extends [readonly (infer E)[]]
            ? ListType<TypeFor<E>>
            : string extends keyof V
              ? MapType<TypeFor<MapValue<V>>>
              : StructTypeFor<V>;

/** Declares the descriptor of the context interface `T`; the compiler checks every field. */
export function struct<T>(name: string, fields: FieldsFor<T>): StructTypeFor<T> {
  return Object.freeze({ kind: 'struct', name, fields: Object.freeze(fields) });
}

/** How a type is written in messages: `int`, `list<User>`, `map<string, dyn>`. */
export function typeName(type: PolicyType): string {
  switch (type.kind) {
    case 'list':
      return `list<${typeName(type.elem)}>`;
    case 'map':
      return `map<string, ${typeName(type.value)}>`;
    case 'struct':
      return type.name;
    default:
      return type.kind;
  }
}

const SCALAR_KINDS: ReadonlySet<PolicyType['kind']> = new Set(['bool', 'int', 'string', 'timestamp']);

/** Whether `==`/`!=`/`in`/`contains` may compare values of these two static types. */
export function equalityCompatible(a: PolicyType, b: PolicyType): boolean {
  if (a.kind === 'dyn' || b.kind === 'dyn') return true;
  return SCALAR_KINDS.has(a.kind) && a.kind === b.kind;
}

/** Whether `<`/`<=`/`>`/`>=` may compare values of these two static types (ints or timestamps). */
export function orderingCompatible(a: PolicyType, b: PolicyType): boolean {
  const ordered = (t: PolicyType) => t.kind === 'int' || t.kind === 'timestamp' || t.kind === 'dyn';
  return ordered(a) && ordered(b) && (a.kind === 'dyn' || b.kind === 'dyn' || a.kind === b.kind);
}
