import { newId } from '../../domain/ids.js';
import { firingQuestionRules, firingSurveyRules, navigation } from '../../domain/logic-eval.js';
import type { Slide } from '../../domain/slide.js';
import type { DeliverySource } from '../../domain/webhook.js';
import type { NewDelivery } from '../../domain/delivery.js';
import { newDelivery, type EventBodies } from '../delivery/new-delivery.js';
import type { ParticipantRow, ResponseRow } from '../../domain/response.js';
import type { LogicEndpoint, SubmittedPoll } from '../ports/index.js';

/** A Trigger webhook action whose conditions hold: a delivery to its URL's endpoint. */
export type LogicTarget = {
  source: DeliverySource;
  slideId: string | null;
  url: string;
  type: 'submitted-responses' | 'completed-survey';
};

export type LogicPlan = { nextSlideId: string | null; ended: boolean; targets: LogicTarget[] };

type Ctx = {
  poll: SubmittedPoll;
  slides: Slide[];
  participant: ParticipantRow;
  responses: ResponseRow[];
  all: ResponseRow[];
  newlyComplete: boolean;
  now: Date;
  /** The submission's bodies made so far, which its targets of one event share. */
  bodies?: EventBodies;
};

/**
 * Question logic and survey action logic for one submission: trigger-webhook actions whose
 * conditions hold are its targets (logicDeliveries makes their deliveries, with the same payload,
 * signature and ladder as saved webhooks), and the other actions tell the widget what comes next.
 */
export function planLogic(ctx: Ctx): LogicPlan {
  const bySlide = new Map(ctx.slides.map((s) => [s.id, s]));
  const targets = new Map<string, LogicTarget>();
  let nav = { nextSlideId: null as string | null, ended: false };

  for (const r of ctx.responses) {
    const slide = bySlide.get(r.slideId);
    if (!slide) continue;
    const fired = firingQuestionRules(slide.logic, r.value);
    for (const rule of fired) {
      if (rule.action.type === 'trigger-webhook') {
        targets.set(`q|${slide.id}|${rule.action.url}`, {
          source: 'question-logic',
          slideId: slide.id,
          url: rule.action.url,
          type: 'submitted-responses',
        });
      }
    }
    // The last answer of the submission decides where the respondent goes.
    const action = navigation(fired);
    const after = ctx.slides.find((s) => s.idx > slide.idx) ?? null;
    if (action?.type === 'skip-to') nav = { nextSlideId: action.slideId, ended: false };
    else if (action?.type === 'end-survey') nav = { nextSlideId: null, ended: true };
    else nav = { nextSlideId: after?.id ?? null, ended: after === null };
  }

  if (ctx.newlyComplete && ctx.poll.actionLogic.length) {
    const answers = new Map(ctx.all.map((r) => [r.slideId, r.value]));
    for (const rule of firingSurveyRules(ctx.poll.actionLogic, answers)) {
      if (rule.action.type === 'trigger-webhook') {
        targets.set(`s|${rule.action.url}`, {
          source: 'survey-logic',
          slideId: null,
          url: rule.action.url,
          type: 'completed-survey',
        });
      }
    }
  }

  return { ...nav, targets: [...targets.values()] };
}

/** The endpoint a target is sent to, as made on its first use. */
export const logicEndpoint = (poll: { id: string; accountId: string }, t: LogicTarget, now: Date): LogicEndpoint => ({
  id: newId('end', now.getTime()),
  accountId: poll.accountId,
  pollId: poll.id,
  source: t.source,
  slideId: t.slideId,
  url: t.url,
  createdAt: now,
});

/** One submission's deliveries to its targets, each to its endpoint (`endpointIds`, in order). */
export function logicDeliveries(
  ctx: Ctx,
  targets: readonly LogicTarget[],
  endpointIds: readonly string[],
): NewDelivery[] {
  return targets.map((t, i) =>
    newDelivery({
      ...ctx,
      responses: t.type === 'completed-survey' ? ctx.all : ctx.responses,
      respondent: ctx.all,
      type: t.type,
      target: { endpointId: endpointIds[i]!, webhookId: null, source: t.source, url: t.url },
      at: ctx.now,
      bodies: ctx.bodies,
    }),
  );
}
