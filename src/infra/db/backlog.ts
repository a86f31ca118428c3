import { sql, type Kysely } from 'kysely';
import { PARKED_UNTIL } from '../../domain/delivery.js';
import type { DB } from './schema.js';

/** Due deliveries a scrape counts at most, so that its work stays bounded however long the backlog. */
export const BACKLOG_COUNT_CAP = 1_000_000;

/**
 * The queue as a worker sees it: deliveries due now that no worker holds (a leased one's due
 * time is its lease expiry, still ahead), counted up to `cap`, and the oldest due time among
 * them. Ranges over the due-time index; parked deliveries of paused webhooks sit at
 * PARKED_UNTIL, outside it.
 */
export async function queueBacklog(
  db: Kysely<DB>,
  now: Date,
  cap: number = BACKLOG_COUNT_CAP,
): Promise<{ due: number; oldestDueAt: Date | null }> {
  const due = db
    .selectFrom('delivery_queue')
    .where('next_attempt_at', '<=', now)
    .where('next_attempt_at', '<', PARKED_UNTIL);
  const r = await db
    .selectNoFrom((eb) => [
      eb
        .selectFrom(due.select(sql.lit(1).as('one')).limit(cap).as('capped'))
        .select(eb.fn.countAll().as('n'))
        .as('due'),
      due.select((d) => d.fn.min('next_attempt_at').as('oldest')).as('oldest'),
    ])
    .executeTakeFirst();
  const oldest = r?.oldest as Date | string | null | undefined;
  return { due: Number(r?.due ?? 0), oldestDueAt: oldest ? new Date(oldest) : null };
}
