import { requirePoll } from './access.js';
import type { Caller, Deps } from './ports.js';

/**
 * Slides, participants, responses, webhooks and open batches go with the poll (foreign keys
 * cascade); its pending deliveries, logic-triggered ones included, are cancelled.
 */
export async function deletePoll(deps: Deps, caller: Caller, pollId: string): Promise<{ id: string; deleted: true; cancelledDeliveries: number }> {
  return deps.store.transaction(async (store) => {
    await requirePoll(store, caller, pollId, 'write');
    const cancelledDeliveries = await store.deliveries.cancel({ pollId }, deps.clock.now());
    await store.polls.delete(pollId);
    return { id: pollId, deleted: true as const, cancelledDeliveries };
  });
}
