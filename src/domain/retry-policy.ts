/** What one attempt came to, as seen from the sender; classify and decide turn it into the delivery's next step. */
export type AttemptOutcome = { kind: 'response'; statusCode: number } | { kind: 'error'; error: DeliveryError };

export type DeliveryError = 'timeout' | 'refused' | 'reset' | 'tls' | 'dns' | 'blocked_address' | 'network';

export type Ladders = { retryLadderMs: readonly number[]; dnsRetryLadderMs: readonly number[] };

/** What happens to the delivery next. */
export type Decision =
  { next: 'delivered' } | { next: 'retry'; delayMs: number } | { next: 'rejected' } | { next: 'given_up' };

export type AttemptClass = 'success' | 'temporary' | 'permanent' | 'dns';

export function classify(outcome: AttemptOutcome): AttemptClass {
  if (outcome.kind === 'error') {
    if (outcome.error === 'dns') return 'dns';
    if (outcome.error === 'blocked_address') return 'permanent';
    return 'temporary';
  }
  const s = outcome.statusCode;
  if (s >= 200 && s < 300) return 'success';
  if (s === 408 || s === 429 || s >= 500) return 'temporary';
  // 3xx: redirects are never followed, so the endpoint has not taken the event yet.
  if (s >= 400 && s < 500) return 'permanent';
  return 'temporary';
}

/**
 * attemptNumber is the attempt that just ended (1-based). 2xx delivers; a 4xx other than 408
 * and 429, or a blocked address, rejects for good. Other failures follow the retry ladder (by
 * default 1 min, 5 min, 30 min, 2 h, 6 h; then given up); DNS failures the DNS ladder (by
 * default 1 and 3 min: 3 attempts in all). docs/receiving-webhooks.md#answering has the table.
 */
export function decide(outcome: AttemptOutcome, attemptNumber: number, ladders: Ladders): Decision {
  switch (classify(outcome)) {
    case 'success':
      return { next: 'delivered' };
    case 'permanent':
      return { next: 'rejected' };
    case 'dns': {
      const delay = ladders.dnsRetryLadderMs[attemptNumber - 1];
      return attemptNumber >= ladders.dnsRetryLadderMs.length + 1 || delay === undefined
        ? { next: 'given_up' }
        : { next: 'retry', delayMs: delay };
    }
    case 'temporary': {
      const delay = ladders.retryLadderMs[attemptNumber - 1];
      return delay === undefined ? { next: 'given_up' } : { next: 'retry', delayMs: delay };
    }
  }
}

/** How an attempt reads in the log and in alert emails. */
export function describeOutcome(outcome: AttemptOutcome): string {
  if (outcome.kind === 'response') return `HTTP ${outcome.statusCode}`;
  const words: Record<DeliveryError, string> = {
    timeout: 'no answer within the deadline',
    refused: 'connection refused',
    reset: 'connection reset',
    tls: 'TLS handshake failed',
    dns: 'host name does not resolve',
    blocked_address: 'the host resolves to a non-public address',
    network: 'network error',
  };
  return words[outcome.error];
}
