// Seals below the process (src/barrier/seals.ts, src/barrier/shamir.ts; docs/operator-guide.md "Custody"): each seal
// binds its wrapped key to itself, shares rebuild the key only at the threshold, wrong shares are
// refused as a whole, and shares encrypted to operator keys open only with their own key.
import { randomBytes } from 'node:crypto';
import { generateP256KeyPair } from '@turnkey/crypto';
import { describe, expect, it } from 'vitest';
import { Barrier } from '../../src/barrier/barrier.js';
import { shamirKeySeal, staticSeal } from '../../src/barrier/seals.js';
import { newShamirSeal, presentShares, shareFromOperator, ShareCollector } from '../../src/barrier/shamir.js';

describe('seals', () => {
  it('a static wrap never opens as shamir with the same key bytes, nor the reverse', () => {
    const kek = randomBytes(32);
    const dataKey = Barrier.newDataKey();
    expect(() => shamirKeySeal(kek).unwrap(staticSeal(kek).wrap(dataKey))).toThrow(/shares given do not open/);
    expect(() => staticSeal(kek).unwrap(shamirKeySeal(kek).wrap(dataKey))).toThrow(/master key does not open/);
    expect(staticSeal(kek).unwrap(staticSeal(kek).wrap(dataKey))).toEqual(dataKey);
  });

  it('the static seal reads what Barrier.create wrote before seals existed', () => {
    const master = randomBytes(32);
    const { barrier, wrappedDataKey } = Barrier.create(master);
    const sealed = barrier.seal(Buffer.from('x'), { table: 't', rowId: 'r', column: 'c' });
    expect(Barrier.fromDataKey(staticSeal(master).unwrap(wrappedDataKey)).open(sealed, { table: 't', rowId: 'r', column: 'c' }).toString()).toBe('x');
  });

  it('a zeroed barrier opens nothing', () => {
    const b = Barrier.fromDataKey(Barrier.newDataKey());
    const sealed = b.seal(Buffer.from('x'), { table: 't', rowId: 'r', column: 'c' });
    b.zero();
    expect(() => b.open(sealed, { table: 't', rowId: 'r', column: 'c' })).toThrow(/sealed/);
    expect(() => b.deriveKey('p')).toThrow(/sealed/);
  });
});

describe('shamir', () => {
  it('any threshold of shares opens; fewer report progress; wrong, repeated and malformed shares are refused', async () => {
    const { seal, shares } = await newShamirSeal(5, 3);
    const dataKey = Barrier.newDataKey();
    const wrapped = seal.wrap(dataKey);
    for (const pick of [[0, 1, 2], [4, 2, 0], [1, 3, 4]]) {
      const c = new ShareCollector(3);
      expect(await c.submit(shares[pick[0]], wrapped)).toEqual({ threshold: 3, progress: 1 });
      expect(await c.submit(shares[pick[1]], wrapped)).toEqual({ threshold: 3, progress: 2 });
      expect((await c.submit(shares[pick[2]], wrapped)).dataKey).toEqual(dataKey);
      expect(c.progress.progress).toBe(0);
    }
    const c = new ShareCollector(3);
    await c.submit(shares[0], wrapped);
    await expect(c.submit(shares[0], wrapped)).rejects.toThrow(/already given/);
    await expect(c.submit('zz', wrapped)).rejects.toThrow(/not an unseal share/);
    await c.submit(shares[1], wrapped);
    // One altered share: refused without saying which, and the progress is reset.
    const altered = shares[2].slice(0, 10) + (shares[2][10] === '0' ? '1' : '0') + shares[2].slice(11);
    await expect(c.submit(altered, wrapped)).rejects.toThrow(/^the unseal shares given do not open this deployment; unseal progress was reset$/);
    expect(c.progress.progress).toBe(0);
    // Shares of another split are refused alike.
    const other = await newShamirSeal(5, 3);
    const d = new ShareCollector(3);
    await d.submit(other.shares[0], wrapped);
    await d.submit(other.shares[1], wrapped);
    await expect(d.submit(other.shares[2], wrapped)).rejects.toThrow(/do not open this deployment/);
  });

  it('encrypted shares open only with their operator key', async () => {
    const { shares } = await newShamirSeal(2, 2);
    const keys = [generateP256KeyPair(), generateP256KeyPair()];
    const printed = presentShares(shares, keys.map((k) => k.publicKey));
    expect(printed.every((p) => p.startsWith('sigil-share-hpke:v1:') && !p.includes(shares[0]) && !p.includes(shares[1]))).toBe(true);
    expect(shareFromOperator(printed[0], keys[0].privateKey)).toBe(shares[0]);
    expect(() => shareFromOperator(printed[0], keys[1].privateKey)).toThrow(/does not decrypt/);
    expect(() => shareFromOperator(printed[0], undefined)).toThrow(/--key-file/);
    expect(shareFromOperator(shares[1], undefined)).toBe(shares[1]);
    expect(() => presentShares(shares, [keys[0].publicKey])).toThrow(/one public key per share/);
  });
});
