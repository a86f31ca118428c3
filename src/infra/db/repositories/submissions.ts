import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { SubmissionRepo } from '../../../app/ports/index.js';
import type { DB, ParticipantsTable, ResponsesTable } from '../schema.js';
import { executeThenCommit, executeTogether } from '../pipelined-driver.js';
import { deliveryInserts, sharedBodies } from './deliveries.js';
import { cmp, iso, json } from './page.js';
import { toParticipant } from './participants.js';
import { metadataOnce, respondentAnswers } from './response-metadata.js';
import { StaleReadError } from '../../../app/ports/stale-read.js';

/** What the lock statement returns besides the participant's row. */
type Locked = { xid: string; backend_pid: number };

/** `p`, or a rejection at `deadline`: a lookup on an unreachable server may otherwise hang. */
function beforeDeadline<T>(deadline: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('no answer before the deadline')), Math.max(0, deadline - Date.now()));
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * A foreign key refused (23503): the poll or a webhook was deleted since it was read. Or a
 * deadlock (40P01) with such a deletion, not yet committed: it locks the poll, then (its cascade)
 * the respondents' rows, while a returning respondent's submission locks their row, then the
 * poll's key for its answers. Either way the transaction rolled back and runs again.
 */
function staleRead(err: unknown): never {
  const code = (err as { code?: unknown } | null)?.code;
  throw code === '23503' || code === '40P01' ? new StaleReadError(err) : err;
}

/**
 * The statements that write a group of submissions (besides reading the polls), whatever the
 * group's size, its rows travelling as arrays: two round trips on PostgreSQL (pipelined-driver.ts).
 * Those that only insert are named (parsed once per connection, prepared.ts): their one plan
 * holds no choice that the tables' size could make wrong. Those that look participants or
 * responses up are planned on every call: a shared plan made while the tables were nearly empty
 * read a poll's participants through the wrong index or scanned them (docs/performance.md).
 */

export function submissionRepo(db: Kysely<DB>, opts: { commitEarly: boolean }): SubmissionRepo {
  return {
    async lockAndAddAnswers(entries, { maxAnswers, maxBytes }) {
      if (!entries.length) return { participants: [], answerBytes: [], answers: [], transaction: null };
      // ON CONFLICT DO UPDATE takes the row lock whether the row is new or not, and returns the
      // stored row: concurrent first submissions of one id queue here instead of colliding.
      // Rows are locked in key order, so groups sharing respondents cannot deadlock. Its columns
      // are named: a prepared statement whose result gains a column (a migration applied while
      // the process runs) fails on every call until the connection closes.
      const sorted = [...entries].sort(
        (a, b) => cmp(a.participant.pollId, b.participant.pollId) || cmp(a.participant.id, b.participant.id),
      );
      const ps = sorted.map((e) => e.participant);
      const p = <T>(f: (x: (typeof ps)[number]) => T) => ps.map(f);
      // It also returns the transaction's id and its server process, for commitOutcome should the
      // COMMIT's answer be lost.
      const lock = sql<Selectable<ParticipantsTable> & Locked>`/* prepared:submission-lock */
        INSERT INTO participants (id, seq, poll_id, account_id, metadata, synthetic, complete, completed_at, created_at, updated_at, answer_bytes)
        SELECT id, seq, poll_id, account_id, metadata::jsonb, synthetic, complete, completed_at, created_at, updated_at, answer_bytes
        FROM unnest(
          ${p((x) => x.id)}::text[], ${p((x) => x.seq)}::text[], ${p((x) => x.pollId)}::text[], ${p((x) => x.accountId)}::text[],
          ${p((x) => json(x.metadata))}::text[], ${p((x) => x.synthetic)}::boolean[], ${p((x) => x.complete)}::boolean[],
          ${p((x) => iso(x.completedAt))}::timestamptz[], ${p((x) => iso(x.createdAt))}::timestamptz[], ${p((x) => iso(x.updatedAt))}::timestamptz[],
          ${sorted.map((e) => e.bytes)}::int[]
        ) AS v(id, seq, poll_id, account_id, metadata, synthetic, complete, completed_at, created_at, updated_at, answer_bytes)
        ON CONFLICT (poll_id, id) DO UPDATE SET updated_at = participants.updated_at
        RETURNING id, seq, poll_id, account_id, metadata, synthetic, complete, completed_at, created_at, updated_at,
          answer_bytes, pg_current_xact_id()::text AS xid, pg_backend_pid() AS backend_pid`;
      const rows = entries.flatMap((e) =>
        e.responses.map((r) => ({
          ...r,
          reopens: e.reopens,
          seq: e.participant.seq,
          room: maxAnswers - e.responses.length,
          bytes: e.bytes,
        })),
      );
      const a = <T>(f: (x: (typeof rows)[number]) => T) => rows.map(f);
      const stored = metadataOnce(rows);
      // A statement of its own, run after the lock: its snapshot is taken once the lock is held,
      // so it sees what a concurrent submission of the same respondent committed meanwhile (in
      // one statement with the lock, both could miss each other's answers and neither complete).
      // It goes out together with the lock (pipelined), so it cannot wait for the caller's look
      // at the locked rows: it skips by itself the answers of a respondent who has completed a
      // poll that takes no resubmissions, whom the caller then refuses. A row holding this
      // submission's seq was inserted by it (complete only through these answers): they go in.
      // The outer SELECT does not see this statement's own inserts: they are unioned in.
      // A respondent's stored answers are counted (up to maxAnswers) in the statement's snapshot,
      // the same for each of a submission's answers: all of them go in, or none, as the stored
      // ones leave room for all (room: maxAnswers less the submission's own). A row this
      // submission inserted has none to count (the usual one-go respondent costs no count).
      // So with bytes: the respondent's count of what their answers hold (answer_bytes, null
      // until counted) and the submission's may not pass maxBytes. An inserted row holds its
      // submission's count from its insert; a stored row's count is written by writeOutcome.
      const answers = sql<Selectable<ResponsesTable>>`
        WITH ins AS (
          INSERT INTO responses (id, account_id, poll_id, participant_id, slide_id, value, metadata, metadata_from, synthetic, created_at)
          SELECT v.id, v.account_id, v.poll_id, v.participant_id, v.slide_id, v.value::jsonb, v.metadata::jsonb, v.metadata_from, v.synthetic, v.created_at
          FROM unnest(
            ${a((x) => x.id)}::text[], ${a((x) => x.accountId)}::text[], ${a((x) => x.pollId)}::text[], ${a((x) => x.participantId)}::text[],
            ${a((x) => x.slideId)}::text[], ${a((x) => JSON.stringify(x.value))}::text[], ${stored.map((m) => m.metadata)}::text[],
            ${stored.map((m) => m.from)}::text[], ${a((x) => x.synthetic)}::boolean[], ${a((x) => iso(x.createdAt))}::timestamptz[],
            ${a((x) => x.reopens)}::boolean[], ${a((x) => x.seq)}::text[], ${a((x) => x.room)}::int[], ${a((x) => x.bytes)}::int[]
          ) AS v(id, account_id, poll_id, participant_id, slide_id, value, metadata, metadata_from, synthetic, created_at, reopens, seq, room, bytes)
          JOIN participants p ON p.poll_id = v.poll_id AND p.id = v.participant_id
          WHERE (v.reopens OR NOT p.complete OR p.seq = v.seq)
            AND (p.seq = v.seq OR (coalesce(p.answer_bytes, 0) + v.bytes <= ${maxBytes} AND (SELECT count(*) FROM (
                  SELECT 1 FROM responses r WHERE r.poll_id = v.poll_id AND r.participant_id = v.participant_id
                  LIMIT ${maxAnswers}) AS stored) <= v.room))
          RETURNING *
        )
        SELECT r.* FROM responses r
          JOIN unnest(${p((x) => x.pollId)}::text[], ${p((x) => x.id)}::text[]) AS k(poll_id, participant_id)
            ON r.poll_id = k.poll_id AND r.participant_id = k.participant_id
        UNION ALL SELECT * FROM ins
        ORDER BY participant_id, id`;
      const [locked, listed] = await executeTogether(db, [lock.compile(db), answers.compile(db)]).catch(staleRead);
      const lockedRows = locked!.rows as (Selectable<ParticipantsTable> & Locked)[];
      return {
        participants: lockedRows.map(toParticipant),
        answerBytes: lockedRows.map((r) => r.answer_bytes),
        answers: respondentAnswers(listed!.rows as Selectable<ResponsesTable>[]),
        transaction: { id: lockedRows[0]!.xid, backendPid: lockedRows[0]!.backend_pid },
      };
    },

    async writeOutcome({ participants, batches, deliveries }) {
      if (!participants.length && !batches.length && !deliveries.length) return;
      const p = <T>(f: (x: (typeof participants)[number]) => T) => participants.map(f);
      // Batches in key order, so that concurrent groups lock them in one order.
      const bs = [...batches].sort((x, y) => cmp(x.webhookId, y.webhookId) || cmp(x.participantId, y.participantId));
      const b = <T>(f: (x: (typeof bs)[number]) => T) => bs.map(f);
      // Data-modifying CTEs all run, referenced or not; one with no rows is left out, since
      // PostgreSQL plans it all the same (a respondent who completes in one submission leaves no
      // participant to update). A batch window runs from the first answer: later answers join the
      // open batch without pushing its flush time, so a chatty respondent cannot delay delivery forever.
      const ctes: RawBuilder<unknown>[] = [];
      if (participants.length)
        ctes.push(sql`updated AS (
          UPDATE participants p
          SET metadata = v.metadata::jsonb, complete = v.complete, completed_at = v.completed_at, updated_at = v.updated_at,
            answer_bytes = coalesce(v.answer_bytes, p.answer_bytes)
          FROM unnest(
            ${p((x) => x.pollId)}::text[], ${p((x) => x.id)}::text[], ${p((x) => json(x.metadata))}::text[],
            ${p((x) => x.complete)}::boolean[], ${p((x) => iso(x.completedAt))}::timestamptz[], ${p((x) => iso(x.updatedAt))}::timestamptz[],
            ${p((x) => x.answerBytes ?? null)}::int[]
          ) AS v(poll_id, id, metadata, complete, completed_at, updated_at, answer_bytes)
          WHERE p.poll_id = v.poll_id AND p.id = v.id
        )`);
      if (bs.length)
        ctes.push(sql`batched AS (
          INSERT INTO batches (id, webhook_id, endpoint_id, account_id, poll_id, participant_id, response_ids, flush_at, created_at)
          SELECT id, webhook_id, endpoint_id, account_id, poll_id, participant_id, response_ids::jsonb, flush_at, created_at
          FROM unnest(
            ${b((x) => x.id)}::text[], ${b((x) => x.webhookId)}::text[], ${b((x) => x.endpointId)}::text[], ${b((x) => x.accountId)}::text[],
            ${b((x) => x.pollId)}::text[], ${b((x) => x.participantId)}::text[], ${b((x) => json(x.responseIds))}::text[],
            ${b((x) => iso(x.flushAt))}::timestamptz[], ${b((x) => iso(x.createdAt))}::timestamptz[]
          ) AS v(id, webhook_id, endpoint_id, account_id, poll_id, participant_id, response_ids, flush_at, created_at)
          ON CONFLICT (webhook_id, participant_id) DO UPDATE SET response_ids = batches.response_ids || excluded.response_ids
        )`);
      const shared = sharedBodies(deliveries);
      if (deliveries.length) ctes.push(deliveryInserts(deliveries, shared));
      // Named when it only inserts; each set of CTEs is a text of its own (b: batches, d:
      // deliveries, s: with bodies shared).
      const named = participants.length
        ? ''
        : `/* prepared:submission-outcome-${bs.length ? 'b' : ''}${deliveries.length ? 'd' : ''}${shared ? 's' : ''} */ `;
      const write = sql`${sql.raw(named)}WITH ${sql.join(ctes, sql`, `)} SELECT 1`;
      // The group's last statement: COMMIT goes with it, unless the transaction is another's (store.ts).
      if (opts.commitEarly) await executeThenCommit(db, write.compile(db)).catch(staleRead);
      else await db.executeQuery(write.compile(db)).catch(staleRead);
    },

    async commitOutcome(transaction, { settleMs, waitMs }) {
      const started = Date.now();
      const deadline = started + waitMs;
      let ended = false;
      for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
        // A lookup that fails (the server restarting) is tried again until the deadline.
        const status = await beforeDeadline(
          deadline,
          sql<{ status: string | null }>`SELECT pg_xact_status(${transaction.id}::xid8) AS status`.execute(db),
        ).then(
          (r) => r.rows[0]?.status ?? null,
          () => undefined,
        );
        if (status === 'committed' || status === 'aborted') return status;
        if (status === null) return 'unknown';
        // Still running: its backend may not yet have read the COMMIT the lost connection
        // carried, or waits on a lock. Its client is gone, so after a while it is ended, and the
        // transaction is then committed or rolled back for good. Only the process that still runs
        // this transaction is ended (a process id may be reused).
        if (status === 'in progress' && !ended && Date.now() - started >= settleMs) {
          ended = true;
          await beforeDeadline(
            deadline,
            sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE pid = ${transaction.backendPid} AND backend_xid = xid(${transaction.id}::xid8)`.execute(db),
          ).catch(() => {});
        }
        if (Date.now() + pause > deadline) return 'unknown';
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    },
  };
}
