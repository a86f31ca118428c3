import type { Logger } from 'pino';
import type { Deps } from '../app/ports/index.js';
import type { Metrics } from '../app/ports/metrics.js';
import type { ClaimedDelivery } from '../domain/delivery.js';
import { loggableOrigin } from '../domain/url-policy.js';
import { onceAMinute } from './once-a-minute.js';

type Pending = Map<string, { leaseToken: string; stopping: boolean; ids: string[] }>;

/**
 * Gives back a delivery whose attempt was never written (SendResult.unsent): every connection to
 * its origin stayed busy for the whole deadline. The endpoint failed nothing, so no attempt is
 * recorded and its number is not used; it is due again one deadline later, when the origin has
 * had that long to work through what it holds (at once when the worker is stopping). Counted
 * (canvass_delivery_attempts_given_back_total), and a warn line names the origin at most once a
 * minute (docs/operations.md).
 *
 * They come in bursts (an origin's queue reaching its deadline together): those given back in one
 * turn of the event loop go in one statement per claim they came from, not one each.
 */
export function unsentGiver(deps: Deps, logger: Logger, metrics?: Metrics) {
  const memory = onceAMinute();
  let since = 0;
  let pending: Pending | undefined;
  let written: Promise<void> = Promise.resolve();

  const write = async (batch: Pending): Promise<void> => {
    const now = deps.clock.now().getTime();
    await Promise.all(
      [...batch.values()].map(({ leaseToken, stopping, ids }) =>
        // A stopping worker's are due at once, for another worker.
        deps.store.deliveries.unclaim(
          ids,
          leaseToken,
          new Date(now + (stopping ? 0 : deps.delivery.deliveryTimeoutMs)),
        ),
      ),
    );
  };

  return (d: ClaimedDelivery, stopping: boolean): Promise<void> => {
    if (!pending) {
      const batch: Pending = (pending = new Map());
      written = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        pending = undefined;
        return write(batch);
      });
    }
    const key = `${d.leaseToken} ${stopping}`;
    const group = pending.get(key);
    if (group) group.ids.push(d.id);
    else pending.set(key, { leaseToken: d.leaseToken, stopping, ids: [d.id] });
    if (!stopping) counted(d);
    return written;
  };

  function counted(d: ClaimedDelivery): void {
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
  }
}
