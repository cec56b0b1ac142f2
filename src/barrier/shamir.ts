// The shamir seal's key, split M-of-N among operators (docs/operator-guide.md "Custody"), with the audited
// `shamir-secret-sharing` split/combine over GF(256). Shares are printed once and never stored: a
// process keeps the shares submitted to it in memory only until M have arrived (or progress is reset),
// then combines them, tries the result on the wrapped data key and forgets them either way.
import { randomBytes } from 'node:crypto';
import { combine, split } from 'shamir-secret-sharing';
import { open as hpkeOpen, seal as hpkeSeal } from '../crypto/hpke.js';
import { SealError, shamirKeySeal, type OpenSeal } from './seals.js';

/** One share as operators see it: the 33 bytes of a share of a 32-byte key, in hex. */
const SHARE_PATTERN = /^[0-9a-f]{66}$/;

export interface ShamirSplit {
  seal: OpenSeal;
  shares: string[];
}

/** A new key-encryption key and its `shares` shares, any `threshold` of which rebuild it. */
export async function newShamirSeal(shares: number, threshold: number): Promise<ShamirSplit> {
  checkSplit(shares, threshold);
  const kek = randomBytes(32);
  try {
    // The library wants plain Uint8Arrays (it checks the constructor), not Buffers.
    const parts = await split(new Uint8Array(kek), shares, threshold);
    return { seal: shamirKeySeal(kek), shares: parts.map((p) => Buffer.from(p).toString('hex')) };
  } finally {
    kek.fill(0);
  }
}

export function checkSplit(shares: number, threshold: number): void {
  if (!Number.isInteger(shares) || shares < 2 || shares > 255) throw new SealError('--shares must be a whole number from 2 to 255');
  if (!Number.isInteger(threshold) || threshold < 2 || threshold > shares) throw new SealError('--threshold must be a whole number from 2 to the number of shares');
}

export interface UnsealProgress {
  threshold: number;
  progress: number;
}

/**
 * Collects shares towards one unseal. `submit` answers the progress, or the opened seal once the
 * threshold is reached; shares that do not rebuild the key are refused as a whole, never saying
 * which of them was wrong, and the progress starts again.
 */
export class ShareCollector {
  private shares: Buffer[] = [];
  constructor(readonly threshold: number) {}

  get progress(): UnsealProgress {
    return { threshold: this.threshold, progress: this.shares.length };
  }

  reset(): void {
    for (const s of this.shares) s.fill(0);
    this.shares = [];
  }

  /** Adds a share; at the threshold, rebuilds the key and answers the data key it unwraps from `wrapped`. */
  async submit(shareText: string, wrapped: string): Promise<UnsealProgress & { dataKey?: Buffer }> {
    const text = shareText.trim().toLowerCase();
    if (!SHARE_PATTERN.test(text)) throw new SealError('that is not an unseal share (66 hexadecimal characters)');
    const share = Buffer.from(text, 'hex');
    if (this.shares.some((s) => s.equals(share))) throw new SealError('that share was already given for this unseal');
    this.shares.push(share);
    if (this.shares.length < this.threshold) return this.progress;
    let kek: Uint8Array | undefined;
    try {
      kek = await combine(this.shares.map((s) => new Uint8Array(s)));
      const seal = shamirKeySeal(Buffer.from(kek));
      try {
        return { threshold: this.threshold, progress: this.threshold, dataKey: seal.unwrap(wrapped) };
      } finally {
        seal.close();
      }
    } catch {
      throw new SealError('the unseal shares given do not open this deployment; unseal progress was reset');
    } finally {
      kek?.fill(0);
      this.reset();
    }
  }
}

// A share may be handed out encrypted to its operator's P-256 public key (a `sigil keys generate`
// key), with HPKE (RFC 9180, the suite of src/crypto/hpke.ts), so the printed output alone reveals
// no share; `sigil operator unseal --key-file` decrypts it on the operator's side.
const ENCRYPTED_SHARE = 'sigil-share-hpke:v1:';

/** The shares as printed: in clear, or each encrypted to the operator key of the same position. */
export function presentShares(shares: string[], operatorKeys: string[] | undefined): string[] {
  if (!operatorKeys) return shares;
  if (operatorKeys.length !== shares.length) throw new SealError(`--operator-keys names ${operatorKeys.length} keys for ${shares.length} shares: give one public key per share`);
  return shares.map((share, i) => {
    let sealed: { encappedPublic: Uint8Array; ciphertext: Uint8Array };
    try {
      sealed = hpkeSeal(operatorKeys[i], Buffer.from(share, 'hex'));
    } catch {
      throw new SealError(`--operator-keys: key ${i + 1} is not a P-256 public key in hex`);
    }
    return `${ENCRYPTED_SHARE}${Buffer.from(sealed.encappedPublic).toString('hex')}:${Buffer.from(sealed.ciphertext).toString('hex')}`;
  });
}

/** A share as its operator holds it, decrypted with their private key when it was encrypted. */
export function shareFromOperator(text: string, privateKeyHex: string | undefined): string {
  const t = text.trim();
  if (!t.startsWith(ENCRYPTED_SHARE)) return t;
  if (!privateKeyHex) throw new SealError('this share is encrypted to an operator key: pass --key-file with that key');
  const [enc, ct] = t.slice(ENCRYPTED_SHARE.length).split(':');
  try {
    return Buffer.from(hpkeOpen(privateKeyHex, enc, ct)).toString('hex');
  } catch {
    throw new SealError('this key does not decrypt the share (another operator\'s share, or another key)');
  }
}
