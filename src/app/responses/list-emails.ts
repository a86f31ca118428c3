import { MAX_RESPONDENT_BYTES } from '../../domain/answer.js';
import { extractEmails } from '../../domain/payload.js';
import type { Caller, Deps, Page, PageRequest } from '../ports/index.js';
import { type Scope, authorizeScope } from './authorize-scope.js';
import { byRespondent, respondentKey } from './submit-responses.js';

export type ParticipantEmails = { pollId: string; participantId: string; email: string | null; emails: string[] };

/**
 * What one page reads of its respondents' stored answers at most (each holds up to
 * MAX_RESPONDENT_BYTES): past it the page ends early, with hasNextPage. One respondent is
 * always listed.
 */
export const EMAILS_PAGE_BYTES = 8 * MAX_RESPONDENT_BYTES;
/**
 * What each answer weighs beside its value: the row that carries it (its ids, slide, time),
 * read and held as the value is. A respondent of 1,000 one-byte answers weighs about 0.5 MB, not
 * 1 KB, so that a page never reads more than about 16,000 rows of them.
 */
export const ANSWER_ROW_BYTES = 512;

/** Addresses found per participant, by the webhook payload's rule (extractEmails); none for an anonymous poll. */
export async function listEmails(
  deps: Deps,
  caller: Caller,
  scope: Scope,
  page: PageRequest,
): Promise<Page<ParticipantEmails>> {
  const s = await authorizeScope(deps, caller, scope);
  const found = await deps.store.responses.listParticipantsWithBytes(s, page);
  // Anonymous polls' answers are not read (their addresses are never listed): they weigh nothing.
  const anonymous = await deps.store.polls.anonymousAmong([...new Set(found.data.map((f) => f.participant.pollId))]);
  const kept = withinBytes(
    found.data.map((f) => (anonymous.has(f.participant.pollId) ? { ...f, storedBytes: 0, answers: 0 } : f)),
  );
  const participants = kept.map((k) => k.participant);
  const trimmed = kept.length < found.data.length;
  const answers = byRespondent(
    await deps.store.responses.ofParticipants(
      participants.filter((p) => !anonymous.has(p.pollId)).map((p) => ({ pollId: p.pollId, participantId: p.id })),
    ),
  );
  const data = participants.map((p) => {
    const responses = answers.get(respondentKey(p.pollId, p.id)) ?? [];
    const emails = anonymous.has(p.pollId)
      ? []
      : extractEmails(responses, p.metadata, [...new Set(responses.map((r) => r.metadata))]);
    return { pollId: p.pollId, participantId: p.id, email: emails[0] ?? null, emails };
  });
  return {
    data,
    hasNextPage: found.hasNextPage || trimmed,
    endCursor: trimmed ? participants[participants.length - 1]!.seq : found.endCursor,
  };
}

/**
 * The first participants whose stored answers fit EMAILS_PAGE_BYTES, each answer with its row's
 * ANSWER_ROW_BYTES; one whose values are not yet counted weighs as much as they may hold.
 */
function withinBytes<T extends { storedBytes: number | null; answers: number }>(rows: readonly T[]): T[] {
  let total = 0;
  const out: T[] = [];
  for (const r of rows) {
    const bytes = (r.storedBytes ?? MAX_RESPONDENT_BYTES) + r.answers * ANSWER_ROW_BYTES;
    if (out.length && total + bytes > EMAILS_PAGE_BYTES) break;
    total += bytes;
    out.push(r);
  }
  return out;
}
