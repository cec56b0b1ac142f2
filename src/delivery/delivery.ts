// Message delivery to users (issue 7 "Delivery"; DESIGN.md stack: nodemailer over SMTP): email
// through SMTP, SMS as a JSON POST {to, body} to a webhook, and, for each channel that has no
// transport configured, a development outbox: one JSON line per message appended to
// `<dataDir>/outbox.jsonl` (mode 0600) and a log line that names the recipient but never the text,
// since the text carries codes. Messages are plain text; nothing a user supplied is ever put into
// HTML.
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

export function makeDelivery(config: Pick<Config, 'smtp' | 'emailFrom' | 'smsWebhookUrl' | 'dataDir'>, logger: Logger): Delivery {
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
        if (!transporter) return outbox.write(message);
        try {
          // `text` only: no `html` alternative exists, so no user field can become markup.
          await transporter.sendMail({ from: config.emailFrom, to: message.to, subject: message.subject ?? '', text: message.text });
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

  write(message: OutgoingMessage): void {
    mkdirSync(join(this.path, '..'), { recursive: true });
    const line = JSON.stringify({ at: new Date().toISOString(), ...message });
    appendFileSync(this.path, `${line}\n`, { mode: 0o600 });
    this.logger.info({ channel: message.channel, to: message.to, outbox: this.path }, 'message written to the development outbox (no transport configured)');
  }
}
