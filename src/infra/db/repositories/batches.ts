import type { Kysely } from 'kysely';
import type { BatchRepo } from '../../../app/ports/index.js';
import type { DB } from '../schema.js';

export function batchRepo(db: Kysely<DB>): BatchRepo {
  return {
    async claimDue(now, limit) {
      // SKIP LOCKED: two schedulers flushing at once each take different batches; a batch
      // whose flush commits is deleted in the same transaction, so it never flushes twice.
      const rows = await db
        .selectFrom('batches')
        .selectAll()
        .where('flush_at', '<=', now)
        .orderBy('flush_at')
        .limit(limit)
        .forUpdate()
        .skipLocked()
        .execute();
      return rows.map((r) => ({
        id: r.id,
        webhookId: r.webhook_id,
        endpointId: r.endpoint_id,
        accountId: r.account_id,
        pollId: r.poll_id,
        participantId: r.participant_id,
        responseIds: r.response_ids,
        flushAt: r.flush_at,
        createdAt: r.created_at,
      }));
    },
    async delete(ids) {
      if (ids.length) await db.deleteFrom('batches').where('id', 'in', ids).execute();
    },
    async nextFlushAt() {
      const r = await db
        .selectFrom('batches')
        .select((eb) => eb.fn.min('flush_at').as('at'))
        .executeTakeFirst();
      return (r?.at as Date | null | undefined) ?? null;
    },
  };
}
