// Session operations (docs/reference/sessions.md "Sessions"; swagger v1CreateReadWriteSessionIntentV2 →
// v1CreateReadWriteSessionResultV2, v1CreateReadOnlySessionIntent → v1CreateReadOnlySessionResult,
// v1StampLoginIntent → v1StampLoginResult): create_read_write_session, create_read_only_session,
// stamp_login. All are AUTH/CREATE for policies, and a user may always open sessions for itself.
// ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION (V1) names its user by `email` instead of userId and
// answers under createReadWriteSessionResult.
import { createReadOnlySession, createReadWriteSession, stampLogin, type ReadWriteSessionParams } from '../domain/identity/sessions.js';
import { defineActivity } from './define.js';

export const createReadWriteSessionOp = defineActivity<ReadWriteSessionParams, unknown>({
  path: 'create_read_write_session',
  type: 'ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2',
  aliases: [{ type: 'ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION', result: 'createReadWriteSessionResult' }],
  result: 'createReadWriteSessionResultV2',
  policy: { resource: 'AUTH', action: 'CREATE' },
  policyParams: (p) => ({ user_id: p.userId ?? '', ...(p.email !== undefined ? { email: p.email } : {}) }),
  // By email the session is the caller's own only when that email is exactly the caller's, as the
  // user is then looked up by it (an exact match).
  selfService: (caller, p) => (p.email !== undefined ? caller.user.user_email === p.email : !p.userId || p.userId === caller.user.id),
  addsCredential: {
    method: 'AUTHENTICATION_TYPE_SESSION',
    userId: (caller, p) => p.userId || (p.email === undefined || caller.user.user_email === p.email ? caller.user.id : undefined),
  },
  execute: (ctx, p) => createReadWriteSession(ctx, p),
});

export const createReadOnlySessionOp = defineActivity<Record<string, never>, unknown>({
  path: 'create_read_only_session',
  type: 'ACTIVITY_TYPE_CREATE_READ_ONLY_SESSION',
  result: 'createReadOnlySessionResult',
  policy: { resource: 'AUTH', action: 'CREATE' },
  selfService: () => true,
  // A read-only session is itself the credential (X-Session): a bearer token.
  resultSecretFields: ['session'],
  execute: (ctx) => createReadOnlySession(ctx),
});

export const stampLoginOp = defineActivity<
  { publicKey: string; expirationSeconds?: string; invalidateExisting?: boolean; sessionProfileId?: string },
  { session: string }
>({
  path: 'stamp_login',
  type: 'ACTIVITY_TYPE_STAMP_LOGIN',
  result: 'stampLoginResult',
  policy: { resource: 'AUTH', action: 'CREATE' },
  policyParams: (p) => ({ session_profile_id: p.sessionProfileId ?? '' }),
  selfService: () => true,
  // Login clients send the parent's organizationId while the credential lives in a sub-organization
  // (docs/reference/sessions.md "Login activities"): the pipeline finds that sub-organization.
  credentialMayBeInSubOrganization: true,
  // @turnkey/core's loginWithOtp / loginWithOauth stamp it with X-Stamp-Attested only.
  acceptsAttestedStamp: true,
  addsCredential: { method: 'AUTHENTICATION_TYPE_SESSION', userId: (caller) => caller.user.id },
  execute: (ctx, p) => stampLogin(ctx, p),
});
