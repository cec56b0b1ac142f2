// One-time codes by email and SMS, their verification tokens and OTP login (docs/reference/sessions.md
// "OTP"; client signatures: docs/reference/sessions.md "Login activities"; the OTP encryption target
// bundle: docs/reference/bundles.md "The bundles"; swagger v1InitOtpIntentV3 → v1InitOtpResultV2, v1VerifyOtpIntentV2 /
// v1VerifyOtpIntent → v1VerifyOtpResult, v1OtpLoginIntentV2 / v1OtpLoginIntent → v1OtpLoginResult).
//
//  - init_otp makes a code with crypto.randomInt (Crockford base32 when alphanumeric, else digits),
//    keeps only HMAC-SHA256(per-code salt, code), seals the HPKE target key of the code's
//    otpEncryptionTargetBundle with the barrier, and sends the code as plain text. At most 3 codes
//    of a contact are active at once; with a userIdentifier, at most 3 codes per 3 minutes.
//  - verify_otp spends an attempt before it compares (in constant time), so 3 guesses is all a code
//    ever gets, concurrency included; the right code answers a verification token: a standard ES256
//    JWT (docs/reference/bundles.md "Other signed tokens", what @turnkey/crypto's
//    verifyOtpVerificationToken and any JOSE library verify) signed by the deployment signer with the
//    claims that section lists (`exp` a string of ms),
//    bound to the client public key from the encrypted bundle (or the plaintext alias's `publicKey`).
//    Tokens in the session-JWT form that earlier Sigil versions issued (double SHA-256) are still
//    read, so a rolling upgrade does not void the tokens of processes not yet upgraded (24 h at most).
//  - otp_login checks the token (signature, expiry, issuing organization), the client signature
//    over the login token-usage message by the token's key, spends the token once, finds the user
//    with the verified contact in the organization or its sub-organizations, and registers the
//    session key as stamp_login does.
//  - otp_auth (legacy) checks a code of init_otp_auth the same way and answers a new expiring API
//    key of the contact's user in a credential bundle (docs/reference/bundles.md "The bundles").
//
// init_otp and verify_otp run as 'pure' activities: their writes are single conditional statements
// that commit on their own, so a wrong code stays counted although the activity fails, and no
// database lock is held while a message is sent.
import { createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { makeOtpEncryptionTargetBundle, openOtpBundle } from '../../crypto/bundles.js';
import { generateP256KeyPair, isValidPublicKey, samePublicKey } from '../../crypto/p256.js';
import { signEs256Jwt } from '../../crypto/es256-jwt.js';
import { SigilError, invalid, notFound } from '../../errors/errors.js';
import type { OtpRow, UserRow } from '../../store/index.js';
import type { ActivityContext } from '../context.js';
import { magicLink, readEmailCustomization, requestedSender, type EmailCustomizationParams } from './email-customization.js';
import { markVerifiedByLogin, subOrganizationsTrustingContact } from './verified-contacts.js';
import { issueKeyBundle, openLoginSession, sessionPublicKey } from './sessions.js';
import { OTP_TYPES, checkClientSignature, readVerificationToken, tokenRefused, type ClientSignature, type OtpType, type VerificationClaims } from './verification-tokens.js';
import { openForOrganization, sealForOrganization } from '../keys/organization-keys.js';

export const OTP_MAX_ATTEMPTS = 3;
export const OTP_MAX_ACTIVE = 3;
export const OTP_RATE_WINDOW_MS = 3 * 60 * 1000;
export const OTP_RATE_MAX = 3;
export const OTP_DEFAULT_LENGTH = 9;
export const OTP_DEFAULT_SECONDS = 300;
export const OTP_MAX_SECONDS = 600;
export const TOKEN_DEFAULT_SECONDS = 3600;
export const TOKEN_MAX_SECONDS = 86400;

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const DIGITS = '0123456789';

/** init_otp → verify_otp, or the legacy init_otp_auth → otp_auth; a code serves only its own flow. */
export type OtpFlow = 'OTP' | 'OTP_AUTH';

export const MAX_OTPS_MESSAGE = 'Max number of OTPs have been initiated';
export const INVALID_OTP_MESSAGE = 'Invalid OTP code';

export interface InitOtpParams {
  otpType: string;
  contact: string;
  appName?: string;
  otpLength?: number;
  alphanumeric?: boolean;
  expirationSeconds?: string;
  userIdentifier?: string;
  smsCustomization?: { template?: string };
  emailCustomization?: EmailCustomizationParams;
  sendFromEmailAddress?: string;
  sendFromEmailSenderName?: string;
  replyToEmailAddress?: string;
}

export interface VerifyOtpParams {
  otpId: string;
  encryptedOtpBundle?: string;
  otpCode?: string;
  publicKey?: string;
  expirationSeconds?: string;
}

export interface OtpLoginParams {
  verificationToken: string;
  publicKey: string;
  clientSignature?: ClientSignature;
  expirationSeconds?: string;
  invalidateExisting?: boolean;
  sessionProfileId?: string;
}

// Emails as the JWT claim may carry them: printable ASCII without `?`, `>` or `~` (contract Traps 7).
const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=^_`{|}-]{1,64}@[A-Za-z0-9-]{1,63}(\.[A-Za-z0-9-]{1,63})+$/;
const E164 = /^\+[1-9][0-9]{6,14}$/;

function checkContact(type: OtpType, contact: string): string {
  if (type === 'OTP_TYPE_EMAIL') {
    if (contact.length > 254 || !EMAIL.test(contact)) throw new SigilError('INVALID_EMAIL', `invalid contact: ${JSON.stringify(contact)} is not an email address`);
    return contact;
  }
  const phone = contact.replace(/[\s().-]/g, '');
  if (!E164.test(phone)) throw invalid(`invalid contact: ${JSON.stringify(contact)} is not a phone number in E.164 form (+ and 7 to 15 digits)`);
  return phone;
}

function seconds(value: string | undefined, field: string, fallback: number, max: number): number {
  if (value === undefined || value === '') return fallback;
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > max) {
    throw invalid(`invalid ${field}: it must be a whole number of seconds from 1 to ${max}, got ${JSON.stringify(value)}`);
  }
  return n;
}

const hashCode = (salt: Buffer, code: string) => createHmac('sha256', salt).update(code, 'utf8').digest();
/** Codes are compared case-insensitively (Crockford base32 is read in either case). */
const normalizeCode = (code: string) => code.trim().toUpperCase();
const otpKeyAt = (id: string) => ({ table: 'otps', rowId: id, column: 'target_private_key' });

export function generateCode(length: number, alphanumeric: boolean): string {
  const alphabet = alphanumeric ? CROCKFORD : DIGITS;
  let code = '';
  for (let i = 0; i < length; i++) code += alphabet[randomInt(alphabet.length)];
  return code;
}

function messageFor(type: OtpType, appName: string, code: string, ttlSeconds: number, smsTemplate: string | undefined, magicLinkTemplate?: string) {
  const minutes = Math.max(1, Math.round(ttlSeconds / 60));
  const who = appName === '' ? 'Your' : `Your ${appName}`;
  if (type === 'OTP_TYPE_SMS') {
    const text = smsTemplate !== undefined ? smsTemplate.split('{{.OtpCode}}').join(code) : `${who} verification code is ${code}. It expires in ${minutes} min.`;
    return { channel: 'sms' as const, text };
  }
  return {
    channel: 'email' as const,
    subject: `${who} verification code`,
    text:
      `${who} verification code is:\n\n    ${code}\n\n` +
      (magicLinkTemplate !== undefined ? `Or open this link:\n\n    ${magicLink(magicLinkTemplate, code)}\n\n` : '') +
      `It expires in ${minutes} minute${minutes === 1 ? '' : 's'} and works once.\n` +
      `If you did not ask for this code, you can ignore this message.\n`,
  };
}

/** init_otp (V3): a new code for `contact`, sent to it; answers its id and encryption target bundle. */
export async function initOtp(
  ctx: ActivityContext,
  p: InitOtpParams,
  flow: OtpFlow = 'OTP',
): Promise<{ otpId: string; otpEncryptionTargetBundle: string }> {
  if (!(OTP_TYPES as readonly string[]).includes(p.otpType)) {
    throw invalid(`invalid otpType ${JSON.stringify(p.otpType)}: Sigil sends ${OTP_TYPES.join(' and ')}`);
  }
  const type = p.otpType as OtpType;
  const contact = checkContact(type, p.contact);
  const length = p.otpLength ?? OTP_DEFAULT_LENGTH;
  if (!Number.isInteger(length) || length < 6 || length > 9) throw invalid(`invalid otpLength ${length}: it must be from 6 to 9`);
  const alphanumeric = p.alphanumeric ?? true;
  const ttl = seconds(p.expirationSeconds, 'expirationSeconds', OTP_DEFAULT_SECONDS, OTP_MAX_SECONDS);
  // emailCustomization (V2: no appName of its own) and the sender apply to email codes.
  const { appName, magicLinkTemplate } = readEmailCustomization(p.emailCustomization, { appName: p.appName, appNameField: 'appName', requireAppName: false });
  const smsTemplate = p.smsCustomization?.template;
  if (smsTemplate !== undefined && (!smsTemplate.includes('{{.OtpCode}}') || smsTemplate.length > 300)) {
    throw invalid('invalid smsCustomization.template: it must contain {{.OtpCode}} and be at most 300 characters');
  }
  const delivery = ctx.services.delivery;
  if (!delivery) throw new SigilError('INTERNAL', 'this Sigil process cannot send messages');
  const orgId = ctx.organization.id;
  const userIdentifier = p.userIdentifier ?? '';

  const tooMany = () => new SigilError('RATE_LIMIT_EXCEEDED', MAX_OTPS_MESSAGE);
  if ((await ctx.repos.otps.countActive(orgId, contact, ctx.now, OTP_MAX_ATTEMPTS)) >= OTP_MAX_ACTIVE) throw tooMany();
  if (userIdentifier !== '' && (await ctx.repos.otps.countSince(orgId, userIdentifier, ctx.now - OTP_RATE_WINDOW_MS)) >= OTP_RATE_MAX) {
    throw new SigilError('RATE_LIMIT_EXCEEDED', `Too many requests: at most ${OTP_RATE_MAX} codes per ${OTP_RATE_WINDOW_MS / 60000} minutes for this userIdentifier`);
  }

  const id = ctx.newId();
  const code = generateCode(length, alphanumeric);
  const salt = randomBytes(16);
  const pair = generateP256KeyPair();
  let bundle: string;
  let sealedKey: string;
  try {
    sealedKey = await sealForOrganization(ctx.services.barrier, ctx.repos, orgId, ctx.now, pair.privateKey, otpKeyAt(id));
    bundle = makeOtpEncryptionTargetBundle({ targetPublicKey: pair.publicKey, signerPrivateKey: ctx.services.signer });
  } finally {
    pair.privateKey.fill(0);
  }
  const row: OtpRow = {
    id,
    organization_id: orgId,
    flow,
    otp_type: type,
    contact,
    user_identifier: userIdentifier,
    code_hash: hashCode(salt, normalizeCode(code)).toString('hex'),
    code_salt: salt.toString('hex'),
    target_private_key: sealedKey,
    attempts: 0,
    expires_at: ctx.now + ttl * 1000,
    used_at: null,
    verification_token_id: null,
    token_expires_at: null,
    token_used_at: null,
    token_signup_used_at: null,
    created_at: ctx.now,
  };
  await ctx.repos.otps.insert(row);
  // Concurrent requests may both have passed the count: whoever finds too many withdraws its code.
  if ((await ctx.repos.otps.countActive(orgId, contact, ctx.now, OTP_MAX_ATTEMPTS)) > OTP_MAX_ACTIVE) {
    await ctx.repos.otps.delete(id);
    throw tooMany();
  }
  try {
    const message = messageFor(type, appName, code, ttl, smsTemplate, magicLinkTemplate);
    await delivery.send({ to: contact, ...message, ...(message.channel === 'email' ? { sender: requestedSender(p), organizationId: orgId, kind: 'OTP' } : {}) });
  } catch {
    await ctx.repos.otps.delete(id);
    throw new SigilError('INTERNAL', `the code could not be delivered to ${contact}: try again later`, { http: 502, grpc: 14 });
  }
  return { otpId: id, otpEncryptionTargetBundle: bundle };
}

function unusable(row: OtpRow, now: number): SigilError | undefined {
  if (row.used_at !== null) return invalid('OTP has already been used: request a new code');
  if (row.expires_at <= now) return invalid('OTP expired: request a new code');
  if (row.attempts >= OTP_MAX_ATTEMPTS) return invalid(`OTP locked after ${OTP_MAX_ATTEMPTS} wrong attempts: request a new code`);
  return undefined;
}

/** The code `otpId` of the organization, for `flow`, while it can still be verified. */
async function liveOtp(ctx: ActivityContext, otpId: string, flow: OtpFlow): Promise<OtpRow> {
  const row = await ctx.repos.otps.get(ctx.organization.id, otpId);
  if (!row || row.flow !== flow) throw notFound(`OTP ${JSON.stringify(otpId)} not found in organization ${ctx.organization.id}`);
  const before = unusable(row, ctx.now);
  if (before) throw before;
  return row;
}

/**
 * Spends an attempt, then compares in constant time. The attempt is its own commit (the activity is
 * pure), so a wrong guess stays counted whatever follows.
 */
async function checkCode(ctx: ActivityContext, row: OtpRow, code: string): Promise<void> {
  if (!(await ctx.repos.otps.takeAttempt(row.id, ctx.now, OTP_MAX_ATTEMPTS))) {
    const now = await ctx.repos.otps.get(row.organization_id, row.id);
    throw (now && unusable(now, ctx.now)) ?? invalid('OTP can no longer be verified: request a new code');
  }
  const expected = Buffer.from(row.code_hash, 'hex');
  const given = hashCode(Buffer.from(row.code_salt, 'hex'), normalizeCode(code));
  if (!timingSafeEqual(expected, given)) {
    const left = OTP_MAX_ATTEMPTS - row.attempts - 1;
    throw new SigilError('REQUEST_INVALID', INVALID_OTP_MESSAGE, {
      details: [{ '@type': 'type.googleapis.com/sigil.v1.OtpAttempts', attemptsRemaining: Math.max(0, left) }],
    });
  }
}

/** verify_otp (V2 with encryptedOtpBundle; the plaintext otpCode alias): a verification token. */
export async function verifyOtp(ctx: ActivityContext, p: VerifyOtpParams): Promise<{ verificationToken: string }> {
  const ttl = seconds(p.expirationSeconds, 'expirationSeconds', TOKEN_DEFAULT_SECONDS, TOKEN_MAX_SECONDS);
  const row = await liveOtp(ctx, p.otpId, 'OTP');

  let code: string;
  let publicKey: string | undefined;
  if (p.encryptedOtpBundle !== undefined && p.encryptedOtpBundle !== '') {
    const key = await openForOrganization(ctx.services.barrier, ctx.repos, row.organization_id, row.target_private_key, otpKeyAt(row.id));
    try {
      ({ otpCode: code, publicKey } = openOtpBundle({ encryptedOtpBundle: p.encryptedOtpBundle, targetPrivateKey: key }));
    } catch (err) {
      throw invalid(`invalid encryptedOtpBundle: ${err instanceof Error ? err.message : 'it does not open'}; encrypt the code to this OTP's otpEncryptionTargetBundle`);
    } finally {
      key.fill(0);
    }
  } else if (typeof p.otpCode === 'string' && p.otpCode !== '') {
    code = p.otpCode;
    publicKey = p.publicKey || undefined;
  } else {
    throw invalid('verify_otp needs encryptedOtpBundle (or otpCode)');
  }
  if (publicKey !== undefined) {
    const hex = publicKey.toLowerCase().replace(/^0x/, '');
    if (!/^[0-9a-f]+$/.test(hex) || (hex.length !== 66 && hex.length !== 130) || !isValidPublicKey(hex)) {
      throw invalid('invalid publicKey: it must be a P-256 public key in hex');
    }
    publicKey = hex;
  }

  await checkCode(ctx, row, code);

  const tokenId = ctx.newId();
  const expiresAt = ctx.now + ttl * 1000;
  if (!(await ctx.repos.otps.markVerified(row.id, ctx.now, tokenId, expiresAt))) throw invalid('OTP has already been used: request a new code');
  // Claim order and types as the reference token (docs/reference/sessions.md "OTP"): exp is a string of ms.
  const claims: Record<string, string> = {
    exp: String(expiresAt),
    id: tokenId,
    organization_id: ctx.organization.id,
    verification_type: row.otp_type,
    contact: row.contact,
  };
  if (publicKey !== undefined) claims.public_key = publicKey;
  return { verificationToken: signEs256Jwt(claims, ctx.services.signer, { atobSafe: true }) };
}

/** The login usage (otp_login): by the token's key, naming the session key or the token's own. */
function checkLoginSignature(sig: ClientSignature, claims: VerificationClaims, sessionKey: string): void {
  checkClientSignature(sig, claims, '{"login":{"publicKey":…},"tokenId":…,"type":"USAGE_TYPE_LOGIN"}', (usage) => {
    if (usage.type !== 'USAGE_TYPE_LOGIN' || usage.tokenId !== claims.id || typeof usage.login?.publicKey !== 'string') {
      throw invalid('invalid clientSignature: message must be the login usage of this verification token (type USAGE_TYPE_LOGIN, its tokenId)');
    }
    if (!samePublicKey(usage.login.publicKey, sessionKey) && !samePublicKey(usage.login.publicKey, claims.public_key!)) {
      throw invalid('invalid clientSignature: message login.publicKey is neither the session public key nor the token public key');
    }
  });
}

/**
 * The one user a login by `claims`' contact is for: in the organization, else in one of its
 * sub-organizations. `party` is the organization whose login flow this is (whose code proved the
 * contact, or whose credential submitted the login). A contact matches a login of another party only
 * when it is verified or vouched for by the parent (it set it at create_sub_organization): anyone who
 * owns a sub-organization can write any email into it, and must not receive that person's logins
 * through the parent, nor make them ambiguous (docs/compatibility.md "Email and SMS logins through the parent").
 */
export async function userWithContact(
  ctx: Pick<ActivityContext, 'repos' | 'organization'>,
  claims: Pick<VerificationClaims, 'verification_type' | 'contact'>,
  party: string,
): Promise<UserRow> {
  const kind = claims.verification_type === 'OTP_TYPE_EMAIL' ? 'email' : 'phone';
  const label = kind === 'email' ? 'email' : 'phone number';
  let users = await ctx.repos.users.findByContact([ctx.organization.id], kind, claims.contact, { trusted: party !== ctx.organization.id });
  if (users.length === 0 && !ctx.organization.parent_organization_id) {
    const subs = await subOrganizationsTrustingContact(ctx.repos, ctx.organization.id, kind === 'email' ? 'EMAIL' : 'PHONE_NUMBER', claims.contact);
    users = await ctx.repos.users.findByContact(subs, kind, claims.contact, { trusted: true });
  }
  if (users.length === 0) throw notFound(`no user with ${label} ${claims.contact} in organization ${ctx.organization.id} or its sub-organizations`);
  if (users.length > 1) {
    throw invalid(`more than one user has ${label} ${claims.contact}: submit the request to the sub-organization of the user`);
  }
  return users[0];
}

/**
 * The party of a login in `ctx.organization` by a code or token of `issuer`: the issuer when it is
 * another organization (the parent), else the organization whose credential submitted it.
 */
export const loginParty = (ctx: Pick<ActivityContext, 'organization' | 'caller'>, issuer: string) =>
  issuer !== ctx.organization.id ? issuer : ctx.caller.organizationId;

const LEGACY_OTP_LOGIN = 'ACTIVITY_TYPE_OTP_LOGIN';

/** otp_login (V2; the legacy type without clientSignature for tokens bound to no key). */
export async function otpLogin(ctx: ActivityContext, p: OtpLoginParams): Promise<{ session: string }> {
  const claims = await readVerificationToken(p.verificationToken, ctx.services.signer.publicKey, ctx.now);
  const org = ctx.organization;
  // Parent-issued tokens serve the parent's sub-organizations; a sub-organization's only itself.
  if (claims.organization_id !== org.id && claims.organization_id !== org.parent_organization_id) {
    throw tokenRefused(`it was issued for organization ${claims.organization_id}, which is neither this organization nor its parent`);
  }
  const sessionKey = sessionPublicKey(p.publicKey, 'publicKey');
  // OTP_LOGIN_V2 is the flow of key-bound tokens (its clientSignature is by the token's key); only
  // the legacy type takes a token bound to no key, as the legacy verify_otp could issue one.
  if (claims.public_key === undefined && ctx.activityType !== LEGACY_OTP_LOGIN) {
    throw tokenRefused(`it is bound to no public key, so it cannot log in with ${ctx.activityType}: verify the code with encryptedOtpBundle (VERIFY_OTP_V2) or with a publicKey`);
  }
  if (claims.public_key !== undefined) {
    if (!p.clientSignature) throw invalid('clientSignature is required: the verification token is bound to a public key');
    checkLoginSignature(p.clientSignature, claims, sessionKey);
  }
  const row = await ctx.repos.otps.findByToken(claims.id);
  if (!row) throw tokenRefused('it is unknown to this deployment');
  const user = await userWithContact(ctx, claims, loginParty(ctx, claims.organization_id));
  if (!(await ctx.repos.otps.spendToken(claims.id, ctx.now, 'login'))) throw tokenRefused('it has already been used; verify a new code');
  await markVerifiedByLogin(ctx, user, claims);

  return openLoginSession(ctx, user, {
    publicKey: sessionKey,
    apiKeyName: `OTP Login Session - ${new Date(ctx.now).toISOString()}`,
    expirationSeconds: p.expirationSeconds,
    invalidateExisting: p.invalidateExisting,
    sessionProfileId: p.sessionProfileId,
  });
}

export interface OtpAuthParams {
  otpId: string;
  otpCode: string;
  targetPublicKey: string;
  apiKeyName?: string;
  expirationSeconds?: string;
  invalidateExisting?: boolean;
}

export const OTP_AUTH_CREDENTIAL = 'CREDENTIAL_TYPE_OTP_AUTH_KEY_P256';

/**
 * otp_auth (legacy, docs/reference/sessions.md "Login activities"; swagger v1OtpAuthIntent → v1OtpAuthResult): the right
 * code of an init_otp_auth makes a new expiring API key for the user with that contact (default
 * name `OTP Auth - <timestamp>`, 15 minutes) and answers its private key sealed to
 * `targetPublicKey` in a credential bundle (docs/reference/bundles.md "The bundles").
 */
export async function otpAuth(ctx: ActivityContext, p: OtpAuthParams): Promise<{ userId: string; apiKeyId: string; credentialBundle: string }> {
  const target = sessionPublicKey(p.targetPublicKey, 'targetPublicKey');
  const row = await liveOtp(ctx, p.otpId, 'OTP_AUTH');
  const user = await userWithContact(ctx, { verification_type: row.otp_type as OtpType, contact: row.contact }, loginParty(ctx, row.organization_id));
  await checkCode(ctx, row, p.otpCode);
  if (!(await ctx.repos.otps.markVerified(row.id, ctx.now, ctx.newId(), ctx.now))) throw invalid('OTP has already been used: request a new code');
  const issued = await issueKeyBundle(ctx, user, target, {
    apiKeyName: p.apiKeyName || `OTP Auth - ${new Date(ctx.now).toISOString()}`,
    expirationSeconds: p.expirationSeconds,
    credentialType: OTP_AUTH_CREDENTIAL,
    invalidateExisting: p.invalidateExisting,
  });
  return { userId: user.id, ...issued };
}
