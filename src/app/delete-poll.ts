import { requirePoll } from './access.js';
import type { Caller, Deps } from './ports.js';

/** Slides, participants and responses go with the poll (foreign keys cascade). */
export async function deletePoll(deps: Deps, caller: Caller, pollId: string): Promise<{ id: string; deleted: true }> {
  return deps.store.transaction(async (store) => {
    await requirePoll(store, caller, pollId, 'write');
    await store.polls.delete(pollId);
    return { id: pollId, deleted: true as const };
  });
}
