import { sql, type Kysely } from 'kysely';
import type { RecoveryRepo } from '../../../app/ports/index.js';
import type { DB } from '../schema.js';
import { targetStands } from './logic-target.js';

export function recoveryRepo(db: Kysely<DB>): RecoveryRepo {
  return {
    async create(r, m) {
      await db
        .insertInto('recoveries')
        .values({ id: r.id, account_id: r.accountId, user_id: r.userId, created_at: r.createdAt })
        .execute();
      // Failed deliveries only (a delivery still queued is on its way already), read from the
      // list of lost ones by endpoint and the time each was lost (never before it was made), so
      // a wide window walks the failures of the webhook or the poll's logic targets, not every
      // delivery they ever had. That time is the worker's clock and the window the API's: a day
      // of leeway keeps a delivery lost by a worker whose clock runs behind. A saved webhook's
      // endpoint id is its webhook id. One still listed by a recover under way is left to it: a
      // recover repeated while the first is resending lists nothing twice. Two at once, neither
      // committed: the second waits on the unique index (migration 020) for the first, then leaves
      // out what the first listed; both insert in id order, so neither waits for the other.
      const endpoints = m.webhookId
        ? sql`l.endpoint_id = ${m.webhookId}`
        : sql`l.endpoint_id IN (SELECT e.id COLLATE "default" FROM endpoints e
            WHERE e.account_id = ${r.accountId} AND e.poll_id = ${m.pollId ?? ''} AND e.webhook_id IS NULL)`;
      const target = m.webhookId
        ? sql`d.webhook_id = ${m.webhookId}`
        : sql`d.poll_id = ${m.pollId ?? ''} AND d.webhook_id IS NULL`;
      const res = await sql`
        INSERT INTO recovery_items (recovery_id, delivery_id)
        SELECT ${r.id}, d.id FROM lost_deliveries l JOIN deliveries d ON d.id = l.delivery_id
        WHERE ${endpoints} AND l.lost_at >= ${new Date(Math.max(0, m.since.getTime() - 86_400_000))}
          AND d.account_id = ${r.accountId} AND ${target} AND d.status IN ('rejected', 'given_up') AND ${targetStands}
          AND d.created_at >= ${m.since} ${m.until ? sql`AND d.created_at < ${m.until}` : sql``}
          AND NOT EXISTS (SELECT 1 FROM recovery_items i WHERE i.delivery_id = d.id)
        ORDER BY d.id
        ON CONFLICT (delivery_id) DO NOTHING`.execute(db);
      const listed = Number(res.numAffectedRows ?? 0n);
      // A recover with nothing to resend leaves no row behind (the scheduler removes the others).
      if (!listed) await db.deleteFrom('recoveries').where('id', '=', r.id).execute();
      return listed;
    },

    async claimItems(limit) {
      const rows = await sql<{ recovery_id: string; delivery_id: string; account_id: string; user_id: string | null }>`
        SELECT i.recovery_id, i.delivery_id, r.account_id, r.user_id
        FROM recovery_items i JOIN recoveries r ON r.id = i.recovery_id
        ORDER BY i.recovery_id, i.delivery_id
        LIMIT ${limit}
        FOR UPDATE OF i SKIP LOCKED`.execute(db);
      return rows.rows.map((r) => ({
        recoveryId: r.recovery_id,
        deliveryId: r.delivery_id,
        accountId: r.account_id,
        userId: r.user_id,
      }));
    },

    async removeItems(items) {
      if (!items.length) return;
      const recoveryIds = [...new Set(items.map((x) => x.recoveryId))];
      // The recovers are locked first (in id order): two schedulers emptying one recover each
      // of its last items would otherwise each still see the other's, and neither remove it.
      await sql`SELECT id FROM recoveries WHERE id = ANY(${recoveryIds}::text[]) ORDER BY id FOR UPDATE`.execute(db);
      await sql`DELETE FROM recovery_items i USING unnest(${items.map((x) => x.recoveryId)}::text[], ${items.map((x) => x.deliveryId)}::text[]) AS v(r, d)
        WHERE i.recovery_id = v.r AND i.delivery_id = v.d`.execute(db);
      // recovery_id is in the default collation, r.id in "C": compared in the default one, as
      // the items' primary key is, the lookup is by key rather than a scan of every item.
      await sql`DELETE FROM recoveries r WHERE r.id = ANY(${recoveryIds}::text[])
        AND NOT EXISTS (SELECT 1 FROM recovery_items i WHERE i.recovery_id = r.id COLLATE "default")`.execute(db);
    },
  };
}
