import { invalid } from '../../domain/errors.js';
import { droppedUrls } from '../../domain/logic.js';
import { stripHtml, trimStrings } from '../../domain/sanitize.js';
import { type Slide } from '../../domain/slide.js';
import { checkRuleTargets } from '../webhooks/check-target.js';
import { secretForLogic } from '../accounts/ensure-signing-secret.js';
import { requireWebhookRuleAccess } from '../access.js';
import type { Caller, Deps } from '../ports/index.js';
import { unmaskWebhookUrls } from '../../domain/webhook-url-mask.js';
import { logicView, managesWebhooks } from './webhook-urls.js';
import type { SavedSlide, SlideInput } from './create-slide.js';
import { checkSlide, cleanAnswers, renumber, requireSlideAccess, requireSlideForUpdate } from './slide-checks.js';

export type SlidePatch = Partial<Omit<SlideInput, 'pollId'>> & { slideId: string };

export async function updateSlide(deps: Deps, caller: Caller, sent: SlidePatch): Promise<SavedSlide> {
  // Access first, then name resolution (see createSlide).
  if (sent.logic) {
    const current = await requireSlideAccess(deps.store, caller, sent.slideId);
    const logic = unmaskWebhookUrls(sent.logic, current.logic);
    await requireWebhookRuleAccess(deps.store, caller, current.accountId, current.logic, logic, deps.urlPolicy);
    await checkRuleTargets(deps, logic, '/logic', current.logic);
  }
  return deps.store.transaction(async (store) => {
    const { slide: current, poll } = await requireSlideForUpdate(store, caller, sent.slideId);
    const manages = await managesWebhooks(store, caller, poll.accountId);
    // Masked URLs stand for what is stored now, under the lock.
    const patch = sent.logic ? { ...sent, logic: unmaskWebhookUrls(sent.logic, current.logic) } : sent;
    const all = await store.slides.listByPoll(poll.id);
    const others = all.filter((s) => s.id !== current.id);
    const p = trimStrings(patch);
    const now = deps.clock.now();
    let title = current.title;
    if (p.title !== undefined) {
      title = stripHtml(p.title);
      if (!title) throw invalid('/title', 'must not be empty once HTML is removed');
    }
    const slide: Slide = {
      ...current,
      type: p.type ?? current.type,
      title,
      subtitle: p.subtitle !== undefined ? stripHtml(p.subtitle) || null : current.subtitle,
      answers: p.answers ? cleanAnswers(p.answers, now.getTime(), current.answers) : current.answers,
      multi: p.multi ?? current.multi,
      logic: p.logic ?? current.logic,
      idx: p.idx !== undefined ? Math.min(p.idx, others.length) : all.findIndex((s) => s.id === current.id),
      updatedAt: now,
    };
    // The role first: an editor whose masked URL stands for nothing now is told it may not change
    // the action, not asked for a URL it cannot see.
    await requireWebhookRuleAccess(store, caller, poll.accountId, current.logic, slide.logic, deps.urlPolicy);
    slide.logic = checkSlide(deps, slide, poll, others, current);
    await renumber(store, [...others.slice(0, slide.idx), slide, ...others.slice(slide.idx)], slide.id);
    await store.slides.update(slide);
    // A Trigger webhook action removed, or moved to another URL, takes its queued deliveries
    // with it (README, Webhooks); the same URL on another slide is another target and keeps its.
    await store.deliveries.cancelLogic(
      {
        accountId: poll.accountId,
        pollId: poll.id,
        source: 'question-logic',
        slideId: slide.id,
        urls: droppedUrls(current.logic, slide.logic),
      },
      now,
    );
    // The secret is made and shown only to a role that manages webhooks: an editor may save
    // Trigger webhook actions as they are stored, not learn the secret they are signed with.
    const signingSecret =
      patch.logic && manages ? await secretForLogic(store, poll.accountId, slide.logic, now) : undefined;
    return { slide: logicView(manages).slide(slide), ...(signingSecret ? { signingSecret } : {}) };
  });
}
