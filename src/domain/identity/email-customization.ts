// Email customization and requested senders of the activities that email users: email_auth,
// init_user_email_recovery and init_otp (docs/reference/sessions.md "Login activities",
// "OTP"; swagger v1EmailAuthCustomizationParams,
// v1EmailCustomizationParams, v1EmailCustomizationParamsV2).
//
// Sigil's email is plain text written from its own wording, so each field is checked and used
// this way:
//  - appName: one line of plain text (control characters become spaces), at most 100 characters.
//  - logoUrl: must be an https URL. A plain-text message shows no image, so it is checked and not
//    used; it never reaches HTML.
//  - magicLinkTemplate: an http(s) URL with exactly one `%s` (the reference's `invalid magic link
//    template` otherwise); the credential goes there URL-encoded and the link is added to the text.
//  - templateVariables: a JSON object of strings, numbers or booleans (the reference's `failed to
//    unmarshal template variables` otherwise). With no template to fill, they are checked only.
//  - templateId: refused when not empty. Sigil keeps no email templates, and quietly sending other
//    wording than the caller designed would be worse than a clear error; the reference likewise
//    refuses a template it cannot load (`failed to get email template contents`).
// The sender fields go to delivery as they are: it honours them only for the domains the
// deployment allows (src/delivery/delivery.ts).
import { invalid } from '../../errors/errors.js';
import type { OutgoingMessage } from '../../delivery/delivery.js';

export interface EmailCustomizationParams {
  appName?: string;
  logoUrl?: string;
  magicLinkTemplate?: string;
  templateVariables?: string;
  templateId?: string;
}

export interface EmailSenderParams {
  sendFromEmailAddress?: string;
  sendFromEmailSenderName?: string;
  replyToEmailAddress?: string;
}

export interface EmailCustomization {
  appName: string;
  /** Checked: an http(s) URL with exactly one `%s`. */
  magicLinkTemplate?: string;
}

const MAX_APP_NAME = 100;
const MAX_URL = 2048;
const MAX_TEMPLATE_VARIABLES = 8192;

/** appName as it may appear in a message: one line of plain text. */
export function plainAppName(value: string | undefined, field = 'appName'): string {
  const name = (value ?? '').replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  if (name.length > MAX_APP_NAME) throw invalid(`invalid ${field}: at most ${MAX_APP_NAME} characters`);
  return name;
}

function checkMagicLinkTemplate(template: string, field: string): string {
  const bad = (why: string) => invalid(`invalid magic link template: ${field} ${why}`);
  if (template.length > MAX_URL) throw bad(`must be at most ${MAX_URL} characters`);
  if (template.split('%s').length !== 2) throw bad('must contain exactly one %s, where the credential goes (e.g. https://app.example/auth?bundle=%s)');
  if (/[\s\u0000-\u001f\u007f]/.test(template)) throw bad('must not contain spaces or control characters');
  let url: URL;
  try {
    url = new URL(template.replace('%s', 'x'));
  } catch {
    throw bad('is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw bad('must be an http or https URL');
  if (url.username !== '' || url.password !== '') throw bad('must not carry a user name or password');
  return template;
}

function checkLogoUrl(value: string, field: string): void {
  let url: URL | undefined;
  try {
    url = value.length <= MAX_URL ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || url.protocol !== 'https:') throw invalid(`invalid ${field}: it must be an https URL of at most ${MAX_URL} characters`);
}

function checkTemplateVariables(value: string, field: string): void {
  const bad = (why: string) => invalid(`failed to unmarshal template variables: ${field} ${why}`);
  if (value.length > MAX_TEMPLATE_VARIABLES) throw bad(`must be at most ${MAX_TEMPLATE_VARIABLES} characters`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw bad('must be a JSON object, e.g. {"username":"alice"}');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw bad('must be a JSON object, e.g. {"username":"alice"}');
  for (const [key, v] of Object.entries(parsed)) {
    if (!['string', 'number', 'boolean'].includes(typeof v)) throw bad(`must map names to strings, numbers or booleans; ${JSON.stringify(key)} does not`);
  }
}

/**
 * Checks an emailCustomization (`field` names it in errors) and answers what Sigil's messages use.
 * `appName` comes from the customization (email_auth, recovery) or the intent itself (init_otp).
 */
export function readEmailCustomization(
  c: EmailCustomizationParams | undefined,
  opts: { appName: string | undefined; appNameField: string; requireAppName: boolean; field?: string },
): EmailCustomization {
  const field = opts.field ?? 'emailCustomization';
  const appName = plainAppName(opts.appName, opts.appNameField);
  if (opts.requireAppName && appName === '') {
    throw invalid(`invalid ${opts.appNameField}: the name of your application is required; it appears in the email`);
  }
  if (c?.templateId) {
    throw invalid(`failed to get email template contents: ${field}.templateId is not supported, as Sigil keeps no email templates; omit it`);
  }
  if (c?.logoUrl) checkLogoUrl(c.logoUrl, `${field}.logoUrl`);
  if (c?.templateVariables) checkTemplateVariables(c.templateVariables, `${field}.templateVariables`);
  const magicLinkTemplate = c?.magicLinkTemplate ? checkMagicLinkTemplate(c.magicLinkTemplate, `${field}.magicLinkTemplate`) : undefined;
  return { appName, ...(magicLinkTemplate !== undefined ? { magicLinkTemplate } : {}) };
}

/** The magic link: the checked template with `value` URL-encoded in place of its `%s`. */
export function magicLink(template: string, value: string): string {
  // split/join, not String.replace, whose replacement string would interpret `$` patterns.
  return template.split('%s').join(encodeURIComponent(value));
}

/** The sender a request asked for, for delivery to honour or ignore. */
export function requestedSender(p: EmailSenderParams): OutgoingMessage['sender'] {
  return { address: p.sendFromEmailAddress || undefined, name: p.sendFromEmailSenderName || undefined, replyTo: p.replyToEmailAddress || undefined };
}
