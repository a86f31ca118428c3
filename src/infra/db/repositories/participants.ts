import { sql, type Kysely, type Selectable } from 'kysely';
import type { ParticipantRow } from '../../../domain/response.js';
import type { ResponseFilter } from '../../../app/ports/index.js';
import type { DB, ParticipantsTable, ResponsesTable } from '../schema.js';
import { idBoundAt } from '../../../domain/ids.js';
import { json, toPage } from './page.js';
import { pageOfAnswers, respondentAnswers } from './response-metadata.js';

export const toParticipant = (r: Selectable<ParticipantsTable>): ParticipantRow => ({
  id: r.id,
  seq: r.seq,
  pollId: r.poll_id,
  accountId: r.account_id,
  metadata: r.metadata,
  synthetic: r.synthetic,
  complete: r.complete,
  completedAt: r.completed_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export const participantRow = (p: ParticipantRow) => ({
  id: p.id,
  seq: p.seq,
  poll_id: p.pollId,
  account_id: p.accountId,
  metadata: json(p.metadata),
  synthetic: p.synthetic,
  complete: p.complete,
  completed_at: p.completedAt,
  created_at: p.createdAt,
  updated_at: p.updatedAt,
  ...(p.answerBytes !== undefined ? { answer_bytes: p.answerBytes } : {}),
});

export function participantReads(db: Kysely<DB>) {
  return {
    async getParticipant(pollId: string, id: string) {
      const r = await db
        .selectFrom('participants')
        .selectAll()
        .where('poll_id', '=', pollId)
        .where('id', '=', id)
        .executeTakeFirst();
      return r && toParticipant(r);
    },
    async ofParticipant(pollId: string, participantId: string) {
      const rows = await db
        .selectFrom('responses')
        .selectAll()
        .where('poll_id', '=', pollId)
        .where('participant_id', '=', participantId)
        .orderBy('id')
        .execute();
      return respondentAnswers(rows);
    },
    async list(f: ResponseFilter, page: { startCursor?: string | undefined; limit: number }) {
      let q = db.selectFrom('responses').selectAll();
      if (f.pollId) q = q.where('poll_id', '=', f.pollId);
      if (f.accountId) q = q.where('account_id', '=', f.accountId);
      // An answer's id starts with its creation time: bounded by id too, the index walk starts
      // and ends at the window (as the delivery log's, deliveries.ts).
      const after = f.createdAfter && idBoundAt('rsp', f.createdAfter.getTime());
      const before = f.createdBefore && idBoundAt('rsp', f.createdBefore.getTime());
      if (f.createdAfter) q = q.where('created_at', '>', f.createdAfter);
      if (f.createdBefore) q = q.where('created_at', '<', f.createdBefore);
      if (after) q = q.where('id', '>=', after);
      if (before) q = q.where('id', '<', before);
      if (page.startCursor) q = q.where('id', '>', page.startCursor);
      const rows = await q
        .orderBy('id')
        .limit(page.limit + 1)
        .execute();
      return toPage(await pageOfAnswers(db, rows), page);
    },
    async listParticipants(
      f: { pollId?: string; accountId?: string },
      page: { startCursor?: string | undefined; limit: number },
    ) {
      const found = await pageOfParticipants(db, f, page);
      return { ...found, data: found.data.map(toParticipant) };
    },
    async listParticipantsWithBytes(
      f: { pollId?: string; accountId?: string },
      page: { startCursor?: string | undefined; limit: number },
    ) {
      const found = await pageOfParticipants(db, f, page);
      return {
        ...found,
        data: found.data.map((r) => ({ participant: toParticipant(r), storedBytes: r.answer_bytes })),
      };
    },
    async answerCounts(respondents: readonly { pollId: string; participantId: string }[]) {
      if (!respondents.length) return [];
      // One count per respondent, in the order asked, by the (poll_id, participant_id) index.
      const r = await sql<{ n: number }>`
        SELECT (SELECT count(*)::int FROM responses r WHERE r.poll_id = v.poll_id AND r.participant_id = v.id) AS n
        FROM unnest(${respondents.map((x) => x.pollId)}::text[], ${respondents.map((x) => x.participantId)}::text[])
          WITH ORDINALITY AS v(poll_id, id, i)
        ORDER BY v.i`.execute(db);
      return r.rows.map((x) => x.n);
    },
    async ofParticipants(respondents: readonly { pollId: string; participantId: string }[]) {
      if (!respondents.length) return [];
      // Arrays, not IN lists: the statement's text is the same whatever the page's size.
      const r = await sql<Selectable<ResponsesTable>>`
        SELECT * FROM responses
        WHERE (poll_id, participant_id) IN (SELECT * FROM unnest(${respondents.map((x) => x.pollId)}::text[], ${respondents.map((x) => x.participantId)}::text[]))
        ORDER BY id`.execute(db);
      return respondentAnswers(r.rows);
    },
  };
}

/** Participants in seq order (the opaque cursor), limit + 1 read to learn whether more follow. */
async function pageOfParticipants(
  db: Kysely<DB>,
  f: { pollId?: string; accountId?: string },
  page: { startCursor?: string | undefined; limit: number },
) {
  let q = db.selectFrom('participants').selectAll();
  if (f.pollId) q = q.where('poll_id', '=', f.pollId);
  if (f.accountId) q = q.where('account_id', '=', f.accountId);
  if (page.startCursor) q = q.where('seq', '>', page.startCursor);
  const rows = await q
    .orderBy('seq')
    .limit(page.limit + 1)
    .execute();
  const hasNextPage = rows.length > page.limit;
  const data = hasNextPage ? rows.slice(0, page.limit) : rows;
  return { data, hasNextPage, endCursor: data.length ? data[data.length - 1]!.seq : null };
}
