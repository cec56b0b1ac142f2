// The barrier: the one place secrets are sealed and opened (after Vault's security
// barrier). A random data key seals every secret with AES-256-GCM; the data key is
// itself sealed by the master key and kept in the database. Each ciphertext's additional data names
// the table, row and column it belongs to, so a ciphertext copied to another row never opens.
// An organization's secrets are sealed with that organization's own data key, wrapped by the
// deployment's (docs/operator-guide.md "Custody", per-organization keys): deleting a sub-organization destroys its
// key, so its ciphertexts left in a later backup (free pages, dead rows) open no more.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const DATA_KEY_AAD = Buffer.from('sigil:barrier:data-key:v1');

export interface SealedLocation {
  table: string;
  rowId: string;
  column: string;
}

function aadOf(loc: SealedLocation): Buffer {
  return Buffer.from(`sigil:${loc.table}:${loc.rowId}:${loc.column}`);
}

function seal(key: Buffer, plaintext: Uint8Array, aad: Buffer): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(aad);
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return `${VERSION}:${Buffer.concat([nonce, ct, cipher.getAuthTag()]).toString('base64')}`;
}

function open(key: Buffer, sealed: string, aad: Buffer): Buffer {
  const [version, body] = sealed.split(':', 2);
  if (version !== VERSION || !body) throw new Error('barrier: unknown ciphertext format');
  return openBody(key, body, aad);
}

function openBody(key: Buffer, body: string, aad: Buffer): Buffer {
  const raw = Buffer.from(body, 'base64');
  if (raw.length < 28) throw new Error('barrier: ciphertext too short');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAAD(aad);
  decipher.setAuthTag(raw.subarray(raw.length - 16));
  return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]);
}

/** Wraps a data key under a key-encryption key (a seal's root key), bound to the seal by `aad`. */
export function wrapDataKey(kek: Buffer, dataKey: Buffer, aad: Buffer = DATA_KEY_AAD): string {
  return seal(kek, dataKey, aad);
}

/** Opens a wrapped data key; throws when `kek` (or `aad`) is not the one it was wrapped under. */
export function unwrapDataKey(kek: Buffer, wrapped: string, aad: Buffer = DATA_KEY_AAD): Buffer {
  return open(kek, wrapped, aad);
}

/** What seals and opens secrets at a location: the deployment's barrier or one organization's. */
export interface SecretSealer {
  seal(plaintext: Uint8Array, loc: SealedLocation): string;
  open(sealed: string, loc: SealedLocation): Buffer;
}

/**
 * An organization's data key as stored: `keyId` is random and names exactly one key forever, so a
 * cached key is never stale (a key created in a transaction that rolled back is merely unused).
 */
export interface OrganizationKeyRecord {
  keyId: string;
  wrappedKey: string;
}

/** Ciphertexts under an organization's key: `v2:<organization id>.<key id>:<nonce|ct|tag>`. */
const ORG_VERSION = 'v2';
const orgKeyAad = (organizationId: string, keyId: string) => Buffer.from(`sigil:barrier:organization-key:v1:${organizationId}:${keyId}`);

/** The organization and key a `v2` ciphertext names; undefined for the deployment's `v1`. */
export function sealedKeyOf(sealed: string): { organizationId: string; keyId: string; body: string } | undefined {
  if (!sealed.startsWith(`${ORG_VERSION}:`)) return undefined;
  const end = sealed.indexOf(':', ORG_VERSION.length + 1);
  const dot = sealed.lastIndexOf('.', end);
  if (end < 0 || dot <= ORG_VERSION.length) throw new Error('barrier: unknown ciphertext format');
  return { organizationId: sealed.slice(ORG_VERSION.length + 1, dot), keyId: sealed.slice(dot + 1, end), body: sealed.slice(end + 1) };
}

/**
 * Unwrapped organization keys of this process, by key id, least recently used first: bounded so
 * that many sub-organizations cost a fixed amount of memory; a miss costs one read and one unwrap.
 */
const ORG_KEY_CACHE_SIZE = 10_000;

export class Barrier {
  private sealed = false;
  private readonly organizationKeys = new Map<string, Buffer>();
  private constructor(private readonly dataKey: Buffer) {}

  /** A fresh random data key, for a new deployment whatever its seal. */
  static newDataKey(): Buffer {
    return randomBytes(32);
  }

  /** A barrier over a data key a seal has unwrapped; the barrier keeps its own copy. */
  static fromDataKey(dataKey: Buffer): Barrier {
    if (dataKey.length !== 32) throw new Error('barrier: a data key is 32 bytes');
    return new Barrier(Buffer.from(dataKey));
  }

  /**
   * Seals the barrier: the data key is overwritten in memory and every later use throws, so a
   * reference kept somewhere cannot open anything (emergency seal, docs/operator-guide.md "Custody").
   */
  zero(): void {
    this.dataKey.fill(0);
    for (const key of this.organizationKeys.values()) key.fill(0);
    this.organizationKeys.clear();
    this.sealed = true;
  }

  private key(): Buffer {
    if (this.sealed) throw new Error('barrier: sealed');
    return this.dataKey;
  }

  /** A new deployment: a fresh data key and its wrapped form to store. */
  static create(masterKey: Buffer): { barrier: Barrier; wrappedDataKey: string } {
    const dataKey = randomBytes(32);
    return { barrier: new Barrier(dataKey), wrappedDataKey: seal(masterKey, dataKey, DATA_KEY_AAD) };
  }

  /** Unseals with the stored wrapped data key; a wrong master key fails here, clearly. */
  static unseal(masterKey: Buffer, wrappedDataKey: string): Barrier {
    try {
      return new Barrier(open(masterKey, wrappedDataKey, DATA_KEY_AAD));
    } catch {
      throw new Error('the master key does not open this deployment (wrong SIGIL_MASTER_KEY or master.key file)');
    }
  }

  /**
   * Master-key rotation: the same data key, wrapped by the new master key instead of the old one.
   * Nothing sealed with the data key changes, so running processes (which hold the unwrapped data
   * key) are unaffected; only the unsealing at start needs the new master key afterwards.
   */
  static rewrap(oldMasterKey: Buffer, newMasterKey: Buffer, wrappedDataKey: string): string {
    if (oldMasterKey.equals(newMasterKey)) throw new Error('the new master key is the same as the current one');
    let dataKey: Buffer;
    try {
      dataKey = open(oldMasterKey, wrappedDataKey, DATA_KEY_AAD);
    } catch {
      throw new Error('the current master key does not open this deployment (wrong SIGIL_MASTER_KEY or master.key file)');
    }
    try {
      return seal(newMasterKey, dataKey, DATA_KEY_AAD);
    } finally {
      dataKey.fill(0);
    }
  }

  /**
   * A key for one purpose derived from the data key (HKDF-SHA256, RFC 5869, info `sigil:<purpose>`):
   * stable across master-key rotations, unknown to anyone holding only the database.
   */
  deriveKey(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key(), Buffer.alloc(0), `sigil:${purpose}`, 32));
  }

  seal(plaintext: Uint8Array, loc: SealedLocation): string {
    return seal(this.key(), plaintext, aadOf(loc));
  }

  open(sealed: string, loc: SealedLocation): Buffer {
    return open(this.key(), sealed, aadOf(loc));
  }

  /** A fresh data key for an organization, wrapped by the deployment's, to store. */
  newOrganizationKey(organizationId: string): OrganizationKeyRecord {
    const keyId = randomBytes(12).toString('hex');
    const key = randomBytes(32);
    try {
      return { keyId, wrappedKey: seal(this.key(), key, orgKeyAad(organizationId, keyId)) };
    } finally {
      key.fill(0);
    }
  }

  /** The cached organization key `keyId`, if this process has unwrapped it. */
  cachedOrganizationKey(keyId: string): Buffer | undefined {
    this.key();
    const key = this.organizationKeys.get(keyId);
    if (key) {
      this.organizationKeys.delete(keyId);
      this.organizationKeys.set(keyId, key);
    }
    return key;
  }

  /** Unwraps a stored organization key (a wrong or tampered one throws) and caches it. */
  unwrapOrganizationKey(organizationId: string, record: OrganizationKeyRecord): Buffer {
    const cached = this.cachedOrganizationKey(record.keyId);
    if (cached) return cached;
    const key = open(this.key(), record.wrappedKey, orgKeyAad(organizationId, record.keyId));
    this.organizationKeys.set(record.keyId, key);
    if (this.organizationKeys.size > ORG_KEY_CACHE_SIZE) this.organizationKeys.delete(this.organizationKeys.keys().next().value!);
    return key;
  }

  /** Drops a destroyed organization key from this process (delete_sub_organization). */
  forgetOrganizationKey(keyId: string): void {
    this.organizationKeys.get(keyId)?.fill(0);
    this.organizationKeys.delete(keyId);
  }

  /**
   * The sealer of one organization: seals with `current` (when given) and opens both its own `v2`
   * ciphertexts, with the keys in `keys`, and `v1` ones the deployment key sealed before migration 032.
   */
  forOrganization(organizationId: string, keys: Map<string, Buffer>, current?: string): SecretSealer {
    return {
      seal: (plaintext, loc) => {
        const key = current ? keys.get(current) : undefined;
        if (!current || !key) throw new Error(`barrier: no data key for organization ${organizationId}`);
        this.key();
        return `${ORG_VERSION}:${organizationId}.${current}:${seal(key, plaintext, aadOf(loc)).slice(VERSION.length + 1)}`;
      },
      open: (sealed, loc) => {
        const named = sealedKeyOf(sealed);
        if (!named) return this.open(sealed, loc);
        this.key();
        const key = keys.get(named.keyId);
        if (named.organizationId !== organizationId || !key) {
          throw new Error(`barrier: the data key ${named.keyId} of organization ${named.organizationId} is not available (destroyed with its organization?)`);
        }
        return openBody(key, named.body, aadOf(loc));
      },
    };
  }
}
