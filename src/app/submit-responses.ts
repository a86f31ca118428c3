import { checkAnswerValue } from '../domain/answer.js';
import { DomainError, invalid, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { NON_ANSWERABLE } from '../domain/slide.js';
import type { Webhook } from './delivery-ports.js';
import { newDelivery } from './enqueue.js';
import { planLogic } from './logic-deliveries.js';
import type { Caller, Deps, ParticipantRow, ResponseRow, Store } from './ports.js';

export type SubmitInput = {
  pollId: string;
  participantId?: string;
  answers: { slideId: string; value: unknown }[];
  metadata?: Record<string, unknown>;
  participantMetadata?: Record<string, unknown>;
  complete?: boolean;
};

export type SubmitResult = {
  participantId: string;
  responseIds: string[];
  complete: boolean;
  nextSlideId: string | null;
  ended: boolean;
};

async function canSee(store: Store, caller: Caller | null, accountId: string): Promise<boolean> {
  return !!caller && !!(await store.users.membership(accountId, caller.userId));
}

/**
 * Stores a respondent's answers and, in the same transaction, everything their webhooks need
 * (open batches, deliveries). The answer is acknowledged only after that commits, so nothing a
 * respondent was told is saved can be lost to a crash.
 */
export async function submitResponses(deps: Deps, caller: Caller | null, input: SubmitInput): Promise<SubmitResult> {
  return deps.store.transaction(async (store) => {
    const loaded = await store.polls.getForSubmission(input.pollId);
    if (!loaded || !loaded.poll.isVisible) throw notFound('poll');
    const { poll, slides, webhooks } = loaded;
    if (poll.settings.apiOnly && !(await canSee(store, caller, poll.accountId))) {
      if (!caller) throw new DomainError('unauthenticated', 'this poll takes answers through the API only: send a key of its account');
      throw notFound('poll');
    }
    const byId = new Map(slides.map((s) => [s.id, s]));
    input.answers.forEach((a, i) => {
      const slide = byId.get(a.slideId);
      if (!slide) throw invalid(`/answers/${i}/slideId`, `no slide ${a.slideId} in this poll`);
      checkAnswerValue(slide, a.value, `/answers/${i}/value`);
    });

    const now = deps.clock.now();
    const participantId = input.participantId ?? newId('prt', now.getTime());
    // Inserted if new, locked either way: concurrent submissions of one respondent queue here.
    let participant = await store.responses.upsertAndLockParticipant({
      id: participantId,
      seq: newId('prt', now.getTime()),
      pollId: poll.id,
      accountId: poll.accountId,
      metadata: input.participantMetadata ?? {},
      synthetic: false,
      complete: false,
      completedAt: null,
      createdAt: now,
      updatedAt: now,
    });
    if (input.participantMetadata) {
      participant = { ...participant, metadata: { ...participant.metadata, ...input.participantMetadata }, updatedAt: now };
    }
    if (participant.complete && !poll.settings.allowResubmissions) {
      throw new DomainError('conflict', 'this participant has already completed the poll and it does not allow resubmissions');
    }
    const wasComplete = participant.complete;

    const responses: ResponseRow[] = input.answers.map((a) => ({
      id: newId('rsp', now.getTime()),
      accountId: poll.accountId,
      pollId: poll.id,
      participantId,
      slideId: a.slideId,
      value: a.value,
      metadata: input.metadata ?? {},
      synthetic: false,
      createdAt: now,
    }));
    const all = await store.responses.insertAndListAnswers(responses, poll.id, participantId);
    const answered = new Set(all.map((r) => r.slideId));
    const everyAnswered = slides.filter((s) => !NON_ANSWERABLE.has(s.type)).every((s) => answered.has(s.id));
    const complete = wasComplete || !!input.complete || (slides.length > 0 && everyAnswered);
    const newlyComplete = complete && !wasComplete;
    participant = { ...participant, complete, completedAt: newlyComplete ? now : participant.completedAt, updatedAt: now };
    // Nothing to write when neither completion nor metadata changed (the upsert stored the rest).
    if (newlyComplete || input.participantMetadata) await store.responses.updateParticipant(participant);

    await enqueueForWebhooks(deps, store, { webhooks, poll, slides, participant, responses, all, newlyComplete, now });
    const logic = await planLogic(deps, store, { poll, slides, participant, responses, all, newlyComplete, now });

    return { participantId, responseIds: responses.map((r) => r.id), complete, nextSlideId: logic.nextSlideId, ended: logic.ended || complete };
  });
}

async function enqueueForWebhooks(
  deps: Deps,
  store: Store,
  ctx: {
    webhooks: Webhook[];
    poll: Parameters<typeof newDelivery>[0]['poll'];
    slides: Parameters<typeof newDelivery>[0]['slides'];
    participant: ParticipantRow;
    responses: ResponseRow[];
    all: ResponseRow[];
    newlyComplete: boolean;
    now: Date;
  },
): Promise<void> {
  const window = deps.delivery.batchWindowMs;
  const immediate = [];
  for (const w of ctx.webhooks) {
    const target = { endpointId: w.id, webhookId: w.id, source: 'webhook' as const, url: w.url };
    if (w.deliveryRule === 'complete') {
      // "Send only if fully completed": once, when the respondent reaches the end.
      if (ctx.newlyComplete) immediate.push(newDelivery({ ...ctx, responses: ctx.all, type: 'completed-survey', target, at: ctx.now }));
    } else if (ctx.responses.length) {
      if (window === 0) immediate.push(newDelivery({ ...ctx, type: 'submitted-responses', target, at: ctx.now }));
      else {
        await store.batches.append({
          id: newId('bat', ctx.now.getTime()),
          webhookId: w.id,
          endpointId: w.id,
          accountId: ctx.poll.accountId,
          pollId: ctx.poll.id,
          participantId: ctx.participant.id,
          responseIds: ctx.responses.map((r) => r.id),
          flushAt: new Date(ctx.now.getTime() + window),
          createdAt: ctx.now,
        });
      }
    }
  }
  await store.deliveries.insert(immediate);
}
