import type { Slide } from '../domain/slide.js';
import type { Deps, ParticipantRow, PollRow, ResponseRow, Store } from './ports.js';

export type LogicPlan = { nextSlideId: string | null; ended: boolean };

/** Question and survey action logic (issue C): what comes next, and logic-triggered deliveries. */
export async function planLogic(
  _deps: Deps,
  _store: Store,
  ctx: { poll: PollRow; slides: Slide[]; participant: ParticipantRow; responses: ResponseRow[]; all: ResponseRow[]; newlyComplete: boolean; now: Date },
): Promise<LogicPlan> {
  const answered = new Set(ctx.all.map((r) => r.slideId));
  const next = ctx.slides.find((s) => !answered.has(s.id) && s.type !== 'copy');
  return { nextSlideId: next?.id ?? null, ended: false };
}
