// Object identifiers: UUIDv7 (RFC 9562), time-ordered and monotonic within a process, so objects
// created in the same millisecond still list in creation order under the (created_at, id) keyset
// every list query uses. The 62 low bits stay random, so ids remain unguessable.
import { randomBytes } from 'node:crypto';

let lastMs = 0;
let counter = 0;

// Randomness is drawn in blocks: one call to the CSPRNG per 256 ids instead of one per id.
let pool = Buffer.alloc(0);
let poolOffset = 0;
function random(n: number): Buffer {
  if (poolOffset + n > pool.length) {
    pool = randomBytes(4096);
    poolOffset = 0;
  }
  const out = pool.subarray(poolOffset, poolOffset + n);
  poolOffset += n;
  return out;
}

export function newId(): string {
  const ms = Date.now();
  if (ms > lastMs) {
    lastMs = ms;
    counter = random(2).readUInt16BE(0) & 0x3ff; // random start leaves room to count up
  } else {
    counter++;
    if (counter > 0xfff) {
      // More than ~3,000 ids in one millisecond: borrow the next millisecond to stay ordered.
      lastMs++;
      counter = 0;
    }
  }
  const b = Buffer.from(random(16));
  b.writeUIntBE(lastMs, 0, 6);
  b[6] = 0x70 | (counter >> 8); // version 7 + 12-bit counter (rand_a)
  b[7] = counter & 0xff;
  b[8] = 0x80 | (b[8] & 0x3f); // RFC 9562 variant
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
