// Webhook destinations and one delivery (src/delivery/webhook-http.ts) and the retry schedule
// (src/domain/governance/webhook-dispatcher.ts): a host name is judged by the addresses it really resolves to
// (localhost through the system resolver), listed hosts may use plain http, redirects are not
// followed, a receiver that does not answer is cut at the deadline, and retry delays double, are
// jittered into their upper half and stop growing at the ceiling.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDestinations, parseAllowedHosts, postWebhook } from '../../src/delivery/webhook-http.js';
import { retryDelay } from '../../src/domain/governance/webhook-dispatcher.js';

let server: Server;
let port = 0;
let hits: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/redirect') {
      res.writeHead(307, { location: `http://127.0.0.1:${port}/target` });
      res.end();
    } else if (req.url === '/slow') {
      // Never answers: the deadline must end the attempt.
    } else {
      res.end('ok');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('webhook destinations', () => {
  it('judges a host name by what it resolves to', async () => {
    await expect(new WebhookDestinations([]).check(`https://localhost:${port}/`)).rejects.toThrow(/which is not a public address/);
    await expect(new WebhookDestinations(['loopback']).check(`http://localhost:${port}/`)).resolves.toEqual(expect.arrayContaining([expect.objectContaining({ address: expect.any(String) })]));
    await expect(new WebhookDestinations(['localhost']).check(`http://localhost:${port}/`)).resolves.toBeDefined();
    await expect(new WebhookDestinations(['10.0.0.0/8']).check(`https://localhost:${port}/`)).rejects.toThrow(/not a public address/);
    await expect(new WebhookDestinations([]).check('https://no-such-host.invalid/')).rejects.toThrow(/could not be resolved/);
  });

  it('allows plain http only for listed hosts, and public https', async () => {
    await expect(new WebhookDestinations(['127.0.0.1']).check(`http://127.0.0.1:${port}/`)).resolves.toBeDefined();
    await expect(new WebhookDestinations(['127.0.0.0/8']).check(`http://127.0.0.9:${port}/`)).resolves.toBeDefined();
    await expect(new WebhookDestinations([]).check('http://93.184.215.14/')).rejects.toThrow(/must use https/);
    await expect(new WebhookDestinations([]).check('https://93.184.215.14/')).resolves.toBeDefined();
    await expect(new WebhookDestinations([]).check('https://[::ffff:93.184.215.14]/')).resolves.toBeDefined();
    await expect(new WebhookDestinations([]).check('https://[::ffff:127.0.0.1]/')).rejects.toThrow(/not a public address/);
    await expect(new WebhookDestinations([]).check('https://100.64.0.1/')).rejects.toThrow(/not a public address/);
  });

  it('refuses an allowlist entry that is none of the accepted forms', () => {
    expect(() => parseAllowedHosts(['10.0.0.0/33'])).toThrow(/SIGIL_WEBHOOK_ALLOWED_HOSTS/);
    expect(() => parseAllowedHosts(['http://x'])).toThrow(/SIGIL_WEBHOOK_ALLOWED_HOSTS/);
    expect(parseAllowedHosts(['loopback', 'hooks.internal', '::1', 'fd00::/8'])).toHaveLength(4);
  });
});

describe('one delivery', () => {
  const allowed = () => new WebhookDestinations(['127.0.0.1']);

  it('does not follow a redirect', async () => {
    hits = [];
    const out = await postWebhook(allowed(), `http://127.0.0.1:${port}/redirect`, {}, Buffer.from('{}'), 2_000);
    expect(out).toEqual({ status: 307 });
    expect(hits).toEqual(['/redirect']);
  });

  it('ends an attempt the receiver does not answer at its deadline', async () => {
    const out = await postWebhook(allowed(), `http://127.0.0.1:${port}/slow`, {}, Buffer.from('{}'), 200);
    expect(out).toEqual({ error: 'no answer within 200 ms' });
  });

  it('refuses a destination before connecting', async () => {
    hits = [];
    const out = await postWebhook(new WebhookDestinations([]), `http://127.0.0.1:${port}/ok`, {}, Buffer.from('{}'), 2_000);
    expect(out).toMatchObject({ refused: true, error: expect.stringMatching(/not a public address/) });
    expect(hits).toEqual([]);
  });
});

describe('retry delays', () => {
  const s = { retryBaseMs: 1_000, retryMaxMs: 60_000 };
  it('double per attempt, jittered into their upper half, up to the ceiling', () => {
    expect([1, 2, 3, 4].map((n) => retryDelay(n, s, () => 1))).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect([1, 2, 3, 4].map((n) => retryDelay(n, s, () => 0))).toEqual([500, 1_000, 2_000, 4_000]);
    expect(retryDelay(30, s, () => 1)).toBe(60_000);
    expect(retryDelay(1000, s, () => 0)).toBe(30_000);
  });
});
