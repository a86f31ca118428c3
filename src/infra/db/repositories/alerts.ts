import { sql, type Kysely, type Selectable } from 'kysely';
import type { AlertDetails, AlertEmail } from '../../../domain/alert-email.js';
import type { AlertRepo } from '../../../app/ports/index.js';
import type { AlertEmailsTable, DB } from '../schema.js';
import { toEndpoint } from './endpoints.js';
import { json, toPage } from './page.js';

const toAlert = (r: Selectable<AlertEmailsTable>): AlertEmail => ({
  id: r.id,
  accountId: r.account_id,
  endpointId: r.endpoint_id,
  webhookId: r.webhook_id,
  pollId: r.poll_id,
  kind: r.kind as AlertEmail['kind'],
  sequence: r.sequence,
  recipients: r.recipients,
  subject: r.subject,
  text: r.text_body,
  html: r.html_body,
  details: r.details as unknown as AlertDetails,
  sentAt: r.sent_at,
});

export function alertRepo(db: Kysely<DB>): AlertRepo {
  return {
    async insert(a, deferred) {
      await db
        .insertInto('alert_emails')
        .values({
          id: a.id,
          account_id: a.accountId,
          endpoint_id: a.endpointId,
          webhook_id: a.webhookId,
          poll_id: a.pollId,
          kind: a.kind,
          sequence: a.sequence,
          recipients: json(a.recipients),
          subject: a.subject,
          text_body: a.text,
          html_body: a.html,
          details: json(a.details),
          sent_at: a.sentAt,
          deferred_recipients: deferred ? json(deferred.recipients) : null,
          deferred_until: deferred?.until ?? null,
          deferred_tries: deferred ? 1 : 0,
        })
        // A record tried again after a lost acknowledgement of its COMMIT keeps one row (the id is the plan's).
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    async claimDeferred(now, holdUntil, limit) {
      // SKIP LOCKED and the hold written in the same statement: two schedulers never send one
      // email's deferred recipients at once, and one that dies mid-send leaves them to the hold.
      const rows = await db
        .updateTable('alert_emails')
        .set({ deferred_until: holdUntil })
        .where(
          'id',
          'in',
          db
            .selectFrom('alert_emails')
            .select('id')
            .where('deferred_until', '<=', now)
            .where('deferred_recipients', 'is not', null)
            .orderBy('deferred_until')
            .limit(limit)
            .forUpdate()
            .skipLocked(),
        )
        .returning([
          'id',
          'account_id',
          'endpoint_id',
          'deferred_recipients',
          'deferred_tries',
          'subject',
          'text_body',
          'html_body',
        ])
        .execute();
      return rows.map((r) => ({
        id: r.id,
        accountId: r.account_id,
        endpointId: r.endpoint_id,
        recipients: r.deferred_recipients ?? [],
        tries: r.deferred_tries,
        subject: r.subject,
        text: r.text_body,
        html: r.html_body,
      }));
    },
    async renewDeferred(id, heldUntil, until) {
      const r = await db
        .updateTable('alert_emails')
        .set({ deferred_until: until })
        .where('id', '=', id)
        .where('deferred_until', '=', heldUntil)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    async settleDeferred(id, heldUntil, o) {
      // Deferred again: only those still on the email (one who left the account meanwhile was
      // taken off it by dropDeferredRecipient).
      const kept = sql<string>`(SELECT jsonb_agg(x) FROM jsonb_array_elements(${json(o.deferred)}::jsonb) x WHERE deferred_recipients @> jsonb_build_array(x))`;
      const r = await db
        .updateTable('alert_emails')
        .set({
          recipients: sql`recipients || ${JSON.stringify(o.accepted)}::jsonb`,
          deferred_recipients: o.deferred.length ? kept : null,
          deferred_until:
            o.deferred.length && o.until
              ? sql<Date>`CASE WHEN ${kept} IS NULL THEN NULL ELSE ${o.until}::timestamptz END`
              : null,
          deferred_tries: o.tries,
        })
        .where('id', '=', id)
        .where('deferred_until', '=', heldUntil)
        .executeTakeFirst();
      return r.numUpdatedRows > 0n;
    },
    async dropDeferredRecipient(accountId, address, now) {
      const gone = sql`deferred_recipients - ${address}::text`;
      // An email under a send's claim (its hold still to run) keeps its deferred_until, so that
      // the send's outcome is still recorded; it finds the address gone.
      await db
        .updateTable('alert_emails')
        .set({
          deferred_recipients: sql`CASE WHEN jsonb_array_length(${gone}) = 0 THEN NULL ELSE ${gone} END`,
          deferred_until: sql`CASE WHEN jsonb_array_length(${gone}) = 0 AND deferred_until <= ${now} THEN NULL ELSE deferred_until END`,
        })
        .where('account_id', '=', accountId)
        .where(sql<boolean>`deferred_recipients @> ${JSON.stringify([address])}::jsonb`)
        .execute();
    },
    async list(accountId, page) {
      let q = db.selectFrom('alert_emails').selectAll().where('account_id', '=', accountId);
      if (page.startCursor) q = q.where('id', '<', page.startCursor);
      const rows = await q
        .orderBy('id', 'desc')
        .limit(page.limit + 1)
        .execute();
      return toPage(rows.map(toAlert), page);
    },
    async claimCandidates(now, quietBefore, reminderBefore, limit) {
      // The same rule as the pure alert policy, as an index-friendly filter; SKIP LOCKED and
      // the hold let several schedulers share the work without mailing one endpoint twice.
      const rows = await db
        .selectFrom('endpoints')
        .selectAll()
        .where('last_given_up_at', 'is not', null)
        .where((eb) => eb.or([eb('alert_hold_until', 'is', null), eb('alert_hold_until', '<=', now)]))
        .where((eb) =>
          eb.or([
            eb.and([
              eb('state', '=', 'healthy'),
              eb.or([eb('last_success_at', 'is', null), eb('last_success_at', '<', eb.ref('last_given_up_at'))]),
              eb(sql`coalesce(last_success_at, created_at)`, '<=', quietBefore),
              eb.or([eb('quiet_since', 'is', null), eb('quiet_since', '<=', quietBefore)]),
            ]),
            eb.and([
              eb('state', '=', 'alerted'),
              eb('alert_emails_sent', '<', 3),
              eb('last_alert_at', '<=', reminderBefore),
              eb.or([eb('quiet_since', 'is', null), eb('quiet_since', '<=', quietBefore)]),
            ]),
          ]),
        )
        // A paused webhook's endpoint gets no alert while it is paused.
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom('webhooks as w')
                .select('w.id')
                .whereRef('w.id', '=', 'endpoints.webhook_id')
                .where('w.paused_at', 'is not', null),
            ),
          ),
        )
        .orderBy('id')
        .limit(limit)
        .forUpdate()
        .skipLocked()
        .execute();
      return rows.map(toEndpoint);
    },
    async markAlerted(endpointId, sent, at) {
      await db
        .updateTable('endpoints')
        .set({ state: 'alerted', alert_emails_sent: sent, last_alert_at: at, alert_hold_until: null })
        .where('id', '=', endpointId)
        .execute();
    },
    async hold(endpointId, until) {
      await db.updateTable('endpoints').set({ alert_hold_until: until }).where('id', '=', endpointId).execute();
    },
    async lockEndpoint(endpointId) {
      const r = await db
        .selectFrom('endpoints')
        .selectAll()
        .where('id', '=', endpointId)
        .forUpdate()
        .executeTakeFirst();
      return r && toEndpoint(r);
    },
  };
}
