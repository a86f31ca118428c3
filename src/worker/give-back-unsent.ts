import type { Logger } from 'pino';
import type { Deps } from '../app/ports/index.js';
import type { Metrics } from '../app/ports/metrics.js';
import type { ClaimedDelivery } from '../domain/delivery.js';
import { loggableOrigin } from '../domain/url-policy.js';
import { onceAMinute } from './once-a-minute.js';

/**
 * Gives back a delivery whose attempt was never written (SendResult.unsent): every connection to
 * its origin stayed busy for the whole deadline. The endpoint failed nothing, so no attempt is
 * recorded and its number is not used; it is due again one deadline later, when the origin has
 * had that long to work through what it holds (at once when the worker is stopping). Counted
 * (canvass_delivery_attempts_given_back_total), and a warn line names the origin at most once a
 * minute (docs/operations.md).
 */
export function unsentGiver(deps: Deps, logger: Logger, metrics?: Metrics) {
  const memory = onceAMinute();
  let since = 0;
  return async (d: ClaimedDelivery, stopping: boolean): Promise<void> => {
    const now = deps.clock.now();
    // A stopping worker's are due at once, for another worker.
    const dueAt = new Date(now.getTime() + (stopping ? 0 : deps.delivery.deliveryTimeoutMs));
    await deps.store.deliveries.unclaim([d.id], d.leaseToken, dueAt);
    if (stopping) return;
    metrics?.attemptGivenBack();
    since++;
    const origin = loggableOrigin(d.url);
    const at = Date.now();
    if (!memory.due(origin, at)) return;
    memory.warned([origin], at);
    logger.warn(
      { origin, givenBack: since, deadlineMs: deps.delivery.deliveryTimeoutMs },
      "attempts waited a whole deadline for a connection to their endpoint's origin, every one busy: given back unsent, due again after another deadline (the endpoint answers more slowly than its connections can carry)",
    );
    since = 0;
  };
}
