import { requirePollForUpdate, requireWebhookAccessToDelete } from '../access.js';
import type { Caller, Deps } from '../ports/index.js';

/**
 * Slides, participants, responses, webhooks and open batches go with the poll (foreign keys
 * cascade); its pending deliveries, logic-triggered ones included, are cancelled; its endpoints
 * (their alert state) are removed. The id stays the account's: no other account can commit it.
 * A poll with webhooks or Trigger webhook actions is deleted only by a role that manages webhooks.
 */
export async function deletePoll(
  deps: Deps,
  caller: Caller,
  pollId: string,
): Promise<{ id: string; deleted: true; cancelledDeliveries: number }> {
  return deps.store.transaction(async (store) => {
    // Under the poll's lock, which every path that adds a webhook or a Trigger webhook action
    // takes: none can be added between the check and the delete.
    const poll = await requirePollForUpdate(store, caller, pollId);
    await requireWebhookAccessToDelete(store, caller, poll, deps.urlPolicy);
    const now = deps.clock.now();
    // The poll goes before its deliveries are cancelled: its delete (and the cascade) waits for
    // a submission, flush or resend holding its rows, so the cancel that follows sees what they
    // queued; one that comes later finds the poll gone and queues nothing.
    await store.polls.delete(pollId, poll.accountId, now);
    const cancelledDeliveries = await store.deliveries.cancel({ pollId }, now);
    await store.endpoints.deleteByPoll(poll.accountId, pollId);
    return { id: pollId, deleted: true as const, cancelledDeliveries };
  });
}
