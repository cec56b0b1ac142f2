// Message delivery (src/delivery/delivery.ts; docs/sessions-and-logins.md "One-time codes (OTP)"): with
// no transport configured, messages go to the development outbox `<dataDir>/outbox.jsonl` and the log
// line names the recipient but never the text; SMS go to the webhook as JSON {to, body}, and a refusing
// webhook is a failed send. (Email over real SMTP is covered end to end in test/e2e/otp.test.ts.) Email
// events (docs/sessions-and-logins.md "Email events"): an email naming its organization and kind is
// reported as Send then Delivery, Bounce (Permanent, the server's 550) or, with no server listening,
// Bounce (Undetermined); the outbox gives Send only; an email naming neither is not reported; no event
// holds the text.
import { describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createServer as createTcpServer } from 'node:net';
import { DeliveryError, makeDelivery } from '../../src/delivery/delivery.js';
import type { EmailEvent } from '../../src/domain/context.js';
import { startInbox } from '../helpers/mail.js';

function capturingLogger() {
  let out = '';
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, cb) => ((out += chunk), cb()) }));
  return { logger, logs: () => out };
}

describe('delivery', () => {
  it('writes to the development outbox and never logs the text', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sigil-delivery-'));
    try {
      const { logger, logs } = capturingLogger();
      const delivery = makeDelivery({ dataDir, smtp: undefined, emailFrom: 'x@y.z', smsWebhookUrl: undefined }, logger);
      await delivery.send({ channel: 'email', to: 'a@example.com', subject: 'Your code', text: 'code 7QK2M9XZ1' });
      await delivery.send({ channel: 'sms', to: '+15550001111', text: 'code 123456' });
      const lines = readFileSync(join(dataDir, 'outbox.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(lines).toMatchObject([
        { channel: 'email', to: 'a@example.com', subject: 'Your code', text: 'code 7QK2M9XZ1' },
        { channel: 'sms', to: '+15550001111', text: 'code 123456' },
      ]);
      expect(statSync(join(dataDir, 'outbox.jsonl')).mode & 0o777).toBe(0o600);
      expect(logs()).toContain('a@example.com');
      expect(logs()).not.toContain('7QK2M9XZ1');
      expect(logs()).not.toContain('123456');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('posts SMS to the webhook as JSON {to, body}; a refusal fails the send', async () => {
    const received: unknown[] = [];
    let status = 200;
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        received.push({ contentType: req.headers['content-type'], body: JSON.parse(body) });
        res.statusCode = status;
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/sms`;
    const dataDir = mkdtempSync(join(tmpdir(), 'sigil-delivery-'));
    try {
      const { logger } = capturingLogger();
      const delivery = makeDelivery({ dataDir, smtp: undefined, emailFrom: 'x@y.z', smsWebhookUrl: url }, logger);
      await delivery.send({ channel: 'sms', to: '+15550001111', text: 'Your code is 123456' });
      expect(received).toEqual([{ contentType: 'application/json', body: { to: '+15550001111', body: 'Your code is 123456' } }]);
      status = 500;
      await expect(delivery.send({ channel: 'sms', to: '+15550001111', text: 'x' })).rejects.toBeInstanceOf(DeliveryError);
    } finally {
      server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('reports each email step as an event: Send, then Delivery, Bounce with the answer, or Bounce with no answer', async () => {
    const inbox = await startInbox({ rejectRecipients: /^gone@/ });
    // A port nothing listens on: taken, then released.
    const closed = await new Promise<number>((resolve) => {
      const s = createTcpServer();
      s.listen(0, '127.0.0.1', () => {
        const { port } = s.address() as { port: number };
        s.close(() => resolve(port));
      });
    });
    const dataDir = mkdtempSync(join(tmpdir(), 'sigil-delivery-'));
    const events: EmailEvent[] = [];
    const record = async (e: EmailEvent) => void events.push(e);
    const smtp = (port: number) => ({ host: '127.0.0.1', port, secure: false });
    try {
      const { logger } = capturingLogger();
      const delivery = makeDelivery({ dataDir, smtp: smtp(inbox.port), emailFrom: 'Sigil <auth@sigil.test>', smsWebhookUrl: undefined }, logger, record);
      const message = { channel: 'email' as const, subject: 'Your code', text: 'code 7QK2M9XZ1', organizationId: 'org-1', kind: 'OTP' };
      await delivery.send({ ...message, to: 'here@example.com' });
      await expect(delivery.send({ ...message, to: 'gone@example.com' })).rejects.toBeInstanceOf(DeliveryError);
      await delivery.send({ ...message, to: 'untracked@example.com', organizationId: undefined });
      const unreachable = makeDelivery({ dataDir, smtp: smtp(closed), emailFrom: 'auth@sigil.test', smsWebhookUrl: undefined }, logger, record);
      await expect(unreachable.send({ ...message, to: 'here@example.com' })).rejects.toBeInstanceOf(DeliveryError);
      const outbox = makeDelivery({ dataDir, smtp: undefined, emailFrom: 'auth@sigil.test', smsWebhookUrl: undefined }, logger, record);
      await outbox.send({ ...message, to: 'dev@example.com' });

      expect(events.map((e) => [e.to, e.eventType, e.details.bounceType ?? ''])).toEqual([
        ['here@example.com', 'Send', ''],
        ['here@example.com', 'Delivery', ''],
        ['gone@example.com', 'Send', ''],
        ['gone@example.com', 'Bounce', 'Permanent'],
        ['here@example.com', 'Send', ''],
        ['here@example.com', 'Bounce', 'Undetermined'],
        ['dev@example.com', 'Send', ''],
      ]);
      expect(events.every((e) => e.organizationId === 'org-1' && e.kind === 'OTP' && e.from === 'auth@sigil.test')).toBe(true);
      expect(events[1].messageId).toBe(events[0].messageId);
      expect(events[1].details.deliverySmtpResponse).toMatch(/^250 /);
      expect(events[3].details.diagnosticCode).toMatch(/^550 .*gone@example\.com/);
      expect(events[5].details.diagnosticCode).toMatch(/ECONNREFUSED|ESOCKET|ECONNECTION/);
      expect(JSON.stringify(events)).not.toContain('7QK2M9XZ1');
      expect(JSON.stringify(events)).not.toContain('Your code');
    } finally {
      await inbox.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
