import { sql, type Kysely, type Selectable } from 'kysely';
import type { Attempt, ClaimedDelivery, Delivery, DeliveryRepo, DeliverySource, DeliveryStatus } from '../../../app/delivery-ports.js';
import type { EventType } from '../../../domain/payload.js';
import type { AttemptsTable, DB, DeliveriesTable } from '../schema.js';
import { toPage } from './page.js';

const toDelivery = (r: Selectable<DeliveriesTable>): Delivery => ({
  id: r.id,
  accountId: r.account_id,
  pollId: r.poll_id,
  webhookId: r.webhook_id,
  endpointId: r.endpoint_id,
  source: r.source as DeliverySource,
  url: r.url,
  participantId: r.participant_id,
  type: r.type as EventType,
  status: r.status as DeliveryStatus,
  attemptCount: r.attempt_count,
  nextAttemptAt: r.next_attempt_at,
  body: r.body,
  createdAt: r.created_at,
  finishedAt: r.finished_at,
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

type ClaimRow = Pick<Selectable<DeliveriesTable>, 'id' | 'account_id' | 'poll_id' | 'webhook_id' | 'endpoint_id' | 'source' | 'url' | 'participant_id' | 'type' | 'attempt_count' | 'body'> & {
  signing_secret: string | null;
  legacy_secret: string | null;
};

export function deliveryRepo(db: Kysely<DB>): DeliveryRepo {
  return {
    async insert(rows) {
      if (!rows.length) return;
      await db
        .insertInto('deliveries')
        .values(
          rows.map((d) => ({
            id: d.id,
            account_id: d.accountId,
            poll_id: d.pollId,
            webhook_id: d.webhookId,
            endpoint_id: d.endpointId,
            source: d.source,
            url: d.url,
            participant_id: d.participantId,
            type: d.type,
            status: 'pending',
            next_attempt_at: d.nextAttemptAt,
            body: d.body,
            created_at: d.createdAt,
          })),
        )
        .execute();
    },

    /**
     * Leases up to `limit` due deliveries for one attempt each.
     * - FOR UPDATE SKIP LOCKED: concurrent workers never pick the same row; each takes rows
     *   the others have not locked, without waiting on them.
     * - Pending and in_flight rows share next_attempt_at as the claim key: for in_flight rows
     *   it is the lease expiry, so a delivery whose worker died becomes due again by itself.
     * - The new lease token fences the old holder: its late result write matches no row.
     * - The signing secret is read in the same statement, i.e. as it is at attempt time, so a
     *   rotated secret applies to queued retries at once.
     */
    async claim(now, limit, leaseUntil, leaseToken) {
      const result = await sql<ClaimRow>`/* prepared:claim-deliveries */
        WITH due AS (
          SELECT id FROM deliveries
          WHERE status IN ('pending', 'in_flight') AND next_attempt_at <= ${now}
          ORDER BY next_attempt_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        ), leased AS (
          UPDATE deliveries d
          SET status = 'in_flight', attempt_count = d.attempt_count + 1, next_attempt_at = ${leaseUntil}, lease_token = ${leaseToken}
          FROM due WHERE d.id = due.id
          RETURNING d.id, d.account_id, d.poll_id, d.webhook_id, d.endpoint_id, d.source, d.url, d.participant_id, d.type, d.attempt_count, d.body
        )
        SELECT l.id, l.account_id, l.poll_id, l.webhook_id, l.endpoint_id, l.source, l.url, l.participant_id, l.type,
               l.attempt_count, l.body, a.signing_secret, w.legacy_secret
        FROM leased l
        JOIN accounts a ON a.id = l.account_id
        LEFT JOIN webhooks w ON w.id = l.webhook_id`.execute(db);
      // Only what an attempt needs: the row's times stay in the database (no date parsing per row).
      return result.rows.map(
        (r): ClaimedDelivery => ({
          id: r.id,
          accountId: r.account_id,
          pollId: r.poll_id,
          webhookId: r.webhook_id,
          endpointId: r.endpoint_id,
          source: r.source as DeliverySource,
          url: r.url,
          participantId: r.participant_id,
          type: r.type as EventType,
          attemptCount: r.attempt_count,
          body: r.body,
          leaseToken,
          signingSecret: r.signing_secret,
          legacySecret: r.legacy_secret,
        }),
      );
    },

    /**
     * One statement per batch, with fixed text whatever the batch size (arrays, not VALUES
     * lists), so on PostgreSQL it is a prepared statement (prepared.ts), parsed and planned once
     * per connection; its data-modifying parts commit together.
     * - The lease token fences results of a worker whose lease was taken over (or whose
     *   delivery was cancelled) meanwhile: those attempts are logged but decide nothing.
     * - A busy endpoint's health row is written about once a second rather than once per
     *   batch (rows healthy with a success under a second old are skipped), and in id order,
     *   so concurrent workers do not queue on it.
     */
    async recordResults(items, now) {
      if (!items.length) return new Set();
      const iso = (d: Date | null) => (d ? d.toISOString() : null);
      const col = <T>(f: (i: (typeof items)[number]) => T) => items.map(f);
      const res = await sql<{ id: string }>`/* prepared:record-results */
        WITH v AS (
          SELECT * FROM unnest(
            ${col((i) => i.attempt.deliveryId)}::text[], ${col((i) => i.leaseToken)}::text[], ${col((i) => i.result.status)}::text[],
            ${col((i) => iso(i.result.nextAttemptAt))}::timestamptz[], ${col((i) => iso(i.result.finishedAt))}::timestamptz[],
            ${col((i) => (i.result.dnsFailure ? 1 : 0))}::int[]
          ) AS v(id, token, status, next_at, finished_at, dns)
        ), upd AS (
          UPDATE deliveries d
          SET status = v.status, next_attempt_at = v.next_at, finished_at = v.finished_at, lease_token = NULL, dns_failures = d.dns_failures + v.dns
          FROM v WHERE d.id = v.id AND d.lease_token = v.token AND d.status = 'in_flight'
          RETURNING d.id, d.endpoint_id, v.status
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
          WHERE e.id IN (SELECT endpoint_id FROM upd WHERE status = 'delivered')
            AND (e.last_success_at IS NULL OR e.last_success_at < ${iso(new Date(now.getTime() - 1000))}::timestamptz
                 OR e.state <> 'healthy' OR e.alert_emails_sent <> 0 OR e.last_given_up_at > e.last_success_at)
        )
        SELECT id FROM upd`.execute(db);
      return new Set(res.rows.map((r) => r.id));
    },

    async nextDueAt() {
      const r = await db
        .selectFrom('deliveries')
        .select((eb) => eb.fn.min('next_attempt_at').as('due'))
        .where('status', 'in', ['pending', 'in_flight'])
        .executeTakeFirst();
      return (r?.due as Date | null | undefined) ?? null;
    },

    async release(id, leaseToken, now) {
      const res = await db
        .updateTable('deliveries')
        // The attempt may have reached the endpoint: its number stays used, so the next one is higher.
        .set({ status: 'pending', next_attempt_at: now, lease_token: null })
        .where('id', '=', id)
        .where('lease_token', '=', leaseToken)
        .where('status', '=', 'in_flight')
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },

    async cancel(f, now) {
      let q = db
        .updateTable('deliveries')
        .set({ status: 'cancelled', finished_at: now, next_attempt_at: null, lease_token: null })
        .where('status', 'in', ['pending', 'in_flight']);
      if (f.webhookId) q = q.where('webhook_id', '=', f.webhookId);
      if (f.pollId) q = q.where('poll_id', '=', f.pollId);
      const res = await q.executeTakeFirst();
      return Number(res.numUpdatedRows);
    },

    async get(id) {
      const r = await db.selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toDelivery(r);
    },

    async attempts(deliveryId) {
      const rows = await db.selectFrom('attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('number').orderBy('sent_at').execute();
      return rows.map(toAttempt);
    },

    async lastAttempt(deliveryId) {
      const r = await db.selectFrom('attempts').selectAll().where('delivery_id', '=', deliveryId).orderBy('sent_at', 'desc').orderBy('number', 'desc').limit(1).executeTakeFirst();
      return r && toAttempt(r);
    },

    async list(f, page) {
      let q = db.selectFrom('deliveries').selectAll().where('account_id', 'in', f.accountIds);
      if (f.webhookId) q = q.where('webhook_id', '=', f.webhookId);
      if (f.pollId) q = q.where('poll_id', '=', f.pollId);
      if (f.status) q = q.where('status', '=', f.status);
      if (f.createdAfter) q = q.where('created_at', '>', f.createdAfter);
      if (f.createdBefore) q = q.where('created_at', '<', f.createdBefore);
      if (page.startCursor) q = q.where('id', '<', page.startCursor);
      // Newest first: a delivery log is read from the top.
      const rows = await q.orderBy('id', 'desc').limit(page.limit + 1).execute();
      return toPage(rows.map(toDelivery), page);
    },

    async countLost(endpointId, since) {
      const r = await db
        .selectFrom('deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('endpoint_id', '=', endpointId)
        .where('status', 'in', ['given_up', 'rejected'])
        .where('finished_at', '>=', since)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },

    async purgeFinishedBefore(before, limit) {
      const res = await sql`
        DELETE FROM deliveries WHERE id IN (
          SELECT id FROM deliveries WHERE finished_at < ${before} LIMIT ${limit}
        )`.execute(db);
      return Number(res.numAffectedRows ?? 0n);
    },
  };
}
