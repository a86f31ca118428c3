import { sql, type Kysely } from 'kysely';
import { PARKED_UNTIL } from '../../../domain/delivery.js';
import { ADDRESSES_AT_END, NO_ADDRESSES_AT_END } from '../../../domain/payload.js';
import type { DeliveryRepo } from '../../../app/ports/index.js';
import type { DB } from '../schema.js';
import { targetStands } from './logic-target.js';

type Control = Pick<
  DeliveryRepo,
  | 'park'
  | 'cancelLeased'
  | 'parkWebhook'
  | 'parkIfPaused'
  | 'unparkWebhook'
  | 'retarget'
  | 'withholdAddresses'
  | 'reopen'
  | 'addEvents'
  | 'events'
>;

/** A delivery body with its addresses withheld (domain/payload.ts), in SQL. */
const withheld = (body: ReturnType<typeof sql.ref>) =>
  sql`regexp_replace(${body}, ${ADDRESSES_AT_END}, ${NO_ADDRESSES_AT_END})`;

/** What people do to deliveries: park and unpark (pause), retarget (a new URL), reopen (resend), and its log. */
export function deliveryControl(db: Kysely<DB>): Control {
  return {
    // Parked only while the webhook is still paused: one resumed since the claim read it makes
    // the delivery due at once instead (the resume could not unpark a row that was leased).
    // The webhook is read under a share lock: a resume that has not committed yet is waited
    // for and its row read as it leaves it, and a resume that comes after waits for the park to
    // commit, so that its unpark sees the parked row.
    async park(ids, leaseToken, now) {
      if (!ids.length) return;
      await sql`UPDATE delivery_queue q
        SET next_attempt_at = CASE
            WHEN EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.paused_at IS NOT NULL FOR SHARE)
            THEN ${PARKED_UNTIL}::timestamptz ELSE ${now}::timestamptz END,
          lease_token = NULL, attempt_count = q.attempt_count - 1
        FROM deliveries d
        WHERE q.delivery_id = d.id AND q.delivery_id = ANY(${ids}::text[]) AND q.lease_token = ${leaseToken}`.execute(
        db,
      );
    },

    async cancelLeased(ids, leaseToken, now) {
      if (!ids.length) return 0;
      const res = await sql`
        WITH gone AS (
          DELETE FROM delivery_queue q
          WHERE q.delivery_id = ANY(${ids}::text[]) AND q.lease_token = ${leaseToken}
          RETURNING q.delivery_id, q.attempt_count - 1 AS attempt_count, q.dns_failures
        )
        UPDATE deliveries d
        SET status = 'cancelled', finished_at = ${now}, attempt_count = g.attempt_count, dns_failures = g.dns_failures
        FROM gone g WHERE d.id = g.delivery_id`.execute(db);
      return Number(res.numAffectedRows ?? 0n);
    },

    async parkWebhook(webhookId) {
      await sql`UPDATE delivery_queue q SET next_attempt_at = ${PARKED_UNTIL}
        FROM deliveries d WHERE q.delivery_id = d.id AND d.webhook_id = ${webhookId} AND q.lease_token IS NULL`.execute(
        db,
      );
    },

    // The webhook is read under a share lock, as by park: a resume waits for this to commit,
    // and its unpark then sees the parked rows.
    async parkIfPaused(ids) {
      if (!ids.length) return;
      await sql`UPDATE delivery_queue q SET next_attempt_at = ${PARKED_UNTIL}
        FROM deliveries d
        WHERE q.delivery_id = d.id AND q.delivery_id = ANY(${ids}::text[]) AND q.lease_token IS NULL
          AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id AND w.paused_at IS NOT NULL FOR SHARE)`.execute(
        db,
      );
    },

    async unparkWebhook(webhookId, now) {
      // Only what the pause parked: a retry waiting out its delay keeps it. The backlog falls due a
      // microsecond apart, oldest first: a claim that leaves its host out reads past it a window
      // at a time, and cannot read past more than a window's worth due at one instant
      // (src/worker/leave-out-cursor.ts). 100,000 parked are all due within a tenth of a second.
      const res =
        await sql`UPDATE delivery_queue q SET next_attempt_at = ${now}::timestamptz + p.n * interval '1 microsecond'
        FROM (
          SELECT q2.delivery_id, row_number() OVER (ORDER BY q2.delivery_id) - 1 AS n
          FROM delivery_queue q2 JOIN deliveries d ON q2.delivery_id = d.id
          WHERE d.webhook_id = ${webhookId} AND q2.lease_token IS NULL AND q2.next_attempt_at >= ${PARKED_UNTIL}
        ) p
        WHERE q.delivery_id = p.delivery_id AND q.lease_token IS NULL AND q.next_attempt_at >= ${PARKED_UNTIL}`.execute(
          db,
        );
      return Number(res.numAffectedRows ?? 0n);
    },

    // A queued delivery's row says 'pending' (migration 004). The status is checked on the row
    // itself, so that one a batch record finished while this waited for it keeps the URL it was
    // sent to: after the wait only the updated row's own conditions are checked again.
    async retarget(webhookId, url) {
      // Only while the webhook still has that URL: a claim's retarget, run outside any lock with
      // the URL it read, must not write back an older URL over a change committed since. FOR
      // SHARE waits for a change under way and reads its URL (a plain subquery would keep the
      // statement's snapshot).
      const res = await sql`UPDATE deliveries d SET url = ${url}
        WHERE d.webhook_id = ${webhookId} AND d.status = 'pending'
          AND EXISTS (SELECT 1 FROM delivery_queue q WHERE q.delivery_id = d.id)
          AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = ${webhookId} AND w.url = ${url} FOR SHARE)`.execute(db);
      return Number(res.numAffectedRows ?? 0n);
    },

    // A queued delivery's row says 'pending'; one already leased keeps the body its worker read.
    // Joined to the queue, so the planner may walk the backlog rather than the poll's history.
    async withholdAddresses(pollId) {
      const res = await sql`UPDATE deliveries d SET body = ${withheld(sql.ref('d.body'))}
        FROM delivery_queue q
        WHERE q.delivery_id = d.id AND d.poll_id = ${pollId} AND d.status = 'pending'
          AND d.body NOT LIKE ${'%' + NO_ADDRESSES_AT_END /* no LIKE wildcard in it */}`.execute(db);
      return Number(res.numAffectedRows ?? 0n);
    },

    /**
     * The delivery row is locked by its update, so two resends of one delivery queue it once:
     * the second finds it no longer finished. A saved webhook's delivery goes to the webhook's
     * URL as it is now (it may have been corrected since); one whose webhook or poll is gone is
     * not reopened, nor is a logic-triggered one whose action was removed since. The poll is read under a key share lock and then the webhook under a share
     * lock, the order in which a poll's deletion takes them (its row, then the cascade to its
     * webhooks), so the two cannot deadlock. A change of URL or a deletion that has not
     * committed is waited for and its outcome read, and one that comes later waits for this to
     * commit, so its retarget or cancel sees the reopened delivery. Without the locks a resend
     * could queue a delivery to a URL just replaced, or for a webhook or poll just deleted.
     * A delivery of a poll made anonymous since goes again with its addresses withheld.
     */
    async reopen(id, now, failedOnly = false) {
      if (!db.isTransaction) return db.transaction().execute((trx) => deliveryControl(trx).reopen(id, now, failedOnly));
      const finished = failedOnly ? sql`('rejected', 'given_up')` : sql`('delivered', 'rejected', 'given_up')`;
      await sql`SELECT 1 FROM polls p WHERE p.id = (SELECT d.poll_id FROM deliveries d WHERE d.id = ${id}) FOR KEY SHARE`.execute(
        db,
      );
      const res = await sql<{ attempt_count: number }>`
        WITH reopened AS (
          UPDATE deliveries d SET status = 'pending', finished_at = NULL,
            url = coalesce((SELECT w.url FROM webhooks w WHERE w.id = d.webhook_id FOR SHARE), d.url),
            body = CASE WHEN (SELECT p.body->'settings'->'anonymous' = 'true'::jsonb FROM polls p WHERE p.id = d.poll_id)
              THEN ${withheld(sql.ref('d.body'))} ELSE d.body END
          WHERE d.id = ${id} AND d.status IN ${finished}
            AND NOT EXISTS (SELECT 1 FROM delivery_queue WHERE delivery_id = ${id})
            AND (d.webhook_id IS NULL OR EXISTS (SELECT 1 FROM webhooks w WHERE w.id = d.webhook_id FOR SHARE))
            AND EXISTS (SELECT 1 FROM polls p WHERE p.id = d.poll_id AND p.account_id = d.account_id)
            AND ${targetStands}
          RETURNING d.id, d.attempt_count
        ), queued AS (
          INSERT INTO delivery_queue (delivery_id, next_attempt_at, attempt_count, ladder_base)
          SELECT id, ${now}, attempt_count, attempt_count FROM reopened
        ), found AS (
          DELETE FROM lost_deliveries WHERE delivery_id IN (SELECT id FROM reopened)
        )
        SELECT attempt_count FROM reopened`.execute(db);
      const row = res.rows[0];
      return row ? row.attempt_count + 1 : undefined;
    },

    async addEvents(events) {
      if (!events.length) return;
      await db
        .insertInto('delivery_events')
        .values(
          events.map((e) => ({
            id: e.id,
            delivery_id: e.deliveryId,
            account_id: e.accountId,
            kind: e.kind,
            user_id: e.userId,
            attempt_number: e.attemptNumber,
            created_at: e.createdAt,
          })),
        )
        .execute();
    },

    async events(deliveryId) {
      const rows = await db
        .selectFrom('delivery_events as e')
        .leftJoin('users as u', 'u.id', 'e.user_id')
        .selectAll('e')
        .select('u.email')
        .where('e.delivery_id', '=', deliveryId)
        .orderBy('e.id')
        .execute();
      return rows.map((r) => ({
        id: r.id,
        deliveryId: r.delivery_id,
        accountId: r.account_id,
        kind: r.kind as 'resend' | 'recover' | 'test',
        userId: r.user_id,
        attemptNumber: r.attempt_number,
        createdAt: r.created_at,
        userEmail: r.email,
      }));
    },
  };
}
