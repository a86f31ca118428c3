import { newDelivery } from './new-delivery.js';
import type { Deps } from '../ports/index.js';
import { respondentKey } from '../responses/submit-responses.js';

/**
 * Turns batches whose window has passed into deliveries. Claim, insert and delete happen in
 * one transaction, so a crash either flushes a batch entirely or leaves it to flush again.
 *
 * What the batches need is read a statement per kind, not per batch: their polls with slides
 * and webhooks, then their respondents and answers together. Read batch by batch (five round
 * trips each), the flush cannot keep up with the submissions the API takes, and deliveries fall
 * further behind under load (docs/performance.md, "The batch flush").
 */
export async function flushDueBatches(deps: Deps, limit = 500): Promise<number> {
  return (await flushSomeBatches(deps, limit)).deliveries;
}

/**
 * One flush of at most `limit` batches: the deliveries it queued, and the batches it took. Fewer
 * batches than the limit means none was left due (or another flusher holds the rest).
 */
export async function flushSomeBatches(deps: Deps, limit: number): Promise<{ deliveries: number; batches: number }> {
  return deps.store.transaction(async (store) => {
    const now = deps.clock.now();
    const due = await store.batches.claimDue(now, limit);
    if (!due.length) return { deliveries: 0, batches: 0 };
    const polls = new Map(
      (await store.polls.getForSubmission([...new Set(due.map((b) => b.pollId))])).map((p) => [p.poll.id, p]),
    );
    const contents = await store.batches.contentsOf(due);
    const participants = new Map(contents.participants.map((p) => [respondentKey(p.pollId, p.id), p]));
    const responses = new Map(contents.responses.map((r) => [r.id, r]));
    const deliveries = [];
    for (const b of due) {
      const found = polls.get(b.pollId);
      const webhook = found?.webhooks.find((w) => w.id === b.webhookId);
      const participant = participants.get(respondentKey(b.pollId, b.participantId));
      // In the order they were added to the batch: the last is the latest (its metadata goes out).
      // Ids made in the same millisecond do not sort in that order.
      const answers = b.responseIds.flatMap((id) => responses.get(id) ?? []);
      // The poll or webhook was deleted meanwhile (its batches go with it), or nothing is left to send.
      if (!found || !webhook || !participant || !answers.length) continue;
      const at = answers.reduce((t, r) => (r.createdAt > t ? r.createdAt : t), answers[0]!.createdAt);
      deliveries.push(
        newDelivery({
          poll: found.poll,
          slides: found.slides,
          participant,
          responses: answers,
          type: 'submitted-responses',
          target: { endpointId: webhook.id, webhookId: webhook.id, source: 'webhook', url: webhook.url },
          at,
        }),
      );
    }
    // Delivery ids carry the event time, but they are due now.
    await store.batches.flush(
      due.map((b) => b.id),
      deliveries.map((d) => ({ ...d, nextAttemptAt: now })),
    );
    return { deliveries: deliveries.length, batches: due.length };
  });
}
