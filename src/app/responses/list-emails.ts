import { MAX_RESPONDENT_BYTES } from '../../domain/answer.js';
import { extractEmails } from '../../domain/payload.js';
import type { ParticipantRow } from '../../domain/response.js';
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
 * 1 KB, so that a page reads about 16,000 rows of them at most.
 */
export const ANSWER_ROW_BYTES = 512;
/**
 * Respondents whose answers are counted at a time (an index count each): counting stops at the
 * first group past the page's bytes, so a page of heavy respondents counts a few groups' answers,
 * not every listed respondent's.
 */
const COUNTED_AT_ONCE = 8;

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
  const kept = await withinBytes(
    deps,
    found.data.map((f) => (anonymous.has(f.participant.pollId) ? { ...f, storedBytes: 0, anonymous: true } : f)),
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

type Listed = { participant: ParticipantRow; storedBytes: number | null; anonymous?: true };

/**
 * The first participants whose stored answers fit EMAILS_PAGE_BYTES, each answer with its row's
 * ANSWER_ROW_BYTES (an anonymous poll's weigh nothing: they are not read); one whose values are
 * not yet counted weighs as much as they may hold.
 */
async function withinBytes(deps: Deps, rows: readonly Listed[]): Promise<Listed[]> {
  let total = 0;
  const out: Listed[] = [];
  for (let i = 0; i < rows.length; i += COUNTED_AT_ONCE) {
    const group = rows.slice(i, i + COUNTED_AT_ONCE);
    const read = group.filter((r) => !r.anonymous);
    const counts = await deps.store.responses.answerCounts(
      read.map((r) => ({ pollId: r.participant.pollId, participantId: r.participant.id })),
    );
    const answers = new Map(read.map((r, j) => [r, counts[j] ?? 0]));
    for (const r of group) {
      const bytes = (r.storedBytes ?? MAX_RESPONDENT_BYTES) + (answers.get(r) ?? 0) * ANSWER_ROW_BYTES;
      if (out.length && total + bytes > EMAILS_PAGE_BYTES) return out;
      total += bytes;
      out.push(r);
    }
  }
  return out;
}
