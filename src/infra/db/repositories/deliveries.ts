import { sql, type Kysely, type RawBuilder, type Selectable, type SqlBool } from 'kysely';
import {
  PARKED_UNTIL,
  type Attempt,
  type Delivery,
  type DeliveryStatus,
  type NewDelivery,
} from '../../../domain/delivery.js';
import type { DeliveryRepo } from '../../../app/ports/index.js';
import type { DeliverySource } from '../../../domain/webhook.js';
import { idBoundAt, idsMadeBefore } from '../../../domain/ids.js';
import type { EventType } from '../../../domain/payload.js';
import type { AttemptsTable, DB, DeliveriesTable } from '../schema.js';
import { deliveryControl } from './delivery-control.js';
import { deliveryQueue } from './delivery-queue.js';
import { arrayLiteral, iso, toPage } from './page.js';

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

/** Each distinct body of a set of deliveries once (`bodies`), and each delivery's place among them, from 1 (`at`). */
export type SharedBodies = { bodies: string[]; at: number[] };

/**
 * The bodies `rows` share, if any do: one event sent to several targets (a submission's
 * complete webhooks and Trigger webhook targets) has one body of up to 1 MiB, which a statement's
 * parameter would otherwise carry once per delivery. Each body is compared with the last few
 * distinct ones only, not hashed: newDelivery hands an event's targets one string, which `===`
 * matches at once, and distinct bodies differ within their first few dozen characters.
 */
export function sharedBodies(rows: readonly NewDelivery[]): SharedBodies | undefined {
  const bodies: string[] = [];
  const at: number[] = [];
  for (const r of rows) {
    let i = bodies.length - 1;
    while (i >= 0 && i >= bodies.length - 4 && bodies[i] !== r.body) i--;
    if (i < 0 || i < bodies.length - 4) i = bodies.push(r.body) - 1;
    at.push(i + 1);
  }
  return bodies.length < rows.length ? { bodies, at } : undefined;
}

/**
 * CTEs that insert deliveries with their queue rows, for a statement of the caller's (which
 * commits both or neither). The queue rows' foreign key is checked at the end of the statement,
 * when the deliveries are there. A row with a lease token is queued as a claim leaves it:
 * leased for its first attempt until nextAttemptAt.
 */
export function deliveryInserts(rows: readonly NewDelivery[], shared?: SharedBodies) {
  const d = <T>(f: (x: NewDelivery) => T) => rows.map(f);
  // With `shared`, each distinct body travels once and each row names its own by place.
  const body = shared ? sql`(${shared.bodies}::text[])[v.body]` : sql`v.body`;
  return sql`new_deliveries AS (
      INSERT INTO deliveries (id, account_id, poll_id, webhook_id, endpoint_id, source, url, participant_id, type, status, body, created_at)
      SELECT id, account_id, poll_id, webhook_id, endpoint_id, source, url, participant_id, type, 'pending', ${body}, created_at
      FROM unnest(
        ${d((x) => x.id)}::text[], ${d((x) => x.accountId)}::text[], ${d((x) => x.pollId)}::text[], ${d((x) => x.webhookId)}::text[],
        ${d((x) => x.endpointId)}::text[], ${d((x) => x.source)}::text[], ${d((x) => x.url)}::text[], ${d((x) => x.participantId)}::text[],
        ${d((x) => x.type)}::text[], ${shared ? sql`${shared.at}::int[]` : sql`${d((x) => x.body)}::text[]`}, ${d((x) => iso(x.createdAt))}::timestamptz[]
      ) AS v(id, account_id, poll_id, webhook_id, endpoint_id, source, url, participant_id, type, body, created_at)
    ), queued AS (
      INSERT INTO delivery_queue (delivery_id, next_attempt_at, lease_token, attempt_count)
      SELECT id, next_attempt_at, lease_token, CASE WHEN lease_token IS NULL THEN 0 ELSE 1 END
      FROM unnest(
        ${d((x) => x.id)}::text[], ${d((x) => iso(x.nextAttemptAt))}::timestamptz[], ${d((x) => x.leaseToken ?? null)}::text[]
      ) AS v(id, next_attempt_at, lease_token)
    )`;
}

export function deliveryRepo(db: Kysely<DB>): DeliveryRepo {
  // Deliveries with their queue row, if still queued (see toDelivery).
  const withQueue = (withBody = true) =>
    db
      .selectFrom('deliveries as d')
      .leftJoin('delivery_queue as q', 'q.delivery_id', 'd.id')
      .select(withBody ? sql<string>`d.body`.as('body') : sql<string>`''`.as('body'))
      .select([
        'd.id',
        'd.account_id',
        'd.poll_id',
        'd.webhook_id',
        'd.endpoint_id',
        'd.source',
        'd.url',
        'd.participant_id',
        'd.type',
        'd.status',
        'd.attempt_count',
        'd.dns_failures',
        'd.created_at',
        'd.finished_at',
      ])
      .select(['q.next_attempt_at', 'q.lease_token', 'q.attempt_count as queued_attempts']);

  // Takes the matching deliveries off the queue and finishes them `cancelled`, their counts kept.
  const cancelWhere = async (match: RawBuilder<unknown>[], now: Date) => {
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
  };

  return {
    ...deliveryControl(db),
    ...deliveryQueue(db),
    async insert(rows) {
      if (!rows.length) return;
      await sql`WITH ${deliveryInserts(rows)} SELECT 1`.execute(db);
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

    async unclaim(ids, leaseToken, now) {
      if (!ids.length) return;
      await db
        .updateTable('delivery_queue')
        .set((eb) => ({ next_attempt_at: now, lease_token: null, attempt_count: eb('attempt_count', '-', 1) }))
        .where('delivery_id', '=', sql<string>`ANY(${arrayLiteral(ids)}::text[])`)
        .where('lease_token', '=', leaseToken)
        .execute();
    },

    async unclaimLease(leaseToken, leaseUntil, now) {
      // The claim wrote this very lease end: the due index finds its rows, never a scan of the queue.
      const res = await db
        .updateTable('delivery_queue')
        .set((eb) => ({ next_attempt_at: now, lease_token: null, attempt_count: eb('attempt_count', '-', 1) }))
        .where('next_attempt_at', '=', leaseUntil)
        .where('lease_token', '=', leaseToken)
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    },

    async cancel(f, now) {
      const match = [sql`q.delivery_id = d.id`];
      if (f.webhookId) match.push(sql`d.webhook_id = ${f.webhookId}`);
      if (f.pollId) match.push(sql`d.poll_id = ${f.pollId}`);
      return cancelWhere(match, now);
    },

    // A logic target is its endpoint, found by endpoints_logic_key; its id is in "C", a
    // delivery's endpoint_id in the default collation.
    async cancelLogic(t, now) {
      if (!t.urls.length) return 0;
      return cancelWhere(
        [
          sql`q.delivery_id = d.id`,
          sql`d.account_id = ${t.accountId}`,
          sql`d.poll_id = ${t.pollId}`,
          sql`d.webhook_id IS NULL`,
          sql`d.endpoint_id IN (
            SELECT e.id COLLATE "default" FROM endpoints e
            WHERE e.account_id = ${t.accountId} AND e.poll_id = ${t.pollId} AND e.webhook_id IS NULL
              AND e.source = ${t.source} AND coalesce(e.slide_id, '') = ${t.slideId ?? ''}
              AND e.url = ANY(${arrayLiteral(t.urls)}::text[]))`,
        ],
        now,
      );
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

    // A log page lists deliveries, not what they carried: a body may hold megabytes of answers.
    async list(f, page, withBody = true) {
      let q = withQueue(withBody).where('d.account_id', 'in', f.accountIds);
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
      // A delivery's id starts with its creation time (new-delivery.ts): bounded by id too, the
      // walk of the account's, poll's or webhook's index starts and ends at the window, where a
      // window far from now would otherwise walk every delivery to find none.
      const after = f.createdAfter && idBoundAt('dlv', f.createdAfter.getTime());
      const before = f.createdBefore && idBoundAt('dlv', f.createdBefore.getTime());
      if (f.createdAfter) q = q.where('d.created_at', '>', f.createdAfter);
      if (f.createdBefore) q = q.where('d.created_at', '<', f.createdBefore);
      if (after) q = q.where('d.id', '>=', after);
      if (before) q = q.where('d.id', '<', before);
      if (page.startCursor) q = q.where('d.id', '<', page.startCursor);
      // Newest first: a delivery log is read from the top.
      const rows = await q
        .select((eb) =>
          eb
            .exists(
              eb
                .selectFrom('delivery_events as e')
                .select('e.id')
                // In the default collation, as delivery_events_delivery is (d.id is in "C").
                .where(sql<SqlBool>`e.delivery_id = d.id COLLATE "default"`)
                .where('e.kind', '=', 'test'),
            )
            .as('is_test'),
        )
        .orderBy('d.id', 'desc')
        .limit(page.limit + 1)
        .execute();
      return toPage(rows.map(toDelivery), page);
    },

    async testsAmong(ids) {
      if (!ids.length) return new Set();
      // In the default collation, as delivery_events_delivery is.
      const r = await sql<{ id: string }>`
        SELECT DISTINCT delivery_id AS id FROM delivery_events
        WHERE delivery_id = ANY(${[...ids]}::text[]) AND kind = 'test'`.execute(db);
      return new Set(r.rows.map((x) => x.id));
    },

    async cancelledAmong(ids) {
      if (!ids.length) return new Set();
      const r = await sql<{ id: string }>`
        SELECT v.id FROM unnest(${[...ids]}::text[]) AS v(id)
        WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.id = v.id AND d.status <> 'cancelled')`.execute(db);
      return new Set(r.rows.map((x) => x.id));
    },

    async countLost(endpointId, since, url) {
      let q = db
        .selectFrom('lost_deliveries as l')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('l.endpoint_id', '=', endpointId)
        .where('l.lost_at', '>=', since)
        // Not those from before its alert state started afresh (endpoints.startAfresh).
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('endpoints as e')
                .select('e.id')
                .where('e.id', '=', endpointId)
                .whereRef('e.losses_counted_since', '>', 'l.lost_at'),
            ),
          ),
        );
      if (url !== undefined)
        q = q.where((eb) =>
          eb.exists(
            eb
              .selectFrom('deliveries as d')
              .select('d.id')
              .whereRef('d.id', '=', 'l.delivery_id')
              .where('d.url', '=', url),
          ),
        );
      const r = await q.executeTakeFirstOrThrow();
      return Number(r.n);
    },

    /**
     * There is no index on finished_at (migration 004): a delivery finishes after it is made and
     * ids sort by the time they were made, so the finished ones before `before` all have ids
     * below idsMadeBefore(before), and the primary key walks them oldest first.
     * Their attempts go in the same statement: attempts have no foreign key to cascade
     * (migration 006). Their delivery_id is in the default collation, as is the index that finds
     * them; compared with the "C" ids in "C", every purge would scan all attempts.
     * The delete repeats the finished_at condition: a resend may reopen a row after the subquery
     * read it, and PostgreSQL checks only the deleted table's own conditions again on the row's
     * new version once it has waited for its lock, so without it the reopened delivery would go.
     */
    async purgeFinishedBefore(before, limit) {
      const res = await sql<{ n: number }>`
        WITH gone AS (
          DELETE FROM deliveries WHERE id IN (
            SELECT id FROM deliveries
            WHERE id < ${idsMadeBefore('dlv', before.getTime())} AND finished_at < ${before}
            ORDER BY id LIMIT ${limit}
          ) AND finished_at < ${before}
          RETURNING id
        ), gone_attempts AS (
          DELETE FROM attempts WHERE delivery_id IN (SELECT id COLLATE "default" FROM gone)
        ), gone_events AS (
          DELETE FROM delivery_events WHERE delivery_id IN (SELECT id COLLATE "default" FROM gone)
        )
        SELECT count(*)::int AS n FROM gone`.execute(db);
      return res.rows[0]?.n ?? 0;
    },
  };
}
