// Message delivery to users (docs/design.md stack: nodemailer over SMTP): email
// through SMTP, SMS as a JSON POST {to, body} to a webhook, and, for each channel that has no
// transport configured, a development outbox: one JSON line per message appended to
// `<dataDir>/outbox.jsonl` (mode 0600) and a log line that names the recipient but never the text,
// since the text carries codes and credential bundles. Messages are plain text; nothing a user
// supplied is ever put into HTML.
//
// Custom senders (docs/reference/sessions.md "OTP", custom sender rules): a request may name
// `sendFromEmailAddress`, `sendFromEmailSenderName` (default "Notifications") and
// `replyToEmailAddress`. The reference service honours only pre-whitelisted domains; Sigil honours
// only the domains of SIGIL_EMAIL_ALLOWED_SENDER_DOMAINS. As there, a from-address that is absent,
// malformed or outside them is ignored together with the sender name and reply-to (the message goes
// out from SIGIL_EMAIL_FROM), and a reply-to outside them is ignored on its own.
//
// Email events (swagger v1EmailEvent): an email that names its
// organization and kind is reported to `onEmailEvent` step by step, the steps sharing the message's
// Message-ID: `Send` as the SMTP conversation starts, then `Delivery` with the server's answer when it
// took the message, or `Bounce` when it refused it (bounceType Permanent for a 5xx answer, Transient
// for a 4xx) or never answered (Undetermined, the connection error as the diagnostic). Sigil hands
// mail to one SMTP relay, so "Delivery" means that relay accepted it, as SES's event means its
// hand-over to the recipient's server. An email written to the development outbox has a Send event
// only. Events carry addresses and the server's answer, never the subject or text.
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';

/** A message to a user (src/delivery): plain text only; `to` is an email address or an E.164 number. */
export interface OutgoingMessage {
  channel: 'email' | 'sms';
  to: string;
  subject?: string;
  text: string;
  /**
   * Email only: the sender the request asked for (sendFromEmailAddress, sendFromEmailSenderName,
   * replyToEmailAddress). Delivery honours it only for domains the deployment allows.
   */
  sender?: { address?: string; name?: string; replyTo?: string };
  /**
   * Email only: the organization the message is sent for and what it is (OTP, EMAIL_AUTH,
   * EMAIL_RECOVERY, INVITATION). With both, delivery reports each step as an EmailEvent.
   */
  organizationId?: string;
  kind?: string;
}

/**
 * One step of an email's delivery (list_email_events; swagger v1EmailEvent): `Send` when the SMTP
 * conversation starts, then `Delivery` (the server took it) or `Bounce` (it refused, or no server
 * answered). Carries addresses and the server's answer, never the message's subject or text.
 */
export interface EmailEvent {
  organizationId: string;
  messageId: string;
  eventType: 'Send' | 'Delivery' | 'Bounce';
  kind: string;
  from: string;
  to: string;
  at: number;
  details: Record<string, string>;
}

/** Sends messages to users; resolves once the message is handed over, rejects when it could not be. */
export interface Delivery {
  send(message: OutgoingMessage): Promise<void>;
}

/** How long an SMTP conversation or an SMS webhook call may take before the send fails. */
const SEND_TIMEOUT_MS = 15_000;

export class DeliveryError extends Error {
  constructor(readonly channel: OutgoingMessage['channel'], message: string) {
    super(message);
    this.name = 'DeliveryError';
  }
}

/** Email addresses as a sender or reply-to may name them: one plain local part and a domain. */
const EMAIL = /^[A-Za-z0-9.!#$%&'*+/=^_`{|}~-]{1,64}@([A-Za-z0-9-]{1,63}(\.[A-Za-z0-9-]{1,63})+)$/;
export const DEFAULT_SENDER_NAME = 'Notifications';
const MAX_SENDER_NAME = 64;

/** `address` when it is well formed and its domain is one the deployment allows; else undefined. */
function allowedAddress(address: string | undefined, allowedDomains: readonly string[]): string | undefined {
  if (address === undefined || address.length > 254) return undefined;
  const m = EMAIL.exec(address);
  if (!m || !allowedDomains.includes(m[1].toLowerCase())) return undefined;
  return address;
}

/**
 * The From and Reply-To of an email: the requested sender when the deployment allows its domain,
 * else the deployment's own from-address and no reply-to. Names are one line of plain text.
 */
export function senderHeaders(
  sender: OutgoingMessage['sender'],
  allowedDomains: readonly string[],
  defaultFrom: string,
): { from: string | { name: string; address: string }; replyTo?: string } {
  const address = allowedAddress(sender?.address, allowedDomains);
  if (address === undefined) return { from: defaultFrom };
  const name = (sender?.name ?? '').replace(/[\u0000-\u001f\u007f]+/g, ' ').trim().slice(0, MAX_SENDER_NAME) || DEFAULT_SENDER_NAME;
  const replyTo = allowedAddress(sender?.replyTo, allowedDomains);
  return { from: { name, address }, ...(replyTo !== undefined ? { replyTo } : {}) };
}

/** The bare address of a From header value ("Name <a@b>" or "a@b"). */
function addressOf(from: string | { address: string }): string {
  if (typeof from !== 'string') return from.address;
  const m = /<([^<>]+)>\s*$/.exec(from);
  return (m ? m[1] : from).trim();
}

/** A failed SMTP send as a Bounce event's details: the server's answer, or why there was none. */
function bounceDetails(err: unknown): Record<string, string> {
  const e = err as { responseCode?: number; response?: string; code?: string; message?: string };
  const code = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  if (code === undefined) {
    return { bounceType: 'Undetermined', bounceSubType: 'General', diagnosticCode: String(e.code ?? e.message ?? 'no answer from the SMTP server').slice(0, 500) };
  }
  return {
    bounceType: code >= 500 ? 'Permanent' : 'Transient',
    bounceSubType: 'General',
    diagnosticCode: String(e.response ?? code).slice(0, 500),
  };
}

export function makeDelivery(
  config: Pick<Config, 'smtp' | 'emailFrom' | 'smsWebhookUrl' | 'dataDir'> & Partial<Pick<Config, 'emailAllowedSenderDomains'>>,
  logger: Logger,
  onEmailEvent?: (event: EmailEvent) => Promise<void>,
): Delivery {
  const allowedDomains = config.emailAllowedSenderDomains ?? [];
  const outbox = new Outbox(join(config.dataDir, 'outbox.jsonl'), logger);
  const transporter = config.smtp
    ? nodemailer.createTransport({
        host: config.smtp.host,
        port: config.smtp.port,
        secure: config.smtp.secure,
        ...(config.smtp.user ? { auth: { user: config.smtp.user, pass: config.smtp.password ?? '' } } : {}),
        connectionTimeout: SEND_TIMEOUT_MS,
        greetingTimeout: SEND_TIMEOUT_MS,
        socketTimeout: SEND_TIMEOUT_MS,
      })
    : undefined;
  const smsUrl = config.smsWebhookUrl;

  return {
    async send(message: OutgoingMessage): Promise<void> {
      if (message.channel === 'email') {
        const { from, replyTo } = senderHeaders(message.sender, allowedDomains, config.emailFrom);
        const fromAddress = addressOf(from);
        const messageId = `<${randomUUID()}@${fromAddress.split('@')[1] || 'sigil'}>`;
        const report = async (eventType: EmailEvent['eventType'], details: Record<string, string> = {}) => {
          if (!onEmailEvent || message.organizationId === undefined || message.kind === undefined) return;
          const event = { organizationId: message.organizationId, messageId, eventType, kind: message.kind, from: fromAddress, to: message.to, at: Date.now(), details };
          // A lost event must not fail the message it describes: logged (never with the text) and dropped.
          await onEmailEvent(event).catch((err: Error) => logger.warn({ channel: 'email', to: message.to, eventType, err: err.message }, 'email event not recorded'));
        };
        await report('Send');
        if (!transporter) return outbox.write(message, { from, replyTo });
        const started = Date.now();
        let response: string;
        try {
          // `text` only: no `html` alternative exists, so no user field can become markup.
          ({ response } = await transporter.sendMail({ from, ...(replyTo ? { replyTo } : {}), to: message.to, subject: message.subject ?? '', text: message.text, messageId }));
        } catch (err) {
          logger.warn({ channel: 'email', to: message.to, err: (err as Error).message }, 'email delivery failed');
          await report('Bounce', bounceDetails(err));
          throw new DeliveryError('email', 'the email could not be delivered');
        }
        await report('Delivery', { deliverySmtpResponse: String(response ?? '').slice(0, 500), deliveryProcessingTimeMillis: String(Date.now() - started) });
        return;
      }
      if (!smsUrl) return outbox.write(message);
      let status: number;
      try {
        const res = await fetch(smsUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ to: message.to, body: message.text }),
          redirect: 'error',
          signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
        });
        status = res.status;
        await res.body?.cancel();
      } catch (err) {
        logger.warn({ channel: 'sms', to: message.to, err: (err as Error).message }, 'sms delivery failed');
        throw new DeliveryError('sms', 'the SMS could not be delivered');
      }
      if (status < 200 || status >= 300) {
        logger.warn({ channel: 'sms', to: message.to, status }, 'sms webhook refused the message');
        throw new DeliveryError('sms', 'the SMS could not be delivered');
      }
    },
  };
}

/** The development outbox: JSON lines in the data directory, readable only by the owner. */
class Outbox {
  constructor(
    private readonly path: string,
    private readonly logger: Logger,
  ) {}

  /** `headers`: the From and Reply-To an email would have gone out with. */
  write(message: OutgoingMessage, headers: Record<string, unknown> = {}): void {
    mkdirSync(join(this.path, '..'), { recursive: true });
    const line = JSON.stringify({ at: new Date().toISOString(), ...message, ...headers });
    appendFileSync(this.path, `${line}\n`, { mode: 0o600 });
    this.logger.info({ channel: message.channel, to: message.to, outbox: this.path }, 'message written to the development outbox (no transport configured)');
  }
}
