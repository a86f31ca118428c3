import type { Logger } from 'pino';
import type { Deps } from '../app/ports/index.js';
import type { Metrics } from '../app/ports/metrics.js';
import type { ClaimedDelivery } from '../domain/delivery.js';
import { failureLog } from './failure-log.js';

/** The longest an account's deliveries wait between attempts that could not be prepared. */
export const UNPREPARED_MAX_DELAY_MS = 300_000;

/**
 * Gives back a delivery whose attempt threw before anything was written (sendAttempt: the
 * account's first signing secret could not be made). Nothing reached the endpoint, so no attempt
 * is counted, and the endpoint's ladder and alerts stay its own. The delay doubles with each such
 * failure of the account in this process, from 1 s to 5 minutes (0 when stopping), so a failure
 * that does not clear costs a few statements a minute, not one a second per delivery; an attempt
 * of the account that is sent clears it (`sent`). Counted, and logged at most every 30 s per
 * account (failure-log.ts).
 */
export function unpreparedGiver(deps: Deps, logger: Logger, metrics?: Metrics) {
  const failures = new Map<string, number>();
  const log = failureLog(
    logger,
    'attempt could not be prepared (its account signing secret not made?); given back uncounted, tried again later',
  );
  return {
    async giveBack(d: ClaimedDelivery, err: unknown, stopping: boolean): Promise<void> {
      const n = (failures.get(d.accountId) ?? 0) + 1;
      failures.set(d.accountId, n);
      const delayMs = stopping ? 0 : Math.min(1_000 * 2 ** Math.min(n - 1, 20), UNPREPARED_MAX_DELAY_MS);
      log.failed(err, { deliveryId: d.id, accountId: d.accountId, delayMs }, d.accountId);
      await deps.store.deliveries.unclaim([d.id], d.leaseToken, new Date(deps.clock.now().getTime() + delayMs));
      metrics?.attemptUnprepared();
    },
    /** An attempt of the account was sent: its next failure waits a second again. */
    sent(d: ClaimedDelivery): void {
      if (!failures.size || !failures.delete(d.accountId)) return;
      log.succeeded({}, d.accountId);
    },
  };
}
