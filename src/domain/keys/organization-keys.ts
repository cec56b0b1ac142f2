// An organization's sealer (docs/operator-guide.md "Custody", per-organization keys; migration 032): its secrets are
// sealed with its own data key, created the first time it seals one, and opened with the key their
// ciphertext names. The unwrapped key stays in the barrier's bounded per-process cache, so signing
// reads the key row only the first time a process meets the organization.
import { sealedKeyOf, type Barrier, type SealedLocation, type SecretSealer } from '../../barrier/barrier.js';
import type { Repositories } from '../../store/index.js';
import { SigilError } from '../../errors/errors.js';

/** A sealer for an organization's new secrets (and its existing ones); creates its key if it has none. */
export async function sealerFor(barrier: Barrier, repos: Repositories, organizationId: string, now: number): Promise<SecretSealer> {
  // Read every time (a write is happening anyway): a cached key whose row a rolled-back transaction
  // never kept must not seal anything new.
  const row =
    (await repos.organizationKeys.get(organizationId)) ??
    (await repos.organizationKeys.insertIfAbsent({ organization_id: organizationId, ...rowOf(barrier.newOrganizationKey(organizationId)), created_at: now }));
  const key = barrier.unwrapOrganizationKey(organizationId, { keyId: row.key_id, wrappedKey: row.wrapped_key });
  return barrier.forOrganization(organizationId, new Map([[row.key_id, key]]), row.key_id);
}

/** A sealer that opens the organization's given ciphertexts; the key row is read only on a cache miss. */
export async function openerFor(barrier: Barrier, repos: Repositories, organizationId: string, sealed: readonly string[]): Promise<SecretSealer> {
  const keys = new Map<string, Buffer>();
  let missing = false;
  for (const s of sealed) {
    const named = sealedKeyOf(s);
    if (!named || named.organizationId !== organizationId || keys.has(named.keyId)) continue;
    const cached = barrier.cachedOrganizationKey(named.keyId);
    if (cached) keys.set(named.keyId, cached);
    else missing = true;
  }
  if (missing) {
    const row = await repos.organizationKeys.get(organizationId);
    if (row) keys.set(row.key_id, barrier.unwrapOrganizationKey(organizationId, { keyId: row.key_id, wrappedKey: row.wrapped_key }));
    for (const s of sealed) {
      const named = sealedKeyOf(s);
      if (named && named.organizationId === organizationId && !keys.has(named.keyId)) {
        throw new SigilError(
          'NOT_FOUND',
          `the data key ${named.keyId} of organization ${organizationId} no longer exists (destroyed with its organization): what it sealed cannot be opened`,
        );
      }
    }
  }
  return barrier.forOrganization(organizationId, keys);
}

/** One secret of the organization sealed at `loc` with its key (created if it has none). */
export async function sealForOrganization(barrier: Barrier, repos: Repositories, organizationId: string, now: number, plaintext: Uint8Array, loc: SealedLocation): Promise<string> {
  return (await sealerFor(barrier, repos, organizationId, now)).seal(plaintext, loc);
}

/** One secret of the organization opened at `loc`, whichever key sealed it (its own, or the deployment's before migration 032). */
export async function openForOrganization(barrier: Barrier, repos: Repositories, organizationId: string, sealed: string, loc: SealedLocation): Promise<Buffer> {
  return (await openerFor(barrier, repos, organizationId, [sealed])).open(sealed, loc);
}

/** Destroys the organization's key (delete_sub_organization): what it sealed opens no more. */
export async function destroyOrganizationKey(barrier: Barrier, repos: Repositories, organizationId: string): Promise<void> {
  const keyId = await repos.organizationKeys.destroy(organizationId);
  if (keyId) barrier.forgetOrganizationKey(keyId);
}

function rowOf(record: { keyId: string; wrappedKey: string }) {
  return { key_id: record.keyId, wrapped_key: record.wrappedKey };
}
