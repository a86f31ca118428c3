import { notFound } from '../domain/errors.js';
import type { Poll } from '../domain/poll.js';
import { requireAccount } from './access.js';
import { preparePoll, type CreatePollInput } from './create-poll.js';
import type { Caller, Deps } from './ports.js';

export type CommitResult = { created: boolean; poll: Poll };

/**
 * Saves a dry-run preview. The preview's id makes the commit idempotent: a second commit of the
 * same preview returns the poll saved by the first. Everything else is re-validated and
 * re-authorised as if it were a new create request, so an edited preview gains nothing.
 */
export async function commitPoll(deps: Deps, caller: Caller, previewId: string, input: CreatePollInput): Promise<CommitResult> {
  await requireAccount(deps.store, caller, input.accountId, 'write');
  const existing = await deps.store.polls.get(previewId);
  if (existing) {
    if (existing.accountId !== input.accountId) throw notFound('poll');
    return { created: false, poll: { ...existing, slides: await deps.store.slides.listByPoll(existing.id) } };
  }
  const poll = await preparePoll(deps, caller, input, previewId);
  const inserted = await deps.store.polls.insert(poll);
  if (!inserted) {
    // A concurrent commit of the same preview won the race: answer with what it saved.
    const winner = await deps.store.polls.get(previewId);
    if (!winner || winner.accountId !== input.accountId) throw notFound('poll');
    return { created: false, poll: { ...winner, slides: [] } };
  }
  return { created: true, poll };
}
