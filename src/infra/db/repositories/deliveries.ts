import { CompiledQuery, sql, type Kysely, type QueryResult, type Selectable, type SqlBool } from 'kysely';
import {
  PARKED_UNTIL,
  type Attempt,
  type ClaimedDelivery,
  type Delivery,
  type DeliveryStatus,
  type NewDelivery,
} from '../../../domain/delivery.js';
import type { DeliveryRepo } from '../../../app/ports/index.js';
import type { DeliverySource } from '../../../domain/webhook.js';
import { idsMadeBefore } from '../../../domain/ids.js';
import type { EventType } from '../../../domain/payload.js';
import type { AttemptsTable, DB, DeliveriesTable } from '../schema.js';
import { executeTogether, isPipelined } from '../pipelined-driver.js';
import { deliveryControl } from './delivery-control.js';
import { iso, toPage } from './page.js';

// Compiled once: the claim sends it ahead of itself on every call (see claim).
const GENERIC_PLAN = CompiledQuery.raw('SET LOCAL plan_cache_mode = force_generic_plan');

type DeliveryRow = Selectable<DeliveriesTable> & {
  next_attempt_at: Date | null;
  lease_token: string | null;
  queued_attempts: number | null;
  is_test?: SqlBool;
};

// A delivery still queued takes its state from the queue row: leased is in_flight.
const toDelivery = (r: DeliveryRow): Delivery => ({
  id: r.id,
  accountId: r.account_id,
  pollId: r.poll_id,
  webhookId: r.webhook_id,
  endpointId: r.endpoint_id,
  source: r.source as DeliverySource,
  url: r.url,
  participantId: r.participant_id,
  type: r.type as EventType,
  status: r.next_attempt_at === null ? (r.status as DeliveryStatus) : r.lease_token === null ? 'pending' : 'in_flight',
  attemptCount: r.queued_attempts ?? r.attempt_count,
  // A parked delivery (paused webhook) has no due time until its webhook is resumed.
  nextAttemptAt: r.next_attempt_at && r.next_attempt_at >= PARKED_UNTIL ? null : r.next_attempt_at,
  body: r.body,
  createdAt: r.created_at,
  finishedAt: r.finished_at,
  ...(r.is_test !== undefined ? { test: Boolean(r.is_test) } : {}),
});

const toAttempt = (r: Selectable<AttemptsTable>): Attempt => ({
  id: r.id,
  deliveryId: r.delivery_id,
  number: r.number,
  sentAt: r.sent_at,
  statusCode: r.status_code,
  error: r.error,
  durationMs: r.duration_ms,
  responseExcerpt: r.response_excerpt,
});

type ClaimRow = Pick<
  Selectable<DeliveriesTable>,
  'id' | 'account_id' | 'endpoint_id' | 'source' | 'url' | 'attempt_count' | 'body'
> & {
  signing_secret: string | null;
  previous_secret: string | null;
  legacy_secret: string | null;
  ladder_base: number;
  paused: boolean;
};

/**
 * CTEs that insert deliveries with their queue rows, for a statement of the caller's (which
 * commits both or neither). The queue rows' foreign key is checked at the end of the statement,
 * when the deliveries are there.
 */
export function deliveryInserts(rows: readonly NewDelivery[]) {
  const d = <T>(f: (x: NewDelivery) => T) => rows.map(f);
  return sql`new_deliveries AS (
      INSERT INTO deliveries (id, account_id, poll_id, webhook_id, endpoint_id, source, url, participant_id, type, status, body, created_at)
      SELECT id, account_id, poll_id, webhook_id, endpoint_id, source, url, participant_id, type, 'pending', body, created_at
      FROM unnest(
        ${d((x) => x.id)}::text[], ${d((x) => x.accountId)}::text[], ${d((x) => x.pollId)}::text[], ${d((x) => x.webhookId)}::text[],
        ${d((x) => x.endpointId)}::text[], ${d((x) => x.source)}::text[], ${d((x) => x.url)}::text[], ${d((x) => x.participantId)}::text[],
        ${d((x) => x.type)}::text[], ${d((x) => x.body)}::text[], ${d((x) => iso(x.createdAt))}::timestamptz[]
      ) AS v(id, account_id, poll_id, webhook_id, endpoint_id, source, url, participant_id, type, body, created_at)
    ), queued AS (
      INSERT INTO delivery_queue (delivery_id, next_attempt_at)
      SELECT * FROM unnest(${d((x) => x.id)}::text[], ${d((x) => iso(x.nextAttemptAt))}::timestamptz[])
    )`;
}

export function deliveryRepo(db: Kysely<DB>): DeliveryRepo {
  // Deliveries with their queue row, if still queued (see toDelivery).
  const withQueue = () =>
    db
      .selectFrom('deliveries as d')
      .leftJoin('delivery_queue as q', 'q.delivery_id', 'd.id')
      .selectAll('d')
      .select(['q.next_attempt_at', 'q.lease_token', 'q.attempt_count as queued_attempts']);

  // Known after the first claim (a failed check is asked again, not remembered).
  let pipelined: boolean | undefined;

  return {
    ...deliveryControl(db),
    async insert(rows) {
      if (!rows.length) return;
      await sql`WITH ${deliveryInserts(rows)} SELECT 1`.execute(db);
    },

    /**
     * Leases up to `limit` due deliveries for one attempt each.
     * - FOR UPDATE SKIP LOCKED: concurrent workers never pick the same row, and never wait on
     *   each other's locks.
     * - Pending and leased rows share next_attempt_at as the claim key: for a leased row it is
     *   the lease expiry, so a delivery whose worker died becomes due again by itself.
     * - The new lease token fences the old holder: its late result write matches no row.
     * - Only the narrow queue row is written; the delivery is read (migration 004 says why).
     * - Queue rows are reached by primary key (= ANY(ARRAY(...))) here and in recordResults:
     *   written as a join, a large queue gets a hash join over a scan of all of it.
     * - Each leased row reads its delivery by primary key (LATERAL, OFFSET 0 so it stays a
     *   nested loop): the plan is made once per connection (below), and one made while the
     *   deliveries table was still small would otherwise keep a scan of all of it.
     * - The signing secret is read in the same statement, i.e. as it is at attempt time, so a
     *   rotated secret applies to queued retries at once.
     * - It runs with the plan made once per connection (plan_cache_mode): left to choose,
     *   PostgreSQL plans every claim afresh, since with `LIMIT $2` unknown the shared plan's
     *   estimate looks dearer. The setting is SET LOCAL, in a transaction of its own written in
     *   one round trip (BEGIN, SET, claim, COMMIT), so it ends with the claim whatever pooler
     *   sits between.
     * docs/performance.md has the measurements behind these choices.
     */
    async claim(now, limit, leaseUntil, leaseToken, overlapSince) {
      const claim = sql<ClaimRow>`/* prepared:claim-deliveries */
        WITH due AS (
          SELECT delivery_id FROM delivery_queue
          WHERE next_attempt_at <= ${now}
          ORDER BY next_attempt_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        ), leased AS (
          UPDATE delivery_queue q
          SET attempt_count = q.attempt_count + 1, next_attempt_at = ${leaseUntil}, lease_token = ${leaseToken}
          WHERE q.delivery_id = ANY(ARRAY(SELECT delivery_id FROM due))
          RETURNING q.delivery_id, q.attempt_count, q.ladder_base
        )
        SELECT d.id, d.account_id, d.endpoint_id, d.source, d.url, l.attempt_count, d.body, a.signing_secret, w.legacy_secret,
          l.ladder_base, w.paused_at IS NOT NULL AS paused,
          CASE WHEN a.signing_secret_rotated_at > ${overlapSince} THEN a.previous_signing_secret END AS previous_secret
        FROM leased l
        CROSS JOIN LATERAL (SELECT * FROM deliveries WHERE id = l.delivery_id OFFSET 0) d
        JOIN accounts a ON a.id = d.account_id
        LEFT JOIN webhooks w ON w.id = d.webhook_id`;
      const statements = [GENERIC_PLAN, claim.compile(db)];
      // Inside a caller's transaction (the claim bench rolls its claims back) it takes no COMMIT
      // along. PGlite plans each statement afresh anyway and answers without a round trip: there
      // the claim runs alone, one statement instead of four.
      if (!db.isTransaction) pipelined ??= await isPipelined(db);
      const [, result] = (
        db.isTransaction
          ? await executeTogether(db, statements)
          : !pipelined
            ? [undefined, await claim.execute(db)]
            : await db.transaction().execute((trx) => executeTogether<DB>(trx, statements, { thenCommit: true }))
      ) as [unknown, QueryResult<ClaimRow>];
      // Only what an attempt needs (no times to parse, no columns it never reads): at thousands
      // of rows a second each column read is worker and database time.
      return result.rows.map((r): ClaimedDelivery => ({
        id: r.id,
        accountId: r.account_id,
        endpointId: r.endpoint_id,
        source: r.source as DeliverySource,
        url: r.url,
        attemptCount: r.attempt_count,
        body: r.body,
        leaseToken,
        signingSecret: r.signing_secret,
        previousSecret: r.previous_secret,
        legacySecret: r.legacy_secret,
        ladderBase: r.ladder_base,
        paused: r.paused,
      }));
    },

    /**
     * One statement per batch, with fixed text whatever the batch size (arrays, not VALUES
     * lists), so on PostgreSQL it is a prepared statement (prepared.ts), parsed and planned once
     * per connection; its data-modifying parts commit together.
     * - The lease token fences results of a worker whose lease was taken over (or whose
     *   delivery was cancelled) meanwhile: those attempts are logged but decide nothing.
     * - A retry stays in the queue with its next due time. A finished delivery leaves the
     *   queue and its outcome goes on the delivery row (a HOT update: migration 004).
     * - A busy endpoint's health row is written about once a second rather than once per
     *   batch (rows healthy with a success under a second old are skipped), and in id order,
     *   so concurrent workers do not queue on it.
     */
    async recordResults(items, now) {
      if (!items.length) return new Set();
      const col = <T>(f: (i: (typeof items)[number]) => T) => items.map(f);
      const res = await sql<{ id: string }>`/* prepared:record-results */
        WITH v AS (
          SELECT * FROM unnest(
            ${col((i) => i.attempt.deliveryId)}::text[], ${col((i) => i.leaseToken)}::text[], ${col((i) => i.result.status)}::text[],
            ${col((i) => iso(i.result.nextAttemptAt))}::timestamptz[], ${col((i) => iso(i.result.finishedAt))}::timestamptz[],
            ${col((i) => (i.result.dnsFailure ? 1 : 0))}::int[]
          ) AS v(id, token, status, next_at, finished_at, dns)
        ), retried AS (
          UPDATE delivery_queue q
          SET next_attempt_at = v.next_at, lease_token = NULL, dns_failures = q.dns_failures + v.dns
          FROM v WHERE q.delivery_id = ANY(ARRAY(SELECT id FROM v)) AND q.delivery_id = v.id AND q.lease_token = v.token AND v.status = 'pending'
          RETURNING q.delivery_id
        ), dequeued AS (
          DELETE FROM delivery_queue q
          USING v WHERE q.delivery_id = ANY(ARRAY(SELECT id FROM v)) AND q.delivery_id = v.id AND q.lease_token = v.token AND v.status <> 'pending'
          RETURNING q.delivery_id, q.attempt_count, q.dns_failures + v.dns AS dns_failures, v.status, v.finished_at
        ), finished AS (
          UPDATE deliveries d
          SET status = f.status, finished_at = f.finished_at, attempt_count = f.attempt_count, dns_failures = f.dns_failures
          FROM dequeued f WHERE d.id = f.delivery_id
          RETURNING d.id, d.endpoint_id, f.status, f.finished_at
        ), lost AS (
          INSERT INTO lost_deliveries (delivery_id, endpoint_id, lost_at)
          SELECT id, endpoint_id, finished_at FROM finished WHERE status IN ('given_up', 'rejected')
        ), attempt_rows AS (
          INSERT INTO attempts (id, delivery_id, number, sent_at, status_code, error, duration_ms, response_excerpt)
          SELECT * FROM unnest(
            ${col((i) => i.attempt.id)}::text[], ${col((i) => i.attempt.deliveryId)}::text[], ${col((i) => i.attempt.number)}::int[],
            ${col((i) => iso(i.attempt.sentAt))}::timestamptz[], ${col((i) => i.attempt.statusCode)}::int[], ${col((i) => i.attempt.error)}::text[],
            ${col((i) => i.attempt.durationMs)}::int[], ${col((i) => i.attempt.responseExcerpt)}::text[]
          )
        ), healthy AS (
          UPDATE endpoints e
          SET last_success_at = ${iso(now)}::timestamptz, state = 'healthy', alert_emails_sent = 0, last_alert_at = NULL
          WHERE e.id IN (SELECT endpoint_id FROM finished WHERE status = 'delivered')
            AND (e.last_success_at IS NULL OR e.last_success_at < ${iso(new Date(now.getTime() - 1000))}::timestamptz
                 OR e.state <> 'healthy' OR e.alert_emails_sent <> 0 OR e.last_given_up_at > e.last_success_at)
        )
        SELECT delivery_id AS id FROM retried UNION ALL SELECT id FROM finished`.execute(db);
      return new Set(res.rows.map((r) => r.id));
    },

    async nextDueAt() {
      const r = await db
        .selectFrom('delivery_queue')
        .select((eb) => eb.fn.min('next_attempt_at').as('due'))
        .executeTakeFirst();
      return (r?.due as Date | null | undefined) ?? null;
    },

    async release(id, leaseToken, now) {
      const res = await db
        .updateTable('delivery_queue')
        // The attempt may have reached the endpoint: its number stays used, so the next one is higher.
        .set({ next_attempt_at: now, lease_token: null })
        .where('delivery_id', '=', id)
        .where('lease_token', '=', leaseToken)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },

    async cancel(f, now) {
      const match = [sql`q.delivery_id = d.id`];
      if (f.webhookId) match.push(sql`d.webhook_id = ${f.webhookId}`);
      if (f.pollId) match.push(sql`d.poll_id = ${f.pollId}`);
      const res = await sql`
        WITH gone AS (
          DELETE FROM delivery_queue q USING deliveries d
          WHERE ${sql.join(match, sql` AND `)}
          RETURNING q.delivery_id, q.attempt_count, q.dns_failures
        )
        UPDATE deliveries d
        SET status = 'cancelled', finished_at = ${now}, attempt_count = g.attempt_count, dns_failures = g.dns_failures
        FROM gone g WHERE d.id = g.delivery_id`.execute(db);
      return Number(res.numAffectedRows ?? 0n);
    },

    async get(id) {
      const r = await withQueue().where('d.id', '=', id).executeTakeFirst();
      return r && toDelivery(r);
    },

    async attempts(deliveryId) {
      const rows = await db
        .selectFrom('attempts')
        .selectAll()
        .where('delivery_id', '=', deliveryId)
        .orderBy('number')
        .orderBy('sent_at')
        .execute();
      return rows.map(toAttempt);
    },

    async lastAttempt(deliveryId) {
      const r = await db
        .selectFrom('attempts')
        .selectAll()
        .where('delivery_id', '=', deliveryId)
        .orderBy('sent_at', 'desc')
        .orderBy('number', 'desc')
        .limit(1)
        .executeTakeFirst();
      return r && toAttempt(r);
    },

    async list(f, page) {
      let q = withQueue().where('d.account_id', 'in', f.accountIds);
      if (f.webhookId) q = q.where('d.webhook_id', '=', f.webhookId);
      if (f.pollId) q = q.where('d.poll_id', '=', f.pollId);
      if (f.statuses?.length) {
        const { statuses } = f;
        const finished = statuses.filter((s) => s !== 'pending' && s !== 'in_flight');
        q = q.where((eb) =>
          eb.or([
            ...(statuses.includes('pending')
              ? [eb.and([eb('q.delivery_id', 'is not', null), eb('q.lease_token', 'is', null)])]
              : []),
            ...(statuses.includes('in_flight') ? [eb('q.lease_token', 'is not', null)] : []),
            ...(finished.length ? [eb.and([eb('q.delivery_id', 'is', null), eb('d.status', 'in', finished)])] : []),
          ]),
        );
      }
      if (f.createdAfter) q = q.where('d.created_at', '>', f.createdAfter);
      if (f.createdBefore) q = q.where('d.created_at', '<', f.createdBefore);
      if (page.startCursor) q = q.where('d.id', '<', page.startCursor);
      // Newest first: a delivery log is read from the top.
      const rows = await q
        .select((eb) =>
          eb
            .exists(
              eb
                .selectFrom('delivery_events as e')
                .select('e.id')
                .whereRef('e.delivery_id', '=', 'd.id')
                .where('e.kind', '=', 'test'),
            )
            .as('is_test'),
        )
        .orderBy('d.id', 'desc')
        .limit(page.limit + 1)
        .execute();
      return toPage(rows.map(toDelivery), page);
    },

    async countLost(endpointId, since) {
      const r = await db
        .selectFrom('lost_deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('endpoint_id', '=', endpointId)
        .where('lost_at', '>=', since)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },

    /**
     * There is no index on finished_at (migration 004): a delivery finishes after it is made and
     * ids sort by the time they were made, so the finished ones before `before` all have ids
     * below idsMadeBefore(before), and the primary key walks them oldest first.
     * Their attempts go in the same statement: attempts have no foreign key to cascade
     * (migration 006).
     */
    async purgeFinishedBefore(before, limit) {
      const res = await sql<{ n: number }>`
        WITH gone AS (
          DELETE FROM deliveries WHERE id IN (
            SELECT id FROM deliveries
            WHERE id < ${idsMadeBefore('dlv', before.getTime())} AND finished_at < ${before}
            ORDER BY id LIMIT ${limit}
          )
          RETURNING id
        ), gone_attempts AS (
          DELETE FROM attempts WHERE delivery_id IN (SELECT id FROM gone)
        ), gone_events AS (
          DELETE FROM delivery_events WHERE delivery_id IN (SELECT id FROM gone)
        )
        SELECT count(*)::int AS n FROM gone`.execute(db);
      return res.rows[0]?.n ?? 0;
    },
  };
}
