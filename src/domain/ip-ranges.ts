/**
 * Which IP addresses a webhook may reach. Used on the literal in a URL at creation and on the
 * address a connection actually uses at delivery (no DNS rebinding).
 */

type V4Range = [base: number, bits: number];

const V4_BLOCKED: V4Range[] = [
  [ip4('0.0.0.0'), 8], // "this network", unspecified
  [ip4('10.0.0.0'), 8],
  [ip4('100.64.0.0'), 10], // carrier-grade NAT
  [ip4('127.0.0.0'), 8],
  [ip4('169.254.0.0'), 16], // link-local, cloud metadata
  [ip4('172.16.0.0'), 12],
  [ip4('192.0.0.0'), 24], // IETF protocol assignments
  [ip4('192.0.2.0'), 24], // documentation (TEST-NET-1)
  [ip4('192.88.99.0'), 24], // 6to4 relay anycast (deprecated)
  [ip4('192.168.0.0'), 16],
  [ip4('198.18.0.0'), 15], // benchmarking
  [ip4('198.51.100.0'), 24], // documentation (TEST-NET-2)
  [ip4('203.0.113.0'), 24], // documentation (TEST-NET-3)
  [ip4('224.0.0.0'), 4], // multicast
  [ip4('240.0.0.0'), 4], // reserved, broadcast
];

function ip4(dotted: string): number {
  return dotted.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

/** Strict dotted-quad parse; WHATWG URL has already normalised decimal/octal/hex forms. */
export function parseIPv4(s: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return parts.reduce((acc, p) => acc * 256 + p, 0);
}

function v4Blocked(n: number): boolean {
  return V4_BLOCKED.some(([base, bits]) => Math.floor(n / 2 ** (32 - bits)) === Math.floor(base / 2 ** (32 - bits)));
}

/** Eight 16-bit groups, or undefined when not an IPv6 address. Accepts an embedded IPv4 tail. */
export function parseIPv6(input: string): number[] | undefined {
  let s = input.toLowerCase();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(':')) return undefined;
  const lastColon = s.lastIndexOf(':');
  const dottedTail = s.slice(lastColon + 1);
  if (dottedTail.includes('.')) {
    const v4 = parseIPv4(dottedTail);
    if (v4 === undefined) return undefined;
    s = `${s.slice(0, lastColon + 1)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const head = groups(halves[0]);
  const rest = groups(halves[1]);
  if ([...head, ...rest].some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return undefined;
  const nums = (gs: string[]) => gs.map((g) => parseInt(g, 16));
  if (halves.length === 1) return head.length === 8 ? nums(head) : undefined;
  const missing = 8 - head.length - rest.length;
  if (missing < 1) return undefined;
  return [...nums(head), ...new Array<number>(missing).fill(0), ...nums(rest)];
}

function v6Blocked(g: number[]): boolean {
  const [a = 0, b = 0] = g;
  const v4 = (g[6] ?? 0) * 65536 + (g[7] ?? 0);
  const firstSixZero = g.slice(0, 6).every((x) => x === 0);
  if (firstSixZero) return true; // ::, ::1 and the deprecated IPv4-compatible ::a.b.c.d
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return v4Blocked(v4); // IPv4-mapped
  if (a === 0x64 && b === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return v4Blocked(v4); // NAT64
  // Only 2000::/3 is global unicast: this also refuses 100::/64 (discard), 64:ff9b:1::/48
  // (local-use NAT64), 5f00::/16 (SRv6), fc00::/7, fe80::/10, fec0::/10 and ff00::/8.
  if ((a & 0xe000) !== 0x2000) return true;
  if (a === 0x2001 && b === 0x0db8) return true; // documentation
  if (a === 0x3fff && b < 0x1000) return true; // documentation, 3fff::/20 (RFC 9637)
  if (a === 0x2001 && b < 0x0200) return true; // IETF protocol assignments, Teredo, benchmarking
  if (a === 0x2002) return v4Blocked((g[1] ?? 0) * 65536 + (g[2] ?? 0)); // 6to4 wraps an IPv4
  return false;
}

export type IpKind = 'v4' | 'v6';

/** True when the address is one a public webhook may connect to. */
export function isPublicAddress(address: string): boolean {
  const v4 = parseIPv4(address);
  if (v4 !== undefined) return !v4Blocked(v4);
  const v6 = parseIPv6(address);
  if (v6 !== undefined) return !v6Blocked(v6);
  return false;
}

export function isIpLiteral(host: string): boolean {
  return parseIPv4(host) !== undefined || parseIPv6(host) !== undefined;
}
