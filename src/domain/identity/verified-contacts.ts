// Verified contacts: what an OTP verification token proves once it has been issued (docs/reference/policies.md
// docs/reference/sessions.md "OTP": tokens are "consumed by OTP_LOGIN_V2, UPDATE_USER_EMAIL/UPDATE_USER_PHONE_NUMBER
// (verify & update contact), and sub-org creation (marks contact verified)"; docs/reference/sessions.md "Login activities"
// for the signup client signature). A verified email or phone number is what list_verified_suborgs
// filters on.
//
// A token is spent as a whole by its first use (a login through otp_login or an attested stamp_login,
// a contact update, a signup), with one exception Turnkey's own client documents: @turnkey/core's
// signUpWithOtp signs up with a key-bound token and then logs in with the same token
// (loginWithOtp), so a key-bound token's signup leaves its login use, which only the holder of the
// token's key can spend (a clientSignature or an attested stamp by that key). A token bound to no
// key (the legacy verify_otp without publicKey) proves the contact to whoever holds it, so it is
// accepted only where the legacy flow takes it: the legacy OTP_LOGIN, contact updates, and
// create_sub_organization before V8 (docs/reference/organizations.md: "V8 accepts only enclave-issued (V2)
// verification tokens"), and its signup spends it whole.
import { invalid } from '../../errors/errors.js';
import type { Repositories, UserRow } from '../../store/index.js';
import type { ActivityContext } from '../context.js';
import { checkClientSignature, readVerificationToken, type ClientSignature } from './verification-tokens.js';

export type ContactKind = 'email' | 'phone';

type Claims = Awaited<ReturnType<typeof readVerificationToken>>;

const refused = (why: string) => invalid(`invalid verification token: ${why}`);

export const contactKindOf = (claims: Pick<Claims, 'verification_type'>): ContactKind =>
  claims.verification_type === 'OTP_TYPE_EMAIL' ? 'email' : 'phone';

const contactOf = (user: Pick<UserRow, 'user_email' | 'user_phone_number'>, kind: ContactKind) =>
  kind === 'email' ? user.user_email : user.user_phone_number;

/** Emails compare without regard to case; phone numbers are stored in E.164 already. */
export function sameContact(kind: ContactKind, a: string | null | undefined, b: string): boolean {
  if (!a) return false;
  return kind === 'email' ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/**
 * A token this deployment issued for `organizationId` itself or, when `orParent` is given, for that
 * parent (parent-issued tokens serve its sub-organizations; docs/reference/sessions.md).
 */
export async function acceptVerificationToken(
  ctx: Pick<ActivityContext, 'repos' | 'services' | 'now'>,
  token: string,
  organizationIds: (string | null | undefined)[],
): Promise<Claims> {
  const claims = await readVerificationToken(token, ctx.services.signer.publicKey, ctx.now);
  if (!organizationIds.includes(claims.organization_id)) {
    throw refused(`it was issued for organization ${claims.organization_id}, not for this one`);
  }
  if (!(await ctx.repos.otps.findByToken(claims.id))) throw refused('it is unknown to this deployment');
  return claims;
}

/** The signup usage signature (docs/reference/sessions.md "Login activities"): by the token's key, over {"signupV2":…,"tokenId",…,"type":"USAGE_TYPE_SIGNUP"}. */
export function checkSignupSignature(sig: ClientSignature, claims: Claims): void {
  checkClientSignature(sig, claims, '{"signupV2":…,"tokenId":…,"type":"USAGE_TYPE_SIGNUP"}', (usage) => {
    if (usage.type !== 'USAGE_TYPE_SIGNUP' || usage.tokenId !== claims.id) {
      throw invalid('invalid clientSignature: message must be the signup usage of this verification token (type USAGE_TYPE_SIGNUP, its tokenId)');
    }
  });
}

const CURRENT_SIGNUP = 'ACTIVITY_TYPE_CREATE_SUB_ORGANIZATION_V8';

/**
 * create_sub_organization with a verificationToken: the token (issued by the creating
 * organization) proves the contact of one of the new root users, whose contact becomes verified.
 * A key-bound token needs the clientSignature of its signup usage by that key ("only required if a
 * public key was provided during the verification step") and keeps its login use; a token bound to
 * no key is taken by the versions before V8 only, and is then spent whole.
 *
 * Checked before the new users are written (their rows are still being built, `users`): the proven
 * contact is marked on its user's row, and the returned write spends the token, refusing the
 * signup when another use spent it first.
 */
export async function proveContactAtSignup(
  ctx: ActivityContext,
  p: { verificationToken: string; clientSignature?: ClientSignature },
  users: UserRow[],
): Promise<(repos: Repositories) => Promise<void>> {
  const claims = await acceptVerificationToken(ctx, p.verificationToken, [ctx.organization.id]);
  const bound = claims.public_key !== undefined;
  if (bound) {
    if (!p.clientSignature) throw invalid('clientSignature is required: the verification token is bound to a public key, so its signup usage must be signed by that key');
    checkSignupSignature(p.clientSignature, claims);
  } else if (ctx.activityType === CURRENT_SIGNUP) {
    throw refused(`it is bound to no public key, and ${CURRENT_SIGNUP} takes only key-bound tokens: verify the code with encryptedOtpBundle (VERIFY_OTP_V2)`);
  }
  const kind = contactKindOf(claims);
  const user = users.find((u) => sameContact(kind, contactOf(u, kind), claims.contact));
  if (!user) {
    throw invalid(`invalid verification token: it verifies ${claims.contact}, which is not the ${kind === 'email' ? 'userEmail' : 'userPhoneNumber'} of any root user`);
  }
  if (kind === 'email') user.email_verified_at = ctx.now;
  else user.phone_number_verified_at = ctx.now;
  const now = ctx.now;
  return async (repos) => {
    if (!(await repos.otps.spendToken(claims.id, now, bound ? 'signup' : 'whole'))) throw refused('it has already been used; verify a new code');
  };
}

/**
 * A login with a token proves the contact it names: the user's contact is verified from now on. The
 * user is one userWithContact found for the login's party, so the contact was set by that party
 * or is already verified: a login never verifies a contact another party wrote.
 */
export async function markVerifiedByLogin(ctx: Pick<ActivityContext, 'repos' | 'now'>, user: UserRow, claims: Pick<Claims, 'verification_type' | 'contact'>): Promise<void> {
  const kind = contactKindOf(claims);
  if (sameContact(kind, contactOf(user, kind), claims.contact)) await ctx.repos.users.markContactVerified(user.organization_id, user.id, kind, ctx.now);
}

/**
 * update_user_email / update_user_phone_number with a verificationToken: the token must name the
 * new contact; it is spent whole. Answers whether the new contact is verified.
 */
export async function verifyContactUpdate(ctx: ActivityContext, kind: ContactKind, newContact: string, token: string | undefined): Promise<boolean> {
  if (token === undefined || token === '') return false;
  const claims = await acceptVerificationToken(ctx, token, [ctx.organization.id, ctx.organization.parent_organization_id]);
  if (contactKindOf(claims) !== kind || !sameContact(kind, newContact, claims.contact)) {
    throw refused(`it verifies ${claims.contact}, not ${newContact}`);
  }
  if (!(await ctx.repos.otps.spendToken(claims.id, ctx.now, 'whole'))) throw refused('it has already been used; verify a new code');
  return true;
}

/**
 * The sub-organizations of `parentId` (at most two) with a user whose contact is `value` and either
 * verified or vouched for by the parent, which set it at create_sub_organization: what a login
 * through the parent may land in (userWithContact), and so what the auth proxy's `account` answers.
 */
export function subOrganizationsTrustingContact(repos: Repositories, parentId: string, type: 'EMAIL' | 'PHONE_NUMBER', value: string): Promise<string[]> {
  return repos.organizations.children(parentId, { type, value, trusted: true }, { limit: 2 });
}
