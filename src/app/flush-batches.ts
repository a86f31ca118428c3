import { newDelivery } from './enqueue.js';
import type { Deps } from './ports.js';

/**
 * Turns batches whose window has passed into deliveries. Claim, insert and delete happen in
 * one transaction, so a crash either flushes a batch entirely or leaves it to flush again.
 */
export async function flushDueBatches(deps: Deps, limit = 200): Promise<number> {
  return deps.store.transaction(async (store) => {
    const now = deps.clock.now();
    const due = await store.batches.claimDue(now, limit);
    const deliveries = [];
    for (const b of due) {
      // Sequential: one transaction is one connection.
      const poll = await store.polls.get(b.pollId);
      const webhook = await store.webhooks.get(b.webhookId);
      const responses = await store.responses.byIds(b.responseIds);
      const participant = await store.responses.getParticipant(b.pollId, b.participantId);
      if (!poll || !webhook || !participant || !responses.length) continue;
      const slides = await store.slides.listByPoll(poll.id);
      const at = responses.reduce((t, r) => (r.createdAt > t ? r.createdAt : t), responses[0]!.createdAt);
      deliveries.push(
        newDelivery({ poll, slides, participant, responses, type: 'submitted-responses', target: { endpointId: webhook.id, webhookId: webhook.id, source: 'webhook', url: webhook.url }, at }),
      );
    }
    // Delivery ids carry the event time, but they are due now.
    await store.deliveries.insert(deliveries.map((d) => ({ ...d, nextAttemptAt: now })));
    await store.batches.delete(due.map((b) => b.id));
    return deliveries.length;
  });
}
