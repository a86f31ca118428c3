import { DomainError, invalid } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import { hasWebhookAction, type QuestionRule } from '../../domain/logic.js';
import { stripHtml, trimStrings } from '../../domain/sanitize.js';
import { MAX_SLIDES, type Slide, type SlideType } from '../../domain/slide.js';
import { checkRuleTargets } from '../webhooks/check-target.js';
import { secretForLogic } from '../accounts/ensure-signing-secret.js';
import { requirePoll, requirePollForUpdate, requireWebhookRuleAccess } from '../access.js';
import type { Caller, Deps } from '../ports/index.js';
import { checkSlide, cleanAnswers, renumber } from './slide-checks.js';

export type SlideInput = {
  pollId: string;
  type: SlideType;
  title: string;
  subtitle?: string;
  answers?: { id?: string; title: string }[];
  multi?: boolean;
  idx?: number;
  logic?: QuestionRule[];
};

export type SavedSlide = { slide: Slide; signingSecret?: string };

export async function createSlide(deps: Deps, caller: Caller, input: SlideInput): Promise<SavedSlide> {
  // Access first (a stranger learns nothing about the URL rules and makes us resolve nothing),
  // then name resolution before the transaction: no lock is held while DNS answers.
  if (hasWebhookAction(input.logic ?? [])) {
    const poll = await requirePoll(deps.store, caller, input.pollId, 'write');
    await requireWebhookRuleAccess(deps.store, caller, poll.accountId, [], input.logic ?? [], deps.urlPolicy);
  }
  await checkRuleTargets(deps, input.logic ?? [], '/logic');
  return deps.store.transaction(async (store) => {
    const poll = await requirePollForUpdate(store, caller, input.pollId);
    const others = await store.slides.listByPoll(poll.id);
    if (others.length >= MAX_SLIDES) throw new DomainError('limit_reached', `a poll has at most ${MAX_SLIDES} slides`);
    const req = trimStrings(input);
    const now = deps.clock.now();
    const idx = Math.min(req.idx ?? others.length, others.length);
    const title = stripHtml(req.title);
    if (!title) throw invalid('/title', 'must not be empty once HTML is removed');
    const slide: Slide = {
      id: newId('sld', now.getTime()),
      pollId: poll.id,
      accountId: poll.accountId,
      idx,
      type: req.type,
      title,
      subtitle: req.subtitle ? stripHtml(req.subtitle) : null,
      answers: cleanAnswers(req.answers ?? [], now.getTime()),
      multi: req.multi ?? false,
      logic: req.logic ?? [],
      createdAt: now,
      updatedAt: now,
    };
    slide.logic = checkSlide(deps, slide, poll, others);
    await requireWebhookRuleAccess(store, caller, poll.accountId, [], slide.logic, deps.urlPolicy);
    await renumber(store, [...others.slice(0, idx), slide, ...others.slice(idx)], slide.id);
    await store.slides.insert(slide);
    const signingSecret = await secretForLogic(store, poll.accountId, slide.logic, now);
    return { slide, ...(signingSecret ? { signingSecret } : {}) };
  });
}
