import { newId } from '../../domain/ids.js';
import type { Batch, NewDelivery } from '../../domain/delivery.js';
import type { ParticipantRow, ResponseRow } from '../../domain/response.js';
import { newDelivery, type EventBodies } from '../delivery/new-delivery.js';
import type { Deps, PollForSubmission } from '../ports/index.js';

/** What a submission's saved webhooks are sent from: its poll, its respondent, and its answers. */
export type WebhookWork = PollForSubmission & {
  participant: ParticipantRow;
  /** This submission's answers. */
  responses: ResponseRow[];
  /** Every answer of the respondent, oldest first. */
  all: ResponseRow[];
  newlyComplete: boolean;
};

/**
 * A submission's deliveries to its poll's saved webhooks: a `complete` webhook's once, when the
 * respondent completes; a `partial` webhook's on every submission, at once or batched over the
 * batch window.
 */
export function forWebhooks(
  deps: Deps,
  w: WebhookWork,
  now: Date,
  batches: Batch[],
  deliveries: NewDelivery[],
  bodies: EventBodies,
): void {
  const window = deps.delivery.batchWindowMs;
  const ctx = { poll: w.poll, slides: w.slides, participant: w.participant, respondent: w.all, bodies };
  for (const hook of w.webhooks) {
    const target = { endpointId: hook.id, webhookId: hook.id, source: 'webhook' as const, url: hook.url };
    if (hook.deliveryRule === 'complete') {
      // "Send only if fully completed": once, when the respondent reaches the end.
      if (w.newlyComplete)
        deliveries.push(newDelivery({ ...ctx, responses: w.all, type: 'completed-survey', target, at: now }));
    } else if (w.responses.length || w.newlyComplete) {
      // "On every submission": one that stores no answer but completes the respondent goes out
      // too, with no answers and `submissionsComplete: true`. One that changes nothing does not.
      if (window === 0)
        deliveries.push(newDelivery({ ...ctx, responses: w.responses, type: 'submitted-responses', target, at: now }));
      else {
        batches.push({
          id: newId('bat', now.getTime()),
          webhookId: hook.id,
          endpointId: hook.id,
          accountId: w.poll.accountId,
          pollId: w.poll.id,
          participantId: w.participant.id,
          responseIds: w.responses.map((r) => r.id),
          flushAt: new Date(now.getTime() + window),
          createdAt: now,
        });
      }
    }
  }
}
