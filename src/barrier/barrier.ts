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

/**
 * The first additional-data format, `sigil:<table>:<row>:<column>`: ambiguous once a part contains
 * ':' ((a, "b:c", d) and ("a:b", c, d) read alike), so it is only ever used to open ciphertexts
 * sealed before the second format, and never at a location where a part contains ':' (only there can
 * two locations share it, so refusing those closes the ambiguity for the ciphertexts still in it).
 */
function legacyAadOf(loc: SealedLocation): Buffer {
  if ([loc.table, loc.rowId, loc.column].some((part) => part.includes(':'))) {
    throw new Error('barrier: a ciphertext of the first format cannot be opened at a location whose table, row or column contains ":"');
  }
  return Buffer.from(`sigil:${loc.table}:${loc.rowId}:${loc.column}`);
}

/**
 * The additional-data format of every new seal, named by the format byte that starts the sealed
 * body: a fixed label, the format byte, then table, row and column, each as a 4-byte big-endian
 * length and its UTF-8 bytes. Lengths make it injective: two different locations never share it.
 */
const AAD_FORMAT = 1;
const AAD_LABEL = Buffer.from('sigil:barrier:aad');

export function locationAad(loc: SealedLocation): Buffer {
  const parts: Buffer[] = [AAD_LABEL, Buffer.of(AAD_FORMAT)];
  for (const part of [loc.table, loc.rowId, loc.column]) {
    const bytes = Buffer.from(part, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    parts.push(length, bytes);
  }
  return Buffer.concat(parts);
}

function seal(key: Buffer, plaintext: Uint8Array, aad: Buffer): string {
  return `${VERSION}:${sealBody(key, plaintext, aad)}`;
}

/** base64 of `[prefix] | nonce | ciphertext | tag`. */
function sealBody(key: Buffer, plaintext: Uint8Array, aad: Buffer, prefix: Buffer = Buffer.alloc(0)): string {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(aad);
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([prefix, nonce, ct, cipher.getAuthTag()]).toString('base64');
}

/**
 * A secret sealed at a location: base64 of the format byte, then nonce | ciphertext | tag, with the
 * length-prefixed additional data (the format byte is part of it, so it cannot be swapped).
 */
function sealAt(key: Buffer, plaintext: Uint8Array, loc: SealedLocation): string {
  return sealBody(key, plaintext, locationAad(loc), Buffer.of(AAD_FORMAT));
}

/** Opens a body of `sealAt` (`formatted`) or of the first format. */
function openAt(key: Buffer, body: string, loc: SealedLocation, formatted: boolean): Buffer {
  if (!formatted) return openBody(key, body, legacyAadOf(loc));
  const raw = Buffer.from(body, 'base64');
  if (raw.length < 29) throw new Error('barrier: ciphertext too short');
  if (raw[0] !== AAD_FORMAT) throw new Error('barrier: unknown ciphertext format');
  return openRaw(key, raw.subarray(1), locationAad(loc));
}

function open(key: Buffer, sealed: string, aad: Buffer): Buffer {
  const [version, body] = sealed.split(':', 2);
  if (version !== VERSION || !body) throw new Error('barrier: unknown ciphertext format');
  return openBody(key, body, aad);
}

function openBody(key: Buffer, body: string, aad: Buffer): Buffer {
  return openRaw(key, Buffer.from(body, 'base64'), aad);
}

function openRaw(key: Buffer, raw: Buffer, aad: Buffer): Buffer {
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

/**
 * Ciphertexts of secrets at a location, by prefix: `v1:<body>` (the deployment's key) and
 * `v2:<organization id>.<key id>:<body>` (an organization's key) use the first additional-data format;
 * `v3:<body>` and `v3:<organization id>.<key id>:<body>` (every new seal) start their body with the
 * format byte of the length-prefixed one. Base64 holds no ':', so a second ':' means a named key.
 */
const ORG_VERSION = 'v2';
const FORMATTED = 'v3';
const orgKeyAad = (organizationId: string, keyId: string) => Buffer.from(`sigil:barrier:organization-key:v1:${organizationId}:${keyId}`);

/** The organization and key a ciphertext names; undefined for one under the deployment's key. */
export function sealedKeyOf(sealed: string): { organizationId: string; keyId: string; body: string; formatted: boolean } | undefined {
  const formatted = sealed.startsWith(`${FORMATTED}:`);
  if (!formatted && !sealed.startsWith(`${ORG_VERSION}:`)) return undefined;
  const end = sealed.indexOf(':', 3);
  if (formatted && end < 0) return undefined;
  const dot = sealed.lastIndexOf('.', end);
  if (end < 0 || dot <= 3) throw new Error('barrier: unknown ciphertext format');
  return { organizationId: sealed.slice(3, dot), keyId: sealed.slice(dot + 1, end), body: sealed.slice(end + 1), formatted };
}

/**
 * How ciphertexts of the first additional-data format start, under the deployment's key and an
 * organization's: what in-place re-sealing looks for (every new seal of a secret at a location is `v3`).
 */
export const FIRST_FORMAT_PREFIXES = [`${VERSION}:`, `${ORG_VERSION}:`] as const;

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
    return `${FORMATTED}:${sealAt(this.key(), plaintext, loc)}`;
  }

  /** Opens a ciphertext the deployment's key sealed at `loc`, in either additional-data format. */
  open(sealed: string, loc: SealedLocation): Buffer {
    const colon = sealed.indexOf(':');
    const version = sealed.slice(0, colon);
    const body = sealed.slice(colon + 1);
    if (colon < 0 || !body || body.includes(':') || (version !== VERSION && version !== FORMATTED)) throw new Error('barrier: unknown ciphertext format');
    return openAt(this.key(), body, loc, version === FORMATTED);
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
   * The sealer of one organization: seals with `current` (when given) and opens both its own
   * ciphertexts, with the keys in `keys`, and those the deployment key sealed before migration 032.
   */
  forOrganization(organizationId: string, keys: Map<string, Buffer>, current?: string): SecretSealer {
    return {
      seal: (plaintext, loc) => {
        const key = current ? keys.get(current) : undefined;
        if (!current || !key) throw new Error(`barrier: no data key for organization ${organizationId}`);
        this.key();
        return `${FORMATTED}:${organizationId}.${current}:${sealAt(key, plaintext, loc)}`;
      },
      open: (sealed, loc) => {
        const named = sealedKeyOf(sealed);
        if (!named) return this.open(sealed, loc);
        this.key();
        const key = keys.get(named.keyId);
        if (named.organizationId !== organizationId || !key) {
          throw new Error(`barrier: the data key ${named.keyId} of organization ${named.organizationId} is not available (destroyed with its organization?)`);
        }
        return openAt(key, named.body, loc, named.formatted);
      },
    };
  }
}
