import { sql, type Kysely } from 'kysely';
import type { BatchRepo } from '../../../app/delivery-ports.js';
import type { DB } from '../schema.js';
import { cmp, json } from './page.js';

export function batchRepo(db: Kysely<DB>): BatchRepo {
  return {
    async append(batches) {
      if (!batches.length) return;
      // The window runs from the first answer: later answers join the open batch without
      // pushing its flush time, so a chatty respondent cannot delay delivery forever.
      // Rows go in key order so that concurrent groups of submissions lock them in one order.
      const sorted = [...batches].sort((a, b) => cmp(a.webhookId, b.webhookId) || cmp(a.participantId, b.participantId));
      await db
        .insertInto('batches')
        .values(
          sorted.map((b) => ({
            id: b.id,
            webhook_id: b.webhookId,
            endpoint_id: b.endpointId,
            account_id: b.accountId,
            poll_id: b.pollId,
            participant_id: b.participantId,
            response_ids: json(b.responseIds),
            flush_at: b.flushAt,
            created_at: b.createdAt,
          })),
        )
        .onConflict((oc) => oc.columns(['webhook_id', 'participant_id']).doUpdateSet({ response_ids: sql`batches.response_ids || excluded.response_ids` }))
        .execute();
    },
    async claimDue(now, limit) {
      // SKIP LOCKED: two schedulers flushing at once each take different batches; a batch
      // whose flush commits is deleted in the same transaction, so it never flushes twice.
      const rows = await db.selectFrom('batches').selectAll().where('flush_at', '<=', now).orderBy('flush_at').limit(limit).forUpdate().skipLocked().execute();
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
  };
}
