// The barrier (src/barrier/barrier.ts; docs/design.md "Security model"): a secret sealed for one table,
// row and column opens there and nowhere else; the wrapped data key opens with its master key only; and
// a master-key rotation rewraps the same data key, so everything sealed before it still opens after.
// The additional data of new seals is length-prefixed (docs/secrets.md "At rest"): locations that
// read alike in the first, ':'-joined format no longer share it, and the first format still opens.
import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Barrier, locationAad, type SealedLocation } from '../../src/barrier/barrier.js';

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
    expect(sealed).toMatch(/^v3:[A-Za-z0-9+/=]+$/);
    const raw = Buffer.from(sealed.slice(3), 'base64');
    raw[20] ^= 1;
    expect(() => barrier.open(`v3:${raw.toString('base64')}`, here)).toThrow();
    // The format byte is bound into the additional data: another value is refused, not reinterpreted.
    const reformatted = Buffer.from(sealed.slice(3), 'base64');
    reformatted[0] = 2;
    expect(() => barrier.open(`v3:${reformatted.toString('base64')}`, here)).toThrow(/unknown ciphertext format/);
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

  describe('additional data', () => {
    // Two locations the first format joins into the same string, sigil:t:a:b:c.
    const one: SealedLocation = { table: 't', rowId: 'a:b', column: 'c' };
    const two: SealedLocation = { table: 't:a', rowId: 'b', column: 'c' };
    const firstFormat = (loc: SealedLocation) => `sigil:${loc.table}:${loc.rowId}:${loc.column}`;

    it('the locations that collided in the first format no longer collide', () => {
      expect(firstFormat(one)).toBe(firstFormat(two));
      expect(locationAad(one).equals(locationAad(two))).toBe(false);
      const dataKey = randomBytes(32);
      const barrier = Barrier.fromDataKey(dataKey);
      const sealed = barrier.seal(secret, one);
      expect(Buffer.from(barrier.open(sealed, one))).toEqual(Buffer.from(secret));
      expect(() => barrier.open(sealed, two)).toThrow();
      // The same holds under an organization's key.
      const org = barrier.newOrganizationKey('org-1');
      const key = barrier.unwrapOrganizationKey('org-1', org);
      const sealer = barrier.forOrganization('org-1', new Map([[org.keyId, key]]), org.keyId);
      const orgSealed = sealer.seal(secret, one);
      expect(orgSealed.startsWith(`v3:org-1.${org.keyId}:`)).toBe(true);
      expect(Buffer.from(sealer.open(orgSealed, one))).toEqual(Buffer.from(secret));
      expect(() => sealer.open(orgSealed, two)).toThrow();
    });

    it('ciphertexts of the first format still open, except at a location where they were ambiguous', () => {
      const dataKey = randomBytes(32);
      const barrier = Barrier.fromDataKey(dataKey);
      // Sealed by the deployment's key (v1) and by an organization's (v2), as before the second format.
      const v1 = `v1:${firstSeal(dataKey, firstFormat(here))}`;
      expect(Buffer.from(barrier.open(v1, here))).toEqual(Buffer.from(secret));
      expect(() => barrier.open(v1, { ...here, rowId: 'w-2' })).toThrow();
      const org = barrier.newOrganizationKey('org-1');
      const key = barrier.unwrapOrganizationKey('org-1', org);
      const v2 = `v2:org-1.${org.keyId}:${firstSeal(key, firstFormat(here))}`;
      const sealer = barrier.forOrganization('org-1', new Map([[org.keyId, key]]), org.keyId);
      expect(Buffer.from(sealer.open(v2, here))).toEqual(Buffer.from(secret));
      expect(Buffer.from(sealer.open(v1, here))).toEqual(Buffer.from(secret));

      // The attack the first format allowed: a ciphertext for one location opened at the other.
      const moved = `v1:${firstSeal(dataKey, firstFormat(one))}`;
      expect(() => barrier.open(moved, two)).toThrow(/first format cannot be opened at a location/);
      expect(() => barrier.open(moved, one)).toThrow(/first format cannot be opened at a location/);
    });
  });
});

/** AES-256-GCM with the first format's additional data, as the barrier sealed before the second. */
function firstSeal(key: Buffer, aad: string): string {
  const nonce = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', key, nonce);
  c.setAAD(Buffer.from(aad));
  const ct = Buffer.concat([c.update(secret), c.final()]);
  return Buffer.concat([nonce, ct, c.getAuthTag()]).toString('base64');
}
