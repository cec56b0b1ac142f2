// IP addresses and CIDR blocks for IP allowlists (docs/reference/organizations.md): parsing of IPv4 and IPv6
// (with `::`, embedded dotted IPv4 and zone ids), normalization of a block to its network address
// (`192.168.1.100/24` → `192.168.1.0/24`), RFC 5952 text for IPv6, and containment. Pure functions.

export interface IpAddress {
  version: 4 | 6;
  bytes: Uint8Array;
}

export interface CidrBlock extends IpAddress {
  prefix: number;
}

function parseIpv4(text: string): Uint8Array | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (const [i, p] of parts.entries()) {
    // Decimal only, no leading zeros (they mean octal to some parsers).
    if (!/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255) return undefined;
    out[i] = Number(p);
  }
  return out;
}

function parseIpv6(text: string): Uint8Array | undefined {
  if (text.length === 0 || text.length > 45) return undefined;
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const groups = (s: string): number[] | undefined => {
    if (s === '') return [];
    const out: number[] = [];
    const parts = s.split(':');
    for (const [i, p] of parts.entries()) {
      if (i === parts.length - 1 && p.includes('.')) {
        const v4 = parseIpv4(p);
        if (!v4) return undefined;
        out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(p)) {
        out.push(parseInt(p, 16));
      } else {
        return undefined;
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return undefined;
  let all: number[];
  if (halves.length === 2) {
    const missing = 8 - head.length - tail.length;
    if (missing < 1) return undefined;
    all = [...head, ...new Array<number>(missing).fill(0), ...tail];
  } else {
    all = head;
  }
  if (all.length !== 8) return undefined;
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

/** Parses an address as written in a rule (no zone id, no brackets). */
export function parseIp(text: string): IpAddress | undefined {
  if (text.includes(':')) {
    const bytes = parseIpv6(text);
    return bytes ? { version: 6, bytes } : undefined;
  }
  const bytes = parseIpv4(text);
  return bytes ? { version: 4, bytes } : undefined;
}

const V4_MAPPED_PREFIX = new Uint8Array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);

/**
 * The address a request came from, as the socket layer reports it: brackets and a zone id are
 * dropped, and an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, what a dual-stack listener sees)
 * counts as the IPv4 address it carries.
 */
export function parseClientAddress(text: string): IpAddress | undefined {
  const bare = text.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const ip = parseIp(bare);
  if (ip?.version === 6 && V4_MAPPED_PREFIX.every((b, i) => ip.bytes[i] === b)) {
    return { version: 4, bytes: ip.bytes.slice(12) };
  }
  return ip;
}

/** `a.b.c.d/n` or `x:y::z/n`; a bare address is a block of one address (/32 or /128). Host bits are cleared. */
export function parseCidr(text: string): CidrBlock | undefined {
  const slash = text.indexOf('/');
  const ip = parseIp(slash < 0 ? text : text.slice(0, slash));
  if (!ip) return undefined;
  const max = ip.version === 4 ? 32 : 128;
  let prefix = max;
  if (slash >= 0) {
    const p = text.slice(slash + 1);
    if (!/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > max) return undefined;
    prefix = Number(p);
  }
  const bytes = new Uint8Array(ip.bytes);
  for (let bit = prefix; bit < max; bit++) bytes[bit >> 3] &= ~(0x80 >> (bit & 7));
  return { version: ip.version, bytes, prefix };
}

function formatIpv6(bytes: Uint8Array): string {
  const groups = Array.from({ length: 8 }, (_, i) => (bytes[2 * i] << 8) | bytes[2 * i + 1]);
  // RFC 5952: compress the longest run of two or more zero groups (the first on a tie).
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (gs: number[]) => gs.map((g) => g.toString(16)).join(':');
  if (bestStart < 0) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLen))}`;
}

export function formatIp(ip: IpAddress): string {
  return ip.version === 4 ? Array.from(ip.bytes).join('.') : formatIpv6(ip.bytes);
}

export function formatCidr(block: CidrBlock): string {
  return `${formatIp(block)}/${block.prefix}`;
}

/** True when `ip` lies inside `block` (an IPv4 address never matches an IPv6 block, and vice versa). */
export function cidrContains(block: CidrBlock, ip: IpAddress): boolean {
  if (block.version !== ip.version) return false;
  const full = block.prefix >> 3;
  for (let i = 0; i < full; i++) if (block.bytes[i] !== ip.bytes[i]) return false;
  const rest = block.prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (block.bytes[full] & mask) === (ip.bytes[full] & mask);
}
