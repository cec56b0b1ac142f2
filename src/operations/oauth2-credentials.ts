// OAuth 2.0 credential operations and oauth2_authenticate (docs/reference/sessions.md,
// docs/reference/organizations.md "Smart contract interfaces and OAuth 2.0 credentials"; swagger v1CreateOauth2CredentialIntent,
// v1UpdateOauth2CredentialIntent, v1DeleteOauth2CredentialIntent, v1GetOauth2CredentialRequest,
// v1ListOauth2CredentialsRequest, v1Oauth2AuthenticateIntent). Policies see resource AUTH with
// CREATE / UPDATE / DELETE, and oauth2_authenticate as AUTH/CREATE (docs/reference/policies.md "Keywords" resource table).
import {
  createOauth2Credential,
  deleteOauth2Credential,
  getOauth2Credential,
  listOauth2Credentials,
  oauth2Authenticate,
  updateOauth2Credential,
  type Oauth2AuthenticateParams,
  type Oauth2CredentialParams,
} from '../domain/identity/oauth2-credentials.js';
import { defineActivity, defineQuery } from './define.js';

export const createOauth2CredentialOp = defineActivity<Oauth2CredentialParams, { oauth2CredentialId: string }>({
  path: 'create_oauth2_credential',
  type: 'ACTIVITY_TYPE_CREATE_OAUTH2_CREDENTIAL',
  result: 'createOauth2CredentialResult',
  policy: { resource: 'AUTH', action: 'CREATE' },
  policyParams: (p) => ({ provider: p.provider, client_id: p.clientId }),
  secretFields: ['encryptedClientSecret'],
  execute: (ctx, p) => createOauth2Credential(ctx, p),
});

export const updateOauth2CredentialOp = defineActivity<Oauth2CredentialParams & { oauth2CredentialId: string }, { oauth2CredentialId: string }>({
  path: 'update_oauth2_credential',
  type: 'ACTIVITY_TYPE_UPDATE_OAUTH2_CREDENTIAL',
  result: 'updateOauth2CredentialResult',
  policy: { resource: 'AUTH', action: 'UPDATE' },
  policyParams: (p) => ({ oauth2_credential_id: p.oauth2CredentialId, provider: p.provider, client_id: p.clientId }),
  secretFields: ['encryptedClientSecret'],
  execute: (ctx, p) => updateOauth2Credential(ctx, p),
});

export const deleteOauth2CredentialOp = defineActivity<{ oauth2CredentialId: string }, { oauth2CredentialId: string }>({
  path: 'delete_oauth2_credential',
  type: 'ACTIVITY_TYPE_DELETE_OAUTH2_CREDENTIAL',
  result: 'deleteOauth2CredentialResult',
  policy: { resource: 'AUTH', action: 'DELETE' },
  policyParams: (p) => ({ oauth2_credential_id: p.oauth2CredentialId }),
  execute: (ctx, p) => deleteOauth2Credential(ctx, p),
});

export const oauth2AuthenticateOp = defineActivity<Oauth2AuthenticateParams, { oidcToken: string }>({
  path: 'oauth2_authenticate',
  type: 'ACTIVITY_TYPE_OAUTH2_AUTHENTICATE',
  result: 'oauth2AuthenticateResult',
  policy: { resource: 'AUTH', action: 'CREATE' },
  policyParams: (p) => ({ oauth2_credential_id: p.oauth2CredentialId }),
  // The code and its PKCE verifier are one-time secrets of the login.
  secretFields: ['authCode', 'codeVerifier'],
  // The id_token it issues logs in whoever holds the key its nonce names; never stored readable.
  resultSecretFields: ['oidcToken'],
  // It writes nothing but its own record, and the provider round trips must not hold a write lock.
  execution: 'pure',
  execute: (ctx, p) => oauth2Authenticate(ctx, p),
});

export const getOauth2CredentialOp = defineQuery<{ organizationId: string; oauth2CredentialId: string }, unknown>({
  path: 'get_oauth2_credential',
  request: 'v1GetOauth2CredentialRequest',
  execute: (ctx, b) => getOauth2Credential(ctx, b),
});

export const listOauth2CredentialsOp = defineQuery<{ organizationId: string }, unknown>({
  path: 'list_oauth2_credentials',
  request: 'v1ListOauth2CredentialsRequest',
  execute: (ctx) => listOauth2Credentials(ctx),
});
