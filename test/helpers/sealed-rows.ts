// The barrier's ciphertexts as stored (docs/secrets.md "At rest"), read and written by the tests
// themselves rather than through Sigil: the keys a copy of the database gives to whoever holds the
// master key (the deployment's data key, each organization's key), an opener that tries every such
// key on a raw value in both additional-data formats, and a sealer of the first format for building
// deployments as they were before per-organization keys.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SigilInstance } from './sigil.js';
import { execSql } from './db-snapshot.js';

export interface Location {
  table: string;
  rowId: string;
  column: string;
}

/** Every sealed column of an organization's secrets, as Sigil's re-sealing walks them. */
export const SEALED_COLUMNS = [
  { table: 'wallets', column: 'mnemonic' },
  { table: 'wallet_accounts', column: 'private_key' },
  { table: 'private_keys', column: 'private_key' },
  { table: 'secrets', column: 'value' },
  { table: 'import_bundles', column: 'target_private_key' },
  { table: 'otps', column: 'target_private_key' },
  { table: 'oauth2_credentials', column: 'client_secret' },
  { table: 'auth_proxy_configs', column: 'private_key' },
  { table: 'activities', column: 'pending_parameters' },
] as const;

export interface RawSecret {
  at: Location;
  organizationId: string;
  sealed: string;
}

/** The organization's sealed values, as stored, in every sealed column. */
export async function rawSecretsOf(sigil: SigilInstance, organizationId: string): Promise<RawSecret[]> {
  const out: RawSecret[] = [];
  for (const { table, column } of SEALED_COLUMNS) {
    const rows = await execSql(sigil, `SELECT id, ${column} AS sealed FROM ${table} WHERE organization_id = ? AND ${column} IS NOT NULL AND ${column} <> ''`, [organizationId]);
    for (const r of rows) out.push({ at: { table, rowId: r.id, column }, organizationId, sealed: r.sealed });
  }
  return out;
}

/** The keys a copy of the database opens with the master key: the deployment's data key and every organization key in it. */
export async function keysInDatabase(sigil: SigilInstance): Promise<{ dataKey: Buffer; organizationKeys: Map<string, Buffer> }> {
  const masterKey = Buffer.from(readFileSync(join(sigil.dataDir, 'master.key'), 'utf8').trim(), 'hex');
  const [{ value: wrappedDataKey }] = await execSql(sigil, `SELECT value FROM meta WHERE key = 'barrier.wrapped_data_key'`);
  const dataKey = gcmOpen(masterKey, Buffer.from(wrappedDataKey.slice(3), 'base64'), Buffer.from('sigil:barrier:data-key:v1'));
  const organizationKeys = new Map<string, Buffer>();
  for (const row of await execSql(sigil, 'SELECT * FROM organization_keys')) {
    const aad = Buffer.from(`sigil:barrier:organization-key:v1:${row.organization_id}:${row.key_id}`);
    organizationKeys.set(row.key_id, gcmOpen(dataKey, Buffer.from(row.wrapped_key.slice(3), 'base64'), aad));
  }
  return { dataKey, organizationKeys };
}

/** The plaintext of `sealed` at `at` if any of `keys` opens it, whichever key it names and in either format; else undefined. */
export function openWithAny(keys: Iterable<Buffer>, sealed: string, at: Location): Buffer | undefined {
  const body = Buffer.from(sealed.slice(sealed.lastIndexOf(':') + 1), 'base64');
  for (const key of keys) {
    for (const [raw, aad] of [
      [body, firstFormatAad(at)],
      [body.subarray(1), lengthPrefixedAad(at)],
    ] as const) {
      try {
        return gcmOpen(key, raw, aad);
      } catch {
        // Not this key or format.
      }
    }
  }
  return undefined;
}

/** A value sealed as the barrier did before per-organization keys: `v1:` under the deployment's key, ':'-joined location. */
export function firstFormatSeal(dataKey: Buffer, plaintext: Buffer, at: Location): string {
  const nonce = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', dataKey, nonce);
  c.setAAD(firstFormatAad(at));
  const ct = Buffer.concat([c.update(plaintext), c.final()]);
  return `v1:${Buffer.concat([nonce, ct, c.getAuthTag()]).toString('base64')}`;
}

const firstFormatAad = (at: Location) => Buffer.from(`sigil:${at.table}:${at.rowId}:${at.column}`);

/** The current format: label, format byte 1, then each part as a 4-byte big-endian length and its bytes. */
function lengthPrefixedAad(at: Location): Buffer {
  const parts = [Buffer.from('sigil:barrier:aad'), Buffer.of(1)];
  for (const p of [at.table, at.rowId, at.column]) {
    const b = Buffer.from(p);
    const n = Buffer.alloc(4);
    n.writeUInt32BE(b.length);
    parts.push(n, b);
  }
  return Buffer.concat(parts);
}

function gcmOpen(key: Buffer, raw: Buffer, aad: Buffer): Buffer {
  const d = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  d.setAAD(aad);
  d.setAuthTag(raw.subarray(raw.length - 16));
  return Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]);
}
