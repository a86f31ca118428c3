import { sql, type Kysely, type Selectable } from 'kysely';
import type { DeliverySource, Endpoint } from '../../../domain/webhook.js';
import type { EndpointRepo, LogicEndpoint } from '../../../app/ports/index.js';
import { cmp } from './page.js';
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
    async ensureLogic(es) {
      if (!es.length) return [];
      const key = (x: { accountId: string; pollId: string; source: string; slideId: string | null; url: string }) =>
        [x.accountId, x.pollId, x.source, x.slideId ?? '', x.url].join('\u0000');
      // The key of endpoints_logic_key (migration 008), so that the lookup walks that index.
      const find = async (want: readonly LogicEndpoint[]) => {
        const f = <T>(g: (x: LogicEndpoint) => T) => want.map(g);
        const r = await sql<{
          id: string;
          account_id: string;
          poll_id: string;
          source: string;
          slide_id: string | null;
          url: string;
        }>`
          SELECT e.id, e.account_id, e.poll_id, e.source, e.slide_id, e.url FROM endpoints e
          JOIN unnest(${f((x) => x.accountId)}::text[], ${f((x) => x.pollId)}::text[], ${f((x) => x.source)}::text[],
            ${f((x) => x.slideId ?? '')}::text[], ${f((x) => x.url)}::text[]) AS v(account_id, poll_id, source, slide_id, url)
            ON e.account_id = v.account_id AND e.poll_id = v.poll_id AND e.source = v.source
              AND coalesce(e.slide_id, '') = v.slide_id AND e.url = v.url
          WHERE e.webhook_id IS NULL`.execute(db);
        return new Map(
          r.rows.map((x) => [
            key({ accountId: x.account_id, pollId: x.poll_id, source: x.source, slideId: x.slide_id, url: x.url }),
            x.id,
          ]),
        );
      };
      const found = await find(es);
      // Each missing key once, in key order: two groups making the same endpoints insert them in
      // one order, so neither holds one the other waits for while it waits for one the other holds.
      const first = new Map<string, LogicEndpoint>();
      for (const e of es) if (!found.has(key(e)) && !first.has(key(e))) first.set(key(e), e);
      const missing = [...first.entries()].sort(([a], [b]) => cmp(a, b)).map(([, e]) => e);
      if (missing.length) {
        // A concurrent first use of the same URL inserts first: this insert then does nothing,
        // and the lookup after it (a statement of its own, so it sees that commit) finds its row.
        await db
          .insertInto('endpoints')
          .values(
            missing.map((e) => ({
              id: e.id,
              account_id: e.accountId,
              poll_id: e.pollId,
              webhook_id: null,
              source: e.source,
              slide_id: e.slideId,
              url: e.url,
              created_at: e.createdAt,
            })),
          )
          .onConflict((oc) => oc.doNothing())
          .execute();
        for (const [k, id] of await find(missing)) found.set(k, id);
      }
      return es.map((e) => found.get(key(e))!);
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
