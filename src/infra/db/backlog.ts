import { type Kysely } from 'kysely';
import { PARKED_UNTIL } from '../../domain/delivery.js';
import type { DB } from './schema.js';

/**
 * The queue as a worker sees it: deliveries due now that no worker holds (a leased one's due
 * time is its lease expiry, still ahead), and the oldest due time among them. One range over
 * the due-time index; parked deliveries of paused webhooks sit at PARKED_UNTIL, outside it.
 */
export async function queueBacklog(db: Kysely<DB>, now: Date): Promise<{ due: number; oldestDueAt: Date | null }> {
  const r = await db
    .selectFrom('delivery_queue')
    .select((eb) => [eb.fn.countAll().as('due'), eb.fn.min('next_attempt_at').as('oldest')])
    .where('next_attempt_at', '<=', now)
    .where('next_attempt_at', '<', PARKED_UNTIL)
    .executeTakeFirst();
  const oldest = r?.oldest as Date | string | null | undefined;
  return { due: Number(r?.due ?? 0), oldestDueAt: oldest ? new Date(oldest) : null };
}
