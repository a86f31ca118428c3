import { CompiledQuery, sql, type Kysely, type QueryResult, type RawBuilder, type Selectable } from 'kysely';
import type { ClaimedDelivery } from '../../../domain/delivery.js';
import type { DeliveryRepo } from '../../../app/ports/index.js';
import type { DeliverySource } from '../../../domain/webhook.js';
import type { DB, DeliveriesTable } from '../schema.js';
import { executeTogether } from '../pipelined-driver.js';
import { arrayLiteral, iso } from './page.js';
import { asAbortedForAnother } from '../unavailable.js';

/**
 * The settings the claim and the batch record run under, sent ahead of them (queueStatement):
 * their plan is made once per connection, with neither table scans nor sorts, so a plan made
 * while the queue was empty (as autovacuum often finds it between bursts) cannot keep scanning
 * and sorting all of it once it holds a backlog (docs/performance.md).
 */
const QUEUE_PLAN = CompiledQuery.raw(
  "SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true), set_config('enable_sort', 'off', true)",
);
const QUEUE_PLAN_RESET = CompiledQuery.raw(
  "SELECT set_config(name, reset_val, true) FROM pg_settings WHERE name IN ('plan_cache_mode', 'enable_seqscan', 'enable_sort')",
);

// How many due deliveries a claim that leaves accounts or hosts out reads at most, in due order.
const LEAVE_OUT_WINDOW = 2048;

type ClaimRow = Pick<
  Selectable<DeliveriesTable>,
  'id' | 'account_id' | 'endpoint_id' | 'source' | 'url' | 'attempt_count' | 'body'
> & {
  signing_secret: string | null;
  previous_secret: string | null;
  legacy_secret: string | null;
  ladder_base: number;
  paused: boolean;
  webhook_gone: boolean;
  url_moved: boolean | null;
};

/** The worker's two statements on the queue: the claim, and the record of a batch of results. */
export function deliveryQueue(db: Kysely<DB>): Pick<DeliveryRepo, 'claim' | 'recordResults'> {
  /**
   * Runs the claim or the batch record under QUEUE_PLAN, in a transaction of its own written in
   * one round trip (BEGIN, settings, statement, COMMIT), so the settings end with it whatever
   * pooler sits between. Inside a caller's transaction (the claim bench rolls its claims back)
   * it takes no COMMIT along, and the settings are reset behind it. Both storages prepare the
   * statement (prepared.ts, embedded-thread.ts), so both keep its plan.
   */
  async function queueStatement<R>(statement: RawBuilder<R>): Promise<QueryResult<R>> {
    if (db.isTransaction) {
      const [, result] = await executeTogether(db, [QUEUE_PLAN, statement.compile(db), QUEUE_PLAN_RESET]);
      return result as QueryResult<R>;
    }
    const [, result] = await db
      .transaction()
      .execute((trx) => executeTogether<DB>(trx, [QUEUE_PLAN, statement.compile(trx)], { thenCommit: true }));
    return result as QueryResult<R>;
  }

  return {
    /**
     * Leases up to `limit` due deliveries for one attempt each.
     * - FOR UPDATE SKIP LOCKED: concurrent workers never pick the same row, and never wait on
     *   each other's locks.
     * - Pending and leased rows share next_attempt_at as the claim key: for a leased row it is
     *   the lease expiry, so a delivery whose worker died becomes due again by itself.
     * - The new lease token fences the old holder: its late result write matches no row.
     * - Only the narrow queue row is written; the delivery is read (migration 004 says why).
     * - The locked rows are updated where they lie (ctid = ANY(ARRAY(...)), a TID scan), not
     *   looked up again by key: a row locked by this statement cannot be updated or moved by
     *   another transaction before it commits, so its ctid holds. A row that a concurrent
     *   update moved after this statement's snapshot is locked but not visible at its new
     *   ctid: it is left unleased (and unreturned) for the next claim, never leased twice.
     * - recordResults reaches queue rows by primary key (= ANY(ARRAY(...))): written as a
     *   join, a large queue gets a hash join over a scan of all of it.
     * - Each leased row reads its delivery by primary key (LATERAL, OFFSET 0 so it stays a
     *   nested loop): the plan is made once per connection (below), and one made while the
     *   deliveries table was still small would otherwise keep a scan of all of it.
     * - The signing secret is read in the same statement, i.e. as it is at attempt time, so a
     *   rotated secret applies to queued retries at once; so is whether the webhook still
     *   exists (a submission that read it before its deletion committed may have queued one),
     *   and its URL: a submission or flush that read the webhook before a new URL committed
     *   may have queued a delivery after that change's retarget ran (url_moved then tells the
     *   worker to run the retarget again).
     * - With `exclude` (accounts and hosts at their share of the worker's slots), a statement
     *   of its own passes over their deliveries: each due row's account and URL are read by
     *   the deliveries' primary key (a scalar subquery: an EXISTS may be planned as a hash of
     *   the accounts' deliveries, a scan of them all), its host being the URL's host and port
     *   (hostKey in src/worker/account-share.ts reads the same). It reads only the first
     *   LEAVE_OUT_WINDOW due rows from `exclude.after`, in due order, and takes the first
     *   `limit` of those it does not leave out (by ctid, so however many share a due time), so
     *   a left-out backlog costs each such claim a bounded amount. Of a full window it answers
     *   the due time up to which it tried every row it did not leave out (Claimed's windowEnd):
     *   the window's last, or the last of the `limit` it took should there be more, so rows it
     *   never tried (more than `limit`, the first ones locked by another claim) are read again;
     *   the worker reads on from there past a window full of left-out rows. Those kept are
     *   then locked where they lie (a TID scan), in no order: ordered there, the plan read
     *   every due row by the due index and matched each against the window's ctids, 1.3 s at
     *   60,000 due (docs/performance.md). The due time is checked again on an expression of
     *   the column, which the due index cannot serve, so a plan made while the queue was empty
     *   cannot take that way either. A row another claim moved or locked meanwhile fails the
     *   ctid and due time again when locked, or is skipped, and is passed over.
     * - It runs with the plan made once per connection (QUEUE_PLAN): left to choose,
     *   PostgreSQL plans every claim afresh, since with `LIMIT $2` unknown the shared plan's
     *   estimate looks dearer.
     * docs/performance.md has the measurements behind these choices.
     */
    async claim(now, limit, leaseUntil, leaseToken, overlapSince, exclude) {
      const leased = sql`leased AS (
          UPDATE delivery_queue q
          SET attempt_count = q.attempt_count + 1, next_attempt_at = ${leaseUntil}, lease_token = ${leaseToken}
          WHERE q.ctid = ANY(ARRAY(SELECT ctid FROM due))
          RETURNING q.delivery_id, q.attempt_count, q.ladder_base
        )`;
      const claimed = sql`SELECT d.id, d.account_id, d.endpoint_id, d.source, coalesce(w.url, d.url) AS url, w.url <> d.url AS url_moved,
          l.attempt_count, d.body, a.signing_secret, w.legacy_secret,
          l.ladder_base, w.paused_at IS NOT NULL AS paused, d.webhook_id IS NOT NULL AND w.id IS NULL AS webhook_gone,
          CASE WHEN a.signing_secret_rotated_at > ${overlapSince} THEN a.previous_signing_secret END AS previous_secret
        FROM leased l
        CROSS JOIN LATERAL (SELECT * FROM deliveries WHERE id = l.delivery_id OFFSET 0) d
        JOIN accounts a ON a.id = d.account_id
        LEFT JOIN webhooks w ON w.id = d.webhook_id`;
      // The window's last due time comes from the very rows this claim read (one snapshot), as
      // ISO text to the microsecond, whatever the session's DateStyle: read by a statement of its
      // own, the window would have moved on past the rows this claim and others just leased.
      const leave = exclude && (exclude.accounts.length > 0 || exclude.hosts.length > 0) ? exclude : undefined;
      const claim = leave
        ? sql<ClaimRow & { window_end?: string | null }>`/* prepared:claim-deliveries-excluding */
        WITH win AS MATERIALIZED (
          SELECT ctid, delivery_id, next_attempt_at FROM delivery_queue
          WHERE next_attempt_at <= ${now} AND next_attempt_at >= ${leave.after ?? '-infinity'}
          ORDER BY next_attempt_at LIMIT ${LEAVE_OUT_WINDOW}
        ), picked AS MATERIALIZED (
          SELECT win.ctid, win.next_attempt_at FROM win
          WHERE (SELECT x.account_id <> ALL(${arrayLiteral(leave.accounts)}::text[])
                   AND split_part(x.url, '/', 3) || ' ' || x.account_id <> ALL(${arrayLiteral(leave.hosts)}::text[])
                 FROM deliveries x WHERE x.id = win.delivery_id)
          LIMIT ${limit}
        ), due AS (
          SELECT ctid FROM delivery_queue q
          WHERE q.ctid = ANY(ARRAY(SELECT ctid FROM picked))
            AND q.next_attempt_at + interval '0 s' <= ${now}
          FOR UPDATE SKIP LOCKED
        ), ${leased}, claimed AS (${claimed})
        SELECT c.*, s.window_end FROM (
          SELECT CASE WHEN (SELECT count(*) FROM win) = ${LEAVE_OUT_WINDOW}
            THEN to_char(CASE WHEN (SELECT count(*) FROM picked) = ${limit}
                THEN (SELECT max(next_attempt_at) FROM picked) ELSE (SELECT max(next_attempt_at) FROM win) END
              AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') END AS window_end
        ) s LEFT JOIN claimed c ON true`
        : sql<ClaimRow & { window_end?: string | null }>`/* prepared:claim-deliveries */
        WITH due AS (
          SELECT ctid FROM delivery_queue
          WHERE next_attempt_at <= ${now}
          ORDER BY next_attempt_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        ), ${leased}
        ${claimed}`;
      const result = await queueStatement(claim);
      // Only what an attempt needs (no times to parse, no columns it never reads): at thousands
      // of rows a second each column read is worker and database time.
      // A claim that leaves some out answers one row with no delivery when it leased none.
      const rows = leave ? result.rows.filter((r) => r.id !== null) : result.rows;
      const deliveries = rows.map((r): ClaimedDelivery => ({
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
        webhookGone: r.webhook_gone,
        ...(r.url_moved ? { urlMoved: true } : {}),
      }));
      return leave ? Object.assign(deliveries, { windowEnd: result.rows[0]?.window_end ?? null }) : deliveries;
    },

    /**
     * One statement per batch, with fixed text whatever the batch size (arrays, not VALUES
     * lists), so on PostgreSQL it is a prepared statement (prepared.ts), parsed and planned once
     * per connection (QUEUE_PLAN); its data-modifying parts commit together.
     * - The lease token fences results of a worker whose lease was taken over (or whose
     *   delivery was cancelled) meanwhile: those attempts are logged but decide nothing.
     * - A retry stays in the queue with its next due time. A finished delivery leaves the
     *   queue and its outcome goes on the delivery row (a HOT update: migration 004).
     * - A busy endpoint's health row is written about once a second rather than once per
     *   batch (rows healthy with a success under a second old are skipped), so concurrent
     *   workers do not queue on it; the rows are locked in id order (ORDER BY ... FOR UPDATE,
     *   whatever order the update's plan would take), so two records cannot deadlock.
     */
    async recordResults(items, now) {
      if (!items.length) return new Set();
      const col = (f: (i: (typeof items)[number]) => string | number | null) => arrayLiteral(items.map(f));
      const record = sql<{ id: string }>`/* prepared:record-results */
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
          -- A test event (POST /webhooks/test) carries no respondent's answer: nothing is lost.
          INSERT INTO lost_deliveries (delivery_id, endpoint_id, lost_at)
          SELECT f.id, f.endpoint_id, f.finished_at FROM finished f WHERE f.status IN ('given_up', 'rejected')
            AND NOT EXISTS (SELECT 1 FROM delivery_events e WHERE e.delivery_id = f.id COLLATE "default" AND e.kind = 'test')
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
          WHERE e.id IN (
            SELECT x.id FROM endpoints x
            WHERE x.id IN (SELECT endpoint_id FROM finished WHERE status = 'delivered')
              AND (x.last_success_at IS NULL OR x.last_success_at < ${iso(new Date(now.getTime() - 1000))}::timestamptz
                   OR x.state <> 'healthy' OR x.alert_emails_sent <> 0 OR x.last_given_up_at > x.last_success_at)
            ORDER BY x.id
            FOR UPDATE
          )
        )
        SELECT delivery_id AS id FROM retried UNION ALL SELECT id FROM finished`;
      // On its own (a batch with no give-up), a deadlock aborts this statement alone.
      const res = await queueStatement(record).catch((err: unknown) => {
        throw asAbortedForAnother(err);
      });
      return new Set(res.rows.map((r) => r.id));
    },
  };
}
