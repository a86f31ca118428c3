import type { Logger } from 'pino';
import type { Deps } from '../app/ports/index.js';
import type { ClaimedDelivery } from '../domain/delivery.js';

/**
 * Deliveries leased to this worker that it may not start now (their account or host is at its
 * share or cap) go back to the queue, due at once. Never sent, so their attempt is not counted
 * (as a paused webhook's at claim). One statement per lease: a claim's or a flush's.
 */
export async function giveBack(deps: Pick<Deps, 'store' | 'clock'>, logger: Logger, ds: readonly ClaimedDelivery[]) {
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
          logger.error({ err }, 'giving back deliveries failed; they are due again when their lease ends'),
        ),
    ),
  );
}
