// Shared helpers for the crypto unit tests: vector loading and hex conversion.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const VECTORS = new URL('../../vectors/', import.meta.url);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function loadVectors(name: string): any {
  const data = JSON.parse(readFileSync(fileURLToPath(new URL(name, VECTORS)), 'utf8'));
  if (typeof data.source !== 'string' || data.source.length < 10) throw new Error(`${name}: missing "source"`);
  return data;
}

export const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
export const unhex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h.replace(/^0x/, ''), 'hex'));

/** Two fixed mnemonics used across the address tests, plus the BIP39 "TREZOR" style passphrase case. */
export const MNEMONICS = [
  'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about',
  'legal winner thank year wave sausage worth useful legal winner thank year wave sausage worth useful legal will',
  'zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo vote',
] as const;
