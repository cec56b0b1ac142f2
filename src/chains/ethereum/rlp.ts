// Recursive Length Prefix codec (Ethereum Yellow Paper, appendix B).
// Decoding is strict, like go-ethereum's: non-canonical lengths (a long form where the short form fits,
// leading zeros in a length, a single byte below 0x80 wrapped as a string) and trailing bytes are
// rejected, so that one transaction has exactly one encoding and the bytes a policy looked at are the
// bytes that get signed.

import { concatBytes, bigIntToMinimalBytes } from '../../crypto/bytes.js';

export type RlpItem = Uint8Array | RlpItem[];

export class RlpError extends Error {
  override readonly name = 'RlpError';
}

function encodeLength(len: number, offset: number): Uint8Array {
  if (len < 56) return Uint8Array.of(offset + len);
  const lb = bigIntToMinimalBytes(BigInt(len));
  return concatBytes(Uint8Array.of(offset + 55 + lb.length), lb);
}

export function rlpEncode(item: RlpItem): Uint8Array {
  if (item instanceof Uint8Array) {
    if (item.length === 1 && item[0] < 0x80) return item;
    return concatBytes(encodeLength(item.length, 0x80), item);
  }
  const body = concatBytes(...item.map(rlpEncode));
  return concatBytes(encodeLength(body.length, 0xc0), body);
}

interface Decoded {
  item: RlpItem;
  end: number;
}

function readLength(buf: Uint8Array, pos: number, lenOfLen: number): number {
  if (pos + lenOfLen > buf.length) throw new RlpError('rlp: length runs past the end of input');
  if (buf[pos] === 0) throw new RlpError('rlp: non-canonical length (leading zero)');
  if (lenOfLen > 4) throw new RlpError('rlp: length too large');
  let len = 0;
  for (let i = 0; i < lenOfLen; i++) len = len * 256 + buf[pos + i];
  if (len < 56) throw new RlpError('rlp: non-canonical length (long form for a short item)');
  return len;
}

function decodeAt(buf: Uint8Array, pos: number, depth: number): Decoded {
  if (depth > 64) throw new RlpError('rlp: nesting too deep');
  if (pos >= buf.length) throw new RlpError('rlp: unexpected end of input');
  const b = buf[pos];
  if (b < 0x80) return { item: buf.subarray(pos, pos + 1), end: pos + 1 };
  if (b <= 0xbf) {
    let start: number;
    let len: number;
    if (b <= 0xb7) {
      len = b - 0x80;
      start = pos + 1;
    } else {
      const lol = b - 0xb7;
      len = readLength(buf, pos + 1, lol);
      start = pos + 1 + lol;
    }
    const end = start + len;
    if (end > buf.length) throw new RlpError('rlp: string runs past the end of input');
    if (len === 1 && buf[start] < 0x80) throw new RlpError('rlp: non-canonical single byte');
    return { item: buf.subarray(start, end), end };
  }
  let start: number;
  let len: number;
  if (b <= 0xf7) {
    len = b - 0xc0;
    start = pos + 1;
  } else {
    const lol = b - 0xf7;
    len = readLength(buf, pos + 1, lol);
    start = pos + 1 + lol;
  }
  const end = start + len;
  if (end > buf.length) throw new RlpError('rlp: list runs past the end of input');
  const items: RlpItem[] = [];
  let p = start;
  while (p < end) {
    const d = decodeAt(buf, p, depth + 1);
    if (d.end > end) throw new RlpError('rlp: list item runs past the end of its list');
    items.push(d.item);
    p = d.end;
  }
  return { item: items, end };
}

/** Decodes exactly one item that spans all of `buf`. */
export function rlpDecode(buf: Uint8Array): RlpItem {
  const d = decodeAt(buf, 0, 0);
  if (d.end !== buf.length) throw new RlpError('rlp: trailing bytes after the top-level item');
  return d.item;
}
