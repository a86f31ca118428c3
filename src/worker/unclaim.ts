import type { Logger } from 'pino';
import type { Deps } from '../app/ports/index.js';
import type { ClaimedDelivery } from '../domain/delivery.js';

/**
 * Gives claimed deliveries back never sent (handed over past the worker's share, or left waiting
 * at a stop), one statement per lease. Their attempt is not counted (as a paused webhook's at
 * claim): the first request the endpoint gets is attempt 1, and the ladder keeps all its attempts.
 */
export function unclaimer(deps: Deps, logger: Logger) {
  return async (ds: readonly ClaimedDelivery[]): Promise<void> => {
    const byLease = new Map<string, ClaimedDelivery[]>();
    for (const d of ds) {
      const same = byLease.get(d.leaseToken);
      if (same) same.push(d);
      else byLease.set(d.leaseToken, [d]);
    }
    const now = deps.clock.now();
    await Promise.all(
      [...byLease].map(([token, given]) =>
        deps.store.deliveries
          .unclaim(
            given.map((d) => d.id),
            token,
            now,
          )
          .catch((err) =>
            logger.error(
              { err },
              'giving back handed-over deliveries failed; they are due again when their lease ends',
            ),
          ),
      ),
    );
  };
}
