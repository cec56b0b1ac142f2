// A real SMTP server on loopback (`smtp-server`) that keeps what Sigil sends, for tests of the
// email flows (docs/sessions-and-logins.md "One-time codes (OTP)", "Email auth and recovery"):
// start it, point Sigil at it with `smtpEnv(inbox)`, wait for mail with `next`.
import { SMTPServer } from 'smtp-server';

export interface Mail {
  to: string[];
  /** The envelope sender (MAIL FROM). */
  from: string;
  raw: string;
}

export interface Inbox {
  port: number;
  mails: Mail[];
  /** How many mails `to` has received so far. */
  count(to: string): number;
  /** The first mail to `to` after the first `already`, waiting up to 10 s for it. */
  next(to: string, already: number): Promise<Mail>;
  close(): Promise<void>;
}

/**
 * `rejectRecipients`: addresses this server refuses at RCPT TO with a permanent 550 answer, as a
 * relay refuses a mailbox that does not exist.
 */
export async function startInbox(opts: { rejectRecipients?: RegExp } = {}): Promise<Inbox> {
  const mails: Mail[] = [];
  const waiters: (() => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (opts.rejectRecipients?.test(address.address)) {
        return callback(Object.assign(new Error('5.1.1 <' + address.address + '>: mailbox unavailable'), { responseCode: 550 }));
      }
      callback();
    },
    onData(stream, session, callback) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (d: string) => (raw += d));
      stream.on('end', () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        mails.push({ to: session.envelope.rcptTo.map((r) => r.address), from, raw });
        waiters.splice(0).forEach((w) => w());
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  const to = (addr: string) => mails.filter((m) => m.to.includes(addr));
  return {
    port,
    mails,
    count: (addr) => to(addr).length,
    async next(addr, already) {
      const deadline = Date.now() + 10_000;
      for (;;) {
        const got = to(addr);
        if (got.length > already) return got[already];
        if (Date.now() > deadline) throw new Error(`no mail to ${addr}`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 200);
        });
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Sigil settings that send its email to `inbox`. */
export function smtpEnv(inbox: Inbox): Record<string, string> {
  return { SIGIL_SMTP_HOST: '127.0.0.1', SIGIL_SMTP_PORT: String(inbox.port), SIGIL_SMTP_SECURE: 'false', SIGIL_EMAIL_FROM: 'Sigil Test <auth@sigil.test>' };
}

/** The one-time code in a mail Sigil sent. */
export function codeIn(mail: Mail): string {
  const m = /verification code is:\s+([0-9A-Z]{6,9})\s/.exec(mail.raw);
  if (!m) throw new Error(`no code in mail:\n${mail.raw}`);
  return m[1];
}

/** A received mail: its (unfolded) headers and its decoded plain-text body. */
export interface Parsed {
  headers: Record<string, string>;
  headerNames: string[];
  text: string;
}

/** RFC 2047 encoded words (nodemailer encodes a subject holding `=`, `?` or `_` this way). */
function decodeWords(value: string): string {
  return value.replace(/=\?UTF-8\?([QB])\?([^?]*)\?=(\s+(?==\?))?/gi, (_m, enc: string, data: string) => {
    if (enc.toUpperCase() === 'B') return Buffer.from(data, 'base64').toString('utf8');
    const bytes = data.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_x, h: string) => String.fromCharCode(parseInt(h, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  });
}

export function parse(raw: string): Parsed {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n(?=[ \t])/g, '');
  const body = raw.slice(split + 4);
  const headers: Record<string, string> = {};
  const headerNames: string[] = [];
  for (const line of head.split('\r\n')) {
    const i = line.indexOf(':');
    const name = line.slice(0, i).toLowerCase();
    headerNames.push(name);
    headers[name] = decodeWords(line.slice(i + 1).trim());
  }
  const encoding = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  let text = body;
  if (encoding === 'quoted-printable') {
    const bytes = body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
    text = Buffer.from(bytes, 'latin1').toString('utf8');
  } else if (encoding === 'base64') {
    text = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  }
  return { headers, headerNames, text: text.replace(/\r\n/g, '\n') };
}

/** The credential bundle in a mail's text (base58check, on a line of its own after the colon). */
export function bundleIn(text: string): string {
  const m = /credential to [^\n]*:\n\n([1-9A-HJ-NP-Za-km-z]{80,200})\n/.exec(text);
  if (!m) throw new Error(`no bundle in mail:\n${text}`);
  return m[1];
}
