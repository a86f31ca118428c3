import type { Poll } from '../../domain/poll.js';
import { requirePoll } from '../access.js';
import type { Caller, Deps } from '../ports/index.js';
import { logicViewFor } from './webhook-urls.js';

export async function getPoll(deps: Deps, caller: Caller, pollId: string): Promise<Poll> {
  const poll = await requirePoll(deps.store, caller, pollId, 'read');
  const view = await logicViewFor(deps.store, caller, poll.accountId);
  return view.poll({ ...poll, slides: await deps.store.slides.listByPoll(poll.id) });
}
