import { extractEmails } from '../../domain/payload.js';
import type { Caller, Deps, Page, PageRequest } from '../ports/index.js';
import { type Scope, authorizeScope } from './authorize-scope.js';

export type ParticipantEmails = { pollId: string; participantId: string; email: string | null; emails: string[] };

/** Addresses found per participant, by the webhook payload's rule (extractEmails); none for an anonymous poll. */
export async function listEmails(
  deps: Deps,
  caller: Caller,
  scope: Scope,
  page: PageRequest,
): Promise<Page<ParticipantEmails>> {
  const s = await authorizeScope(deps, caller, scope);
  const participants = await deps.store.responses.listParticipants(s, page);
  const data: ParticipantEmails[] = [];
  const anonymous = new Map<string, boolean>();
  for (const p of participants.data) {
    if (!anonymous.has(p.pollId)) anonymous.set(p.pollId, !!(await deps.store.polls.get(p.pollId))?.settings.anonymous);
    const responses = await deps.store.responses.ofParticipant(p.pollId, p.id);
    const emails = anonymous.get(p.pollId)
      ? []
      : extractEmails(responses, p.metadata, [...new Set(responses.map((r) => r.metadata))]);
    data.push({ pollId: p.pollId, participantId: p.id, email: emails[0] ?? null, emails });
  }
  return { ...participants, data };
}
