// Minimal protocol-buffers wire-format reader and writer (protobuf.dev "Encoding"), enough to read a
// Tron `Transaction.raw` and append a signature. Only the wire types proto3 messages use are accepted
// (varint, 64-bit, length-delimited, 32-bit); groups and truncated input are errors.

export class ProtobufError extends Error {
  override readonly name = 'ProtobufError';
}

export interface PbField {
  no: number;
  wire: 0 | 1 | 2 | 5;
  /** Wire type 0 (as unsigned 64-bit) and the fixed types 1 and 5 (little-endian unsigned). */
  int?: bigint;
  /** Wire type 2. */
  bytes?: Uint8Array;
}

function readVarint(buf: Uint8Array, pos: number): [bigint, number] {
  let v = 0n;
  for (let i = 0; i < 10; i++) {
    if (pos >= buf.length) throw new ProtobufError('protobuf: truncated varint');
    const b = buf[pos++];
    v |= BigInt(b & 0x7f) << BigInt(7 * i);
    if ((b & 0x80) === 0) {
      if (v >= 1n << 64n) throw new ProtobufError('protobuf: varint overflows 64 bits');
      return [v, pos];
    }
  }
  throw new ProtobufError('protobuf: varint longer than 10 bytes');
}

function readLE(buf: Uint8Array, pos: number, n: number): bigint {
  if (pos + n > buf.length) throw new ProtobufError('protobuf: truncated fixed-width field');
  let v = 0n;
  for (let i = n - 1; i >= 0; i--) v = (v << 8n) | BigInt(buf[pos + i]);
  return v;
}

/** All fields of one message, in wire order. */
export function readFields(buf: Uint8Array): PbField[] {
  const out: PbField[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const [key, p1] = readVarint(buf, pos);
    pos = p1;
    const no = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (no === 0 || no > 536_870_911) throw new ProtobufError('protobuf: invalid field number');
    switch (wire) {
      case 0: {
        const [v, p] = readVarint(buf, pos);
        pos = p;
        out.push({ no, wire, int: v });
        break;
      }
      case 1:
        out.push({ no, wire, int: readLE(buf, pos, 8) });
        pos += 8;
        break;
      case 5:
        out.push({ no, wire, int: readLE(buf, pos, 4) });
        pos += 4;
        break;
      case 2: {
        const [len, p] = readVarint(buf, pos);
        if (len > BigInt(buf.length - p)) throw new ProtobufError('protobuf: length-delimited field runs past the end');
        const end = p + Number(len);
        out.push({ no, wire, bytes: buf.subarray(p, end) });
        pos = end;
        break;
      }
      default:
        throw new ProtobufError(`protobuf: unsupported wire type ${wire}`);
    }
  }
  return out;
}

export function encodeVarint(v: bigint): Uint8Array {
  if (v < 0n) v = BigInt.asUintN(64, v);
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return Uint8Array.from(out);
}

/** One length-delimited field: key, length, bytes. */
export function encodeBytesField(no: number, bytes: Uint8Array): Uint8Array {
  const key = encodeVarint(BigInt((no << 3) | 2));
  const len = encodeVarint(BigInt(bytes.length));
  const out = new Uint8Array(key.length + len.length + bytes.length);
  out.set(key, 0);
  out.set(len, key.length);
  out.set(bytes, key.length + len.length);
  return out;
}
