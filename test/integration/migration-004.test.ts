import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/infra/db/database.js';
import { migrate, migrationNames } from '../../src/infra/db/migrate.js';
import type { DeliveryStatus } from '../../src/domain/delivery.js';
import { createStore } from '../../src/infra/db/store.js';
import { databaseBefore } from '../support/db.js';

const T = (s: string) => new Date(`2026-11-20T${s}Z`);

/**
 * A database at migration 003 with deliveries in every state, then migrated: each delivery
 * reads back as it was, the queued ones stay claimable, and the lost ones still count.
 */
describe('migration 004 (delivery queue)', () => {
  let database: Database;

  beforeAll(async () => {
    database = await databaseBefore('004');
    const db = database.db;
    await sql`INSERT INTO accounts (id, name, plan, signing_secret, created_at, updated_at) VALUES ('acc_1', 'A', 'premium', 'whsec_x', now(), now())`.execute(
      db,
    );
    const row = (
      id: string,
      status: string,
      attempts: number,
      next: Date | null,
      lease: string | null,
      finished: Date | null,
      endpoint = 'end_1',
    ) =>
      sql`INSERT INTO deliveries (id, account_id, poll_id, webhook_id, endpoint_id, source, url, participant_id, type, status, attempt_count, dns_failures, next_attempt_at, lease_token, body, created_at, finished_at)
          VALUES (${id}, 'acc_1', 'poll_1', NULL, ${endpoint}, 'webhook', 'https://a.example/', 'prt_1', 'submitted-responses', ${status}, ${attempts}, 0, ${next}, ${lease}, '{"n":1}', ${T('10:00:00')}, ${finished})`.execute(
        db,
      );
    await row('dlv_pending', 'pending', 1, T('12:00:00'), null, null);
    await row('dlv_leased', 'in_flight', 2, T('11:00:00'), 'tok_old', null);
    await row('dlv_delivered', 'delivered', 1, null, null, T('10:00:01'));
    await row('dlv_given_up', 'given_up', 8, null, null, T('10:30:00'));
    await row('dlv_rejected', 'rejected', 1, null, null, T('10:40:00'));
    await row('dlv_other_lost', 'given_up', 8, null, null, T('10:40:00'), 'end_2');
    await row('dlv_cancelled', 'cancelled', 0, null, null, T('10:50:00'));
    expect(await migrate(db)).toEqual(migrationNames().filter((n) => n >= '004'));
  });

  afterAll(async () => {
    await database?.close();
  });

  it('reads every delivery back with its state, attempt count and due time', async () => {
    const deliveries = createStore(database.db).deliveries;
    const view = async (id: string) => {
      const d = (await deliveries.get(id))!;
      return [d.status, d.attemptCount, d.nextAttemptAt?.toISOString() ?? null, d.finishedAt?.toISOString() ?? null];
    };
    expect(await view('dlv_pending')).toEqual(['pending', 1, T('12:00:00').toISOString(), null]);
    expect(await view('dlv_leased')).toEqual(['in_flight', 2, T('11:00:00').toISOString(), null]);
    expect(await view('dlv_delivered')).toEqual(['delivered', 1, null, T('10:00:01').toISOString()]);
    expect(await view('dlv_given_up')).toEqual(['given_up', 8, null, T('10:30:00').toISOString()]);
    expect(await view('dlv_cancelled')).toEqual(['cancelled', 0, null, T('10:50:00').toISOString()]);
  });

  it('counts the given-up and rejected deliveries of an endpoint as lost', async () => {
    const deliveries = createStore(database.db).deliveries;
    expect(await deliveries.countLost('end_1', T('10:00:00'))).toBe(2);
    expect(await deliveries.countLost('end_1', T('10:35:00'))).toBe(1);
    expect(await deliveries.countLost('end_2', T('10:00:00'))).toBe(1);
  });

  it('filters the log by state: pending and in_flight from the queue row, finished states from the delivery', async () => {
    const deliveries = createStore(database.db).deliveries;
    const ids = async (status: DeliveryStatus) =>
      (await deliveries.list({ accountIds: ['acc_1'], statuses: [status] }, { limit: 50 })).data
        .map((d) => d.id)
        .sort();
    expect(await ids('pending')).toEqual(['dlv_pending']);
    expect(await ids('in_flight')).toEqual(['dlv_leased']);
    expect(await ids('given_up')).toEqual(['dlv_given_up', 'dlv_other_lost']);
    expect(await ids('cancelled')).toEqual(['dlv_cancelled']);
  });

  it('keeps the queued deliveries claimable: the expired lease is taken over, the old holder fenced', async () => {
    const deliveries = createStore(database.db).deliveries;
    const claimed = await deliveries.claim(T('11:30:00'), 10, T('13:00:00'), 'tok_new', new Date(0));
    expect(claimed.map((d) => [d.id, d.attemptCount])).toEqual([['dlv_leased', 3]]);
    const stale = await deliveries.release('dlv_leased', 'tok_old', T('11:30:00'));
    expect(stale).toBe(false);
    const later = await deliveries.claim(T('12:00:00'), 10, T('12:01:00'), 'tok_2', new Date(0));
    expect(later.map((d) => [d.id, d.attemptCount])).toEqual([['dlv_pending', 2]]);
  });
});
