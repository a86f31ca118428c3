import { notFound } from '../../domain/errors.js';
import { newId, randomBase62 } from '../../domain/ids.js';
import { answerableSlides, seededRandom, syntheticAnswer } from '../../domain/research.js';
import type { ResponseRow } from '../../domain/response.js';
import { newDelivery } from '../delivery/new-delivery.js';
import type { Caller, Deps } from '../ports/index.js';
import { summary, type DeliveryView } from './list-deliveries.js';
import { requireWebhook } from './webhook-view.js';

/**
 * A delivery of the webhook's event type from a made-up respondent (`test_…`, metadata
 * `{"test": true}`), with a sample answer to each answerable slide of the poll. It is signed,
 * sent, retried and logged like any other, and marked as a test in the log.
 */
export async function sendTestEvent(deps: Deps, caller: Caller, webhookId: string): Promise<DeliveryView> {
  return deps.store.transaction(async (store) => {
    // The poll is read under a key share lock, as a submission reads it: a change under way
    // (made anonymous, say) is waited for and its settings used, or waits for this delivery and
    // withholds its addresses. Then the webhook is locked and read again: a deletion waits for
    // the test event and cancels it, or the test event waits for the deletion and finds the
    // webhook gone. Poll before webhook, the order a poll's deletion takes them in.
    const { pollId } = await requireWebhook(store, caller, webhookId);
    const [found] = await store.polls.getForSubmission([pollId], true);
    await store.webhooks.lock(webhookId);
    const w = await requireWebhook(store, caller, webhookId);
    if (!found) throw notFound('webhook');
    const now = deps.clock.now();
    const participantId = `test_${randomBase62(16)}`;
    const metadata = { test: true };
    const rand = seededRandom(now.getTime());
    const responses: ResponseRow[] = answerableSlides(found.slides).map((slide, i) => ({
      id: newId('rsp', now.getTime()),
      accountId: w.accountId,
      pollId: w.pollId,
      participantId,
      slideId: slide.id,
      value: syntheticAnswer(slide, rand, i),
      metadata,
      synthetic: true,
      createdAt: now,
    }));
    const complete = w.deliveryRule === 'complete';
    const delivery = newDelivery({
      poll: found.poll,
      slides: found.slides,
      participant: {
        id: participantId,
        seq: '',
        pollId: w.pollId,
        accountId: w.accountId,
        metadata,
        synthetic: true,
        complete,
        completedAt: complete ? now : null,
        createdAt: now,
        updatedAt: now,
      },
      responses,
      respondent: responses,
      type: complete ? 'completed-survey' : 'submitted-responses',
      target: { endpointId: w.id, webhookId: w.id, source: 'webhook', url: w.url },
      at: now,
    });
    await store.deliveries.insert([delivery]);
    await store.deliveries.addEvents([
      {
        id: newId('dev', now.getTime()),
        deliveryId: delivery.id,
        accountId: w.accountId,
        kind: 'test',
        userId: caller.userId,
        attemptNumber: 1,
        createdAt: now,
      },
    ]);
    // A paused webhook's test waits for the resume, as any of its deliveries does.
    await store.deliveries.parkIfPaused([delivery.id]);
    const saved = await store.deliveries.get(delivery.id);
    return { ...summary(saved!), test: true };
  });
}
