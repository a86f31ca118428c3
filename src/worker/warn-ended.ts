import type { Logger } from 'pino';
import type { SentAttempt } from '../app/delivery/send-attempt.js';
import type { Deps } from '../app/ports/index.js';
import { describeOutcome } from '../domain/retry-policy.js';
import { loggableOrigin } from '../domain/url-policy.js';

export type Ended = { sent: SentAttempt; status: 'rejected' | 'given_up' };

/**
 * One warn line per delivery rejected or given up. Its webhook is its endpoint's, looked up for
 * these lines only (one query per account in the batch) rather than claimed with every delivery.
 */
export async function warnEnded(deps: Deps, logger: Logger, ended: readonly Ended[]): Promise<void> {
  const byAccount = new Map<string, Set<string>>();
  for (const { sent } of ended) {
    const ids = byAccount.get(sent.delivery.accountId) ?? new Set<string>();
    byAccount.set(sent.delivery.accountId, ids.add(sent.delivery.endpointId));
  }
  const webhookOf = new Map<string, string | null>();
  await Promise.all(
    [...byAccount].map(async ([accountId, ids]) => {
      const endpoints = await deps.store.endpoints.getMany(accountId, [...ids]).catch(() => []);
      for (const e of endpoints) webhookOf.set(e.id, e.webhookId);
    }),
  );
  for (const { sent, status } of ended) {
    const d = sent.delivery;
    logger.warn(
      {
        deliveryId: d.id,
        webhookId: webhookOf.get(d.endpointId) ?? null,
        endpointId: d.endpointId,
        endpoint: loggableOrigin(d.url),
        attempt: d.attemptCount,
        lastError: describeOutcome(sent.sent.outcome),
      },
      status === 'rejected' ? 'delivery rejected' : 'delivery given up',
    );
  }
}
