import { isIpLiteral, isPublicAddress } from '../../domain/ip-ranges.js';
import type { EndpointLoad } from './origin-queue.js';

/** Where an attempt goes, as the sender needs it; parsed once per URL. */
export type Target = {
  origin: string;
  host: string;
  port: number;
  hostHeader: string;
  path: string;
  /** A literal address that is not public: refused before connecting. */
  blockedLiteral: boolean;
  /** Its attempts queued and on the wire, which its origin's queue keeps (origin-queue.ts). */
  load: EndpointLoad;
};

export function parseTarget(url: string): Target {
  const u = new URL(url);
  if (u.protocol !== 'https:') throw new Error(`not an https URL: ${url}`);
  // Port 0 names no service: refused like a blocked address, in either mode and without a lookup.
  if (u.port === '0')
    throw Object.assign(new Error(`port 0 of ${u.hostname} cannot be connected to`), {
      code: 'CANVASS_BLOCKED_ADDRESS',
    });
  // A name's trailing dot (fully qualified) names the same host: kept for the lookup (no search
  // list applies), left out of the TLS server name (RFC 6066 allows none), the Host header and
  // the origin, so both spellings share connections.
  const bare = u.hostname.endsWith('.') ? u.hostname.slice(0, -1) : u.hostname;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const hostHeader = u.port ? `${bare}:${u.port}` : bare;
  return {
    origin: `https://${hostHeader}`,
    host,
    port: Number(u.port || 443),
    hostHeader,
    path: u.pathname + u.search,
    blockedLiteral: isIpLiteral(host) && !isPublicAddress(host),
    load: { waiting: 0, held: 0, answeredAt: 0 },
  };
}
