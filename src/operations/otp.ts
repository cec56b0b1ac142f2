// OTP operations (docs/reference/sessions.md "OTP"; docs/reference/api.md Appendix A.1 and
// docs/reference/policies.md; swagger v1InitOtpIntentV3 → initOtpResultV2, v1VerifyOtpIntentV2 → verifyOtpResult,
// v1OtpLoginIntentV2 → otpLoginResult, v1InitOtpAuthIntentV3 → initOtpAuthResultV2,
// v1OtpAuthIntent → otpAuthResult): init_otp, verify_otp, otp_login, and the legacy
// init_otp_auth / otp_auth pair (a code of one flow is never accepted by the other).
//
// Who may run them: the organization's root quorum, or users a policy allows (OTP/CREATE,
// OTP/VERIFY, AUTH/CREATE, as the reference docs' parent-organization policy example). A parent
// organization serves its sub-organizations' end users either by submitting to itself (otp_login then
// finds the user with the verified contact in its sub-organizations and creates the session key
// there) or, as @turnkey/sdk-server's otpLogin server action does, by submitting to the
// sub-organization with its own credential: every activity here is one a parent may run for its
// sub-organizations' users (docs/reference/organizations.md), decided by the parent's policies and recorded in the
// sub-organization.
//
// Type values: init_otp takes V3 and, as aliases, V1 and V2 (answering under initOtpResult, the
// member their clients read; V1 needs no appName); init_otp_auth likewise (V1 and V2 under
// initOtpAuthResult). verify_otp takes V2 and the legacy
// ACTIVITY_TYPE_VERIFY_OTP, whose plaintext otpCode (and optional publicKey) is the plaintext
// alias, also accepted with the V2 body as @turnkey/core sends it; otp_login takes V2 and the legacy ACTIVITY_TYPE_OTP_LOGIN (clientSignature optional in
// the schema, still required when the token is bound to a key). Both answer the same member.
import { initOtp, otpAuth, otpLogin, verifyOtp, type InitOtpParams, type OtpAuthParams, type OtpLoginParams, type VerifyOtpParams } from '../domain/identity/otp.js';
import { defineActivity } from './define.js';

export const initOtpOp = defineActivity<InitOtpParams, unknown>({
  path: 'init_otp',
  type: 'ACTIVITY_TYPE_INIT_OTP_V3',
  aliases: [
    { type: 'ACTIVITY_TYPE_INIT_OTP_V2', result: 'initOtpResult' },
    { type: 'ACTIVITY_TYPE_INIT_OTP', result: 'initOtpResult' },
  ],
  result: 'initOtpResultV2',
  policy: { resource: 'OTP', action: 'CREATE' },
  policyParams: (p) => ({ otp_type: p.otpType, contact: p.contact }),
  parentOrganizationMaySubmit: true,
  // Writes are single statements committed at once; the message goes out with no lock held.
  execution: 'pure',
  execute: (ctx, p) => initOtp(ctx, p),
});

export const verifyOtpOp = defineActivity<VerifyOtpParams, unknown>({
  path: 'verify_otp',
  type: 'ACTIVITY_TYPE_VERIFY_OTP_V2',
  // @turnkey/core sends ACTIVITY_TYPE_VERIFY_OTP with the V2 body (encryptedOtpBundle): both shapes pass.
  aliases: [{ type: 'ACTIVITY_TYPE_VERIFY_OTP', parameters: ['v1VerifyOtpIntent', 'v1VerifyOtpIntentV2'] }],
  result: 'verifyOtpResult',
  policy: { resource: 'OTP', action: 'VERIFY' },
  parentOrganizationMaySubmit: true,
  secretFields: ['otpCode', 'encryptedOtpBundle'],
  // The token logs its contact in: the submitter reads it in the submit response only.
  resultSecretFields: ['verificationToken'],
  // A wrong code must stay counted although the activity fails: the attempt is its own commit.
  execution: 'pure',
  execute: (ctx, p) => verifyOtp(ctx, p),
});

export const otpLoginOp = defineActivity<OtpLoginParams, unknown>({
  path: 'otp_login',
  type: 'ACTIVITY_TYPE_OTP_LOGIN_V2',
  aliases: ['ACTIVITY_TYPE_OTP_LOGIN'],
  result: 'otpLoginResult',
  policy: { resource: 'AUTH', action: 'CREATE' },
  policyParams: (p) => ({ session_profile_id: p.sessionProfileId ?? '' }),
  parentOrganizationMaySubmit: true,
  secretFields: ['verificationToken', 'clientSignature.signature'],
  execute: (ctx, p) => otpLogin(ctx, p),
});

export const initOtpAuthOp = defineActivity<InitOtpParams, unknown>({
  path: 'init_otp_auth',
  type: 'ACTIVITY_TYPE_INIT_OTP_AUTH_V3',
  aliases: [
    { type: 'ACTIVITY_TYPE_INIT_OTP_AUTH_V2', result: 'initOtpAuthResult' },
    { type: 'ACTIVITY_TYPE_INIT_OTP_AUTH', result: 'initOtpAuthResult' },
  ],
  result: 'initOtpAuthResultV2',
  // AUTH/CREATE, as docs/reference/policies.md "Keywords" lists INIT_OTP_AUTH_V3 (init_otp is OTP/CREATE).
  policy: { resource: 'AUTH', action: 'CREATE' },
  policyParams: (p) => ({ otp_type: p.otpType, contact: p.contact }),
  parentOrganizationMaySubmit: true,
  execution: 'pure',
  execute: async (ctx, p) => ({ otpId: (await initOtp(ctx, p, 'OTP_AUTH')).otpId }),
});

export const otpAuthOp = defineActivity<OtpAuthParams, unknown>({
  path: 'otp_auth',
  type: 'ACTIVITY_TYPE_OTP_AUTH',
  result: 'otpAuthResult',
  policy: { resource: 'AUTH', action: 'CREATE' },
  parentOrganizationMaySubmit: true,
  secretFields: ['otpCode'],
  // As verify_otp: the attempt must stay counted when the code is wrong.
  execution: 'pure',
  execute: (ctx, p) => otpAuth(ctx, p),
});
