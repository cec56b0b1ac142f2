// Message delivery to users (issue 7 "Delivery"; DESIGN.md stack: nodemailer over SMTP): email
// through SMTP, SMS as a JSON POST {to, body} to a webhook, and, for each channel that has no
// transport configured, a development outbox: one JSON line per message appended to
// `<dataDir>/outbox.jsonl` (mode 0600) and a log line that names the recipient but never the text,
// since the text carries codes and credential bundles. Messages are plain text; nothing a user
// supplied is ever put into HTML.
//
// Custom senders (turnkey-semantics.md §6 "OTP (current)", custom sender rules): a request may name
// `sendFromEmailAddress`, `sendFromEmailSenderName` (default "Notifications") and
// `replyToEmailAddress`. The reference service honours only pre-whitelisted domains; Sigil honours
// only the domains of SIGIL_EMAIL_ALLOWED_SENDER_DOMAINS. As there, a from-address that is absent,
// malformed or outside them is ignored together with the sender name and reply-to (the message goes
// out from SIGIL_EMAIL_FROM), and a reply-to outside them is ignored on its own.
import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { Delivery, OutgoingMessage } from '../domain/context.js';

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

export function makeDelivery(
  config: Pick<Config, 'smtp' | 'emailFrom' | 'smsWebhookUrl' | 'dataDir'> & Partial<Pick<Config, 'emailAllowedSenderDomains'>>,
  logger: Logger,
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
        if (!transporter) return outbox.write(message, { from, replyTo });
        try {
          // `text` only: no `html` alternative exists, so no user field can become markup.
          await transporter.sendMail({ from, ...(replyTo ? { replyTo } : {}), to: message.to, subject: message.subject ?? '', text: message.text });
        } catch (err) {
          logger.warn({ channel: 'email', to: message.to, err: (err as Error).message }, 'email delivery failed');
          throw new DeliveryError('email', 'the email could not be delivered');
        }
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
