import type { Poll } from '../../domain/poll.js';
import { requirePoll } from '../access.js';
import type { Caller, Deps } from '../ports/index.js';

export async function getPoll(deps: Deps, caller: Caller, pollId: string): Promise<Poll> {
  const poll = await requirePoll(deps.store, caller, pollId, 'read');
  return { ...poll, slides: await deps.store.slides.listByPoll(poll.id) };
}
