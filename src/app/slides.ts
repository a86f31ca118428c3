import { DomainError, invalid, notFound } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { checkRules, hasWebhookAction, type QuestionRule, type SurveyRule } from '../domain/logic.js';
import { stripHtml, trimStrings } from '../domain/sanitize.js';
import { checkPosRule, CHOICE_TYPES, type Slide, type SlideType } from '../domain/slide.js';
import { checkRuleTargets } from './check-target.js';
import { secretForLogic } from './signing-secret.js';
import { requirePoll, requirePollForUpdate, requireWebhookRuleAccess } from './access.js';
import type { Caller, Deps, PollRow, Store } from './ports.js';

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

export type SlidePatch = Partial<Omit<SlideInput, 'pollId'>> & { slideId: string };

function cleanAnswers(answers: { id?: string; title: string }[], now: number): Slide['answers'] {
  const cleaned = answers.map((a, i) => {
    const title = stripHtml(a.title);
    if (!title) throw invalid(`/answers/${i}/title`, 'must not be empty');
    return { id: a.id ?? newId('ans', now), title };
  });
  const seen = new Set<string>();
  cleaned.forEach((a, i) => {
    if (seen.has(a.title)) throw invalid(`/answers/${i}/title`, 'duplicates another answer');
    seen.add(a.title);
  });
  return cleaned;
}

/** Checks a slide against its poll; returns its logic with webhook URLs normalised. */
function checkSlide(deps: Deps, slide: Slide, pageRules: string[], others: Slide[]): Slide['logic'] {
  checkPosRule(pageRules, [...others.map((s) => s.type), slide.type]);
  if (CHOICE_TYPES.has(slide.type) && slide.type !== 'binary' && slide.answers.length === 0) {
    throw invalid('/answers', `a ${slide.type} slide needs at least one answer`);
  }
  return checkRules(slide.logic, new Set([...others.map((s) => s.id), slide.id]), deps.urlPolicy, '/logic');
}

export type SavedSlide = { slide: Slide; signingSecret?: string };

/**
 * Stores `ordered` as the poll's slide order: idx is the place in the list (0..n-1), so
 * inserting, moving and deleting never leave gaps that later inserts would land in.
 * Writes only the slides whose place changed; `except` is written by the caller.
 */
async function renumber(store: Store, ordered: Slide[], except?: string): Promise<void> {
  for (const [i, s] of ordered.entries()) {
    if (s.id !== except && s.idx !== i) await store.slides.update({ ...s, idx: i });
  }
}

/** A slide to change, with its poll locked (see requirePollForUpdate) and both read under the lock. */
async function requireSlideForUpdate(store: Store, caller: Caller, slideId: string): Promise<{ slide: Slide; poll: PollRow }> {
  const found = await store.slides.get(slideId);
  if (!found) throw notFound('slide');
  let poll: PollRow;
  try {
    poll = await requirePollForUpdate(store, caller, found.pollId);
  } catch (e) {
    if (e instanceof DomainError && e.code === 'not_found') throw notFound('slide');
    throw e;
  }
  const slide = await store.slides.get(slideId);
  if (!slide) throw notFound('slide');
  return { slide, poll };
}

/** The slide, for a caller who may change it; another account's slide is a plain 404. No lock. */
async function requireSlideAccess(store: Store, caller: Caller, slideId: string): Promise<Slide> {
  const found = await store.slides.get(slideId);
  if (!found) throw notFound('slide');
  await requirePoll(store, caller, found.pollId, 'write').catch((e: unknown) => {
    throw e instanceof DomainError && e.code === 'not_found' ? notFound('slide') : e;
  });
  return found;
}

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
    slide.logic = checkSlide(deps, slide, poll.pageRules, others);
    await requireWebhookRuleAccess(store, caller, poll.accountId, [], slide.logic, deps.urlPolicy);
    await renumber(store, [...others.slice(0, idx), slide, ...others.slice(idx)], slide.id);
    await store.slides.insert(slide);
    const signingSecret = await secretForLogic(store, poll.accountId, slide.logic, now);
    return { slide, ...(signingSecret ? { signingSecret } : {}) };
  });
}

export async function updateSlide(deps: Deps, caller: Caller, patch: SlidePatch): Promise<SavedSlide> {
  // Access first, then name resolution (see createSlide).
  if (patch.logic) {
    const current = await requireSlideAccess(deps.store, caller, patch.slideId);
    await requireWebhookRuleAccess(deps.store, caller, current.accountId, current.logic, patch.logic, deps.urlPolicy);
  }
  await checkRuleTargets(deps, patch.logic ?? [], '/logic');
  return deps.store.transaction(async (store) => {
    const { slide: current, poll } = await requireSlideForUpdate(store, caller, patch.slideId);
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
      answers: p.answers ? cleanAnswers(p.answers, now.getTime()) : current.answers,
      multi: p.multi ?? current.multi,
      logic: p.logic ?? current.logic,
      idx: p.idx !== undefined ? Math.min(p.idx, others.length) : all.findIndex((s) => s.id === current.id),
      updatedAt: now,
    };
    slide.logic = checkSlide(deps, slide, poll.pageRules, others);
    await requireWebhookRuleAccess(store, caller, poll.accountId, current.logic, slide.logic, deps.urlPolicy);
    await renumber(store, [...others.slice(0, slide.idx), slide, ...others.slice(slide.idx)], slide.id);
    await store.slides.update(slide);
    const signingSecret = patch.logic ? await secretForLogic(store, poll.accountId, slide.logic, now) : undefined;
    return { slide, ...(signingSecret ? { signingSecret } : {}) };
  });
}

export async function deleteSlide(deps: Deps, caller: Caller, slideId: string): Promise<{ id: string; deleted: true }> {
  return deps.store.transaction(async (store) => {
    const { slide, poll } = await requireSlideForUpdate(store, caller, slideId);
    await requireWebhookRuleAccess(store, caller, poll.accountId, slide.logic, [], deps.urlPolicy);
    const others = (await store.slides.listByPoll(slide.pollId)).filter((s) => s.id !== slide.id);
    const dangling = others.filter((s) => s.logic.some((r) => r.action.type === 'skip-to' && r.action.slideId === slideId));
    if (dangling.length) {
      throw new DomainError('conflict', `slide ${dangling[0]!.id} has logic that skips to this slide; change it first`);
    }
    const named = (r: SurveyRule) => (r.action.type === 'skip-to' && r.action.slideId === slideId) || (r.conditions ?? []).some((c) => c.slideId === slideId);
    if (poll.actionLogic.some(named)) {
      throw new DomainError('conflict', "the poll's survey action logic refers to this slide; change it first");
    }
    await store.slides.delete(slideId);
    await renumber(store, others);
    return { id: slideId, deleted: true as const };
  });
}

export async function listSlides(deps: Deps, caller: Caller, pollId: string): Promise<Slide[]> {
  const poll = await requirePoll(deps.store, caller, pollId, 'read');
  return deps.store.slides.listByPoll(poll.id);
}
