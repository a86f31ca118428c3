import type { Kysely, Selectable } from 'kysely';
import type { DeliverySource, Endpoint } from '../../../domain/webhook.js';
import type { EndpointRepo } from '../../../app/ports/index.js';
import type { DB, EndpointsTable } from '../schema.js';

export const toEndpoint = (r: Selectable<EndpointsTable>): Endpoint => ({
  id: r.id,
  accountId: r.account_id,
  pollId: r.poll_id,
  webhookId: r.webhook_id,
  source: r.source as DeliverySource,
  slideId: r.slide_id,
  url: r.url,
  state: r.state as Endpoint['state'],
  lastSuccessAt: r.last_success_at,
  lastGivenUpAt: r.last_given_up_at,
  lastFailure: r.last_failure,
  alertEmailsSent: r.alert_emails_sent,
  lastAlertAt: r.last_alert_at,
  quietSince: r.quiet_since,
  createdAt: r.created_at,
});

export function endpointRepo(db: Kysely<DB>): EndpointRepo {
  /** Its alert state starts afresh (at `url`, when given). */
  const healthyAgain = async (id: string, now: Date, also: { url?: string; losses_counted_since?: Date } = {}) => {
    await db
      .updateTable('endpoints')
      .set({
        ...also,
        state: 'healthy',
        last_given_up_at: null,
        last_failure: null,
        alert_emails_sent: 0,
        last_alert_at: null,
        alert_hold_until: null,
        quiet_since: now,
      })
      .where('id', '=', id)
      .execute();
  };
  return {
    async insert(e) {
      await db
        .insertInto('endpoints')
        .values({
          id: e.id,
          account_id: e.accountId,
          poll_id: e.pollId,
          webhook_id: e.webhookId,
          source: e.source,
          slide_id: e.slideId,
          url: e.url,
          created_at: e.createdAt,
        })
        .execute();
    },
    async getMany(accountId, ids) {
      if (!ids.length) return [];
      const rows = await db
        .selectFrom('endpoints')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('id', 'in', ids)
        .execute();
      return rows.map(toEndpoint);
    },
    async ensureLogic(e) {
      const find = () =>
        db
          .selectFrom('endpoints')
          .select('id')
          .where('account_id', '=', e.accountId)
          .where('poll_id', '=', e.pollId)
          .where('source', '=', e.source)
          .where((eb) => (e.slideId === null ? eb('slide_id', 'is', null) : eb('slide_id', '=', e.slideId)))
          .where('url', '=', e.url)
          .where('webhook_id', 'is', null)
          .executeTakeFirst();
      const found = await find();
      if (found) return found.id;
      await db
        .insertInto('endpoints')
        .values({
          id: e.id,
          account_id: e.accountId,
          poll_id: e.pollId,
          webhook_id: null,
          source: e.source,
          slide_id: e.slideId,
          url: e.url,
          created_at: e.createdAt,
        })
        .onConflict((oc) => oc.doNothing())
        .execute();
      return (await find())!.id;
    },
    async delete(id) {
      await db.deleteFrom('endpoints').where('id', '=', id).execute();
    },
    async moveTo(id, url, now) {
      // Its losses stay listed: a recover of a window resends them, to the new URL. The
      // email's count of the past week's losses is taken at the URL it names (countLost).
      await healthyAgain(id, now, { url });
    },
    async startAfresh(id, now) {
      // Its losses so far are no longer counted in an email ("responses lost in the past week"),
      // and stay listed: a recover of the action added again resends them.
      await healthyAgain(id, now, { losses_counted_since: now });
    },
    async restartQuiet(id, now) {
      await db.updateTable('endpoints').set({ quiet_since: now }).where('id', '=', id).execute();
    },
    async deleteByPoll(accountId, pollId) {
      await db.deleteFrom('endpoints').where('account_id', '=', accountId).where('poll_id', '=', pollId).execute();
    },
    async recordGivenUp(id, at, failure, url) {
      let q = db.updateTable('endpoints').set({ last_given_up_at: at, last_failure: failure }).where('id', '=', id);
      if (url !== undefined) q = q.where('url', '=', url);
      await q.execute();
    },
  };
}
