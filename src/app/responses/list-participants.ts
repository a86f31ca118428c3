import { requirePoll } from '../access.js';
import type { Caller, Deps, Page, PageRequest } from '../ports/index.js';
import type { ParticipantRow } from '../../domain/response.js';

export type ParticipantView = Omit<ParticipantRow, 'seq'>;

/** Participants of a poll; the internal sort key stays internal (it is only the opaque cursor). */
export async function listParticipants(
  deps: Deps,
  caller: Caller,
  pollId: string,
  page: PageRequest,
): Promise<Page<ParticipantView>> {
  await requirePoll(deps.store, caller, pollId, 'read');
  const result = await deps.store.responses.listParticipants({ pollId }, page);
  return { ...result, data: result.data.map(({ seq: _seq, ...p }) => p) };
}
