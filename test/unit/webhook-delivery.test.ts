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

  // Cases written out by hand after ipaddr.js's range table (ipv4Mapped, rfc6145, rfc6052, 6to4):
  // each IPv6 form reaches the IPv4 address it carries, so it is judged as that address.
  it('judges the IPv6 transition forms by the IPv4 address they carry', async () => {
    const none = new WebhookDestinations([]);
    const refused = [
      '::127.0.0.1', // IPv4-compatible
      '::a9fe:a9fe', // IPv4-compatible 169.254.169.254, in hex
      '::ffff:0:127.0.0.1', // SIIT (RFC 6145)
      '::ffff:0:a00:1', // SIIT 10.0.0.1, in hex
      '64:ff9b::127.0.0.1', // NAT64 well-known prefix (RFC 6052)
      '64:ff9b::a9fe:a9fe',
      '64:ff9b:1::a00:1', // local-use NAT64 (RFC 8215)
      '64:ff9b:1:ffff::808:808',
      '2002:7f00:1::', // 6to4 of 127.0.0.1
      '2002:a9fe:a9fe::1', // 6to4 of 169.254.169.254
      '2002:c0a8:101::1', // 6to4 of 192.168.1.1
    ];
    for (const address of refused) await expect(none.check(`https://[${address}]/`), address).rejects.toThrow(/not a public address/);
    await expect(none.check('https://192.88.99.1/')).rejects.toThrow(/not a public address/); // 6to4 relay anycast
    for (const address of ['64:ff9b::5db8:d70e', '2002:5db8:d70e::1', '::ffff:0:5db8:d70e', '2606:4700::1111']) {
      await expect(none.check(`https://[${address}]/`), address).resolves.toBeDefined();
    }
    // A host name is judged by what it resolves to, in any of these forms.
    const rebinding = new WebhookDestinations([], async () => [{ address: '::ffff:0:a9fe:a9fe', family: 6 }]);
    await expect(rebinding.check('https://metadata.example/')).rejects.toThrow(/not a public address/);
    // The operator's allowlist reaches them too.
    await expect(new WebhookDestinations(['10.0.0.0/8']).check('https://[64:ff9b::a00:1]/')).resolves.toBeDefined();
    await expect(new WebhookDestinations(['private']).check('https://[64:ff9b:1::a00:1]/')).resolves.toBeDefined();
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
