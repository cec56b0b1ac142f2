// The barrier (src/barrier/barrier.ts; docs/design.md "Security model"): a secret sealed for one table,
// row and column opens there and nowhere else; the wrapped data key opens with its master key only; and
// a master-key rotation rewraps the same data key, so everything sealed before it still opens after.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Barrier, type SealedLocation } from '../../src/barrier/barrier.js';

const here: SealedLocation = { table: 'wallets', rowId: 'w-1', column: 'mnemonic' };
const secret = new TextEncoder().encode('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');

describe('barrier', () => {
  it('opens what it sealed, and each seal is fresh', () => {
    const { barrier } = Barrier.create(randomBytes(32));
    const a = barrier.seal(secret, here);
    const b = barrier.seal(secret, here);
    expect(a).not.toBe(b);
    expect(a).not.toContain(Buffer.from(secret).toString('base64').slice(0, 16));
    expect(Buffer.from(barrier.open(a, here))).toEqual(Buffer.from(secret));
    expect(Buffer.from(barrier.open(b, here))).toEqual(Buffer.from(secret));
  });

  it('refuses a ciphertext moved to another table, row or column', () => {
    const { barrier } = Barrier.create(randomBytes(32));
    const sealed = barrier.seal(secret, here);
    expect(() => barrier.open(sealed, { ...here, rowId: 'w-2' })).toThrow();
    expect(() => barrier.open(sealed, { ...here, column: 'private_key' })).toThrow();
    expect(() => barrier.open(sealed, { ...here, table: 'private_keys' })).toThrow();
  });

  it('refuses a tampered ciphertext and an unknown format', () => {
    const { barrier } = Barrier.create(randomBytes(32));
    const sealed = barrier.seal(secret, here);
    const raw = Buffer.from(sealed.slice(3), 'base64');
    raw[20] ^= 1;
    expect(() => barrier.open(`v1:${raw.toString('base64')}`, here)).toThrow();
    expect(() => barrier.open(`v9:${sealed.slice(3)}`, here)).toThrow(/unknown ciphertext format/);
    expect(() => barrier.open('v1:AAAA', here)).toThrow(/too short/);
  });

  it('opens only with the data key of its own deployment', () => {
    const one = Barrier.create(randomBytes(32)).barrier;
    const other = Barrier.create(randomBytes(32)).barrier;
    expect(() => other.open(one.seal(secret, here), here)).toThrow();
  });

  it('unseals the wrapped data key with its master key, and refuses any other', () => {
    const master = randomBytes(32);
    const { barrier, wrappedDataKey } = Barrier.create(master);
    const sealed = barrier.seal(secret, here);
    expect(Buffer.from(Barrier.unseal(master, wrappedDataKey).open(sealed, here))).toEqual(Buffer.from(secret));
    expect(() => Barrier.unseal(randomBytes(32), wrappedDataKey)).toThrow(/master key does not open this deployment/);
  });

  it('after a rotation, the rewrapped data key opens what was sealed before, and the old master key no longer does', () => {
    const oldMaster = randomBytes(32);
    const newMaster = randomBytes(32);
    const { barrier, wrappedDataKey } = Barrier.create(oldMaster);
    const sealed = barrier.seal(secret, here);
    const derivedBefore = barrier.deriveKey('audit');
    const rewrapped = Barrier.rewrap(oldMaster, newMaster, wrappedDataKey);
    expect(rewrapped).not.toBe(wrappedDataKey);
    const after = Barrier.unseal(newMaster, rewrapped);
    expect(Buffer.from(after.open(sealed, here))).toEqual(Buffer.from(secret));
    expect(after.deriveKey('audit')).toEqual(derivedBefore);
    expect(() => Barrier.unseal(oldMaster, rewrapped)).toThrow(/master key does not open/);
    expect(() => Barrier.rewrap(newMaster, randomBytes(32), wrappedDataKey)).toThrow(/current master key does not open/);
    expect(() => Barrier.rewrap(newMaster, newMaster, rewrapped)).toThrow(/same as the current one/);
  });

  it('derives distinct, stable keys per purpose', () => {
    const { barrier } = Barrier.create(randomBytes(32));
    expect(barrier.deriveKey('a')).toEqual(barrier.deriveKey('a'));
    expect(barrier.deriveKey('a')).not.toEqual(barrier.deriveKey('b'));
    expect(barrier.deriveKey('a')).toHaveLength(32);
  });
});
