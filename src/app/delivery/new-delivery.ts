import { newId } from '../../domain/ids.js';
import { buildPayload, type EventType } from '../../domain/payload.js';
import type { Slide } from '../../domain/slide.js';
import type { DeliverySource } from '../../domain/webhook.js';
import type { NewDelivery } from '../../domain/delivery.js';
import type { ParticipantRow, ResponseRow } from '../../domain/response.js';
import type { SubmittedPoll } from '../ports/index.js';

export type Target = { endpointId: string; webhookId: string | null; source: DeliverySource; url: string };

/**
 * The bodies made for one submission's targets, by event: each of its targets of one event (20
 * complete webhooks, 50 Trigger webhook targets) is sent the same bytes, made once and held once.
 */
export type EventBodies = Map<EventType, { responses: readonly ResponseRow[]; body: string }>;

/**
 * One event to one endpoint. The body is serialised here, once: every attempt sends these
 * exact bytes, so a consumer's signature check and deduplication see the same event.
 */
export function newDelivery(input: {
  poll: SubmittedPoll;
  slides: readonly Slide[];
  participant: ParticipantRow;
  responses: readonly ResponseRow[];
  /** Every answer of the respondent, oldest first (addresses are gathered from all of them). */
  respondent: readonly ResponseRow[];
  type: EventType;
  target: Target;
  at: Date;
  bodies?: EventBodies;
}): NewDelivery {
  const made = input.bodies?.get(input.type);
  const body = made?.responses === input.responses ? made.body : eventBody(input);
  if (!made) input.bodies?.set(input.type, { responses: input.responses, body });
  return {
    id: newId('dlv', input.at.getTime()),
    accountId: input.poll.accountId,
    pollId: input.poll.id,
    webhookId: input.target.webhookId,
    endpointId: input.target.endpointId,
    source: input.target.source,
    url: input.target.url,
    participantId: input.participant.id,
    type: input.type,
    body,
    createdAt: input.at,
    nextAttemptAt: input.at,
  };
}

/** The payload of one event, serialised. */
function eventBody(input: Parameters<typeof newDelivery>[0]): string {
  const bySlide = new Map(input.slides.map((s) => [s.id, s]));
  const answers = input.responses.flatMap((r) => {
    const slide = bySlide.get(r.slideId);
    return slide
      ? [{ slideId: r.slideId, title: slide.title, type: slide.type, value: r.value, createdAt: r.createdAt }]
      : [];
  });
  // Each submission's metadata once, oldest first: the answers of one submission share one object.
  const metadata = [...new Set(input.responses.map((r) => r.metadata))];
  const payload = buildPayload({
    type: input.type,
    accountId: input.poll.accountId,
    pollId: input.poll.id,
    participantId: input.participant.id,
    anonymous: !!input.poll.settings.anonymous,
    participantMetadata: input.participant.metadata,
    responseMetadata: metadata,
    answers,
    respondent: input.respondent,
    complete: input.participant.complete,
    at: input.at,
  });
  return JSON.stringify(payload);
}
