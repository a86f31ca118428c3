import pino from 'pino';
import { expect, it } from 'vitest';
import { createH1Sender } from '../../../src/infra/http-sender/h1-sender.js';
import { startDeliveryRunner } from '../../../src/worker/delivery-runner.js';
import { countingClaims, harnessWithReceiver, queueDue } from '../../support/worker.js';

/**
 * Answers free sending slots; they are not new work. A worker that has claimed everything due
 * sleeps until new work arrives (or the next due time), instead of claiming again on every
 * answer: one claim for a burst it could take whole, however many answers come back.
 */

const env = harnessWithReceiver();

it('claims once for 20 due deliveries and does not claim again as their answers come in', async () => {
  const { h, receiver } = env;
  receiver.script('/burst', [{ status: 200 }]);
  const { accountId } = await h.account({ name: 'Claims' });
  const ids = await queueDue(h, accountId, receiver.url('/burst'), 20);
  const sender = createH1Sender({ allowPrivateTargets: true });
  const { deps, claims } = countingClaims(h, sender);
  const controller = new AbortController();
  // A minute of idle wait: any further claim within the test was set off by an answer.
  const runner = startDeliveryRunner(deps, controller.signal, {
    concurrency: 64,
    claimBatch: 64,
    idleMs: 60_000,
    drainMs: 5_000,
    logger: pino({ level: 'silent' }),
  });
  try {
    await receiver.waitFor((r) => r.filter((x) => x.path === '/burst').length >= ids.length, 20_000);
    for (let i = 0; ; i++) {
      const done = await Promise.all(ids.map((id) => h.deps.store.deliveries.get(id)));
      if (done.every((d) => d?.status === 'delivered')) break;
      if (i > 400) throw new Error('the deliveries were not all recorded');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(claims()).toBe(1);
  } finally {
    controller.abort();
    await runner.done;
    await sender.close();
  }
});

it('claims nothing until startAfter settles (the worker knows its share of connections), then delivers', async () => {
  const { h, receiver } = env;
  receiver.script('/after', [{ status: 200 }]);
  const { accountId } = await h.account({ name: 'StartAfter' });
  const ids = await queueDue(h, accountId, receiver.url('/after'), 5);
  const sender = createH1Sender({ allowPrivateTargets: true });
  const { deps, claims } = countingClaims(h, sender);
  const controller = new AbortController();
  let counted!: () => void;
  const firstCount = new Promise<void>((resolve) => (counted = resolve));
  const runner = startDeliveryRunner(deps, controller.signal, {
    concurrency: 64,
    claimBatch: 64,
    idleMs: 10,
    drainMs: 5_000,
    logger: pino({ level: 'silent' }),
    startAfter: firstCount,
  });
  try {
    // Woken and idle-timed many times over while it waits: none of it may claim.
    for (let i = 0; i < 20; i++) {
      runner.wake();
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(claims()).toBe(0);
    expect(receiver.received.filter((x) => x.path === '/after')).toHaveLength(0);
    counted();
    await receiver.waitFor((r) => r.filter((x) => x.path === '/after').length >= ids.length, 20_000);
    expect(claims()).toBeGreaterThan(0);
  } finally {
    controller.abort();
    await runner.done;
    await sender.close();
  }
});

it('a wake that comes while an idle worker is looking up its next due time is not lost', async () => {
  const { h, receiver } = env;
  receiver.script('/woken', [{ status: 200 }]);
  const { accountId } = await h.account({ name: 'Woken' });
  const sender = createH1Sender({ allowPrivateTargets: true });
  const counting = countingClaims(h, sender);
  // The first lookup of the next due time (nothing is due) answers only when the test lets it.
  let looking!: () => void;
  const lookingUp = new Promise<void>((resolve) => (looking = resolve));
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  const deliveries = counting.deps.store.deliveries;
  let lookups = 0;
  const deps = {
    ...counting.deps,
    store: {
      ...counting.deps.store,
      deliveries: {
        ...deliveries,
        // Its answer is the queue as it was when asked, before the test queues anything.
        nextDueAt: async () => {
          const due = await deliveries.nextDueAt();
          if (++lookups === 1) {
            looking();
            await answered;
          }
          return due;
        },
      },
    },
  };
  const controller = new AbortController();
  // A minute of idle wait: a lost wake would leave the new deliveries unclaimed past the test.
  const runner = startDeliveryRunner(deps, controller.signal, {
    concurrency: 64,
    claimBatch: 64,
    idleMs: 60_000,
    drainMs: 5_000,
    logger: pino({ level: 'silent' }),
  });
  try {
    // Its first claim found nothing; it is asking when the next delivery falls due.
    await lookingUp;
    expect(counting.claims()).toBe(1);
    const ids = await queueDue(h, accountId, receiver.url('/woken'), 3);
    runner.wake();
    answer();
    await receiver.waitFor((r) => r.filter((x) => x.path === '/woken').length >= ids.length, 20_000);
    expect(counting.claims()).toBe(2);
  } finally {
    controller.abort();
    await runner.done;
    await sender.close();
  }
});
