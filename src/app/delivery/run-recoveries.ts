import type { Deps } from '../ports/index.js';
import { reopenDelivery } from '../webhooks/resend-delivery.js';

/**
 * Resends up to `limit` deliveries listed by recovers, in one transaction that also removes
 * them from their lists: a crash before it commits leaves them listed, after it leaves them
 * resent, never both. Several schedulers share the lists (the rows are claimed SKIP LOCKED).
 * A delivery that is no longer finished (resent meanwhile) is only removed.
 */
export async function runRecoveries(deps: Deps, limit = 200): Promise<number> {
  return deps.store.transaction(async (store) => {
    const items = await store.recoveries.claimItems(limit);
    if (!items.length) return 0;
    const now = deps.clock.now();
    let resent = 0;
    for (const item of items) {
      const d = { id: item.deliveryId, accountId: item.accountId };
      if ((await reopenDelivery(store, d, { kind: 'recover', userId: item.userId }, now)) !== undefined) resent++;
    }
    await store.recoveries.removeItems(items);
    return resent;
  });
}
