import { sql, type Kysely, type Selectable } from 'kysely';
import type { ParticipantRow, ResponseFilter, ResponseRow } from '../../../app/ports.js';
import type { DB, ParticipantsTable, ResponsesTable } from '../schema.js';
import { cmp, json, toPage } from './page.js';

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

export const toResponse = (r: Selectable<ResponsesTable>): ResponseRow => ({
  id: r.id,
  accountId: r.account_id,
  pollId: r.poll_id,
  participantId: r.participant_id,
  slideId: r.slide_id,
  value: r.value,
  metadata: r.metadata,
  synthetic: r.synthetic,
  createdAt: r.created_at,
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
});

export function participantReads(db: Kysely<DB>) {
  return {
    async getParticipant(pollId: string, id: string) {
      const r = await db.selectFrom('participants').selectAll().where('poll_id', '=', pollId).where('id', '=', id).executeTakeFirst();
      return r && toParticipant(r);
    },
    async lockParticipant(pollId: string, id: string) {
      const r = await db.selectFrom('participants').selectAll().where('poll_id', '=', pollId).where('id', '=', id).forUpdate().executeTakeFirst();
      return r && toParticipant(r);
    },
    async upsertAndLockParticipants(rows: ParticipantRow[]) {
      if (!rows.length) return [];
      // ON CONFLICT DO UPDATE takes the row lock whether the row is new or not, and returns the
      // stored row: concurrent first submissions of one id queue here instead of colliding.
      // Rows are locked in key order, so groups of submissions sharing respondents cannot deadlock.
      const sorted = [...rows].sort((a, b) => cmp(a.pollId, b.pollId) || cmp(a.id, b.id));
      const r = await db
        .insertInto('participants')
        .values(sorted.map(participantRow))
        .onConflict((oc) => oc.columns(['poll_id', 'id']).doUpdateSet({ updated_at: sql`participants.updated_at` }))
        .returningAll()
        .execute();
      return r.map(toParticipant);
    },
    async insertAndListAnswers(rows: ResponseRow[], participants: { pollId: string; participantId: string }[]) {
      if (!participants.length) return [];
      // The inserted rows are not visible to the outer SELECT of the same statement: union them in.
      const col = <T>(f: (r: ResponseRow) => T) => rows.map(f);
      const r = await sql<Selectable<ResponsesTable>>`
        WITH ins AS (
          INSERT INTO responses (id, account_id, poll_id, participant_id, slide_id, value, metadata, synthetic, created_at)
          SELECT id, account_id, poll_id, participant_id, slide_id, value::jsonb, metadata::jsonb, synthetic, created_at
          FROM unnest(
            ${col((x) => x.id)}::text[], ${col((x) => x.accountId)}::text[], ${col((x) => x.pollId)}::text[], ${col((x) => x.participantId)}::text[],
            ${col((x) => x.slideId)}::text[], ${col((x) => JSON.stringify(x.value))}::text[], ${col((x) => JSON.stringify(x.metadata))}::text[],
            ${col((x) => x.synthetic)}::boolean[], ${col((x) => x.createdAt.toISOString())}::timestamptz[]
          ) AS v(id, account_id, poll_id, participant_id, slide_id, value, metadata, synthetic, created_at)
          RETURNING *
        )
        SELECT r.* FROM responses r
          JOIN unnest(${participants.map((p) => p.pollId)}::text[], ${participants.map((p) => p.participantId)}::text[]) AS k(poll_id, participant_id)
            ON r.poll_id = k.poll_id AND r.participant_id = k.participant_id
        UNION ALL SELECT * FROM ins
        ORDER BY participant_id, id`.execute(db);
      return r.rows.map(toResponse);
    },
    async updateParticipants(rows: ParticipantRow[]) {
      if (!rows.length) return;
      const col = <T>(f: (p: ParticipantRow) => T) => rows.map(f);
      await sql`
        UPDATE participants p
        SET metadata = v.metadata::jsonb, complete = v.complete, completed_at = v.completed_at, updated_at = v.updated_at
        FROM unnest(
          ${col((x) => x.pollId)}::text[], ${col((x) => x.id)}::text[], ${col((x) => json(x.metadata))}::text[],
          ${col((x) => x.complete)}::boolean[], ${col((x) => x.completedAt?.toISOString() ?? null)}::timestamptz[], ${col((x) => x.updatedAt.toISOString())}::timestamptz[]
        ) AS v(poll_id, id, metadata, complete, completed_at, updated_at)
        WHERE p.poll_id = v.poll_id AND p.id = v.id`.execute(db);
    },
    async ofParticipant(pollId: string, participantId: string) {
      const rows = await db.selectFrom('responses').selectAll().where('poll_id', '=', pollId).where('participant_id', '=', participantId).orderBy('id').execute();
      return rows.map(toResponse);
    },
    async byIds(ids: string[]) {
      if (!ids.length) return [];
      const rows = await db.selectFrom('responses').selectAll().where('id', 'in', ids).orderBy('id').execute();
      return rows.map(toResponse);
    },
    async list(f: ResponseFilter, page: { startCursor?: string | undefined; limit: number }) {
      let q = db.selectFrom('responses').selectAll();
      if (f.pollId) q = q.where('poll_id', '=', f.pollId);
      if (f.accountId) q = q.where('account_id', '=', f.accountId);
      if (f.createdAfter) q = q.where('created_at', '>', f.createdAfter);
      if (f.createdBefore) q = q.where('created_at', '<', f.createdBefore);
      if (page.startCursor) q = q.where('id', '>', page.startCursor);
      const rows = await q.orderBy('id').limit(page.limit + 1).execute();
      return toPage(rows.map(toResponse), page);
    },
    async listParticipants(f: { pollId?: string; accountId?: string }, page: { startCursor?: string | undefined; limit: number }) {
      let q = db.selectFrom('participants').selectAll();
      if (f.pollId) q = q.where('poll_id', '=', f.pollId);
      if (f.accountId) q = q.where('account_id', '=', f.accountId);
      if (page.startCursor) q = q.where('seq', '>', page.startCursor);
      const rows = await q.orderBy('seq').limit(page.limit + 1).execute();
      const hasNextPage = rows.length > page.limit;
      const data = (hasNextPage ? rows.slice(0, page.limit) : rows).map(toParticipant);
      return { data, hasNextPage, endCursor: data.length ? data[data.length - 1]!.seq : null };
    },
  };
}

