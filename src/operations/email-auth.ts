// Email auth and email recovery operations (docs/reference/sessions.md
// "Login activities"; swagger v1EmailAuthIntentV3 → emailAuthResult,
// v1InitUserEmailRecoveryIntentV2 → initUserEmailRecoveryResult, v1RecoverUserIntent →
// recoverUserResult): email_auth, init_user_email_recovery, recover_user.
//
// Who may run them: email_auth is AUTH/CREATE and init_user_email_recovery RECOVERY/CREATE (the
// reference's documented mapping and policy examples): the root quorum, or users a policy allows. A
// parent organization serves its sub-organizations' users by submitting to itself, or to the
// sub-organization with its own credential as @turnkey/sdk-server's sendCredential server action
// and the email recovery guide do (docs/reference/organizations.md, docs/reference/sessions.md: email auth "can target any user in the
// organization or sub-organizations"): decided by the parent's policies, recorded in the
// sub-organization. recover_user is not among them: the recovered user stamps it.
// recover_user is CREDENTIAL/CREATE (it adds a passkey): allowed without a policy only to the
// recovered user stamping with the recovery key it was emailed; anyone else needs the root quorum or
// a policy, and a DENY policy (e.g. on `credentials` of type CREDENTIAL_TYPE_RECOVER_USER_KEY_P256)
// is obeyed like everywhere else.
//
// Type values: the V1 and V2 types of email_auth and V1 of init_user_email_recovery are aliases.
// Their schemas are the current ones with emailCustomization optional and the same result member;
// appName is required for every version, as the reference has required it of all email activities
// since 2025-12-16.
import {
  emailAuth,
  initUserEmailRecovery,
  isOwnRecovery,
  recoverUser,
  type EmailAuthParams,
  type InitUserEmailRecoveryParams,
  type RecoverUserParams,
} from '../domain/identity/email-auth.js';
import { defineActivity } from './define.js';

export const emailAuthOp = defineActivity<EmailAuthParams, { userId: string; apiKeyId: string }>({
  path: 'email_auth',
  type: 'ACTIVITY_TYPE_EMAIL_AUTH_V3',
  aliases: ['ACTIVITY_TYPE_EMAIL_AUTH', 'ACTIVITY_TYPE_EMAIL_AUTH_V2'],
  result: 'emailAuthResult',
  policy: { resource: 'AUTH', action: 'CREATE' },
  policyParams: (p) => ({ email: p.email }),
  parentOrganizationMaySubmit: true,
  // The email goes out before the key is written and with no lock held (src/domain/identity/email-auth.ts).
  execution: 'pure',
  execute: (ctx, p) => emailAuth(ctx, p),
});

export const initUserEmailRecoveryOp = defineActivity<InitUserEmailRecoveryParams, { userId: string }>({
  path: 'init_user_email_recovery',
  type: 'ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY_V2',
  aliases: ['ACTIVITY_TYPE_INIT_USER_EMAIL_RECOVERY'],
  result: 'initUserEmailRecoveryResult',
  policy: { resource: 'RECOVERY', action: 'CREATE' },
  policyParams: (p) => ({ email: p.email }),
  parentOrganizationMaySubmit: true,
  execution: 'pure',
  execute: (ctx, p) => initUserEmailRecovery(ctx, p),
});

export const recoverUserOp = defineActivity<RecoverUserParams, { authenticatorId: string[] }>({
  path: 'recover_user',
  type: 'ACTIVITY_TYPE_RECOVER_USER',
  result: 'recoverUserResult',
  policy: { resource: 'CREDENTIAL', action: 'CREATE' },
  policyParams: (p) => ({ user_id: p.userId }),
  selfService: (caller, p) => isOwnRecovery(caller, p),
  execute: (ctx, p) => recoverUser(ctx, p),
});
