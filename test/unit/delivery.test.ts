// Message delivery (src/delivery/delivery.ts; issue 7 "Delivery"): with no transport configured,
// messages go to the development outbox `<dataDir>/outbox.jsonl` and the log line names the
// recipient but never the text; SMS go to the webhook as JSON {to, body}, and a refusing webhook
// is a failed send. (Email over real SMTP is covered end to end in test/e2e/otp.test.ts.)
import { describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { DeliveryError, makeDelivery } from '../../src/delivery/delivery.js';

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
});
