import type { Deps } from '../ports/index.js';
import { reopenDelivery } from '../webhooks/resend-delivery.js';

// At most this many resent at one instant (the next fall due a millisecond later): a claim that
// leaves their host out cannot read past more than a window's worth (2,048) due at one instant
// (src/worker/leave-out-cursor.ts).
const RESENT_PER_INSTANT = 1_000;

/**
 * Resends up to `limit` deliveries listed by recovers, in one transaction that also removes
 * them from their lists: a crash before it commits leaves them listed, after it leaves them
 * resent, never both. Several schedulers share the lists (the rows are claimed SKIP LOCKED).
 * A delivery that is no longer finished (resent meanwhile), or was delivered since it was
 * listed, is only removed. Answers how many it resent, and how many items it took off the
 * lists: a full batch may leave more, whether or not it resent any.
 */
export async function runRecoveries(
  deps: Deps,
  limit = 200,
  perInstant = RESENT_PER_INSTANT,
): Promise<{ resent: number; taken: number }> {
  return deps.store.transaction(async (store) => {
    const items = await store.recoveries.claimItems(limit);
    if (!items.length) return { resent: 0, taken: 0 };
    const now = deps.clock.now();
    let resent = 0;
    for (const [i, item] of items.entries()) {
      const d = { id: item.deliveryId, accountId: item.accountId };
      const at = new Date(now.getTime() + Math.floor(i / perInstant));
      if ((await reopenDelivery(store, d, { kind: 'recover', userId: item.userId }, at)) !== undefined) resent++;
    }
    await store.recoveries.removeItems(items);
    return { resent, taken: items.length };
  });
}
