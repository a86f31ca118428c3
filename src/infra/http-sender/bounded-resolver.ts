import { ADDRCONFIG, type LookupAddress } from 'node:dns';
import { Resolver } from 'node:dns/promises';
import os from 'node:os';

const WORDS = {
  ENOTFOUND: 'no such name',
  EAI_AGAIN: 'its name servers failed',
  ETIMEDOUT: 'no name server answered in time',
  ERESOLVER: 'this worker’s name servers refused the query, or their port refused it',
} as const;

/**
 * A name that did not resolve, with getaddrinfo's codes, which classify-error.ts reads as `dns`
 * (the DNS ladder); or no answer in time, read as a `timeout` (the main ladder), as a lookup
 * that outlasts the attempt's deadline is: a resolver slow for a while does not end the
 * deliveries it meets late on their ladder. Nor does this worker's own resolver being down or
 * refusing it (ERESOLVER, read as `network`): that is no failure of the endpoint's name.
 */
export class LookupError extends Error {
  constructor(
    readonly code: keyof typeof WORDS,
    readonly hostname: string,
    options?: { cause?: unknown },
  ) {
    super(`${hostname}: ${WORDS[code]}`, options);
  }
}

const NO_SUCH_NAME = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME']);
// c-ares's "could not contact DNS servers" and a server's REFUSED (its access rules), and its
// own failures: the worker's resolver, not the endpoint's name.
const RESOLVER_DOWN = new Set(['ECONNREFUSED', 'EREFUSED', 'EFILE', 'ENOMEM', 'EDESTRUCTION', 'ENOTINITIALIZED']);

export type BoundedResolverOptions = {
  /** How long one query waits for its server, and how many times it is sent. */
  timeoutMs: number;
  tries: number;
  /** Name servers (`address[:port]`); the system's by default. */
  servers?: string[];
};

/** The address families this host has a non-internal interface for, read at most every 10 s. */
let families: { at: number; v4: boolean; v6: boolean } | undefined;
function configuredFamilies(): { v4: boolean; v6: boolean } {
  if (!families || Date.now() - families.at > 10_000) {
    const all = Object.values(os.networkInterfaces()).flatMap((list) => list ?? []);
    const external = all.filter((i) => !i.internal);
    families = {
      at: Date.now(),
      v4: external.some((i) => i.family === 'IPv4'),
      v6: external.some((i) => i.family === 'IPv6'),
    };
  }
  return families;
}

/**
 * Resolves endpoints' host names through c-ares (dns.Resolver) rather than getaddrinfo
 * (dns.lookup). A getaddrinfo call holds one of libuv's four pool threads until the name's
 * servers answer or give up, so four names whose servers never answer, which anyone who may
 * manage webhooks can save, would hold up every other account's new connections; c-ares
 * queries wait on the event loop, each given up after `tries` rounds of `timeoutMs` (doubling)
 * per name server. It reads no /etc/hosts: `localhost` and its subdomains answer loopback (RFC
 * 6761), every other name is the DNS's. Used where private targets are refused, where
 * /etc/hosts names nothing a delivery may reach. With ADDRCONFIG (as net.connect asks), a
 * family this host has no interface for is not asked, as getaddrinfo leaves it out.
 */
export function boundedResolver(opts: BoundedResolverOptions) {
  const resolver = new Resolver({ timeout: opts.timeoutMs, tries: opts.tries });
  if (opts.servers) resolver.setServers(opts.servers);
  const resolve = async (
    hostname: string,
    options: { family?: number | string; hints?: number } = {},
  ): Promise<LookupAddress[]> => {
    const name = hostname.replace(/\.$/, '').toLowerCase();
    if (name === 'localhost' || name.endsWith('.localhost'))
      return [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ];
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
    const configured = (options.hints ?? 0) & ADDRCONFIG ? configuredFamilies() : { v4: true, v6: true };
    // A host with neither (no network at all) asks for both, as getaddrinfo then does.
    const ask4 = family !== 6 && (configured.v4 || !configured.v6);
    const ask6 = family !== 4 && (configured.v6 || !configured.v4);
    const [v4, v6] = await Promise.allSettled([
      ask4 ? resolver.resolve4(name) : Promise.resolve([]),
      ask6 ? resolver.resolve6(name) : Promise.resolve([]),
    ]);
    // IPv4 first, as most endpoints are reached.
    const found = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (found.length) return found;
    const failed = [v4, v6].flatMap((r) => (r.status === 'rejected' ? [r.reason as { code?: string }] : []));
    const code = failed.every((e) => NO_SUCH_NAME.has(String(e.code)))
      ? 'ENOTFOUND'
      : failed.some((e) => e.code === 'ETIMEOUT' || e.code === 'ECANCELLED')
        ? 'ETIMEDOUT'
        : failed.some((e) => RESOLVER_DOWN.has(String(e.code)))
          ? 'ERESOLVER'
          : 'EAI_AGAIN';
    throw new LookupError(code, hostname, { cause: failed[0] });
  };
  // cancel(): every lookup under way fails at once, as not answered in time (a process's stop).
  return Object.assign(resolve, { cancel: () => resolver.cancel() });
}
