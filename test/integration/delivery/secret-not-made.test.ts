import { sql } from 'kysely';
import { expect, it } from 'vitest';
import { createH1Sender } from '../../../src/infra/http-sender/h1-sender.js';
import { prometheusMetrics } from '../../../src/infra/metrics/prometheus.js';
import { startDeliveryRunner } from '../../../src/worker/delivery-runner.js';
import { logged } from '../../support/logged.js';
import { harnessWithReceiver, queueDue } from '../../support/worker.js';

/**
 * An account whose webhooks predate signing gets its secret at its first delivery (README,
 * Webhooks). When the database refuses that write, nothing has been sent: the attempt is given
 * back uncounted, and the first request the endpoint gets is still attempt 1. The database's
 * refusal is real: a trigger that raises on the secret's write, dropped to let it through.
 */

const env = harnessWithReceiver();

it('an attempt whose signing secret cannot be made is given back uncounted, and goes out later as attempt 1', async () => {
  const { h, receiver } = env;
  const db = h.database.db;
  receiver.script('/first-secret', [{ status: 200 }]);
  const { accountId } = await h.account({ name: 'predates signing' });
  const [id] = await queueDue(h, accountId, receiver.url('/first-secret'), 1);
  await sql`CREATE FUNCTION refuse_secret() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'the signing secret cannot be written now'; END $$`.execute(db);
  await sql`CREATE TRIGGER refuse_secret BEFORE UPDATE OF signing_secret ON accounts
    FOR EACH ROW EXECUTE FUNCTION refuse_secret()`.execute(db);
  const { lines, logger } = logged('warn');
  const sender = createH1Sender({ allowPrivateTargets: true });
  const metrics = prometheusMetrics({ now: () => new Date() });
  const unprepared = async () =>
    Number(/^canvass_delivery_attempts_unprepared_total (\d+)$/m.exec((await metrics.exposition()).body)?.[1]);
  const controller = new AbortController();
  const runner = startDeliveryRunner({ ...h.deps, sender }, controller.signal, {
    concurrency: 4,
    claimBatch: 4,
    idleMs: 50,
    drainMs: 5_000,
    logger,
    metrics,
  });
  const queued = () =>
    db
      .selectFrom('delivery_queue')
      .select(['attempt_count', 'lease_token'])
      .where('delivery_id', '=', id!)
      .executeTakeFirstOrThrow();
  try {
    // The worker tried, and logged the failure of that delivery.
    await expect.poll(() => lines.some((l) => l.deliveryId === id), { timeout: 10_000 }).toBe(true);
    // Given back: no lease held, no attempt counted.
    await expect.poll(queued, { timeout: 5_000 }).toEqual({ attempt_count: 0, lease_token: null });
    expect(receiver.received.filter((r) => r.path === '/first-secret')).toEqual([]);
    expect(await unprepared()).toBeGreaterThanOrEqual(1);
    expect(lines.find((l) => l.deliveryId === id)).toMatchObject({
      msg: expect.stringMatching(/^attempt could not be prepared/) as string,
      delayMs: 1_000,
    });

    await sql`DROP TRIGGER refuse_secret ON accounts`.execute(db);
    const [sent] = await receiver.waitFor((r) => r.some((x) => x.path === '/first-secret'));
    expect(sent!.headers['x-service-attempt']).toBe('1');
    await expect
      .poll(async () => (await h.deps.store.deliveries.get(id!))?.status, { timeout: 5_000 })
      .toBe('delivered');
  } finally {
    controller.abort();
    await runner.done;
    await sender.close();
    await sql`DROP TRIGGER IF EXISTS refuse_secret ON accounts`.execute(db);
    await sql`DROP FUNCTION IF EXISTS refuse_secret()`.execute(db);
  }
});
