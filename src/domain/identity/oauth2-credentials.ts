// OAuth 2.0 credentials and oauth2_authenticate (docs/reference/organizations.md "Smart contract interfaces and OAuth 2.0 credentials",
// docs/reference/organizations.md "Smart contract interfaces and OAuth 2.0 credentials"; docs/reference/bundles.md `encryptOauth2ClientSecret`; swagger
// v1CreateOauth2CredentialIntent, v1UpdateOauth2CredentialIntent, v1DeleteOauth2CredentialIntent,
// v1GetOauth2CredentialRequest, v1ListOauth2CredentialsRequest, v1Oauth2Credential,
// v1Oauth2AuthenticateIntent → v1Oauth2AuthenticateResult).
//
//  - The client secret arrives as `encryptedClientSecret`: the hex QOS envelope @turnkey/crypto's
//    encryptOauth2ClientSecret makes. The reference service encrypts it to its TLS fetcher's key,
//    which the SDK pins by default but lets callers override (`dangerouslyOverrideTlsFetcherPublicKey`,
//    docs/reference/bundles.md); Sigil's receiving key is its deployment signer key, published as
//    `signerPublicKey` by GET /.well-known/sigil.json and printed by `sigil init`. The secret is
//    opened once, sealed by the barrier to its row and column, and never returned: records show
//    `encryptedClientSecret` as "<redacted>", as the activity record shows the intent's.
//  - oauth2_authenticate exchanges the authorization code with PKCE at the provider, reads the
//    provider's user and answers an OIDC id_token that Sigil issues itself: ES256 by the deployment
//    signer, iss = the deployment's self issuer (SIGIL_OIDC_SELF_ISSUER), aud = the credential's
//    client id, sub = `x:<id>` / `discord:<id>`, the caller's nonce, email claims when the provider
//    gave an email, a 10-minute lifetime, and the provider's access token in
//    `encrypted_bearer_token` (a credential bundle, docs/reference/bundles.md, to bearerTokenTargetPublicKey)
//    when asked. oauth_login and OIDC-attested stamps accept such tokens (src/auth/oidc.ts).
//  - A credential is looked up in the target organization, then in its parent: a parent's
//    credential serves its sub-organizations' logins.
import { makeCredentialBundle } from '../../crypto/bundles.js';
import { signEs256Jwt } from '../../crypto/es256-jwt.js';
import { isValidPublicKey } from '../../crypto/p256.js';
import { openQuorumKeyEnvelope } from '../../crypto/quorum-key.js';
import { SigilError, invalid } from '../../errors/errors.js';
import { isUniqueViolation, type Oauth2CredentialRow } from '../../store/index.js';
import type { ActivityContext, OperationContext } from '../context.js';
import { OAUTH2_PROVIDERS, PROVIDER_LABEL, exchangeAuthorizationCode, type Oauth2Provider } from './oauth2-exchange.js';
import { timestamp, type TimestampObject } from '../records.js';
import { openForOrganization, sealForOrganization } from '../keys/organization-keys.js';

/** Lifetime of the id_tokens oauth2_authenticate issues: long enough to log in with, no longer. */
export const OAUTH2_ID_TOKEN_SECONDS = 600;
/** What records and activity intents show in place of a secret. */
export const REDACTED = '<redacted>';
const MAX_CLIENT_ID = 256;
const MAX_CLIENT_SECRET_BYTES = 1024;

const SECRET_AT = (id: string) => ({ table: 'oauth2_credentials', rowId: id, column: 'client_secret' });

export interface Oauth2CredentialParams {
  provider: string;
  clientId: string;
  encryptedClientSecret: string;
}

export interface Oauth2AuthenticateParams {
  oauth2CredentialId: string;
  authCode: string;
  redirectUri: string;
  codeVerifier: string;
  nonce: string;
  bearerTokenTargetPublicKey?: string;
}

export interface Oauth2CredentialRecord {
  oauth2CredentialId: string;
  organizationId: string;
  provider: string;
  clientId: string;
  encryptedClientSecret: string;
  createdAt: TimestampObject;
  updatedAt: TimestampObject;
}

const notFound = (id: string) =>
  new SigilError('OAUTH2_CREDENTIAL_NOT_FOUND', `oauth2 credential not found: no OAuth 2.0 credential with id ${JSON.stringify(id)} in this organization`);

const duplicate = (provider: string, clientId: string) =>
  new SigilError('CONFLICT', `an OAuth 2.0 credential for ${provider} with client id ${JSON.stringify(clientId)} already exists in this organization`);

function checkProvider(provider: string): Oauth2Provider {
  if (!(OAUTH2_PROVIDERS as readonly string[]).includes(provider)) throw invalid(`provider must be one of ${OAUTH2_PROVIDERS.join(', ')}`);
  return provider as Oauth2Provider;
}

function checkClientId(clientId: string): string {
  if (clientId.trim() === '') throw invalid('client_id must be set');
  if (clientId.length > MAX_CLIENT_ID) throw invalid(`clientId must be at most ${MAX_CLIENT_ID} characters`);
  return clientId;
}

/** The plaintext client secret inside `encryptedClientSecret`, which must be encrypted to the signer key. */
function openClientSecret(ctx: OperationContext, encryptedClientSecret: string): Uint8Array {
  if (encryptedClientSecret.trim() === '') throw invalid('encrypted_client_secret must be set');
  let secret: Uint8Array;
  try {
    secret = openQuorumKeyEnvelope(encryptedClientSecret.trim(), ctx.services.signer);
  } catch (err) {
    throw invalid(
      `encryptedClientSecret could not be decrypted: ${(err as Error).message}. Encrypt the client secret with @turnkey/crypto ` +
        `encryptOauth2ClientSecret(secret, signerPublicKey) where signerPublicKey is this deployment's (GET /.well-known/sigil.json)`,
    );
  }
  if (secret.length === 0) throw invalid('encryptedClientSecret holds an empty client secret');
  if (secret.length > MAX_CLIENT_SECRET_BYTES) throw invalid(`the client secret must be at most ${MAX_CLIENT_SECRET_BYTES} bytes`);
  return secret;
}

export function oauth2CredentialRecord(row: Oauth2CredentialRow): Oauth2CredentialRecord {
  return {
    oauth2CredentialId: row.id,
    organizationId: row.organization_id,
    provider: row.provider,
    clientId: row.client_id,
    encryptedClientSecret: REDACTED,
    createdAt: timestamp(row.created_at),
    updatedAt: timestamp(row.updated_at),
  };
}

async function requireCredential(ctx: OperationContext, id: string): Promise<Oauth2CredentialRow> {
  if (id.trim() === '') throw invalid('oauth2_credential_id must be set');
  const row = await ctx.repos.oauth2Credentials.get(ctx.organization.id, id);
  if (!row) throw notFound(id);
  return row;
}

/** Runs an insert or update, turning a concurrent duplicate (unique violation) into the clear conflict. */
async function guardDuplicate<T>(provider: string, clientId: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicate(provider, clientId);
    throw err;
  }
}

export async function createOauth2Credential(ctx: ActivityContext, p: Oauth2CredentialParams) {
  const provider = checkProvider(p.provider);
  const clientId = checkClientId(p.clientId);
  const secret = openClientSecret(ctx, p.encryptedClientSecret);
  const orgId = ctx.organization.id;
  if (await ctx.repos.oauth2Credentials.findByClient(orgId, provider, clientId)) throw duplicate(provider, clientId);
  const id = ctx.newId();
  const clientSecret = await sealForOrganization(ctx.services.barrier, ctx.repos, orgId, ctx.now, secret, SECRET_AT(id));
  secret.fill(0);
  await guardDuplicate(provider, clientId, () =>
    ctx.repos.oauth2Credentials.insert({
      id,
      organization_id: orgId,
      provider,
      client_id: clientId,
      client_secret: clientSecret,
      created_at: ctx.now,
      updated_at: ctx.now,
    }),
  );
  return { oauth2CredentialId: id };
}

/** update_oauth2_credential: provider, client id and secret are all replaced (all three are required). */
export async function updateOauth2Credential(ctx: ActivityContext, p: Oauth2CredentialParams & { oauth2CredentialId: string }) {
  const row = await requireCredential(ctx, p.oauth2CredentialId);
  const provider = checkProvider(p.provider);
  const clientId = checkClientId(p.clientId);
  const secret = openClientSecret(ctx, p.encryptedClientSecret);
  const other = await ctx.repos.oauth2Credentials.findByClient(ctx.organization.id, provider, clientId);
  if (other && other.id !== row.id) throw duplicate(provider, clientId);
  const clientSecret = await sealForOrganization(ctx.services.barrier, ctx.repos, row.organization_id, ctx.now, secret, SECRET_AT(row.id));
  secret.fill(0);
  await guardDuplicate(provider, clientId, () =>
    ctx.repos.oauth2Credentials.update(ctx.organization.id, row.id, { provider, client_id: clientId, client_secret: clientSecret, updated_at: ctx.now }),
  );
  return { oauth2CredentialId: row.id };
}

export async function deleteOauth2Credential(ctx: ActivityContext, p: { oauth2CredentialId: string }) {
  const row = await requireCredential(ctx, p.oauth2CredentialId);
  await ctx.repos.oauth2Credentials.delete(ctx.organization.id, row.id);
  return { oauth2CredentialId: row.id };
}

export async function getOauth2Credential(ctx: OperationContext, b: { oauth2CredentialId: string }) {
  return { oauth2Credential: oauth2CredentialRecord(await requireCredential(ctx, b.oauth2CredentialId)) };
}

export async function listOauth2Credentials(ctx: OperationContext) {
  return { oauth2Credentials: (await ctx.repos.oauth2Credentials.list(ctx.organization.id)).map(oauth2CredentialRecord) };
}

/** The credential in the target organization, else in its parent (which serves its sub-organizations). */
async function credentialForLogin(ctx: OperationContext, id: string): Promise<Oauth2CredentialRow> {
  const own = await ctx.repos.oauth2Credentials.get(ctx.organization.id, id);
  if (own) return own;
  const parentId = ctx.organization.parent_organization_id;
  const inherited = parentId ? await ctx.repos.oauth2Credentials.get(parentId, id) : undefined;
  if (!inherited) throw notFound(id);
  return inherited;
}

export async function oauth2Authenticate(ctx: ActivityContext, p: Oauth2AuthenticateParams) {
  // The reference service's messages, in its field names (docs/reference/sessions.md, docs/reference/api.md).
  if (p.oauth2CredentialId.trim() === '') throw invalid('oauth2_credential_id must be set');
  if (p.authCode === '') throw invalid('auth_code must be set');
  if (p.redirectUri === '') throw invalid('redirect_uri must be set');
  if (p.codeVerifier === '') throw invalid('code_verifier must be set');
  if (p.nonce === '') throw invalid('nonce must be set');
  const target = p.bearerTokenTargetPublicKey ?? '';
  if (target !== '' && !isValidPublicKey(target)) {
    throw invalid('bearerTokenTargetPublicKey must be a P-256 public key (hex, compressed or uncompressed)');
  }
  const row = await credentialForLogin(ctx, p.oauth2CredentialId);
  const provider = checkProvider(row.provider);
  const secret = await openForOrganization(ctx.services.barrier, ctx.repos, row.organization_id, row.client_secret, SECRET_AT(row.id));
  let exchanged: Awaited<ReturnType<typeof exchangeAuthorizationCode>>;
  try {
    exchanged = await exchangeAuthorizationCode({
      provider,
      endpoints: ctx.services.settings.oauth2Endpoints[provider],
      clientId: row.client_id,
      clientSecret: secret.toString('utf8'),
      authCode: p.authCode,
      redirectUri: p.redirectUri,
      codeVerifier: p.codeVerifier,
    });
  } finally {
    secret.fill(0);
  }
  const { user, accessToken } = exchanged;
  const issuedAt = Math.floor(ctx.now / 1000);
  const claims: Record<string, unknown> = {
    iss: ctx.services.settings.oidcSelfIssuer,
    aud: row.client_id,
    sub: `${PROVIDER_LABEL[provider].subjectPrefix}:${user.id}`,
    nonce: p.nonce,
    iat: issuedAt,
    exp: issuedAt + OAUTH2_ID_TOKEN_SECONDS,
    ...(user.email ? { email: user.email, email_verified: user.emailVerified === true } : {}),
    ...(target !== ''
      ? { encrypted_bearer_token: makeCredentialBundle({ plaintext: new Uint8Array(Buffer.from(accessToken, 'utf8')), targetPublicKey: target }) }
      : {}),
  };
  return { oidcToken: signEs256Jwt(claims, ctx.services.signer) };
}
