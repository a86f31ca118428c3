import pino from 'pino';
import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { newSigningSecret } from '../../../src/domain/signature.js';
import { createH1Sender } from '../../../src/infra/http-sender/h1-sender.js';
import { startDeliveryRunner } from '../../../src/worker/delivery-runner.js';
import { harnessWithReceiver, queueDue } from '../../support/worker.js';

/**
 * An endpoint that answers every request well within the deadline is never failed, however many
 * of its deliveries fall due at once: attempts that wait a whole deadline for one of its busy
 * connections are given back unsent, and go out later as attempt 1.
 */

const env = harnessWithReceiver();

it('a burst to a slow but timely endpoint is delivered with one attempt each, none a timeout', async () => {
  const { h, receiver } = env;
  // 400 ms an answer, 2 connections, a deadline of 1 s: 12 due at once take 2.4 s to carry.
  receiver.script('/slow', [{ status: 200, delayMs: 400 }]);
  const { accountId } = await h.account({ name: 'Burst' });
  await h.deps.store.accounts.setSigningSecretIfMissing(accountId, newSigningSecret(), new Date());
  const ids = await queueDue(h, accountId, receiver.url('/slow'), 12);
  const sender = createH1Sender({ allowPrivateTargets: true, connectionsPerOrigin: 2 });
  const deps = { ...h.deps, sender, delivery: { ...h.deps.delivery, deliveryTimeoutMs: 1_000 } };
  const lines: { msg: string; givenBack?: number }[] = [];
  const logger = pino(
    { level: 'warn' },
    new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString())), done()) }),
  );
  const controller = new AbortController();
  const runner = startDeliveryRunner(deps, controller.signal, {
    concurrency: 16,
    claimBatch: 16,
    idleMs: 50,
    drainMs: 5_000,
    logger,
  });
  try {
    await expect
      .poll(async () => (await Promise.all(ids.map((id) => h.deps.store.deliveries.get(id)))).map((d) => d?.status), {
        timeout: 30_000,
        interval: 100,
      })
      .toEqual(ids.map(() => 'delivered'));
    for (const id of ids) {
      const attempts = await h.deps.store.deliveries.attempts(id);
      expect(attempts.map((a) => [a.statusCode, a.error])).toEqual([[200, null]]);
    }
    const sent = receiver.received.filter((r) => r.path === '/slow');
    expect(sent).toHaveLength(ids.length);
    expect(new Set(sent.map((r) => r.headers['x-service-attempt']))).toEqual(new Set(['1']));
    // Some waited a whole deadline unwritten, and were given back rather than failed.
    expect(lines.filter((l) => /given back unsent/.test(l.msg)).length).toBeGreaterThan(0);
  } finally {
    controller.abort();
    await runner.done;
    await sender.close();
  }
}, 60_000);

it('a stopping worker gives back at once what it has not written, and waits only for what it has', async () => {
  const { h, receiver } = env;
  receiver.script('/held', [{ status: 200, delayMs: 1_500 }]);
  const { accountId } = await h.account({ name: 'Stopping' });
  await h.deps.store.accounts.setSigningSecretIfMissing(accountId, newSigningSecret(), new Date());
  const ids = await queueDue(h, accountId, receiver.url('/held'), 5);
  const sender = createH1Sender({ allowPrivateTargets: true, connectionsPerOrigin: 1 });
  const deps = { ...h.deps, sender, delivery: { ...h.deps.delivery, deliveryTimeoutMs: 10_000 } };
  const controller = new AbortController();
  const runner = startDeliveryRunner(deps, controller.signal, {
    concurrency: 16,
    claimBatch: 16,
    idleMs: 50,
    drainMs: 20_000,
    logger: pino({ level: 'silent' }),
  });
  try {
    // One written, four queued behind it; then the stop.
    await receiver.waitFor((r) => r.some((x) => x.path === '/held'), 10_000);
    controller.abort();
    await runner.done;
    const rows = await Promise.all(ids.map((id) => h.deps.store.deliveries.get(id)));
    expect(rows.filter((d) => d?.status === 'delivered')).toHaveLength(1);
    // The four never written: no attempt counted, due again already, for another worker.
    const rest = rows.filter((d) => d?.status !== 'delivered');
    expect(rest.map((d) => [d!.status, d!.attemptCount])).toEqual(rest.map(() => ['pending', 0]));
    for (const d of rest) expect(d!.nextAttemptAt!.getTime()).toBeLessThanOrEqual(Date.now());
    expect(receiver.received.filter((r) => r.path === '/held')).toHaveLength(1);
  } finally {
    controller.abort();
    await runner.done;
    await sender.close();
  }
}, 60_000);
