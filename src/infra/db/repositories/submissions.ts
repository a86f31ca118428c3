import { sql, type Kysely, type Selectable } from 'kysely';
import type { SubmissionRepo } from '../../../app/ports.js';
import type { DB, ParticipantsTable, ResponsesTable } from '../schema.js';
import { deliveryInserts } from './deliveries.js';
import { cmp, iso, json } from './page.js';
import { toParticipant, toResponse } from './participants.js';

/**
 * The statements that write a group of submissions (besides reading the polls): each is one
 * round trip whatever the group's size, its rows travelling as arrays.
 */
export function submissionRepo(db: Kysely<DB>): SubmissionRepo {
  return {
    async lockParticipants(rows) {
      if (!rows.length) return [];
      // ON CONFLICT DO UPDATE takes the row lock whether the row is new or not, and returns the
      // stored row: concurrent first submissions of one id queue here instead of colliding.
      // Rows are locked in key order, so groups sharing respondents cannot deadlock.
      const ps = [...rows].sort((a, b) => cmp(a.pollId, b.pollId) || cmp(a.id, b.id));
      const p = <T>(f: (x: (typeof ps)[number]) => T) => ps.map(f);
      const r = await sql<Selectable<ParticipantsTable>>`
        INSERT INTO participants (id, seq, poll_id, account_id, metadata, synthetic, complete, completed_at, created_at, updated_at)
        SELECT id, seq, poll_id, account_id, metadata::jsonb, synthetic, complete, completed_at, created_at, updated_at
        FROM unnest(
          ${p((x) => x.id)}::text[], ${p((x) => x.seq)}::text[], ${p((x) => x.pollId)}::text[], ${p((x) => x.accountId)}::text[],
          ${p((x) => json(x.metadata))}::text[], ${p((x) => x.synthetic)}::boolean[], ${p((x) => x.complete)}::boolean[],
          ${p((x) => iso(x.completedAt))}::timestamptz[], ${p((x) => iso(x.createdAt))}::timestamptz[], ${p((x) => iso(x.updatedAt))}::timestamptz[]
        ) AS v(id, seq, poll_id, account_id, metadata, synthetic, complete, completed_at, created_at, updated_at)
        ON CONFLICT (poll_id, id) DO UPDATE SET updated_at = participants.updated_at
        RETURNING *`.execute(db);
      return r.rows.map(toParticipant);
    },

    async insertAndListAnswers(rows, participants) {
      if (!participants.length) return [];
      const a = <T>(f: (x: (typeof rows)[number]) => T) => rows.map(f);
      // A statement of its own, after the lock: its snapshot is taken once the lock is held, so
      // it sees what a concurrent submission of the same respondent committed meanwhile (in one
      // statement with the lock, both could miss each other's answers and neither complete).
      // The outer SELECT does not see this statement's own inserts: they are unioned in.
      const r = await sql<Selectable<ResponsesTable>>`
        WITH ins AS (
          INSERT INTO responses (id, account_id, poll_id, participant_id, slide_id, value, metadata, synthetic, created_at)
          SELECT id, account_id, poll_id, participant_id, slide_id, value::jsonb, metadata::jsonb, synthetic, created_at
          FROM unnest(
            ${a((x) => x.id)}::text[], ${a((x) => x.accountId)}::text[], ${a((x) => x.pollId)}::text[], ${a((x) => x.participantId)}::text[],
            ${a((x) => x.slideId)}::text[], ${a((x) => JSON.stringify(x.value))}::text[], ${a((x) => json(x.metadata))}::text[],
            ${a((x) => x.synthetic)}::boolean[], ${a((x) => iso(x.createdAt))}::timestamptz[]
          ) AS v(id, account_id, poll_id, participant_id, slide_id, value, metadata, synthetic, created_at)
          RETURNING *
        )
        SELECT r.* FROM responses r
          JOIN unnest(${participants.map((x) => x.pollId)}::text[], ${participants.map((x) => x.participantId)}::text[]) AS k(poll_id, participant_id)
            ON r.poll_id = k.poll_id AND r.participant_id = k.participant_id
        UNION ALL SELECT * FROM ins
        ORDER BY participant_id, id`.execute(db);
      return r.rows.map(toResponse);
    },

    async writeOutcome({ participants, batches, deliveries }) {
      if (!participants.length && !batches.length && !deliveries.length) return;
      const p = <T>(f: (x: (typeof participants)[number]) => T) => participants.map(f);
      // Batches in key order, so that concurrent groups lock them in one order.
      const bs = [...batches].sort((x, y) => cmp(x.webhookId, y.webhookId) || cmp(x.participantId, y.participantId));
      const b = <T>(f: (x: (typeof bs)[number]) => T) => bs.map(f);
      // Data-modifying CTEs all run, referenced or not, and commit with the statement.
      // A batch window runs from the first answer: later answers join the open batch without
      // pushing its flush time, so a chatty respondent cannot delay delivery forever.
      await sql`
        WITH updated AS (
          UPDATE participants p
          SET metadata = v.metadata::jsonb, complete = v.complete, completed_at = v.completed_at, updated_at = v.updated_at
          FROM unnest(
            ${p((x) => x.pollId)}::text[], ${p((x) => x.id)}::text[], ${p((x) => json(x.metadata))}::text[],
            ${p((x) => x.complete)}::boolean[], ${p((x) => iso(x.completedAt))}::timestamptz[], ${p((x) => iso(x.updatedAt))}::timestamptz[]
          ) AS v(poll_id, id, metadata, complete, completed_at, updated_at)
          WHERE p.poll_id = v.poll_id AND p.id = v.id
        ), batched AS (
          INSERT INTO batches (id, webhook_id, endpoint_id, account_id, poll_id, participant_id, response_ids, flush_at, created_at)
          SELECT id, webhook_id, endpoint_id, account_id, poll_id, participant_id, response_ids::jsonb, flush_at, created_at
          FROM unnest(
            ${b((x) => x.id)}::text[], ${b((x) => x.webhookId)}::text[], ${b((x) => x.endpointId)}::text[], ${b((x) => x.accountId)}::text[],
            ${b((x) => x.pollId)}::text[], ${b((x) => x.participantId)}::text[], ${b((x) => json(x.responseIds))}::text[],
            ${b((x) => iso(x.flushAt))}::timestamptz[], ${b((x) => iso(x.createdAt))}::timestamptz[]
          ) AS v(id, webhook_id, endpoint_id, account_id, poll_id, participant_id, response_ids, flush_at, created_at)
          ON CONFLICT (webhook_id, participant_id) DO UPDATE SET response_ids = batches.response_ids || excluded.response_ids
        ), ${deliveryInserts(deliveries)}
        SELECT 1`.execute(db);
    },
  };
}
