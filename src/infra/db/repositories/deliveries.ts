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

type ClaimRow = Selectable<DeliveriesTable> & { signing_secret: string | null; legacy_secret: string | null };

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
      const result = await sql<ClaimRow>`
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
          RETURNING d.*
        )
        SELECT l.*, a.signing_secret, w.legacy_secret
        FROM leased l
        JOIN accounts a ON a.id = l.account_id
        LEFT JOIN webhooks w ON w.id = l.webhook_id`.execute(db);
      return result.rows.map((r): ClaimedDelivery => ({ ...toDelivery(r), leaseToken, signingSecret: r.signing_secret, legacySecret: r.legacy_secret }));
    },

    async finishMany(items) {
      if (!items.length) return new Set();
      // One statement for the whole batch; the lease token fences results of a worker whose
      // lease was taken over (or whose delivery was cancelled) in the meantime.
      const values = sql.join(
        items.map(
          (i) =>
            sql`(${i.id}::text, ${i.leaseToken}::text, ${i.result.status}::text, ${i.result.nextAttemptAt}::timestamptz, ${i.result.finishedAt}::timestamptz, ${i.result.dnsFailure ? 1 : 0}::int)`,
        ),
      );
      const res = await sql<{ id: string }>`
        UPDATE deliveries d
        SET status = v.status, next_attempt_at = v.next_at, finished_at = v.finished_at, lease_token = NULL, dns_failures = d.dns_failures + v.dns
        FROM (VALUES ${values}) AS v(id, token, status, next_at, finished_at, dns)
        WHERE d.id = v.id AND d.lease_token = v.token AND d.status = 'in_flight'
        RETURNING d.id`.execute(db);
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

    async insertAttempts(rows) {
      if (!rows.length) return;
      await db
        .insertInto('attempts')
        .values(
          rows.map((a) => ({
            id: a.id,
            delivery_id: a.deliveryId,
            number: a.number,
            sent_at: a.sentAt,
            status_code: a.statusCode,
            error: a.error,
            duration_ms: a.durationMs,
            response_excerpt: a.responseExcerpt,
          })),
        )
        .execute();
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
