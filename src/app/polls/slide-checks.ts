import { DomainError, invalid, notFound } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import { checkRules, checkWebhookTargets, savedUrls, webhookTargets } from '../../domain/logic.js';
import { stripHtml } from '../../domain/sanitize.js';
import { checkPollSlideBytes, checkPosRule, CHOICE_TYPES, type Slide } from '../../domain/slide.js';
import { requirePoll, requirePollForUpdate } from '../access.js';
import type { Caller, Deps, PollRow, Store } from '../ports/index.js';

/**
 * A slide's answers as stored. A title sent as it is stored stays so (it was cleaned when first
 * saved): the answers already given and the logic that names it must keep matching it.
 */
export function cleanAnswers(
  answers: { id?: string; title: string }[],
  now: number,
  stored: Slide['answers'] = [],
): Slide['answers'] {
  const kept = new Set(stored.map((a) => a.title));
  const cleaned = answers.map((a, i) => {
    const title = kept.has(a.title.trim()) ? a.title.trim() : stripHtml(a.title);
    if (!title) throw invalid(`/answers/${i}/title`, 'must not be empty');
    // A client's own ids name the answers to its integrations: each must name one answer.
    const id = a.id === undefined ? newId('ans', now) : a.id.trim();
    if (!id) throw invalid(`/answers/${i}/id`, 'must not be empty');
    return { id, title };
  });
  const seen = new Set<string>();
  const ids = new Set<string>();
  cleaned.forEach((a, i) => {
    if (seen.has(a.title)) throw invalid(`/answers/${i}/title`, 'duplicates another answer');
    if (ids.has(a.id)) throw invalid(`/answers/${i}/id`, "duplicates another answer's id");
    seen.add(a.title);
    ids.add(a.id);
  });
  return cleaned;
}

/**
 * Checks a slide against its poll; returns its logic with webhook URLs normalised. `saved` is
 * the slide as stored, when it is changed.
 */
export function checkSlide(
  deps: Deps,
  slide: Slide,
  poll: Pick<PollRow, 'pageRules' | 'actionLogic'>,
  others: Slide[],
  saved: Slide | null = null,
): Slide['logic'] {
  checkPosRule(poll.pageRules, [...others.map((s) => s.type), slide.type]);
  if (CHOICE_TYPES.has(slide.type) && slide.type !== 'binary' && slide.answers.length === 0) {
    throw invalid('/answers', `a ${slide.type} slide needs at least one answer`);
  }
  const logic = checkRules(
    slide.logic,
    new Set([...others.map((s) => s.id), slide.id]),
    deps.urlPolicy,
    '/logic',
    saved?.logic ?? [],
  );
  const besides = webhookTargets(others, poll.actionLogic);
  checkWebhookTargets(besides + savedUrls(logic).size, besides + savedUrls(saved?.logic ?? []).size, '/logic');
  checkPollSlideBytes({ ...slide, logic }, others, saved);
  return logic;
}

/**
 * Stores `ordered` as the poll's slide order: idx is the place in the list (0..n-1), so
 * inserting, moving and deleting never leave gaps that later inserts would land in.
 * Writes only the slides whose place changed; `except` is written by the caller.
 */
export async function renumber(store: Store, ordered: Slide[], except?: string): Promise<void> {
  for (const [i, s] of ordered.entries()) {
    if (s.id !== except && s.idx !== i) await store.slides.update({ ...s, idx: i });
  }
}

/** A slide to change, with its poll locked (see requirePollForUpdate) and both read under the lock. */
export async function requireSlideForUpdate(
  store: Store,
  caller: Caller,
  slideId: string,
): Promise<{ slide: Slide; poll: PollRow }> {
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
export async function requireSlideAccess(store: Store, caller: Caller, slideId: string): Promise<Slide> {
  const found = await store.slides.get(slideId);
  if (!found) throw notFound('slide');
  await requirePoll(store, caller, found.pollId, 'write').catch((e: unknown) => {
    throw e instanceof DomainError && e.code === 'not_found' ? notFound('slide') : e;
  });
  return found;
}
