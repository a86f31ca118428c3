import { type Slide } from '../../domain/slide.js';
import { requirePoll } from '../access.js';
import type { Caller, Deps } from '../ports/index.js';
import { logicViewFor } from './webhook-urls.js';

export async function listSlides(deps: Deps, caller: Caller, pollId: string): Promise<Slide[]> {
  const poll = await requirePoll(deps.store, caller, pollId, 'read');
  const view = await logicViewFor(deps.store, caller, poll.accountId);
  return (await deps.store.slides.listByPoll(poll.id)).map((s) => view.slide(s));
}
