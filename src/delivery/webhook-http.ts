// Outbound webhook requests: where a webhook may go, and one POST to it.
//
// Destinations: http(s) URLs without user info. Every address the host resolves to must be public —
// loopback, private (RFC 1918, unique-local), link-local (cloud metadata at 169.254.169.254),
// carrier-grade NAT, multicast, reserved and documentation ranges, the 6to4 relay anycast, and the
// IPv6 forms of such IPv4 addresses (mapped, compatible, SIIT, NAT64, 6to4) are refused — unless the operator lists it (SIGIL_WEBHOOK_ALLOWED_HOSTS: host names, addresses,
// CIDR blocks, or `loopback` / `private` / `linklocal`). Plain http is accepted only for listed hosts:
// an operator's receiver on loopback or an internal network. Turnkey's contract: "URLs must use
// https ... and resolve to a public destination", "Redirects are not followed".
//
// The check runs when an endpoint is created or updated and again at every delivery, on the
// addresses the connection then uses (the socket connects to the address that was checked, through
// `lookup`), so a host name that later resolves somewhere private (DNS rebinding) is refused too.
// Redirects are never followed (node:http does not), each request has a deadline, and the answer's
// body is read up to a small limit and dropped.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP } from 'node:net';

const V4_SPECIAL: [string, number, 'loopback' | 'private' | 'linklocal' | 'reserved'][] = [
  ['0.0.0.0', 8, 'reserved'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'private'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'linklocal'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.0.2.0', 24, 'reserved'],
  // The 6to4 relay anycast (RFC 7526 deprecated it): it forwards to addresses it alone chooses.
  ['192.88.99.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['198.51.100.0', 24, 'reserved'],
  ['203.0.113.0', 24, 'reserved'],
  ['224.0.0.0', 4, 'reserved'],
  ['240.0.0.0', 4, 'reserved'],
];
const V6_SPECIAL: [string, number, 'loopback' | 'private' | 'linklocal' | 'reserved'][] = [
  ['::', 128, 'reserved'],
  ['::1', 128, 'loopback'],
  // 64:ff9b::/96 (NAT64) is judged by the IPv4 address it carries (unmapped); the local-use
  // NAT64 prefix (RFC 8215) translates inside the operator's own network.
  ['64:ff9b:1::', 48, 'private'],
  ['100::', 64, 'reserved'],
  ['2001:db8::', 32, 'reserved'],
  ['fc00::', 7, 'private'],
  ['fe80::', 10, 'linklocal'],
  ['ff00::', 8, 'reserved'],
];

function blockOf(kinds: ReadonlySet<string>): BlockList {
  const list = new BlockList();
  for (const [net, prefix, kind] of V4_SPECIAL) if (kinds.has(kind)) list.addSubnet(net, prefix, 'ipv4');
  for (const [net, prefix, kind] of V6_SPECIAL) if (kinds.has(kind)) list.addSubnet(net, prefix, 'ipv6');
  return list;
}

const NOT_PUBLIC = blockOf(new Set(['loopback', 'private', 'linklocal', 'reserved']));
const NAMED = new Set(['loopback', 'private', 'linklocal']);

export class WebhookDestinationRefused extends Error {}

/** The eight 16-bit groups of an IPv6 address (dotted IPv4 tail and zone allowed). */
function groupsOf(address: string): number[] {
  // WHATWG URL parsing normalizes the text form (a dotted tail becomes two hex groups).
  const text = new URL(`http://[${address.replace(/%.*$/, '')}]/`).hostname.slice(1, -1);
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const part = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const left = part(head);
  const right = part(tail);
  return tail === undefined ? left : [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
}

const dotted = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * An IPv6 address that carries an IPv4 address the packets reach, as that IPv4 address, so it is
 * judged (and allowed) as that address: IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d (not
 * :: or ::1), SIIT ::ffff:0:a.b.c.d, NAT64 64:ff9b::a.b.c.d (RFC 6052) and 6to4 2002:aabb:ccdd::/48
 * (RFC 3056). BlockList alone matches every IPv4 address against an IPv6 rule for ::ffff:0:0/96 and
 * sees none of the others.
 */
function unmapped(address: string, family: number): { address: string; family: number } {
  if (family !== 6) return { address, family };
  const g = groupsOf(address);
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  const v4 = { family: 4 };
  if (zeros(0, 5) && g[5] === 0xffff) return { ...v4, address: dotted(g[6], g[7]) };
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return { ...v4, address: dotted(g[6], g[7]) };
  if (zeros(0, 6) && (g[6] !== 0 || g[7] > 1)) return { ...v4, address: dotted(g[6], g[7]) };
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return { ...v4, address: dotted(g[6], g[7]) };
  if (g[0] === 0x2002) return { ...v4, address: dotted(g[1], g[2]) };
  return { address, family };
}

/** Parses SIGIL_WEBHOOK_ALLOWED_HOSTS entries; throws on one that is none of the accepted forms. */
export function parseAllowedHosts(entries: string[]): string[] {
  for (const e of entries) {
    const [address, prefix, extra] = e.split('/');
    const family = isIP(address);
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
    const hostname = /^[a-z0-9]([a-z0-9-]{0,62})(\.[a-z0-9]([a-z0-9-]{0,62}))*\.?$/i.test(e);
    if (!NAMED.has(e) && !(family !== 0 && prefixOk && extra === undefined) && !hostname) {
      throw new Error(`SIGIL_WEBHOOK_ALLOWED_HOSTS: "${e}" is not a host name, an IP address, a CIDR block or one of ${[...NAMED].join(', ')}`);
    }
  }
  return entries;
}

export class WebhookDestinations {
  private readonly names = new Set<string>();
  private readonly allowed = new BlockList();

  constructor(
    allowedHosts: string[],
    /** Resolution of a host name to its addresses (node's resolver; a deadline is added here). */
    private readonly resolve: (host: string) => Promise<LookupAddress[]> = (host) =>
      new Promise((ok, fail) => dnsLookup(host, { all: true, verbatim: true }, (err, addrs) => (err ? fail(err) : ok(addrs)))),
  ) {
    for (const e of parseAllowedHosts(allowedHosts)) {
      if (NAMED.has(e)) {
        for (const [net, prefix, kind] of V4_SPECIAL) if (kind === e) this.allowed.addSubnet(net, prefix, 'ipv4');
        for (const [net, prefix, kind] of V6_SPECIAL) if (kind === e) this.allowed.addSubnet(net, prefix, 'ipv6');
        continue;
      }
      const [address, prefix] = e.split('/');
      const family = isIP(address);
      if (family === 0) this.names.add(e.toLowerCase().replace(/\.$/, ''));
      else if (prefix === undefined) this.allowed.addAddress(address, family === 6 ? 'ipv6' : 'ipv4');
      else this.allowed.addSubnet(address, Number(prefix), family === 6 ? 'ipv6' : 'ipv4');
    }
  }

  private listedAddress(address: string, family: number): boolean {
    const a = unmapped(address, family);
    return this.allowed.check(a.address, a.family === 6 ? 'ipv6' : 'ipv4');
  }

  /** Why `address` may not be connected to, or undefined when it may. */
  private refusal(address: string, family: number, listedName: boolean): string | undefined {
    if (listedName || this.listedAddress(address, family)) return undefined;
    const a = unmapped(address, family);
    if (NOT_PUBLIC.check(a.address, a.family === 6 ? 'ipv6' : 'ipv4')) {
      return `it resolves to ${address}, which is not a public address (loopback, private, link-local or reserved); the operator can allow it with SIGIL_WEBHOOK_ALLOWED_HOSTS`;
    }
    return undefined;
  }

  /** The URL's parts after the checks that need no resolution. */
  private parse(url: string): { u: URL; host: string; listedName: boolean } {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new WebhookDestinationRefused(`webhook url "${url}" is not a valid URL`);
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new WebhookDestinationRefused(`webhook url must use https, got ${u.protocol.replace(/:$/, '')}`);
    if (u.username || u.password) throw new WebhookDestinationRefused('webhook url must not include user info');
    if (!u.hostname) throw new WebhookDestinationRefused('webhook url has no host');
    const host = u.hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
    return { u, host, listedName: this.names.has(host) };
  }

  /** The addresses the URL's host resolves to, each allowed; throws WebhookDestinationRefused otherwise. */
  async check(url: string, deadlineMs = 5_000): Promise<LookupAddress[]> {
    const { u, host, listedName } = this.parse(url);
    const family = isIP(host);
    let addresses: LookupAddress[];
    if (family !== 0) {
      addresses = [{ address: host, family }];
    } else {
      let timer: NodeJS.Timeout | undefined;
      try {
        addresses = await Promise.race([
          this.resolve(host),
          new Promise<never>((_, fail) => {
            timer = setTimeout(() => fail(new Error('timed out')), deadlineMs);
          }),
        ]);
      } catch (err) {
        throw new WebhookDestinationRefused(`webhook url host ${host} could not be resolved (${(err as Error).message})`);
      } finally {
        clearTimeout(timer);
      }
      if (addresses.length === 0) throw new WebhookDestinationRefused(`webhook url host ${host} has no address`);
    }
    for (const a of addresses) {
      const why = this.refusal(a.address, a.family, listedName);
      if (why) throw new WebhookDestinationRefused(`webhook url ${u.origin} is refused: ${why}`);
    }
    const listed = listedName || addresses.every((a) => this.listedAddress(a.address, a.family));
    if (u.protocol === 'http:' && !listed) {
      throw new WebhookDestinationRefused('webhook url must use https (plain http only for hosts the operator lists in SIGIL_WEBHOOK_ALLOWED_HOSTS)');
    }
    return addresses;
  }
}

/** What one POST came to: the receiver's status code, or why there was none. */
export type PostOutcome = { status: number } | { error: string; refused?: boolean };

/** The most of an answer's body read before it is dropped. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs `body` to `url` once: the destination checked again on the addresses connected to, no
 * redirects, the whole exchange within `timeoutMs`.
 */
export async function postWebhook(destinations: WebhookDestinations, url: string, headers: Record<string, string>, body: Buffer, timeoutMs: number): Promise<PostOutcome> {
  let addresses: LookupAddress[];
  try {
    addresses = await destinations.check(url, timeoutMs);
  } catch (err) {
    return { error: (err as Error).message, refused: err instanceof WebhookDestinationRefused };
  }
  const u = new URL(url);
  const client = u.protocol === 'https:' ? https : http;
  return new Promise<PostOutcome>((resolve) => {
    let settled = false;
    const done = (o: PostOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const req = client.request(
      u,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) },
        agent: false,
        // The socket connects to an address that was checked above, never to a fresh resolution.
        lookup: (_host: string, opts: { all?: boolean }, cb: (...args: any[]) => void) => {
          const a = addresses[0];
          if (opts?.all) cb(null, [a]);
          else cb(null, a.address, a.family);
        },
      },
      (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) res.destroy();
        });
        res.on('end', () => done({ status: res.statusCode ?? 0 }));
        res.on('close', () => done({ status: res.statusCode ?? 0 }));
        res.on('error', () => done({ status: res.statusCode ?? 0 }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      done({ error: `no answer within ${timeoutMs} ms` });
    }, timeoutMs);
    req.on('error', (err) => done({ error: err.message }));
    req.end(body);
  });
}
