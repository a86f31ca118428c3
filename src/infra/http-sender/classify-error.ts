import type { DeliveryError } from '../../domain/retry-policy.js';

const TLS_CODES = /^(ERR_TLS|ERR_SSL|CERT_|DEPTH_ZERO|UNABLE_TO_|SELF_SIGNED|ERR_OSSL|HOSTNAME_MISMATCH)/;
// getaddrinfo's answers that the name does not resolve, for now or for good (a server's failure
// included): the delivery's DNS ladder, not the network's.
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EAI_NODATA', 'EAI_ADDRFAMILY']);

/** Maps what the sender's connections fail with to the error words of the delivery log (DeliveryError). */
export function classifyError(err: unknown, timedOut: boolean): DeliveryError {
  if (timedOut) return 'timeout';
  const seen = new Set<unknown>();
  let e: unknown = err;
  while (e && typeof e === 'object' && !seen.has(e)) {
    seen.add(e);
    const code = String((e as { code?: unknown }).code ?? '');
    const name = String((e as { name?: unknown }).name ?? '');
    if (code === 'CANVASS_BLOCKED_ADDRESS') return 'blocked_address';
    if (DNS_CODES.has(code)) return 'dns';
    // This worker's resolver down (bounded-resolver.ts), whatever c-ares said beneath it.
    if (code === 'ERESOLVER') return 'network';
    if (code === 'ECONNREFUSED') return 'refused';
    if (code === 'ECONNRESET' || code === 'EPIPE') return 'reset';
    if (code === 'ETIMEDOUT' || name === 'TimeoutError') return 'timeout';
    if (TLS_CODES.test(code)) return 'tls';
    e = (e as { cause?: unknown }).cause;
  }
  return 'network';
}

/** The sender's own failures, named as classifyError reads them: a timeout, and a reset. */
export class DeadlineError extends Error {
  override readonly name = 'TimeoutError';
  constructor() {
    super('the attempt took longer than its deadline');
  }
}

export class ClosedError extends Error {
  readonly code = 'ECONNRESET';
  constructor() {
    super('the connection closed before the answer was complete');
  }
}
