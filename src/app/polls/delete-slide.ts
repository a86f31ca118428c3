import { DomainError } from '../../domain/errors.js';
import { droppedUrls, type SurveyRule } from '../../domain/logic.js';
import { requireWebhookRuleAccess } from '../access.js';
import type { Caller, Deps } from '../ports/index.js';
import { renumber, requireSlideForUpdate } from './slide-checks.js';

export async function deleteSlide(deps: Deps, caller: Caller, slideId: string): Promise<{ id: string; deleted: true }> {
  return deps.store.transaction(async (store) => {
    const { slide, poll } = await requireSlideForUpdate(store, caller, slideId);
    await requireWebhookRuleAccess(store, caller, poll.accountId, slide.logic, [], deps.urlPolicy);
    const others = (await store.slides.listByPoll(slide.pollId)).filter((s) => s.id !== slide.id);
    const dangling = others.filter((s) =>
      s.logic.some((r) => r.action.type === 'skip-to' && r.action.slideId === slideId),
    );
    if (dangling.length) {
      throw new DomainError('conflict', `slide ${dangling[0]!.id} has logic that skips to this slide; change it first`);
    }
    const named = (r: SurveyRule) =>
      (r.action.type === 'skip-to' && r.action.slideId === slideId) ||
      (r.conditions ?? []).some((c) => c.slideId === slideId);
    if (poll.actionLogic.some(named)) {
      throw new DomainError('conflict', "the poll's survey action logic refers to this slide; change it first");
    }
    await store.slides.delete(slideId);
    // Its Trigger webhook actions go with it, and their queued deliveries too (README, Webhooks).
    await store.deliveries.cancelLogic(
      {
        accountId: poll.accountId,
        pollId: poll.id,
        source: 'question-logic',
        slideId,
        urls: droppedUrls(slide.logic, []),
      },
      deps.clock.now(),
    );
    await renumber(store, others);
    return { id: slideId, deleted: true as const };
  });
}
