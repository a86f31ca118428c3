import { describe, expect, it } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';
import { isIpLiteral, isPublicAddress, parseIPv4, parseIPv6 } from '../../src/domain/ip-ranges.js';
import { checkEndpointUrl } from '../../src/domain/url-policy.js';

const strict = { allowPrivateTargets: false };
const lax = { allowPrivateTargets: true };

/** The DomainError thrown by fn, or a failure when it does not throw one. */
function thrown(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('expected a DomainError, nothing was thrown');
}

describe('checkEndpointUrl: accepted', () => {
  it.each([
    ['https://hooks.example.com/canvass', 'https://hooks.example.com/canvass'],
    ['https://example.com', 'https://example.com/'],
    ['HTTPS://Hooks.EXAMPLE.com/Path?q=1', 'https://hooks.example.com/Path?q=1'],
    ['https://api.example.co.uk:8443/x', 'https://api.example.co.uk:8443/x'],
    ['https://example.com./trailing-dot', 'https://example.com./trailing-dot'],
    ['https://my-service.example.io/a', 'https://my-service.example.io/a'],
    ['https://münchen.example/', 'https://xn--mnchen-3ya.example/'],
    ['https://8.8.8.8/hook', 'https://8.8.8.8/hook'],
    ['https://[2606:4700:4700::1111]/hook', 'https://[2606:4700:4700::1111]/hook'],
    ['https://[::ffff:8.8.8.8]/', 'https://[::ffff:808:808]/'],
  ])('%s', (raw, normalised) => {
    expect(checkEndpointUrl(raw, strict)).toBe(normalised);
  });

  it('accepts a label of exactly 63 characters', () => {
    const host = `${'a'.repeat(63)}.example.com`;
    expect(checkEndpointUrl(`https://${host}/`, strict)).toBe(`https://${host}/`);
  });
});

describe('checkEndpointUrl: refused with invalid_url', () => {
  it.each([
    ['plain http', 'http://hooks.example.com/'],
    ['ftp', 'ftp://hooks.example.com/'],
    ['not a URL', 'hooks.example.com/path'],
    ['empty', ''],
    ['user and password', 'https://user:pass@hooks.example.com/'],
    ['user only', 'https://user@hooks.example.com/'],
    ['password only', 'https://:secret@hooks.example.com/'],
    ['localhost', 'https://localhost/'],
    ['localhost with trailing dot', 'https://localhost./'],
    ['*.localhost', 'https://api.localhost/'],
    ['*.local', 'https://printer.local/'],
    ['*.internal', 'https://metadata.google.internal/'],
    ['single label', 'https://intranet/'],
    ['IPv4 loopback', 'https://127.0.0.1/'],
    ['IPv4 loopback, other address', 'https://127.255.0.9:8443/'],
    ['IPv4 private 10/8', 'https://10.1.2.3/'],
    ['IPv4 private 172.16/12', 'https://172.31.255.255/'],
    ['IPv4 private 192.168/16', 'https://192.168.0.1/'],
    ['IPv4 carrier-grade NAT', 'https://100.64.0.1/'],
    ['IPv4 link-local', 'https://169.254.10.10/'],
    ['cloud metadata', 'https://169.254.169.254/latest/meta-data/'],
    ['unspecified', 'https://0.0.0.0/'],
    ['bare zero', 'https://0/'],
    ['multicast', 'https://224.0.0.1/'],
    ['broadcast', 'https://255.255.255.255/'],
    ['loopback as decimal', 'https://2130706433/'],
    ['loopback as octal', 'https://0177.0.0.1/'],
    ['loopback as hex', 'https://0x7f.0.0.1/'],
    ['loopback as one hex number', 'https://0x7f000001/'],
    ['loopback short form', 'https://127.1/'],
    ['metadata as decimal', 'https://2852039166/'],
    ['private as mixed notation', 'https://0xa.0.1/'],
    ['IPv6 loopback', 'https://[::1]/'],
    ['IPv6 unspecified', 'https://[::]/'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/'],
    ['IPv4-mapped metadata in hex', 'https://[::ffff:a9fe:a9fe]/'],
    ['IPv6 link-local', 'https://[fe80::1]/'],
    ['IPv6 link-local bare prefix', 'https://[fe80::]/'],
    ['IPv6 unique local', 'https://[fc00::]/'],
    ['IPv6 unique local fd', 'https://[fd12:3456::1]/'],
    ['IPv6 multicast', 'https://[ff02::1]/'],
    ['IPv6 documentation', 'https://[2001:db8::1]/'],
    ['IPv6 documentation 3fff::/20', 'https://[3fff::1]/'],
    ['IPv6 documentation 3fff::/20, last address', 'https://[3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff]/'],
    ['IPv6 discard-only', 'https://[100::1]/'],
    ['IPv6 local-use NAT64', 'https://[64:ff9b:1::a00:1]/'],
    ['IPv6 SRv6 SIDs', 'https://[5f00::1]/'],
    ['IPv6 benchmarking', 'https://[2001:2::1]/'],
    ['port 0', 'https://example.com:0/'],
    ['port 0 written as 00', 'https://example.com:00/hook'],
    ['port 0 on a public IPv4 address', 'https://8.8.8.8:0/'],
    ['port 0 on a public IPv6 address', 'https://[2606:4700:4700::1111]:0/'],
    ['NAT64 of loopback', 'https://[64:ff9b::7f00:1]/'],
    ['6to4 of private', 'https://[2002:c0a8:0101::1]/'],
    ['underscore in a label', 'https://my_hooks.example.com/'],
    ['label of 64 characters', `https://${'a'.repeat(64)}.example.com/`],
    ['empty label in the middle', 'https://hooks..example.com/'],
    ['empty first label', 'https://.example.com/'],
    ['label starting with a hyphen', 'https://-hooks.example.com/'],
    ['label ending with a hyphen', 'https://hooks-.example.com/'],
    ['name longer than 253', `https://${Array.from({ length: 5 }, () => 'a'.repeat(60)).join('.')}.com/`],
    ['longer than 2048', `https://example.com/${'a'.repeat(2048)}`],
    ['2048 or fewer, longer once percent-encoded', `https://example.com/${'é'.repeat(1000)}`],
  ])('%s', (_why, raw) => {
    const e = thrown(() => checkEndpointUrl(raw, strict));
    expect(e.code).toBe('invalid_url');
    expect(e.errors?.[0]?.path).toBe('/url');
  });

  it('names the path it was given', () => {
    const e = thrown(() => checkEndpointUrl('http://example.com/', strict, '/logic/0/action/url'));
    expect(e.code).toBe('invalid_url');
    expect(e.errors).toEqual([{ path: '/logic/0/action/url', message: expect.stringContaining('https') }]);
    expect(e.message).toContain('/logic/0/action/url');
  });
});

describe('checkEndpointUrl with allowPrivateTargets', () => {
  it.each([
    'https://127.0.0.1:8443/hook',
    'https://localhost:8443/hook',
    'https://[::1]/hook',
    'https://10.0.0.5/hook',
    'https://2130706433/',
    'https://receiver/hook',
  ])('accepts %s', (raw) => {
    expect(() => checkEndpointUrl(raw, lax)).not.toThrow();
  });

  it.each([
    'http://127.0.0.1:8443/hook',
    'http://localhost/',
    'https://user:pw@127.0.0.1/',
    'https://bad_name.localhost/',
    'not a url',
    'https://127.0.0.1:0/',
    'https://receiver:0/hook',
  ])('still refuses %s', (raw) => {
    expect(thrown(() => checkEndpointUrl(raw, lax)).code).toBe('invalid_url');
  });

  it('normalises the address it accepts', () => {
    expect(checkEndpointUrl('https://0x7f.1:9000/x', lax)).toBe('https://127.0.0.1:9000/x');
  });
});

describe('isPublicAddress', () => {
  it.each([
    // IPv4, public
    ['8.8.8.8', true],
    ['1.1.1.1', true],
    ['93.184.216.34', true],
    ['9.255.255.255', true],
    ['11.0.0.0', true],
    ['100.63.255.255', true],
    ['100.128.0.0', true],
    ['126.255.255.255', true],
    ['128.0.0.0', true],
    ['169.253.255.255', true],
    ['169.255.0.0', true],
    ['172.15.255.255', true],
    ['172.32.0.0', true],
    ['192.167.255.255', true],
    ['192.169.0.0', true],
    ['198.17.255.255', true],
    ['198.20.0.0', true],
    ['223.255.255.255', true],
    // IPv4, not public
    ['0.0.0.0', false],
    ['0.255.255.255', false],
    ['10.0.0.0', false],
    ['10.255.255.255', false],
    ['100.64.0.0', false],
    ['100.127.255.255', false],
    ['127.0.0.1', false],
    ['127.255.255.255', false],
    ['169.254.0.1', false],
    ['169.254.169.254', false],
    ['172.16.0.0', false],
    ['172.31.255.255', false],
    ['192.0.0.8', false],
    ['192.0.2.1', false],
    ['192.88.99.1', false],
    ['192.168.1.1', false],
    ['198.18.0.1', false],
    ['198.19.255.255', false],
    ['198.51.100.7', false],
    ['203.0.113.9', false],
    ['224.0.0.1', false],
    ['239.255.255.250', false],
    ['240.0.0.1', false],
    ['255.255.255.255', false],
    // IPv6, public
    ['2606:4700:4700::1111', true],
    ['2001:4860:4860::8888', true],
    ['2a00:1450:4001:80b::200e', true],
    ['[2606:4700:4700::1111]', true],
    ['2001:200::1', true],
    ['::ffff:8.8.8.8', true],
    ['::ffff:808:808', true],
    ['64:ff9b::808:808', true],
    ['2002:0808:0808::1', true],
    ['3ffe::1', true],
    ['3fff:1000::1', true],
    ['2620:4f:8000::1', true],
    ['2606:4700:4700:0:0:0:0:1111', true],
    // IPv6, not public
    ['::', false],
    ['::1', false],
    ['[::1]', false],
    ['0:0:0:0:0:0:0:1', false],
    ['::7f00:1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:7f00:1', false],
    ['::ffff:10.0.0.1', false],
    ['::ffff:169.254.169.254', false],
    ['64:ff9b::127.0.0.1', false],
    ['64:ff9b::a00:1', false],
    ['2002:7f00:1::', false],
    ['2002:c0a8:101::1', false],
    ['fe80::', false],
    ['fe80::1%eth0', false],
    ['FE80::ABCD', false],
    ['fc00::', false],
    ['fd00::1', false],
    ['ff02::1', false],
    ['2001:db8::1', false],
    ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', false],
    ['3fff::', false],
    ['3fff::1', false],
    ['3fff:abc::1', false],
    ['3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', false],
    ['[3fff::1]', false],
    ['100::', false],
    ['100::ffff:ffff:ffff:ffff', false],
    ['64:ff9b:1::', false],
    ['64:ff9b:1:ffff::808:808', false],
    ['5f00::1', false],
    ['2001:2::1', false],
    ['2001:10::1', false],
    ['2001:20::1', false],
    ['fec0::1', false],
    ['::ffff:0:0', false],
    ['::ffff:100.64.0.1', false],
    ['::ffff:192.0.0.9', false],
    ['::ffff:192.0.2.1', false],
    ['::ffff:198.18.0.1', false],
    ['::ffff:198.51.100.1', false],
    ['::ffff:203.0.113.1', false],
    ['::ffff:240.0.0.1', false],
    ['::ffff:255.255.255.255', false],
    ['64:ff9b::c000:201', false],
    ['2002:c000:201::', false],
    ['2001::1', false],
    ['2001:1ff::1', false],
    ['100::1', false],
    ['4000::1', false],
    // not an address at all
    ['', false],
    ['example.com', false],
    ['256.1.1.1', false],
    ['1.2.3', false],
    ['1.2.3.4.5', false],
    ['1::2::3', false],
    ['1:2:3:4:5:6:7:8:9', false],
    ['::1:2:3:4:5:6:7:8', false],
    ['12345::1', false],
    ['g::1', false],
    ['::ffff:300.0.0.1', false],
  ] as const)('%s → %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe('address parsing', () => {
  it('parses dotted quads strictly', () => {
    expect(parseIPv4('127.0.0.1')).toBe(0x7f000001);
    expect(parseIPv4('255.255.255.255')).toBe(0xffffffff);
    expect(parseIPv4('127.1')).toBeUndefined();
    expect(parseIPv4('0x7f.0.0.1')).toBeUndefined();
    expect(parseIPv4(' 1.2.3.4')).toBeUndefined();
  });

  it('expands IPv6 forms to eight groups', () => {
    expect(parseIPv6('::1')).toEqual([0, 0, 0, 0, 0, 0, 0, 1]);
    expect(parseIPv6('fe80::')).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIPv6('[::ffff:127.0.0.1]')).toEqual([0, 0, 0, 0, 0, 0xffff, 0x7f00, 0x0001]);
    expect(parseIPv6('1:2:3:4:5:6:7:8')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(parseIPv6('1:2:3:4:5:6:7')).toBeUndefined();
    expect(parseIPv6('127.0.0.1')).toBeUndefined();
  });

  it('tells IP literals from names', () => {
    expect(isIpLiteral('10.0.0.1')).toBe(true);
    expect(isIpLiteral('[::1]')).toBe(true);
    expect(isIpLiteral('fe80::1')).toBe(true);
    expect(isIpLiteral('example.com')).toBe(false);
    expect(isIpLiteral('1.2.3')).toBe(false);
  });
});
