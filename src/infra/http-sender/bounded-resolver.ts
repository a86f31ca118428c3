import type { LookupAddress } from 'node:dns';
import { Resolver } from 'node:dns/promises';

/** A name that did not resolve, with getaddrinfo's codes (classify-error.ts reads them as `dns`). */
export class LookupError extends Error {
  constructor(
    readonly code: 'ENOTFOUND' | 'EAI_AGAIN',
    readonly hostname: string,
    options?: { cause?: unknown },
  ) {
    super(
      `${hostname}: ${code === 'ENOTFOUND' ? 'no such name' : 'its name servers failed or did not answer'}`,
      options,
    );
  }
}

const NO_SUCH_NAME = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME']);

export type BoundedResolverOptions = {
  /** How long one query waits for its server, and how many times it is sent. */
  timeoutMs: number;
  tries: number;
  /** Name servers (`address[:port]`); the system's by default. */
  servers?: string[];
};

/**
 * Resolves endpoints' host names through c-ares (dns.Resolver) rather than getaddrinfo
 * (dns.lookup). A getaddrinfo call holds one of libuv's four pool threads until the name's
 * servers answer or give up, so four names whose servers never answer, saved by anyone who may
 * manage webhooks, held up every other account's new connections; c-ares queries wait on the
 * event loop, each given up after `tries` × `timeoutMs`. It reads no /etc/hosts: `localhost`
 * and its subdomains answer loopback (RFC 6761), every other name is the DNS's. Used where
 * private targets are refused, where /etc/hosts names nothing a delivery may reach.
 */
export function boundedResolver(opts: BoundedResolverOptions) {
  const resolver = new Resolver({ timeout: opts.timeoutMs, tries: opts.tries });
  if (opts.servers) resolver.setServers(opts.servers);
  const resolve = async (hostname: string, options: { family?: number | string } = {}): Promise<LookupAddress[]> => {
    const name = hostname.replace(/\.$/, '').toLowerCase();
    if (name === 'localhost' || name.endsWith('.localhost'))
      return [
        { address: '127.0.0.1', family: 4 },
        { address: '::1', family: 6 },
      ];
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
    const [v4, v6] = await Promise.allSettled([
      family === 6 ? Promise.resolve([]) : resolver.resolve4(name),
      family === 4 ? Promise.resolve([]) : resolver.resolve6(name),
    ]);
    // IPv4 first, as most endpoints are reached.
    const found = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (found.length) return found;
    const failed = [v4, v6].flatMap((r) => (r.status === 'rejected' ? [r.reason as { code?: string }] : []));
    const missing = failed.every((e) => NO_SUCH_NAME.has(String(e.code)));
    throw new LookupError(missing ? 'ENOTFOUND' : 'EAI_AGAIN', hostname, { cause: failed[0] });
  };
  // cancel(): every lookup under way fails at once (EAI_AGAIN), as at a process's stop.
  return Object.assign(resolve, { cancel: () => resolver.cancel() });
}
