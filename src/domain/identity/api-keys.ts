// API keys: creation rules (public key encoding per curve, expiration) and the v1ApiKey record
// (docs/reference/organizations.md "Users and credentials"; swagger v1ApiKeyParamsV2, v1ApiKey).
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { isValidPublicKey as isP256Point } from '../../crypto/p256.js';
import { SigilError, invalid, notFound } from '../../errors/errors.js';
import type { ApiKeyRow, Repositories } from '../../store/index.js';
import { checkName } from './contacts.js';
import {
  LONG_LIVED_API_KEYS_MESSAGE,
  MAX_EXPIRING_API_KEYS_PER_USER,
  MAX_LONG_LIVED_API_KEYS_PER_USER,
  SHORT_LIVED_API_KEYS_MESSAGE,
} from '../governance/quotas.js';
import { timestamp, type TimestampObject } from '../records.js';

export interface ApiKeyParams {
  apiKeyName: string;
  publicKey: string;
  curveType: 'API_KEY_CURVE_P256' | 'API_KEY_CURVE_SECP256K1' | 'API_KEY_CURVE_ED25519';
  expirationSeconds?: string;
}

export interface ApiKeyRecord {
  credential: { publicKey: string; type: string; sessionProfileId?: string };
  apiKeyId: string;
  apiKeyName: string;
  createdAt: TimestampObject;
  updatedAt: TimestampObject;
  expirationSeconds?: string;
}

export const CREDENTIAL_TYPE_OF_CURVE: Record<ApiKeyParams['curveType'], string> = {
  API_KEY_CURVE_P256: 'CREDENTIAL_TYPE_API_KEY_P256',
  API_KEY_CURVE_SECP256K1: 'CREDENTIAL_TYPE_API_KEY_SECP256K1',
  API_KEY_CURVE_ED25519: 'CREDENTIAL_TYPE_API_KEY_ED25519',
};

/** True when `hex` is a point on the curve in the encoding stamps carry (compressed; 32 bytes for ed25519). */
function isValidPublicKey(curve: ApiKeyParams['curveType'], hex: string): boolean {
  if (!/^[0-9a-f]+$/.test(hex)) return false;
  const bytes = Buffer.from(hex, 'hex');
  try {
    switch (curve) {
      case 'API_KEY_CURVE_P256':
        return bytes.length === 33 && isP256Point(bytes);
      case 'API_KEY_CURVE_SECP256K1':
        if (bytes.length !== 33) return false;
        secp256k1.Point.fromHex(hex);
        return true;
      case 'API_KEY_CURVE_ED25519':
        return bytes.length === 32;
    }
  } catch {
    return false;
  }
}

// One year in seconds is far more than any session needs; the bound only stops absurd values.
const MAX_EXPIRATION_SECONDS = 10 * 365 * 24 * 3600;

export function parseExpirationSeconds(value: string | undefined, what = 'api key expiration'): number | null {
  if (value === undefined || value === '') return null;
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n <= 0 || n > MAX_EXPIRATION_SECONDS) {
    throw invalid(`invalid ${what}: expirationSeconds must be a whole number of seconds from 1 to ${MAX_EXPIRATION_SECONDS}, got ${JSON.stringify(value)}`);
  }
  return n;
}

/** Validates API key parameters and builds rows (no writes). */
export function buildApiKeyRows(
  organizationId: string,
  userId: string,
  params: ApiKeyParams[],
  now: number,
  newId: () => string,
): ApiKeyRow[] {
  const seen = new Set<string>();
  return params.map((p, i) => {
    checkName(p.apiKeyName, `apiKeys[${i}].apiKeyName`);
    const publicKey = p.publicKey.toLowerCase().replace(/^0x/, '');
    if (!isValidPublicKey(p.curveType, publicKey)) {
      const want = p.curveType === 'API_KEY_CURVE_ED25519' ? '32-byte' : 'compressed 33-byte';
      throw invalid(`invalid api key public key: apiKeys[${i}].publicKey must be a ${want} ${p.curveType} public key in hex`);
    }
    if (seen.has(publicKey)) throw invalid(`apiKeys[${i}].publicKey is listed twice`);
    seen.add(publicKey);
    const seconds = parseExpirationSeconds(p.expirationSeconds);
    return {
      id: newId(),
      organization_id: organizationId,
      user_id: userId,
      api_key_name: p.apiKeyName,
      public_key: publicKey,
      curve_type: p.curveType,
      credential_type: CREDENTIAL_TYPE_OF_CURVE[p.curveType],
      expiration_seconds: seconds === null ? null : String(seconds),
      expires_at: seconds === null ? null : now + seconds * 1000,
      created_at: now,
      updated_at: now,
      session_profile_id: null,
    };
  });
}

export const apiKeyExists = (publicKey: string) => new SigilError('CONFLICT', `an API key with public key ${publicKey} already exists in this organization`);

/**
 * Inserts keys, refusing a public key that already belongs to a credential of this organization,
 * within the per-user limits (src/domain/governance/quotas.ts: at most 10 long-lived keys; older expiring keys
 * make room for new ones, never `keepKeyId`, the key the request is stamped with). The rows'
 * created_at is the request's time.
 */
export async function insertApiKeys(repos: Repositories, organizationId: string, rows: ApiKeyRow[], opts: { keepKeyId?: string } = {}): Promise<void> {
  for (const row of rows) {
    const clash = await repos.apiKeys.findByPublicKey([organizationId], row.public_key);
    if (clash.length > 0) throw apiKeyExists(row.public_key);
  }
  if (rows.length === 0) return;
  await enforceApiKeyLimits(repos, organizationId, rows, { now: rows[0].created_at, keepKeyId: opts.keepKeyId });
  await repos.apiKeys.insert(rows);
}

export function apiKeyRecord(row: ApiKeyRow): ApiKeyRecord {
  return {
    credential: { publicKey: row.public_key, type: row.credential_type, ...(row.session_profile_id !== null ? { sessionProfileId: row.session_profile_id } : {}) },
    apiKeyId: row.id,
    apiKeyName: row.api_key_name,
    createdAt: timestamp(row.created_at),
    updatedAt: timestamp(row.updated_at),
    ...(row.expiration_seconds !== null ? { expirationSeconds: row.expiration_seconds } : {}),
  };
}

export async function getApiKey(repos: Repositories, organizationId: string, apiKeyId: string): Promise<ApiKeyRow> {
  const row = await repos.apiKeys.get(organizationId, apiKeyId);
  if (!row) throw notFound(`api key not found: ${apiKeyId}`);
  return row;
}

export function isExpired(row: ApiKeyRow, now: number): boolean {
  return row.expires_at !== null && row.expires_at <= now;
}

/**
 * Per-user API key limits for keys about to be inserted (`rows`, built at `now`): at most 10
 * long-lived keys, refused beyond that; at most 10 expiring keys, older ones deleted to make room
 * (expired first, then oldest; `keepKeyId`, the key stamping the request, is never deleted).
 */
export async function enforceApiKeyLimits(
  repos: Repositories,
  organizationId: string,
  rows: ApiKeyRow[],
  opts: { now: number; keepKeyId?: string },
): Promise<void> {
  if (rows.length === 0) return;
  await repos.organizations.lockForUpdate(organizationId);
  for (const userId of new Set(rows.map((r) => r.user_id))) {
    const evict = apiKeysToEvict(await repos.apiKeys.listForUsers(organizationId, [userId]), rows.filter((r) => r.user_id === userId), opts);
    if (evict.length > 0) await repos.apiKeys.delete(organizationId, userId, evict.map((k) => k.id));
  }
}

/** Of one user's `existing` keys, those that must go for `adding` to fit the limits above; throws when no eviction can make room. */
export function apiKeysToEvict(existing: ApiKeyRow[], adding: ApiKeyRow[], opts: { now: number; keepKeyId?: string }): ApiKeyRow[] {
  const addingLongLived = adding.filter((r) => r.expires_at === null).length;
  const addingExpiring = adding.length - addingLongLived;
  const longLived = existing.filter((k) => k.expires_at === null).length;
  if (longLived + addingLongLived > MAX_LONG_LIVED_API_KEYS_PER_USER) {
    throw new SigilError(
      'RATE_LIMIT_EXCEEDED',
      `${LONG_LIVED_API_KEYS_MESSAGE}: a user holds at most ${MAX_LONG_LIVED_API_KEYS_PER_USER} (has ${longLived}, adding ${addingLongLived})`,
    );
  }
  if (addingExpiring === 0) return [];
  const expiring = existing.filter((k) => k.expires_at !== null);
  const excess = expiring.length + addingExpiring - MAX_EXPIRING_API_KEYS_PER_USER;
  if (excess <= 0) return [];
  const byAge = (a: ApiKeyRow, b: ApiKeyRow) => a.created_at - b.created_at || a.id.localeCompare(b.id);
  const evictable = [
    ...expiring.filter((k) => isExpired(k, opts.now)).sort(byAge),
    ...expiring.filter((k) => !isExpired(k, opts.now) && k.id !== opts.keepKeyId).sort(byAge),
  ];
  if (evictable.length < excess) {
    throw new SigilError(
      'RATE_LIMIT_EXCEEDED',
      `${SHORT_LIVED_API_KEYS_MESSAGE}: a user holds at most ${MAX_EXPIRING_API_KEYS_PER_USER} expiring keys (has ${expiring.length}, adding ${addingExpiring})`,
    );
  }
  return evictable.slice(0, excess);
}
