// Email auth and email recovery, the legacy credential-bundle flows (docs/reference/sessions.md
// "Login activities", "Recovery (legacy)"; docs/reference/bundles.md credential
// bundle; swagger v1EmailAuthIntentV3 → v1EmailAuthResult, v1InitUserEmailRecoveryIntentV2 →
// v1InitUserEmailRecoveryResult, v1RecoverUserIntent → v1RecoverUserResult).
//
//  - email_auth finds the one user with that email in the organization, or, when a parent submits
//    to itself, in its sub-organizations (as otp_login does), makes a new expiring P-256 API key for
//    that user (credential type CREDENTIAL_TYPE_EMAIL_AUTH_KEY_P256, default name
//    `Email Auth - <timestamp>`, 15 minutes) and emails its private key sealed to targetPublicKey in
//    a credential bundle, plus a magic link when a template is given. The result names only the user
//    and the key: the bundle travels by email alone. invalidateExisting removes the user's earlier
//    email-auth keys.
//  - init_user_email_recovery does the same with a recovery key (CREDENTIAL_TYPE_RECOVER_USER_KEY_P256);
//    a new one replaces the user's earlier recovery keys, so only the newest emailed credential works.
//  - recover_user registers the passkey from its attestation (the create_authenticators path) and
//    deletes the user's recovery keys: recovery is spent.
//
// Ordering: email_auth and init_user_email_recovery run as 'pure' activities and send the email
// before they write the key, so no lock is held during SMTP and a message that cannot be sent
// leaves nothing behind; everything a refusal can be about is checked before the email goes out. A
// write that fails after sending leaves a bundle whose key was never registered, which opens no door.
import { makeCredentialBundle } from '../../crypto/bundles.js';
import { generateP256KeyPair } from '../../crypto/p256.js';
import { SigilError } from '../../errors/errors.js';
import type { UserRow } from '../../store/index.js';
import { parseExpirationSeconds } from './api-keys.js';
import { registerAuthenticators, type AuthenticatorParams } from './authenticators.js';
import { checkName } from './contacts.js';
import type { OutgoingMessage } from '../../delivery/delivery.js';
import type { ActivityContext, Caller } from '../context.js';
import {
  magicLink,
  readEmailCustomization,
  requestedSender,
  type EmailCustomization,
  type EmailCustomizationParams,
  type EmailSenderParams,
} from './email-customization.js';
import { userWithContact } from './otp.js';
import { DEFAULT_SESSION_SECONDS, addSessionKey, sessionPublicKey } from './sessions.js';
import { requireUser } from '../lookup.js';

export const EMAIL_AUTH_CREDENTIAL = 'CREDENTIAL_TYPE_EMAIL_AUTH_KEY_P256';
export const RECOVER_USER_CREDENTIAL = 'CREDENTIAL_TYPE_RECOVER_USER_KEY_P256';

export interface EmailAuthParams extends EmailSenderParams {
  email: string;
  targetPublicKey: string;
  apiKeyName?: string;
  expirationSeconds?: string;
  /** Required from V3 on; V1/V2 bodies may omit it, but appName is required all the same. */
  emailCustomization?: EmailCustomizationParams;
  invalidateExisting?: boolean;
}

export interface InitUserEmailRecoveryParams extends EmailSenderParams {
  email: string;
  targetPublicKey: string;
  expirationSeconds?: string;
  emailCustomization?: EmailCustomizationParams;
}

export interface RecoverUserParams {
  authenticator: AuthenticatorParams;
  userId: string;
}

// The shape of an address worth looking up (the reference's INVALID_EMAIL otherwise).
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

function checkEmail(email: string): string {
  if (email.length > 254 || !EMAIL.test(email)) throw new SigilError('INVALID_EMAIL', `invalid email address: ${JSON.stringify(email)}`);
  return email;
}

const stampTime = (ms: number) => new Date(ms).toISOString();

/** The checked, common part of both requests: who, to which key, for how long, with what wording. */
interface Prepared {
  user: UserRow;
  target: string;
  seconds: number;
  custom: EmailCustomization;
}

async function prepare(
  ctx: ActivityContext,
  p: { email: string; targetPublicKey: string; expirationSeconds?: string; emailCustomization?: EmailCustomizationParams },
): Promise<Prepared> {
  const email = checkEmail(p.email);
  const target = sessionPublicKey(p.targetPublicKey, 'targetPublicKey');
  const seconds = parseExpirationSeconds(p.expirationSeconds) ?? DEFAULT_SESSION_SECONDS;
  const custom = readEmailCustomization(p.emailCustomization, {
    appName: p.emailCustomization?.appName,
    appNameField: 'emailCustomization.appName',
    requireAppName: true,
  });
  if (!ctx.services.delivery) throw new SigilError('INTERNAL', 'this Sigil process cannot send messages');
  const user = await userWithContact(ctx, { verification_type: 'OTP_TYPE_EMAIL', contact: email }, ctx.caller.organizationId);
  return { user, target, seconds, custom };
}

export function minutesText(seconds: number): string {
  if (seconds < 120) return `${seconds} seconds`;
  const minutes = Math.round(seconds / 60);
  return minutes < 120 ? `${minutes} minutes` : `${Math.round(minutes / 60)} hours`;
}

/** The plain-text email carrying a credential bundle. */
function bundleMessage(kind: 'auth' | 'recovery', custom: EmailCustomization, bundle: string, seconds: number): Pick<OutgoingMessage, 'subject' | 'text'> {
  const app = custom.appName;
  const link = custom.magicLinkTemplate !== undefined ? magicLink(custom.magicLinkTemplate, bundle) : undefined;
  const purpose = kind === 'auth' ? `sign in to ${app}` : `recover your ${app} account`;
  return {
    subject: kind === 'auth' ? `Sign in to ${app}` : `Recover your ${app} account`,
    text:
      `Use this credential to ${purpose}:\n\n${bundle}\n\n` +
      (link !== undefined ? `Or open this link:\n\n${link}\n\n` : '') +
      `It expires in ${minutesText(seconds)}.\n` +
      `If you did not ask for this, you can ignore this message.\n`,
  };
}

/** Sends the bundle of a new key to the user, then registers the key; answers the key's row. */
async function sendAndRegister(
  ctx: ActivityContext,
  kind: 'auth' | 'recovery',
  prepared: Prepared,
  p: EmailSenderParams & { email: string },
  key: { apiKeyName: string; credentialType: string; invalidateExisting: boolean },
) {
  const { user, target, seconds, custom } = prepared;
  const pair = generateP256KeyPair();
  try {
    const bundle = makeCredentialBundle({ plaintext: pair.privateKey, targetPublicKey: target });
    try {
      await ctx.services.delivery!.send({
        channel: 'email',
        to: p.email,
        ...bundleMessage(kind, custom, bundle, seconds),
        sender: requestedSender(p),
        organizationId: ctx.organization.id,
        kind: kind === 'auth' ? 'EMAIL_AUTH' : 'EMAIL_RECOVERY',
      });
    } catch {
      throw new SigilError('INTERNAL', `the email could not be delivered to ${p.email}: try again later`, { http: 502, grpc: 14 });
    }
    return await addSessionKey(
      ctx,
      {
        userId: user.id,
        publicKey: Buffer.from(pair.publicKey).toString('hex'),
        apiKeyName: key.apiKeyName,
        expirationSeconds: String(seconds),
        credentialType: key.credentialType,
        invalidateExisting: key.invalidateExisting,
      },
      user.organization_id,
    );
  } finally {
    pair.privateKey.fill(0);
  }
}

/** email_auth (V3; V1/V2 bodies alike): emails a new expiring key of the user with that email. */
export async function emailAuth(ctx: ActivityContext, p: EmailAuthParams): Promise<{ userId: string; apiKeyId: string }> {
  const apiKeyName = p.apiKeyName || `Email Auth - ${stampTime(ctx.now)}`;
  checkName(apiKeyName, 'apiKeyName');
  const prepared = await prepare(ctx, p);
  const row = await sendAndRegister(ctx, 'auth', prepared, p, {
    apiKeyName,
    credentialType: EMAIL_AUTH_CREDENTIAL,
    invalidateExisting: p.invalidateExisting === true,
  });
  return { userId: prepared.user.id, apiKeyId: row.id };
}

/** init_user_email_recovery (V2; V1 alike): emails a new recovery key of the user with that email. */
export async function initUserEmailRecovery(ctx: ActivityContext, p: InitUserEmailRecoveryParams): Promise<{ userId: string }> {
  const prepared = await prepare(ctx, p);
  await sendAndRegister(ctx, 'recovery', prepared, p, {
    apiKeyName: `Email Recovery - ${stampTime(ctx.now)}`,
    credentialType: RECOVER_USER_CREDENTIAL,
    invalidateExisting: true,
  });
  return { userId: prepared.user.id };
}

/** The user recovering itself with the recovery key it was emailed: recover_user needs no policy then. */
export function isOwnRecovery(caller: Caller, p: RecoverUserParams): boolean {
  return caller.user.id === p.userId && caller.credential.kind === 'api_key' && caller.credential.apiKey.credential_type === RECOVER_USER_CREDENTIAL;
}

/** recover_user: registers the passkey for the user and deletes the user's recovery keys. */
export async function recoverUser(ctx: ActivityContext, p: RecoverUserParams): Promise<{ authenticatorId: string[] }> {
  const orgId = ctx.organization.id;
  await requireUser(ctx.repos, orgId, p.userId);
  const authenticatorId = await registerAuthenticators(ctx, orgId, p.userId, [p.authenticator], 'authenticator');
  const keys = await ctx.repos.apiKeys.listForUsers(orgId, [p.userId]);
  const recovery = keys.filter((k) => k.credential_type === RECOVER_USER_CREDENTIAL).map((k) => k.id);
  await ctx.repos.apiKeys.delete(orgId, p.userId, recovery);
  return { authenticatorId };
}
