// Bounded cost for every request body: before a body is parsed, one linear pass over its
// raw bytes checks what would make parsing, validation or storage expensive or store-dependent:
// nesting depth, members of one array or object, values in all, UTF-8 validity, and strings
// (values and member names) holding U+0000 or an unpaired surrogate, which PostgreSQL's text cannot
// hold and SQLite would keep, so both stores refuse them alike (RFC 8259 §8.1-8.2: JSON text is
// UTF-8; strings may escape any code unit). JSON.parse then never sees more than the limits allow,
// and nothing downstream (ajv, JSON.stringify of intents) can recurse deeply or go quadratic.
// Both servers, the public API and the auth proxy, call this through parseJsonObject.
import { isUtf8 } from 'node:buffer';
import { badRequestDetail, invalid } from '../errors/errors.js';

export interface JsonLimits {
  /** Arrays and objects nested in one another, the body itself counting as 1. */
  maxDepth: number;
  /** Members of one array or object. */
  maxItems: number;
  /** Values in the whole body (containers and scalars). */
  maxValues: number;
}

/** The documented derivation of the total from the per-container limit (docs/limits.md "Limits"). */
export const VALUES_PER_ITEM_LIMIT = 20;

export function jsonLimits(config: { maxJsonDepth: number; maxJsonItems: number }): JsonLimits {
  warmUp();
  return { maxDepth: config.maxJsonDepth, maxItems: config.maxJsonItems, maxValues: config.maxJsonItems * VALUES_PER_ITEM_LIMIT };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const LETTER_U = 0x75;

/** A path segment shown in errors is cut to this many characters: member names come from the client. */
const MAX_NAME_SHOWN = 64;

interface Frame {
  object: boolean;
  /** Commas seen: the index of the current member. */
  index: number;
  /** Objects: the raw bytes of the current member name (quotes included), for the error's path. */
  keyStart: number;
  keyEnd: number;
  expectKey: boolean;
}

/** The code unit of the 4 hex digits at `i`, or -1; byte by byte, since a body may hold 350,000 escapes. */
function hexAt(raw: Buffer, i: number): number {
  if (i + 4 > raw.length) return -1;
  let n = 0;
  for (let k = i; k < i + 4; k++) {
    const c = raw[k];
    const lower = c | 0x20;
    const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
    if (digit < 0) return -1;
    n = n * 16 + digit;
  }
  return n;
}

function nameOf(raw: Buffer, f: Frame): string {
  let name: string;
  try {
    name = JSON.parse(raw.toString('utf8', f.keyStart, f.keyEnd)) as string;
  } catch {
    name = '?';
  }
  return name.length > MAX_NAME_SHOWN ? `${name.slice(0, MAX_NAME_SHOWN)}…` : name;
}

/** `parameters.accounts[3]`: where the innermost open container's current member is. */
function pathOf(raw: Buffer, frames: Frame[], upTo = frames.length): string {
  let path = '';
  for (let k = 0; k < upTo; k++) {
    const f = frames[k];
    path += f.object ? (f.keyEnd > f.keyStart ? `${path === '' ? '' : '.'}${nameOf(raw, f)}` : '') : `[${f.index}]`;
  }
  return path === '' ? '(body)' : path;
}

function refuse(field: string, description: string): never {
  throw invalid(`bad request body: ${field}: ${description}`, [badRequestDetail([{ field, description }])]);
}

/**
 * Checks `raw` against `limits`; throws a 400 naming the field at the first violation. Malformed
 * JSON is left to JSON.parse to report: the scan only stops early, it never accepts more.
 */
export function checkJsonInput(raw: Buffer, limits: JsonLimits): void {
  // A refused request's body is read again to audit the refusal: the same bytes are scanned once.
  const seen = scanned.get(raw);
  if (seen?.limits === limits) {
    if (seen.error) throw seen.error;
    return;
  }
  try {
    scan(raw, limits);
    scanned.set(raw, { limits });
  } catch (err) {
    scanned.set(raw, { limits, error: err });
    throw err;
  }
}

const scanned = new WeakMap<Buffer, { limits: JsonLimits; error?: unknown }>();

function scan(raw: Buffer, limits: JsonLimits): void {
  if (!isUtf8(raw)) throw invalid('bad request body: the body is not valid UTF-8');
  const frames: Frame[] = [];
  let values = 0;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === QUOTE) {
      const top = frames[frames.length - 1];
      const isKey = top !== undefined && top.object && top.expectKey;
      const start = i;
      // The string's own place: a member name is named by its container, a value by its member.
      const where = () => (isKey ? `${pathOf(raw, frames, frames.length - 1)} (a member name)` : pathOf(raw, frames));
      const unpaired = () => refuse(where(), 'must be valid Unicode: it has an unpaired surrogate');
      // Inside a string only escapes matter: U+0000 and surrogates can only arrive as \u escapes,
      // since the bytes are valid UTF-8 and raw control characters are refused by JSON.parse.
      let highPending = false;
      for (i++; i < raw.length && raw[i] !== QUOTE; i++) {
        if (raw[i] !== BACKSLASH || raw[i + 1] !== LETTER_U) {
          if (highPending) unpaired();
          if (raw[i] === BACKSLASH) i++;
          continue;
        }
        const unit = hexAt(raw, i + 2);
        i += 5;
        if (unit === 0) refuse(where(), 'must not contain the NUL character (U+0000)');
        const low = unit >= 0xdc00 && unit <= 0xdfff;
        if (highPending !== low) unpaired();
        highPending = unit >= 0xd800 && unit <= 0xdbff;
      }
      if (highPending) unpaired();
      if (isKey) {
        top.keyStart = start;
        top.keyEnd = i + 1;
      }
      continue;
    }
    if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (frames.length + 1 > limits.maxDepth) refuse(pathOf(raw, frames), `nested deeper than ${limits.maxDepth} levels`);
      if (++values > limits.maxValues) refuse(pathOf(raw, frames), `the body holds more than ${limits.maxValues} values`);
      frames.push({ object: c === OPEN_OBJECT, index: 0, keyStart: 0, keyEnd: 0, expectKey: c === OPEN_OBJECT });
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      frames.pop();
    } else if (c === COMMA) {
      const top = frames[frames.length - 1];
      if (!top) continue;
      top.index++;
      if (top.index + 1 > limits.maxItems) {
        refuse(pathOf(raw, frames, frames.length - 1), `has more than ${limits.maxItems} ${top.object ? 'members' : 'items'}`);
      }
      if (++values > limits.maxValues) refuse(pathOf(raw, frames), `the body holds more than ${limits.maxValues} values`);
      if (top.object) {
        top.expectKey = true;
        top.keyStart = top.keyEnd = 0;
      }
    } else if (c === COLON) {
      const top = frames[frames.length - 1];
      if (top?.object) top.expectKey = false;
    }
  }
}

/**
 * Runs the scan over a sample of every kind of byte it meets, once at start-up, so that V8 has
 * optimized it before the first large body arrives (unoptimized, a 2 MB body takes several times
 * as long).
 */
export function warmUp(): void {
  const sample = Buffer.from(
    JSON.stringify({ s: `${'\u0001'.repeat(4000)}a"\\é😀`, n: Array.from({ length: 500 }, (_, i) => ({ [`k${i}`]: [i, 'v', null, true] })) }),
  );
  for (let i = 0; i < 10; i++) scan(sample, { maxDepth: 32, maxItems: 1000, maxValues: 100_000 });
}
