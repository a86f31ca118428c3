import type { Caller, Deps } from '../ports/index.js';
import { requireWebhook } from './webhook-view.js';

export async function deleteWebhook(
  deps: Deps,
  caller: Caller,
  id: string,
): Promise<{ id: string; deleted: true; cancelledDeliveries: number }> {
  return deps.store.transaction(async (store) => {
    const w = await requireWebhook(store, caller, id);
    const cancelledDeliveries = await store.deliveries.cancel({ webhookId: w.id }, deps.clock.now());
    await store.webhooks.delete(w.id);
    // Its health goes too: nothing is configured there any more to alert about.
    await store.endpoints.delete(w.id);
    return { id: w.id, deleted: true as const, cancelledDeliveries };
  });
}
