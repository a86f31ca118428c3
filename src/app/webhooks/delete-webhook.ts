import { notFound } from '../../domain/errors.js';
import type { Caller, Deps } from '../ports/index.js';
import { requireWebhook } from './webhook-view.js';

export async function deleteWebhook(
  deps: Deps,
  caller: Caller,
  id: string,
): Promise<{ id: string; deleted: true; cancelledDeliveries: number }> {
  return deps.store.transaction(async (store) => {
    const w = await requireWebhook(store, caller, id);
    // The webhook goes before its deliveries are cancelled: its delete waits for a flush holding
    // its open batches and for a resend holding its row, so the cancel that follows sees what
    // they queued; one that comes later finds the webhook gone and queues nothing.
    // Two deletes at once: the second waits for the first, finds nothing, and is a 404 as any
    // delete of a webhook that is gone.
    if (!(await store.webhooks.delete(w.id))) throw notFound('webhook');
    const cancelledDeliveries = await store.deliveries.cancel({ webhookId: w.id }, deps.clock.now());
    // Its health goes too: nothing is configured there any more to alert about.
    await store.endpoints.delete(w.id);
    return { id: w.id, deleted: true as const, cancelledDeliveries };
  });
}
