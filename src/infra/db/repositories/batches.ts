import { sql, type Kysely, type Selectable } from 'kysely';
import type { AccountSecrets, BatchRepo } from '../../../app/ports/index.js';
import type { BatchesTable, DB, ParticipantsTable, ResponsesTable } from '../schema.js';
import { executeThenCommit, executeTogether } from '../pipelined-driver.js';
import { deliveryInserts } from './deliveries.js';
import { toParticipant } from './participants.js';
import { respondentAnswers } from './response-metadata.js';

/**
 * A flush takes four round trips on PostgreSQL whatever the number of batches: the claim, the
 * polls, the batches' respondents and answers (contentsOf), and the write with its COMMIT
 * (flush). docs/performance.md, "The batch flush".
 */
export function batchRepo(db: Kysely<DB>, opts: { commitEarly: boolean }): BatchRepo {
  return {
    async claimDue(now, limit) {
      // SKIP LOCKED: two schedulers flushing at once each take different batches; a batch
      // whose flush commits is deleted in the same transaction, so it never flushes twice.
      // Each batch's poll is taken under a key share lock, not waited for either: a poll held
      // by a change under way (made anonymous, say, which takes the poll FOR UPDATE) keeps its
      // batches for a later flush, which reads the poll as the change leaves it, and the
      // change waits for the flushes that took the poll before it. A poll's deletion takes the
      // poll, then its batches: a flush never waits for either, so the two cannot deadlock.
      // The poll's clause comes first, so its lock is tried first: a batch whose poll is held
      // is passed over without being locked (a submission adding to it does not wait).
      // With what each respondent's stored answers hold (migration 019), for the flush to take
      // no more of them than it can hold. `b.poll_id COLLATE "C"`: compared in the polls
      // key's collation, the poll is found by its key.
      const { rows } = await sql<Selectable<BatchesTable> & { answer_bytes: number | null }>`
        SELECT b.*, p.answer_bytes
        FROM batches b
        JOIN polls pl ON pl.id = b.poll_id COLLATE "C"
        LEFT JOIN participants p ON p.poll_id = b.poll_id AND p.id = b.participant_id
        WHERE b.flush_at <= ${now}
        ORDER BY b.flush_at
        LIMIT ${limit}
        FOR KEY SHARE OF pl SKIP LOCKED
        FOR UPDATE OF b SKIP LOCKED`.execute(db);
      return rows.map((r) => ({
        respondentBytes: r.answer_bytes,
        id: r.id,
        webhookId: r.webhook_id,
        endpointId: r.endpoint_id,
        accountId: r.account_id,
        pollId: r.poll_id,
        participantId: r.participant_id,
        responseIds: r.response_ids,
        flushAt: r.flush_at,
        createdAt: r.created_at,
      }));
    },

    async contentsOf(batches, handoff) {
      if (!batches.length) return { participants: [], responses: [], secrets: [], handOver: [] };
      // Arrays, not IN lists: the statements' text is the same whatever the number of batches.
      const participants = sql<Selectable<ParticipantsTable>>`
        SELECT * FROM participants
        WHERE (poll_id, id) IN (SELECT * FROM unnest(${batches.map((b) => b.pollId)}::text[], ${batches.map((b) => b.participantId)}::text[]))`;
      // Every answer of each respondent, not the batches' alone: a payload's addresses are the respondent's.
      const responses = sql<Selectable<ResponsesTable>>`
        SELECT * FROM responses
        WHERE (poll_id, participant_id) IN (SELECT * FROM unnest(${batches.map((b) => b.pollId)}::text[], ${batches.map((b) => b.participantId)}::text[]))
        ORDER BY id`;
      // For deliveries leased here: the signing secrets as a claim reads them (delivery-queue.ts),
      // and the webhooks not paused, share-locked until the flush commits so that a pause waits
      // for it (and then finds the handed-over deliveries in flight, as it would a claim's), and
      // their URLs as they are under the lock: one changed since the flush first read the
      // webhook has committed, and one changing after waits, its retarget then seeing these. One
      // locked by a change under way is skipped, not waited for: its deliveries go to a claim,
      // and a deletion (which locks the webhook, then its batches) cannot deadlock with the flush.
      const forHandoff = handoff
        ? [
            sql<AccountSecrets>`
              SELECT id AS "accountId", signing_secret AS "signingSecret",
                CASE WHEN signing_secret_rotated_at > ${handoff.secretsOverlapSince} THEN previous_signing_secret END AS "previousSecret"
              FROM accounts WHERE id = ANY(${[...new Set(batches.map((b) => b.accountId))]}::text[])`.compile(db),
            sql<{ id: string; url: string }>`
              SELECT id, url FROM webhooks WHERE id = ANY(${[...new Set(batches.map((b) => b.webhookId))]}::text[]) AND paused_at IS NULL
              FOR SHARE SKIP LOCKED`.compile(db),
          ]
        : [];
      const [p, r, a, w] = await executeTogether(db, [participants.compile(db), responses.compile(db), ...forHandoff]);
      return {
        participants: (p!.rows as Selectable<ParticipantsTable>[]).map(toParticipant),
        responses: respondentAnswers(r!.rows as Selectable<ResponsesTable>[]),
        secrets: (a?.rows ?? []) as AccountSecrets[],
        handOver: (w?.rows ?? []) as { id: string; url: string }[],
      };
    },

    async flush(ids, deliveries) {
      if (!ids.length) return;
      const write = sql`
        WITH flushed AS (DELETE FROM batches WHERE id = ANY(${ids}::text[])), ${deliveryInserts(deliveries)}
        SELECT 1`;
      // The flush's last statement: COMMIT goes with it, unless the transaction is another's (store.ts).
      if (opts.commitEarly) await executeThenCommit(db, write.compile(db));
      else await db.executeQuery(write.compile(db));
    },

    async nextFlushAt() {
      const r = await db
        .selectFrom('batches')
        .select((eb) => eb.fn.min('flush_at').as('at'))
        .executeTakeFirst();
      return (r?.at as Date | null | undefined) ?? null;
    },
  };
}
