import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { expect, it } from 'vitest';
import type { Metrics } from '../../../src/app/ports/metrics.js';
import type { Reply } from '../../support/receiver.js';
import { newSigningSecret } from '../../../src/domain/signature.js';
import { createH1Sender } from '../../../src/infra/http-sender/h1-sender.js';
import { prometheusMetrics } from '../../../src/infra/metrics/prometheus.js';
import { startDeliveryRunner } from '../../../src/worker/delivery-runner.js';
import { harnessWithReceiver, queueDue } from '../../support/worker.js';

/**
 * An endpoint that answers every request well within the deadline is never failed, however many
 * of its deliveries fall due at once: attempts that wait a whole deadline for one of its busy
 * connections are given back unsent, and go out later as attempt 1.
 */

const env = harnessWithReceiver();

/** `count` deliveries due at once to `path`, and a runner of 16 slots sending them over `connections`. */
async function burst(o: {
  path: string;
  reply: Reply;
  count: number;
  connections: number;
  deadlineMs: number;
  logger?: Logger;
  metrics?: Metrics;
}) {
  // Each statement that gives deliveries back: the ids it gives.
  const unclaims: string[][] = [];
  const { h, receiver } = env;
  receiver.script(o.path, [o.reply]);
  const { accountId } = await h.account({ name: o.path });
  await h.deps.store.accounts.setSigningSecretIfMissing(accountId, newSigningSecret(), new Date());
  const ids = await queueDue(h, accountId, receiver.url(o.path), o.count);
  const sender = createH1Sender({ allowPrivateTargets: true, connectionsPerOrigin: o.connections });
  const store = h.deps.store;
  const deliveries = {
    ...store.deliveries,
    unclaim: (ids: readonly string[], leaseToken: string, now: Date) => {
      unclaims.push([...ids]);
      return store.deliveries.unclaim(ids, leaseToken, now);
    },
  };
  const deps = {
    ...h.deps,
    store: { ...store, deliveries },
    sender,
    delivery: { ...h.deps.delivery, deliveryTimeoutMs: o.deadlineMs },
  };
  const controller = new AbortController();
  const runner = startDeliveryRunner(deps, controller.signal, {
    concurrency: 16,
    claimBatch: 16,
    idleMs: 50,
    drainMs: 2 * o.deadlineMs,
    logger: o.logger ?? pino({ level: 'silent' }),
    metrics: o.metrics,
  });
  const rows = () => Promise.all(ids.map((id) => h.deps.store.deliveries.get(id)));
  const sent = () => receiver.received.filter((r) => r.path === o.path);
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      controller.abort();
      await runner.done;
      await sender.close();
    })());
  return { ids, rows, sent, stop, unclaims };
}

it('a burst to a slow but timely endpoint is delivered with one attempt each, none a timeout', async () => {
  const lines: { msg: string }[] = [];
  const logger = pino(
    { level: 'warn' },
    new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString())), done()) }),
  );
  const metrics = prometheusMetrics({ now: () => new Date() });
  // 400 ms an answer, 2 connections, a deadline of 1 s: 12 due at once take 2.4 s to carry.
  const b = await burst({
    metrics,
    path: '/slow',
    reply: { status: 200, delayMs: 400 },
    count: 12,
    connections: 2,
    deadlineMs: 1_000,
    logger,
  });
  try {
    await expect
      .poll(async () => (await b.rows()).map((d) => d?.status), { timeout: 30_000, interval: 100 })
      .toEqual(b.ids.map(() => 'delivered'));
    for (const id of b.ids) {
      const attempts = await env.h.deps.store.deliveries.attempts(id);
      expect(attempts.map((a) => [a.statusCode, a.error])).toEqual([[200, null]]);
    }
    expect(b.sent()).toHaveLength(b.ids.length);
    expect(new Set(b.sent().map((r) => r.headers['x-service-attempt']))).toEqual(new Set(['1']));
    // Each is signed as it is written, not as it is queued: over two connections, a request is
    // written only once one of the two written before it has been answered (so has arrived);
    // and the attempt recorded carries that send time.
    const written = b
      .sent()
      .map((r) => ({ at: r.at, triggeredAt: Date.parse(r.headers['x-service-triggered-at']!), r }))
      .sort((x, y) => x.triggeredAt - y.triggeredAt);
    for (let k = 2; k < written.length; k++)
      expect(written[k]!.triggeredAt).toBeGreaterThanOrEqual(Math.min(written[k - 1]!.at, written[k - 2]!.at));
    for (const { r, triggeredAt } of written) {
      expect(r.headers['x-service-signature']).toMatch(new RegExp(`^t=${triggeredAt},`));
      const id = r.headers['x-service-delivery-id']!;
      expect((await env.h.deps.store.deliveries.attempts(id))[0]!.sentAt.getTime()).toBe(triggeredAt);
    }
    // Some waited a whole deadline unwritten, and were given back rather than failed: logged,
    // and counted.
    expect(lines.filter((l) => /given back unsent/.test(l.msg)).length).toBeGreaterThan(0);
    const scraped = (await metrics.exposition()).body;
    const counted = Number(/^canvass_delivery_attempts_given_back_total (\d+)$/m.exec(scraped)?.[1]);
    expect(counted).toBeGreaterThan(0);
  } finally {
    await b.stop();
  }
}, 60_000);

it('a stopping worker gives back at once what it has not written, and waits only for what it has', async () => {
  const b = await burst({
    path: '/held',
    reply: { status: 200, delayMs: 1_500 },
    count: 5,
    connections: 1,
    deadlineMs: 10_000,
  });
  try {
    // One written, four queued behind it; then the stop.
    await env.receiver.waitFor((r) => r.some((x) => x.path === '/held'), 10_000);
    await b.stop();
    const rows = await b.rows();
    expect(rows.filter((d) => d?.status === 'delivered')).toHaveLength(1);
    // The four never written: no attempt counted, due again already, for another worker.
    const rest = rows.filter((d) => d?.status !== 'delivered');
    expect(rest.map((d) => [d!.status, d!.attemptCount])).toEqual(rest.map(() => ['pending', 0]));
    for (const d of rest) expect(d!.nextAttemptAt!.getTime()).toBeLessThanOrEqual(Date.now());
    expect(b.sent()).toHaveLength(1);
    // Given back together, in one statement.
    expect(b.unclaims.map((ids) => ids.length)).toEqual([4]);
  } finally {
    await b.stop();
  }
}, 60_000);
