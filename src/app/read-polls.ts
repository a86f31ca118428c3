import type { Poll } from '../domain/poll.js';
import { requireAccount, requirePoll } from './access.js';
import type { Caller, Deps, Page, PageRequest, PollRow } from './ports.js';

export async function getPoll(deps: Deps, caller: Caller, pollId: string): Promise<Poll> {
  const poll = await requirePoll(deps.store, caller, pollId, 'read');
  return { ...poll, slides: await deps.store.slides.listByPoll(poll.id) };
}

export async function listPolls(deps: Deps, caller: Caller, accountId: string, page: PageRequest): Promise<Page<PollRow>> {
  await requireAccount(deps.store, caller, accountId, 'read');
  return deps.store.polls.listByAccount(accountId, page);
}
