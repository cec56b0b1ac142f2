// IP address and CIDR handling for IP allowlists (src/domain/governance/cidr.ts;
// docs/reference/organizations.md "IP allowlists"): parsing, normalization to the network address, RFC
// 5952 text, containment, and how socket addresses (IPv4-mapped IPv6, zone ids) are read.
import { describe, expect, it } from 'vitest';
import { cidrContains, formatCidr, formatIp, parseCidr, parseClientAddress, parseIp } from '../../../src/domain/governance/cidr.js';

const block = (s: string) => {
  const b = parseCidr(s);
  if (!b) throw new Error(`not a CIDR: ${s}`);
  return b;
};
const ip = (s: string) => {
  const a = parseClientAddress(s);
  if (!a) throw new Error(`not an address: ${s}`);
  return a;
};

describe('cidr', () => {
  it('normalizes blocks to their network address and canonical text', () => {
    expect(formatCidr(block('192.168.1.100/24'))).toBe('192.168.1.0/24');
    expect(formatCidr(block('10.1.2.3/20'))).toBe('10.1.0.0/20');
    expect(formatCidr(block('127.0.0.1'))).toBe('127.0.0.1/32');
    expect(formatCidr(block('2001:DB8:0:0:0:0:0:1/48'))).toBe('2001:db8::/48');
    expect(formatCidr(block('2001:db8:0:1:0:0:0:1/128'))).toBe('2001:db8:0:1::1/128');
    expect(formatCidr(block('2001:0:0:1:0:0:0:1'))).toBe('2001:0:0:1::1/128');
    // RFC 5952: on a tie the first run of zeros is compressed.
    expect(formatCidr(block('2001:db8:0:0:1:0:0:1'))).toBe('2001:db8::1:0:0:1/128');
    expect(formatCidr(block('::'))).toBe('::/128');
    expect(formatCidr(block('::ffff:192.0.2.1/128'))).toBe('::ffff:c000:201/128');
    expect(formatIp(parseIp('fe80::1:2')!)).toBe('fe80::1:2');
  });

  it('refuses what is not an address or block', () => {
    for (const bad of ['', '10.0.0.256', '10.0.0', '010.0.0.1', '10.0.0.1/33', '10.0.0.1/', '10.0.0.1/08', '1:2:3:4:5:6:7:8:9', '1::2::3', '12345::', 'fe80::1%eth0', 'x.y.z.w', '::/129']) {
      expect(parseCidr(bad), bad).toBeUndefined();
    }
  });

  it('tests containment by prefix, never across families', () => {
    expect(cidrContains(block('10.1.0.0/20'), ip('10.1.15.255'))).toBe(true);
    expect(cidrContains(block('10.1.0.0/20'), ip('10.1.16.0'))).toBe(false);
    expect(cidrContains(block('127.0.0.1/32'), ip('127.0.0.1'))).toBe(true);
    expect(cidrContains(block('127.0.0.1/32'), ip('127.0.0.2'))).toBe(false);
    expect(cidrContains(block('2001:db8::/48'), ip('2001:db8:0:ffff::1'))).toBe(true);
    expect(cidrContains(block('2001:db8::/48'), ip('2001:db8:1::1'))).toBe(false);
    expect(cidrContains(block('::ffff:0:0/96'), ip('127.0.0.1'))).toBe(false);
  });

  it('reads socket addresses: IPv4-mapped IPv6 is IPv4, brackets and zone ids are dropped', () => {
    expect(ip('::ffff:127.0.0.1')).toEqual({ version: 4, bytes: new Uint8Array([127, 0, 0, 1]) });
    expect(formatIp(ip('[2001:db8::7]'))).toBe('2001:db8::7');
    expect(formatIp(ip('fe80::1%eth0'))).toBe('fe80::1');
    expect(parseClientAddress('unix-socket')).toBeUndefined();
  });
});
