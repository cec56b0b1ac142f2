// Seals: what wraps the deployment's data key (docs/operator-guide.md "Custody"; docs/design.md "Security model"). The data
// key never changes when the seal does; only its wrapped form in the `meta` table does, so a seal
// migration or a rekey rewrites one row, not every secret.
//   static: a 32-byte master key from SIGIL_MASTER_KEY or <dataDir>/master.key (the default);
//   pkcs11: a non-extractable AES-256 key inside an HSM, reached through a PKCS#11 module;
//   shamir: a key-encryption key split M-of-N among operators, rebuilt in memory from M shares.
// Each seal binds its wrapped key to itself (its own additional data or format), so a wrapped key
// made for one seal is never taken for another's.
import { unwrapDataKey, wrapDataKey } from './barrier.js';

export type SealType = 'static' | 'pkcs11' | 'shamir';
export const SEAL_TYPES: readonly SealType[] = ['static', 'pkcs11', 'shamir'];

/** A seal able to wrap and unwrap the data key now (for shamir: once the shares are combined). */
export interface OpenSeal {
  readonly type: SealType;
  wrap(dataKey: Buffer): string;
  /** Throws a SealError when this seal does not open `wrapped`. */
  unwrap(wrapped: string): Buffer;
  /** Forgets the key material this seal holds in memory (or its HSM session). */
  close(): void;
}

/** What the deployment records about its seal (meta `barrier.seal`), never a secret. */
export type SealRecord =
  | { type: 'static' }
  | { type: 'pkcs11'; keyLabel: string }
  | { type: 'shamir'; shares: number; threshold: number };

/** A seal that refuses: wrong key, wrong shares, HSM refusal. Its message is safe to show operators. */
export class SealError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealError';
  }
}

// The static seal's additional data is the barrier's original one, so deployments made before seals
// existed open unchanged; shamir's differs, so a master key can never open a shamir-wrapped key.
const SHAMIR_AAD = Buffer.from('sigil:barrier:data-key:shamir:v1');

class KeySeal implements OpenSeal {
  private readonly kek: Buffer;
  constructor(
    readonly type: 'static' | 'shamir',
    kek: Buffer,
    private readonly refusal: string,
  ) {
    if (kek.length !== 32) throw new SealError(`the ${type} seal's key must be 32 bytes`);
    this.kek = Buffer.from(kek);
  }
  wrap(dataKey: Buffer): string {
    return wrapDataKey(this.kek, dataKey, this.type === 'shamir' ? SHAMIR_AAD : undefined);
  }
  unwrap(wrapped: string): Buffer {
    try {
      return unwrapDataKey(this.kek, wrapped, this.type === 'shamir' ? SHAMIR_AAD : undefined);
    } catch {
      throw new SealError(this.refusal);
    }
  }
  close(): void {
    this.kek.fill(0);
  }
}

/** The static seal over a master key (src/barrier/master-key.ts loads it). */
export function staticSeal(masterKey: Buffer): OpenSeal {
  return new KeySeal('static', masterKey, 'the master key does not open this deployment (wrong SIGIL_MASTER_KEY or master.key file)');
}

/** The shamir seal over the key its shares rebuilt (src/barrier/shamir.ts). */
export function shamirKeySeal(kek: Buffer): OpenSeal {
  return new KeySeal('shamir', kek, 'the unseal shares given do not open this deployment');
}

/** The seal record stored in meta, parsed; an absent record is a deployment made before seals: static. */
export function parseSealRecord(text: string | undefined): SealRecord {
  if (text === undefined) return { type: 'static' };
  const r = JSON.parse(text) as SealRecord;
  if (!SEAL_TYPES.includes(r.type)) throw new SealError(`this deployment names an unknown seal "${String(r.type)}"`);
  return r;
}
