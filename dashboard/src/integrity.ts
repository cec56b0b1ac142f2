// The dashboard's own check of a decoded approval (docs/policies.md "Approving what you see"): from the
// payload shown on the page (the activity's stored intent) it recomputes, with its own code, the
// digest the server's `decodedView` claims (docs/policies.md "Approving what you see" lists the rules,
// which mirror src/domain/decoded-approvals.ts DecodedDigest), and for Ethereum it also reads the
// recipient and value out of the RLP itself. Any difference is reported, so a server-side renderer that
// showed one thing while the key signs another is caught in the approver's browser.
import { bytesToHex, hexToBytes, sha256Hex, utf8 } from './encoding.js';
import { keccak256 } from './keccak.js';

export interface Digest {
  over: string;
  algorithm: string;
  payloadIndex: number;
  value: string;
}

export interface View {
  format?: string;
  summary?: string;
  flags?: { severity: string; code: string; message: string }[];
  digests?: Digest[];
  sections?: { title: string; rows: { label: string; value: string; note?: string }[] }[];
  error?: string;
}

/** Bytes of a PSBT as stored: hex, or base64. */
function psbtBytes(text: string): Uint8Array {
  const t = text.trim().replace(/^0x/, '');
  if (/^([0-9a-fA-F]{2})+$/.test(t)) return hexToBytes(t);
  const bin = atob(t);
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** Reads a Solana compact-u16 at `off`: [value, bytes read]. */
function compactU16(b: Uint8Array, off: number): [number, number] {
  let v = 0;
  for (let i = 0; i < 3; i++) {
    const byte = b[off + i];
    v |= (byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) return [v, i + 1];
  }
  throw new Error('bad compact-u16');
}

/** The message of a Solana transaction: what follows its signature slots (a bare message is itself). */
function solanaMessage(b: Uint8Array): Uint8Array {
  // A message starts with its header (or 0x80 | version); a transaction with the count of signature slots,
  // followed by that many 64-byte slots and then the message. A bare message's first bytes cannot also
  // read as a slot count whose slots end exactly where a header could begin with that many signers.
  const [count, len] = compactU16(b, 0);
  const rest = b.subarray(len + 64 * count);
  const header = rest[0] & 0x80 ? rest[1] : rest[0];
  return count > 0 && header === count ? rest : b;
}

/** Reads a protobuf varint: [value, bytes read]. */
function varint(b: Uint8Array, off: number): [number, number] {
  let v = 0;
  let mul = 1;
  for (let i = 0; i < 10; i++) {
    const byte = b[off + i];
    if (byte === undefined) throw new Error('truncated varint');
    v += (byte & 0x7f) * mul;
    mul *= 128;
    if (!(byte & 0x80)) return [v, i + 1];
  }
  throw new Error('bad varint');
}

/** Tron: `raw_data` itself (it has field 11, contract) or field 1 of a whole Transaction. */
function tronRawData(b: Uint8Array): Uint8Array {
  const found = new Map<number, Uint8Array>();
  let off = 0;
  while (off < b.length) {
    const [tag, n] = varint(b, off);
    off += n;
    const no = Math.floor(tag / 8);
    const wire = tag % 8;
    let start = off;
    if (wire === 0) off += varint(b, off)[1];
    else if (wire === 1) off += 8;
    else if (wire === 5) off += 4;
    else if (wire === 2) {
      const [len, m] = varint(b, off);
      start = off + m;
      off = start + len;
    } else throw new Error('unknown wire type');
    if (!found.has(no)) found.set(no, b.subarray(start, off));
  }
  if (found.has(11)) return b;
  const raw = found.get(1);
  if (!raw) throw new Error('neither a Transaction.raw nor a Transaction');
  return raw;
}

const hex0x = (b: Uint8Array) => '0x' + bytesToHex(b);

/** Recomputes one digest from the payload text by its rule; undefined when the browser does not recompute it. */
export async function recompute(d: Digest, payload: string, encoding?: string): Promise<string | undefined> {
  switch (d.over) {
    case 'transaction':
      return hex0x(keccak256(hexToBytes(payload)));
    case 'solana-message':
      return '0x' + (await sha256Hex(solanaMessage(hexToBytes(payload))));
    case 'tron-raw-data':
      return '0x' + (await sha256Hex(tronRawData(hexToBytes(payload))));
    case 'intent':
      return '0x' + (await sha256Hex(utf8(payload)));
    case 'psbt':
      return '0x' + (await sha256Hex(psbtBytes(payload)));
    case 'payload': {
      const bytes = encoding === 'PAYLOAD_ENCODING_TEXT_UTF8' ? utf8(payload) : hexToBytes(payload);
      if (d.algorithm === 'keccak256') return hex0x(keccak256(bytes));
      if (d.algorithm === 'sha256') return '0x' + (await sha256Hex(bytes));
      if (d.algorithm === 'none') return hex0x(bytes);
      return undefined;
    }
    default:
      return undefined; // eip712 / eip7702: shown as the server computed them
  }
}

// ---- Ethereum: the recipient and value read from the RLP by this page's own code.

type Rlp = Uint8Array | Rlp[];

function rlp(b: Uint8Array, off = 0): [Rlp, number] {
  const p = b[off];
  if (p === undefined) throw new Error('truncated RLP');
  if (p < 0x80) return [b.subarray(off, off + 1), 1];
  const long = (lenOfLen: number) => {
    let n = 0;
    for (let i = 0; i < lenOfLen; i++) n = n * 256 + b[off + 1 + i];
    return n;
  };
  if (p <= 0xb7) return [b.subarray(off + 1, off + 1 + p - 0x80), 1 + p - 0x80];
  if (p <= 0xbf) {
    const ll = p - 0xb7;
    const n = long(ll);
    return [b.subarray(off + 1 + ll, off + 1 + ll + n), 1 + ll + n];
  }
  const ll = p <= 0xf7 ? 0 : p - 0xf7;
  const n = p <= 0xf7 ? p - 0xc0 : long(ll);
  const items: Rlp[] = [];
  let at = off + 1 + ll;
  const end = at + n;
  while (at < end) {
    const [item, used] = rlp(b, at);
    items.push(item);
    at += used;
  }
  return [items, 1 + ll + n];
}

const big = (b: Uint8Array) => (b.length ? BigInt('0x' + bytesToHex(b)) : 0n);

/** `to` (lowercase 0x hex, '' for creation) and `value` (wei) of an unsigned Ethereum transaction. */
export function ethToAndValue(payload: string): { to: string; value: bigint } {
  const b = hexToBytes(payload);
  const typed = b[0] < 0x80;
  const [fields] = rlp(b, typed ? 1 : 0);
  if (!Array.isArray(fields)) throw new Error('not an RLP list');
  // legacy: nonce, gasPrice, gas, to, value; 0x01: chainId, nonce, gasPrice, gas, to, value;
  // 0x02/0x03/0x04: chainId, nonce, maxPriority, maxFee, gas, to, value.
  const at = !typed ? 3 : b[0] === 1 ? 4 : 5;
  const to = fields[at] as Uint8Array;
  return { to: to.length ? '0x' + bytesToHex(to) : '', value: big(fields[at + 1] as Uint8Array) };
}

/**
 * Every difference between what the view shows and what the payload holds, recomputed here; empty
 * when they agree. `payloads` are the payload texts as shown on the page.
 */
export async function checkView(view: View, payloads: string[], encoding?: string): Promise<string[]> {
  const problems: string[] = [];
  if (!view.digests?.length) return ['the decoded view names no digest to check'];
  for (const d of view.digests) {
    const payload = payloads[d.payloadIndex];
    if (payload === undefined) {
      problems.push(`digest ${d.payloadIndex} has no payload`);
      continue;
    }
    let mine: string | undefined;
    try {
      mine = await recompute(d, payload, encoding);
    } catch (err) {
      problems.push(`the payload shown does not parse here: ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    if (mine !== undefined && mine.toLowerCase() !== d.value.toLowerCase()) {
      problems.push(`digest mismatch: the server shows ${d.value}, this browser computes ${mine} from the payload shown`);
    }
  }
  if (view.format === 'ETHEREUM_TRANSACTION' && payloads[0] !== undefined && !problems.length) {
    const { to, value } = ethToAndValue(payloads[0]);
    const rows = view.sections?.[0]?.rows ?? [];
    const shownTo = rows.find((r) => r.label === 'to')?.value ?? '';
    const shownWei = rows.find((r) => r.label === 'value')?.note ?? '';
    if ((to || '(contract creation)').toLowerCase() !== shownTo.toLowerCase()) problems.push(`recipient mismatch: shown ${shownTo}, the transaction pays ${to || 'a new contract'}`);
    if (shownWei !== `${value} wei`) problems.push(`value mismatch: shown ${shownWei}, the transaction sends ${value} wei`);
  }
  if (view.format === 'ETHEREUM_SEND' && payloads[0] !== undefined && !problems.length) problems.push(...sendMismatches(view, payloads[0]));
  return problems;
}

/** JSON with keys sorted at every level and no whitespace: the form a send's `intent` digest is over. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}

/** A send: each call's recipient and value as shown against the intent on the page, read here. */
function sendMismatches(view: View, payload: string): string[] {
  const intent = JSON.parse(payload) as { calls?: { to: string; value?: string }[]; to?: string; value?: string };
  const calls = Array.isArray(intent.calls) ? intent.calls : [{ to: intent.to ?? '', value: intent.value }];
  const shown = (view.sections ?? []).filter((s) => /^Call( \d+)?$/.test(s.title));
  if (shown.length !== calls.length) return [`the view shows ${shown.length} call(s), the intent has ${calls.length}`];
  const problems: string[] = [];
  calls.forEach((c, i) => {
    const rows = shown[i].rows;
    const to = rows.find((r) => r.label === 'to')?.value ?? '';
    const wei = rows.find((r) => r.label === 'value')?.note ?? '';
    if (to.toLowerCase() !== String(c.to).toLowerCase()) problems.push(`recipient mismatch: shown ${to}, the intent pays ${c.to}`);
    if (wei !== `${BigInt(c.value || '0')} wei`) problems.push(`value mismatch: shown ${wei}, the intent sends ${c.value || '0'} wei`);
  });
  return problems;
}
