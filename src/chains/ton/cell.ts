// Minimal TON cell support for address derivation: a bag-of-cells (BOC) reader for ordinary cells,
// the standard cell representation hash and depth, and a bit writer for small data cells.
// Spec: TON whitepaper / tvm.pdf §3.1.4-3.1.5 (cell representation: d1 = refs + 8*exotic + 32*level,
// d2 = floor(bits/8) + ceil(bits/8), data padded with a completion tag, then 2-byte depths and
// 32-byte hashes of the references) and crypto/tl/boc.tlb `serialized_boc#b5ee9c72`.
//
// Why not @ton/core at run time: it is a devDependency (tests compare against it), and an address
// needs only hashing of a handful of cells. Exotic cells, stored hashes and non-zero levels are
// rejected: the standard wallet contract codes contain none of them.

import { createHash } from 'node:crypto';

export interface CellRef {
  hash: Uint8Array;
  depth: number;
}

/** Representation hash and depth of an ordinary cell given its d1/d2 descriptors and padded data. */
export function cellHash(d1: number, d2: number, data: Uint8Array, refs: readonly CellRef[]): CellRef {
  const h = createHash('sha256');
  h.update(Uint8Array.of(d1, d2));
  h.update(data);
  let depth = 0;
  for (const r of refs) {
    h.update(Uint8Array.of(r.depth >> 8, r.depth & 0xff));
    if (r.depth + 1 > depth) depth = r.depth + 1;
  }
  for (const r of refs) h.update(r.hash);
  return { hash: new Uint8Array(h.digest()), depth };
}

/** Accumulates bits MSB-first and produces (d1, d2, padded data) for an ordinary cell. */
export class BitWriter {
  readonly #bits: number[] = [];

  writeBit(bit: 0 | 1 | boolean): this {
    this.#bits.push(bit ? 1 : 0);
    return this;
  }

  writeUint(value: number, bits: number): this {
    for (let i = bits - 1; i >= 0; i--) this.#bits.push(Math.floor(value / 2 ** i) % 2);
    return this;
  }

  writeBytes(bytes: Uint8Array): this {
    for (const b of bytes) this.writeUint(b, 8);
    return this;
  }

  get length(): number {
    return this.#bits.length;
  }

  /** Cell descriptors and data with the completion tag (a 1 then zeros) when bits % 8 != 0. */
  toCell(refs: readonly CellRef[]): CellRef {
    const n = this.#bits.length;
    if (n > 1023 || refs.length > 4) throw new Error('cell overflow');
    const bytes = new Uint8Array(Math.ceil(n / 8));
    this.#bits.forEach((bit, i) => {
      if (bit) bytes[i >> 3]! |= 0x80 >> (i & 7);
    });
    if (n % 8 !== 0) bytes[n >> 3]! |= 0x80 >> (n & 7);
    return cellHash(refs.length, Math.floor(n / 8) + Math.ceil(n / 8), bytes, refs);
  }
}

// CRC-32C (Castagnoli, reflected polynomial 0x82f63b78), the BOC trailer checksum.
let CRC32C_TABLE: Uint32Array | null = null;
function crc32c(data: Uint8Array): number {
  if (!CRC32C_TABLE) {
    CRC32C_TABLE = new Uint32Array(256);
    for (let i = 0; i < 256; i++) {
      let c = i;
      for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
      CRC32C_TABLE[i] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const b of data) crc = CRC32C_TABLE[(crc ^ b) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function readUint(bytes: Uint8Array, offset: number, size: number): number {
  let v = 0;
  for (let i = 0; i < size; i++) v = v * 256 + bytes[offset + i]!;
  return v;
}

/** Hash and depth of the single root of a BOC made of ordinary level-0 cells. */
export function bocRootHash(boc: Uint8Array): CellRef {
  const fail = (why: string): never => {
    throw new Error(`unsupported BOC: ${why}`);
  };
  if (readUint(boc, 0, 4) !== 0xb5ee9c72) fail('bad magic');
  const flags = boc[4]!;
  const hasIdx = (flags & 0x80) !== 0;
  const hasCrc = (flags & 0x40) !== 0;
  const size = flags & 0x07;
  const offBytes = boc[5]!;
  if (size < 1 || size > 4 || offBytes < 1 || offBytes > 8) fail('bad sizes');
  let p = 6;
  const cells = readUint(boc, p, size);
  const roots = readUint(boc, p + size, size);
  const absent = readUint(boc, p + 2 * size, size);
  p += 3 * size;
  const totCellsSize = readUint(boc, p, offBytes);
  p += offBytes;
  if (roots !== 1 || absent !== 0) fail('expected one root and no absent cells');
  const rootIndex = readUint(boc, p, size);
  p += size;
  if (hasIdx) p += cells * offBytes;
  const end = p + totCellsSize;
  if (end + (hasCrc ? 4 : 0) !== boc.length) fail('length mismatch');
  if (hasCrc) {
    const stored = boc[end]! | (boc[end + 1]! << 8) | (boc[end + 2]! << 16) | (boc[end + 3]! << 24);
    if (crc32c(boc.subarray(0, end)) !== stored >>> 0) fail('crc32c mismatch');
  }
  // Parse cells in order; references always point forward, so hashes are computed backwards.
  const parsed: { d1: number; d2: number; data: Uint8Array; refs: number[] }[] = [];
  for (let i = 0; i < cells; i++) {
    const d1 = boc[p]!;
    const d2 = boc[p + 1]!;
    p += 2;
    const refCount = d1 & 7;
    if (d1 & 8) fail('exotic cell');
    if (d1 & 16) fail('stored hashes');
    if (d1 >> 5) fail('non-zero level');
    if (refCount > 4) fail('too many references');
    const dataLen = Math.ceil(d2 / 2);
    const data = boc.subarray(p, p + dataLen);
    p += dataLen;
    const refs: number[] = [];
    for (let r = 0; r < refCount; r++) {
      const ref = readUint(boc, p, size);
      if (ref <= i || ref >= cells) fail('reference order');
      refs.push(ref);
      p += size;
    }
    parsed.push({ d1, d2, data, refs });
  }
  if (p !== end) fail('trailing cell data');
  const hashes: CellRef[] = new Array(cells);
  for (let i = cells - 1; i >= 0; i--) {
    const c = parsed[i]!;
    hashes[i] = cellHash(c.d1, c.d2, c.data, c.refs.map((r) => hashes[r]!));
  }
  return hashes[rootIndex]!;
}
