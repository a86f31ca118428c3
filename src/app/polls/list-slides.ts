import { type Slide } from '../../domain/slide.js';
import { requirePoll } from '../access.js';
import type { Caller, Deps } from '../ports/index.js';

export async function listSlides(deps: Deps, caller: Caller, pollId: string): Promise<Slide[]> {
  const poll = await requirePoll(deps.store, caller, pollId, 'read');
  return deps.store.slides.listByPoll(poll.id);
}
