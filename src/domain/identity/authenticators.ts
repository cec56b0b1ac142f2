// Authenticators (passkeys): registration from a WebAuthn attestation (swagger v1AuthenticatorParamsV2,
// docs/reference/api.md "Stamps"), deletion, and the v1Authenticator record exactly as
// docs/reference/organizations.md "Users and credentials" lists it. One registration path serves create_authenticators,
// create_users and the root users of create_sub_organization. Limits: docs/reference/sessions.md
// (ES256/RS256 only; 10 authenticators per user, "user has exceeded maximum authenticators").
import { verifyRegistration, WebauthnError } from '../../crypto/webauthn.js';
import { SigilError, invalid, notFound } from '../../errors/errors.js';
import type { AuthenticatorRow, Repositories } from '../../store/index.js';
import { checkName } from './contacts.js';
import type { OperationContext } from '../context.js';
import { timestamp, type TimestampObject } from '../records.js';
import { MAX_AUTHENTICATORS_PER_USER } from '../governance/quotas.js';

export const WEBAUTHN_CREDENTIAL_TYPE = 'CREDENTIAL_TYPE_WEBAUTHN_AUTHENTICATOR';

export interface AuthenticatorParams {
  authenticatorName: string;
  /** base64url of the challenge the client passed to navigator.credentials.create. */
  challenge: string;
  attestation: {
    credentialId: string;
    clientDataJson: string;
    attestationObject: string;
    transports: string[];
  };
}

/**
 * A passkey as the V1 activities give it (swagger v1AuthenticatorParams: the browser's
 * PublicKeyCredential as is, `attestation {id, rawId, response {clientDataJson, attestationObject,
 * transports}}`), in the V2 form (v1AuthenticatorParamsV2) everything else reads.
 */
export function authenticatorParamsFromV1(p: {
  authenticatorName: string;
  challenge: string;
  attestation: { id: string; response: { clientDataJson: string; attestationObject: string; transports?: string[] } };
}): AuthenticatorParams {
  const { id, response } = p.attestation;
  return {
    authenticatorName: p.authenticatorName,
    challenge: p.challenge,
    attestation: { credentialId: id, clientDataJson: response.clientDataJson, attestationObject: response.attestationObject, transports: response.transports ?? [] },
  };
}

export interface AuthenticatorRecord {
  transports: string[];
  attestationType: string;
  aaguid: string;
  credentialId: string;
  model: string;
  credential: { publicKey: string; type: string };
  authenticatorId: string;
  authenticatorName: string;
  createdAt: TimestampObject;
  updatedAt: TimestampObject;
}

// Authenticator models by AAGUID (the community passkey-authenticator-aaguids list), for the
// `model` field. Authenticators that attest with `none` often report the zero AAGUID, naming none.
const MODELS: Record<string, string> = {
  'fbfc3007-154e-4ecc-8c0b-6e020557d7bd': 'iCloud Keychain',
  'dd4ec289-e01d-41c9-bb89-70fa845d4bf2': 'iCloud Keychain (Managed)',
  'ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4': 'Google Password Manager',
  'adce0002-35bc-c60a-648b-0b25f1f05503': 'Chrome on Mac',
  '08987058-cadc-4b81-b6e1-30de50dcbe96': 'Windows Hello',
  '9ddd1817-af5a-4672-a2b9-3e3dd95000a9': 'Windows Hello',
  '6028b017-b1d4-4c02-b4b3-afcdafc96bb2': 'Windows Hello',
  'bada5566-a7aa-401f-bd96-45619a55120d': '1Password',
  'd548826e-79b4-db40-a3d8-11116f7e8349': 'Bitwarden',
};

export function modelOf(aaguid: string): string {
  return MODELS[aaguid.toLowerCase()] ?? 'Unknown authenticator';
}

/** More than a user may hold (docs/reference/api.md "Limits"): `existing` held, `adding` more. */
export function checkAuthenticatorCount(existing: number, adding: number): void {
  if (existing + adding > MAX_AUTHENTICATORS_PER_USER) {
    throw new SigilError(
      'RATE_LIMIT_EXCEEDED',
      `user has exceeded maximum authenticators: a user holds at most ${MAX_AUTHENTICATORS_PER_USER} (has ${existing}, adding ${adding})`,
    );
  }
}

/**
 * Verifies each attestation against its challenge and the deployment's relying party and builds the
 * rows for `userId` in `organizationId`; reads nothing, so it may run before any transaction.
 */
export async function authenticatorRows(
  ctx: Pick<OperationContext, 'now' | 'newId' | 'services'>,
  organizationId: string,
  userId: string,
  params: AuthenticatorParams[],
  field = 'authenticators',
): Promise<AuthenticatorRow[]> {
  const rows: AuthenticatorRow[] = [];
  for (const [i, p] of params.entries()) {
    const at = `${field}[${i}]`;
    checkName(p.authenticatorName, `${at}.authenticatorName`);
    let verified;
    try {
      verified = await verifyRegistration(p.attestation, p.challenge, ctx.services.settings.webauthn);
    } catch (err) {
      if (err instanceof WebauthnError) throw invalid(`invalid authenticator attestation: ${at}: ${err.message}`);
      throw err;
    }
    if (rows.some((r) => r.credential_id === verified.credentialId)) {
      throw invalid(`${at}.attestation.credentialId is listed twice`);
    }
    rows.push({
      id: ctx.newId(),
      organization_id: organizationId,
      user_id: userId,
      name: p.authenticatorName,
      credential_id: verified.credentialId,
      public_key: Buffer.from(verified.cosePublicKey).toString('base64url'),
      credential_public_key: verified.publicKeyHex,
      algorithm: verified.algorithm,
      sign_count: verified.signCount,
      transports: JSON.stringify([...new Set(p.attestation.transports)]),
      attestation_type: verified.attestationType,
      aaguid: verified.aaguid,
      model: modelOf(verified.aaguid),
      created_at: ctx.now,
      updated_at: ctx.now,
    });
  }
  return rows;
}

export const authenticatorExists = (credentialId: string) =>
  new SigilError('CONFLICT', `an authenticator with credential ID ${credentialId} already exists in this organization`);

/**
 * Verifies each attestation against its challenge and the deployment's relying party, then stores
 * the authenticators for `userId` in `organizationId`. All or nothing: the caller's transaction
 * undoes everything when one of them is refused. Returns the new authenticator ids in order.
 */
export async function registerAuthenticators(
  ctx: Pick<OperationContext, 'repos' | 'now' | 'newId' | 'services'>,
  organizationId: string,
  userId: string,
  params: AuthenticatorParams[],
  field = 'authenticators',
): Promise<string[]> {
  if (params.length === 0) return [];
  // Counted under the organization's row lock, so concurrent registrations cannot both fit.
  await ctx.repos.organizations.lockForUpdate(organizationId);
  checkAuthenticatorCount(await ctx.repos.authenticators.countForUser(organizationId, userId), params.length);
  const rows = await authenticatorRows(ctx, organizationId, userId, params, field);
  for (const r of rows) {
    if ((await ctx.repos.authenticators.findByCredentialId([organizationId], r.credential_id)).length > 0) throw authenticatorExists(r.credential_id);
  }
  await ctx.repos.authenticators.insert(rows);
  return rows.map((r) => r.id);
}

/** Deletes authenticators of `userId`; every id must be one of that user's. */
export async function deleteAuthenticators(repos: Repositories, organizationId: string, userId: string, authenticatorIds: string[]): Promise<string[]> {
  if (authenticatorIds.length === 0) throw invalid('authenticatorIds must list at least one authenticator');
  const unique = [...new Set(authenticatorIds)];
  const owned = new Set((await repos.authenticators.listForUsers(organizationId, [userId])).map((a) => a.id));
  const missing = unique.filter((id) => !owned.has(id));
  if (missing.length > 0) throw notFound(`webauthn authenticator not found in organization for user ${userId}: ${missing.join(', ')}`);
  await repos.authenticators.delete(organizationId, userId, unique);
  return unique;
}

export async function getAuthenticator(repos: Repositories, organizationId: string, authenticatorId: string): Promise<AuthenticatorRow> {
  const row = await repos.authenticators.get(organizationId, authenticatorId);
  if (!row) throw notFound(`webauthn authenticator not found in organization: ${authenticatorId}`);
  return row;
}

export function authenticatorRecord(row: AuthenticatorRow): AuthenticatorRecord {
  return {
    transports: JSON.parse(row.transports) as string[],
    attestationType: row.attestation_type,
    aaguid: row.aaguid,
    credentialId: row.credential_id,
    model: row.model,
    credential: { publicKey: row.credential_public_key, type: WEBAUTHN_CREDENTIAL_TYPE },
    authenticatorId: row.id,
    authenticatorName: row.name,
    createdAt: timestamp(row.created_at),
    updatedAt: timestamp(row.updated_at),
  };
}
