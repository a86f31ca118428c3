import type { Kysely, Selectable } from 'kysely';
import type { DeliveryRule, Webhook } from '../../../domain/webhook.js';
import type { WebhookRepo } from '../../../app/ports/index.js';
import type { DB, WebhooksTable } from '../schema.js';
import { toPage } from './page.js';

export const toWebhook = (r: Selectable<WebhooksTable>): Webhook => ({
  id: r.id,
  accountId: r.account_id,
  pollId: r.poll_id,
  url: r.url,
  deliveryRule: r.delivery_rule as DeliveryRule,
  legacySecret: r.legacy_secret,
  createdAt: r.created_at,
  pausedAt: r.paused_at,
});

export function webhookRepo(db: Kysely<DB>): WebhookRepo {
  return {
    async insert(w) {
      await db
        .insertInto('webhooks')
        .values({
          id: w.id,
          account_id: w.accountId,
          poll_id: w.pollId,
          url: w.url,
          delivery_rule: w.deliveryRule,
          legacy_secret: w.legacySecret,
          created_at: w.createdAt,
        })
        .execute();
    },
    async get(id) {
      const r = await db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
      return r && toWebhook(r);
    },
    async listByPoll(pollId) {
      const rows = await db.selectFrom('webhooks').selectAll().where('poll_id', '=', pollId).orderBy('id').execute();
      return rows.map(toWebhook);
    },
    async countByPoll(pollId) {
      const r = await db
        .selectFrom('webhooks')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('poll_id', '=', pollId)
        .executeTakeFirstOrThrow();
      return Number(r.n);
    },
    async list(f, page) {
      let q = db.selectFrom('webhooks').selectAll();
      if (f.pollId) q = q.where('poll_id', '=', f.pollId);
      if (f.accountId) q = q.where('account_id', '=', f.accountId);
      if (page.startCursor) q = q.where('id', '>', page.startCursor);
      const rows = await q
        .orderBy('id')
        .limit(page.limit + 1)
        .execute();
      return toPage(rows.map(toWebhook), page);
    },
    async update(id, f) {
      const set = {
        ...(f.url !== undefined ? { url: f.url } : {}),
        ...(f.deliveryRule !== undefined ? { delivery_rule: f.deliveryRule } : {}),
        ...(f.pausedAt !== undefined ? { paused_at: f.pausedAt } : {}),
      };
      if (Object.keys(set).length) await db.updateTable('webhooks').set(set).where('id', '=', id).execute();
    },
    async lock(id) {
      await db.selectFrom('webhooks').select('id').where('id', '=', id).forUpdate().execute();
    },
    async delete(id) {
      const r = await db.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
      return Number(r.numDeletedRows) > 0;
    },
  };
}
